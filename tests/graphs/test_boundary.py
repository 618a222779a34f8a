"""One graph boundary for the three graph systems (issue 32): G2PT, SBGD and AGDiff read data and write
samples through :mod:`scigen.graphs.boundary`, so a format one accepts the others accept too."""

from __future__ import annotations

import networkx as nx
import pytest

from scigen.core.errors import InvalidInputError
from scigen.graphs.agdiff.system import AGDiff
from scigen.graphs.boundary import as_graphs, write_samples
from scigen.graphs.g2pt.system import G2PT
from scigen.graphs.io import read_edgelist
from scigen.graphs.sbgd.system import SBGD


def _tu(folder):
    """Two graphs of the TU format: a 2-node and a 2-node edge, class labels 0 and 1."""
    folder.mkdir()
    (folder / "DS_A.txt").write_text("1, 2\n2, 1\n3, 4\n4, 3\n")
    (folder / "DS_graph_indicator.txt").write_text("1\n1\n2\n2\n")
    (folder / "DS_graph_labels.txt").write_text("0\n1\n")
    return folder


@pytest.mark.parametrize("cls", [G2PT, SBGD, AGDiff], ids=lambda c: c.name)
def test_every_graph_system_reads_the_same_formats(cls, tmp_path):
    path = tmp_path / "g.txt"
    write_samples([nx.path_graph(3), nx.cycle_graph(4)], path)
    got = cls.read_data(path)
    assert [(g.number_of_nodes(), g.number_of_edges()) for g in got] == [(3, 2), (4, 4)]
    tu = cls.read_data(_tu(tmp_path / "tu"))  # a TU folder, for every system (G2PT and SBGD read it too now)
    assert [g.number_of_edges() for g in tu] == [1, 1]


def test_agdiff_labels_a_tu_folder_by_class_and_refuses_smiles(tmp_path):
    graphs = AGDiff.read_data(_tu(tmp_path / "tu"))
    assert [g.graph["anomaly"] for g in graphs] == [0, 1]  # two classes of one graph: the first is "normal"
    with pytest.raises(InvalidInputError, match="not SMILES"):
        as_graphs(["CCO"], smiles=False)
    assert as_graphs(["CCO"])[0].number_of_nodes() == 3  # molecules where SMILES are accepted (G2PT)


@pytest.mark.parametrize("cls", [SBGD, AGDiff], ids=lambda c: c.name)
def test_models_of_plain_graphs_write_edge_lists_and_refuse_smiles_files(cls, tmp_path):
    model = cls.__new__(cls)  # write_samples needs no trained state
    out = model.write_samples([nx.path_graph(3), None], tmp_path / "s.txt")  # None: an undecodable sample
    assert [g.number_of_edges() for g in read_edgelist(out)] == [2]
    with pytest.raises(InvalidInputError, match="SMILES output needs a molecule model"):
        model.write_samples([nx.path_graph(3)], tmp_path / "s.smi")
    assert not (tmp_path / "s.smi").exists()
