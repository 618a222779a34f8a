"""A PyG user's dataset (issue 37): TUDataset-style one-hot node labels become node types in G2PT and SBGD (they
used to be dropped silently, so a labelled dataset trained an untyped model); continuous node attributes are left
aside with a warning there, and refused by AGDiff, whose detector needs categorical features."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("torch_geometric")
from torch_geometric.data import Data  # noqa: E402
from torch_geometric.datasets import FakeDataset  # noqa: E402

from scigen.core.errors import InvalidInputError  # noqa: E402
from scigen.graphs import G2PT, SBGD, AGDiff  # noqa: E402
from scigen.graphs.boundary import as_graphs  # noqa: E402


def _labelled_paths(k=8, n=6, types=3):
    out = []
    for i in range(k):
        src = torch.arange(n - 1)
        ei = torch.stack([torch.cat([src, src + 1]), torch.cat([src + 1, src])])
        out.append(Data(x=torch.nn.functional.one_hot((torch.arange(n) + i) % types, types).float(), edge_index=ei))
    return out


def test_one_hot_node_labels_are_read_as_types_by_the_reader():
    graphs = as_graphs(_labelled_paths(), "data")
    assert [graphs[1].nodes[v]["type"] for v in range(6)] == ["1", "2", "0", "1", "2", "0"]  # argmax of each row


@pytest.mark.parametrize("cls", [G2PT, SBGD])
def test_labelled_pyg_graphs_train_a_typed_model(cls):
    m = cls(cls.Config.preset("tiny"))
    m.fit(_labelled_paths(), max_steps=1, progress=False)
    types = m.vocab.node_types if cls is G2PT else m.metadata.get("node_types", getattr(m, "node_types", None))
    assert sorted(types) == ["0", "1", "2"]


def test_continuous_attributes_are_left_aside_with_a_warning_or_refused():
    ds = FakeDataset(num_graphs=6, avg_num_nodes=8, num_channels=3, edge_dim=0)
    with pytest.warns(UserWarning, match="6 of 6 PyG graphs have continuous node features"):
        graphs = as_graphs(ds, "data")
    assert all("type" not in d for g in graphs for _, d in g.nodes(data=True))
    with pytest.raises(InvalidInputError, match=r"data\[0\]\.x: .*continuous node attributes are not supported"):
        AGDiff(AGDiff.Config.preset("tiny")).fit(ds, max_steps=1, progress=False)
