"""The baselines AGDiff is compared with, on the same data path (``graphs.pack``) and the same scores.

Every detector has ``fit(normal graphs) -> self`` and ``score(graphs) -> np.ndarray`` (higher = more
anomalous), so :func:`~scigen.graphs.agdiff.protocol.cross_validate` runs them all alike.

* **Random perturbation**: AGDiff itself with ``pseudo="random"``, in :mod:`~scigen.graphs.agdiff.ablation`
  (``random_perturbation`` here is deprecated).
* **OCGIN** — :class:`OCGIN`: a one-class GIN (Zhao & Akoglu 2021) trained with the Deep SVDD
  objective (Ruff et al. 2018, eq. 4 one-class form) ``mean ‖f(G) − c‖²`` with ``c`` the mean
  embedding of the initial network on the training graphs; score = ``‖f(G) − c‖²``. Trained by the
  engine's ``fit``. The output layer has no bias (Deep SVDD's guard against the constant solution).
* **WL kernel + one-class SVM** — :class:`WLOneClass`: GraKeL's Weisfeiler–Lehman subtree kernel
  (Shervashidze et al. 2011; ``n_iter`` iterations, node types as labels, normalised) and scikit-learn's
  ``OneClassSVM(kernel="precomputed", nu)``; score = ``−decision_function``.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import torch
from torch import Tensor, nn

from scigen.core.rng import preserves_rng
from scigen.graphs.agdiff.config import AGDiffConfig
from scigen.graphs.agdiff.graphs import anomaly_labels, as_graphs, node_vocab, pack, unpack

__all__ = ["OCGIN", "PAPER_DECODER", "WLOneClass"]

#: the paper's decoder (``AGDiffConfig.edge_decode`` / ``pseudo_decode``, as in ``preset("paper")``): edges at
#: ``sigmoid(z_i·z_j) > 0.5``, the pseudo-anomaly is the whole decoded graph; the random-perturbation baseline
#: as it was before those switches
PAPER_DECODER: dict[str, str] = {k: AGDiffConfig.PRESETS["paper"][k] for k in ("edge_decode", "pseudo_decode")}


def _normal(data: Any) -> list[nx.Graph]:
    graphs = as_graphs(data, "data")
    y = anomaly_labels(graphs, "data", required=False)
    return graphs if y is None else [g for g, a in zip(graphs, y, strict=True) if a == 0]


def __getattr__(name: str) -> Any:
    """``random_perturbation`` moved to :mod:`scigen.graphs.agdiff.ablation` (deprecated here for one release;
    resolved by name at call time, so this module imports nothing of the system)."""
    if name == "random_perturbation":
        import importlib
        import warnings

        warnings.warn("scigen.graphs.agdiff.baselines.random_perturbation moved to "
                      "scigen.graphs.agdiff.ablation.random_perturbation", DeprecationWarning, stacklevel=2)
        return importlib.import_module("scigen.graphs.agdiff.ablation").random_perturbation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _OCGINNet(nn.Module):
    def __init__(self, n_features: int, hidden: int, layers: int, out: int) -> None:
        super().__init__()
        from scigen.graphs.agdiff.model import GIN

        self.n_features = n_features
        self.gin = GIN(n_features, hidden, layers)
        self.proj = nn.Linear(self.gin.out_dim, out, bias=False)
        self.register_buffer("center", torch.zeros(out))

    def embed(self, batch: Tensor) -> Tensor:
        x, adj, mask = unpack(batch, self.n_features)
        return self.proj(self.gin(x, adj, mask).sum(1))


class OCGIN:
    """One-class GIN with the Deep SVDD loss (module docstring)."""

    def __init__(self, *, hidden: int = 32, layers: int = 2, out: int = 16, max_steps: int = 300,
                 batch_size: int = 32, lr: float = 1e-3, seed: int = 0, node_types=None) -> None:
        self.node_types = None if node_types is None else list(node_types)
        self.hidden, self.layers, self.out = hidden, layers, out
        self.max_steps, self.batch_size, self.lr, self.seed = max_steps, batch_size, lr, seed
        self.net: _OCGINNet | None = None

    @preserves_rng  # seeds torch for its network; the caller's random state is left alone
    def fit(self, data: Any) -> OCGIN:
        from scigen.core.train import fit

        graphs = _normal(data)
        self.vocab = self.node_types if self.node_types is not None else node_vocab(graphs)
        rows = pack(graphs, self.vocab)
        torch.manual_seed(self.seed)
        net = _OCGINNet(len(self.vocab), self.hidden, self.layers, self.out)
        with torch.no_grad():
            net.center.copy_(net.embed(rows).mean(0))

        def loss_fn(module: _OCGINNet, batch: Tensor) -> Tensor:
            return (module.embed(batch) - module.center).pow(2).sum(-1).mean()

        result = fit(net, loss_fn, rows, max_steps=self.max_steps, batch_size=min(self.batch_size, len(graphs)),
                     lr=self.lr, seed=self.seed, logger=None, progress=False, weight_decay=1e-4)
        self.net = result.module.eval()
        return self

    @torch.no_grad()
    def score(self, data: Any) -> np.ndarray:
        graphs = as_graphs(data, "data")
        e = self.net.embed(pack(graphs, self.vocab))
        return (e - self.net.center).pow(2).sum(-1).double().numpy()


class WLOneClass:
    """Weisfeiler–Lehman subtree kernel + one-class SVM (module docstring)."""

    def __init__(self, *, n_iter: int = 3, nu: float = 0.1) -> None:
        self.n_iter, self.nu = n_iter, nu

    @staticmethod
    def _grakel(graphs: list[nx.Graph]) -> list:
        from grakel import Graph

        from scigen.graphs.validate import node_type

        out = []
        for g in graphs:
            nodes = list(g.nodes)
            pos = {v: i for i, v in enumerate(nodes)}
            edges = {(pos[u], pos[v]): 1.0 for u, v in g.edges} | {(pos[v], pos[u]): 1.0 for u, v in g.edges}
            for i in range(len(nodes)):  # a self-pair keeps isolated nodes (and edgeless graphs) in the kernel
                edges.setdefault((i, i), 1.0)
            out.append(Graph(edges, node_labels={pos[v]: node_type(g, v) for v in nodes}))
        return out

    def fit(self, data: Any) -> WLOneClass:
        from grakel.kernels import VertexHistogram, WeisfeilerLehman
        from sklearn.svm import OneClassSVM

        graphs = _normal(data)
        self.kernel = WeisfeilerLehman(n_iter=self.n_iter, base_graph_kernel=VertexHistogram, normalize=True)
        k = self.kernel.fit_transform(self._grakel(graphs))
        self.svm = OneClassSVM(kernel="precomputed", nu=self.nu).fit(k)
        return self

    def score(self, data: Any) -> np.ndarray:
        k = self.kernel.transform(self._grakel(as_graphs(data, "data")))
        return -self.svm.decision_function(k)
