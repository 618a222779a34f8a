"""SBGD — stochastic block graph diffusion (Su & Wu, ICML 2025), on the engine.

Graphs are cut into blocks of at most ``b`` nodes (``partition``), each block is a padded
``(A, X)`` state diffused by one shared GDSS-style score model (``model``; the engine's VP path,
denoising loss and samplers, ``objective``), the edges between blocks follow a stochastic block
model with learned block-pair densities (``model.InterBlockNet``), and a block-count rule
(``sizes``) maps any target size to blocks, so graphs larger than the training graphs are made of
more blocks (``sampling``). ``full_graph=True`` is the full-graph baseline in the same code.
What is the paper's and what is ours: see :mod:`scigen.graphs.sbgd.config`.
Inputs: networkx graphs, PyG ``Data``/``Dataset`` or a path (as G2PT); outputs: networkx graphs
or PyG ``Data`` (``output="pyg"``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import networkx as nx
import numpy as np
import torch
from torch import nn

from scigen.core.errors import InvalidInputError
from scigen.core.system import DemoResult, System
from scigen.core.validation import check_count
from scigen.graphs.sbgd.config import SBGDConfig
from scigen.graphs.validate import check_graph_count

#: the largest graph ``sample`` builds (``n_nodes`` above it is refused before any work)
SAMPLE_MAX_NODES = 100_000


class SBGD(System):
    """Graph diffusion in block space (see module docstring)."""

    domain = "graphs"
    name = "sbgd"
    description = "SBGD: block-space graph diffusion (shared block score model + SBM between blocks)."
    Config = SBGDConfig

    # ------------------------------------------------------------------ wiring
    def build_network(self) -> nn.Module:
        if "node_types" not in self.metadata:
            return nn.Module()  # placeholder until fit() has seen the data
        from scigen.graphs.sbgd.model import SBGDNet

        c = self.config
        return SBGDNet(int(self.metadata["width"]), len(self.metadata["node_types"]), c.hidden, c.layers,
                       c.edge_hidden, c.block_embedding)

    @property
    def process(self):
        """The engine binding: the block score network on a VP-linear path, eps prediction."""
        from scigen.core.generative import Diffusion
        from scigen.core.paths import VPLinear

        c = self.config
        return Diffusion(self.network, VPLinear(c.beta_min, c.beta_max), prediction="eps", method=c.method,
                         steps=c.steps)

    def _graphs(self, data: Any, what: str = "data") -> list[nx.Graph]:
        from scigen.graphs.sbgd.inputs import as_sbgd_graphs

        return as_sbgd_graphs(data, what)

    def _setup(self, graphs: list[nx.Graph]):
        from scigen.graphs.sbgd.data import BlockDataset
        from scigen.graphs.validate import node_type

        c = self.config
        types = sorted({node_type(g, v) for g in graphs for v in g.nodes})
        sizes = [g.number_of_nodes() for g in graphs]
        width = max(sizes) if c.full_graph else c.block_size
        self.metadata.update(node_types=types, typed=types != ["NODE"], width=int(width),
                             train_sizes=sizes)
        ds = BlockDataset(graphs, block_size=width, width=width, method=c.partition, node_types=types,
                          full_graph=c.full_graph, seed=self.training_options().seed)
        hist, counts = np.zeros(width + 1, dtype=np.int64), []
        for sizes_of_graph in ds.block_sizes():  # one graph at a time (a GraphStore stays on disk)
            hist += np.bincount(sizes_of_graph, minlength=width + 1)
            counts.append(len(sizes_of_graph))
        self.metadata["block_histogram"] = [int(h) for h in hist]
        self.metadata["block_counts"] = [int(min(counts)), int(max(counts))]
        self.network = self.make_network()
        return ds

    # ------------------------------------------------------------------ training
    def prepare_data(self, data: Any, *, role: str):
        """A :class:`~scigen.graphs.sbgd.data.BlockDataset` (the first training data fixes the node
        types and, for the full-graph baseline, the padded width)."""
        from scigen.graphs.sbgd.data import BlockDataset
        from scigen.graphs.sbgd.inputs import check_against

        graphs = self._graphs(data, role)
        if role == "data" and "node_types" not in self.metadata:
            self._train_graphs = graphs
            return self._setup(graphs)
        check_against(graphs, self.metadata, full_graph=self.config.full_graph, what=role)
        c = self.config
        width = int(self.metadata["width"])
        if role == "data":
            self._train_graphs = graphs
        return BlockDataset(graphs, block_size=width, width=width, method=c.partition,
                            node_types=self.metadata["node_types"], full_graph=c.full_graph,
                            seed=self.training_options().seed)

    def fit_options(self) -> dict[str, Any]:
        from scigen.graphs.sbgd.data import collate

        return {"collate_fn": collate}

    def training_budget(self) -> str:
        return f"batch {self.training_options().batch_size} graphs (all their blocks)"

    def training_loss(self, network: nn.Module, batch) -> torch.Tensor:
        """Engine denoising loss on the blocks + the SBM likelihood between them (see ``objective``)."""
        from scigen.graphs.sbgd.objective import sbgd_loss

        return sbgd_loss(self.process.bind(network), network, batch.to(_device_of(network)),
                         self.config.inter_weight, self.config.loss_reduction)

    # ------------------------------------------------------------------ sampling
    def _plans(self, n: int, n_nodes: int | Sequence[int] | None, keyed) -> list[list[int]]:
        """The block plans of ``n`` graphs; graph ``i``'s node count (when drawn) and block sizes come from row ``i``
        of ``keyed`` (graph-level streams, one key per graph): draw 1 picks the size, draw 2 the block sizes."""
        from scigen.graphs.sbgd.sizes import block_plan

        limit = {"maximum": SAMPLE_MAX_NODES, "why": "inter-block edges are drawn over every pair of blocks and "
                 "each graph is returned as networkx"}
        train_sizes = self.metadata["train_sizes"]
        pick = keyed.randint(0, len(train_sizes), (n,)).tolist()  # drawn always: the plans' draw stays draw 2
        if n_nodes is None:
            sizes = [int(train_sizes[i]) for i in pick]
        elif hasattr(n_nodes, "__index__") or isinstance(n_nodes, (str, bytes, float)):  # one size for all
            sizes = [check_count(n_nodes, "n_nodes", **limit)] * n
        elif isinstance(n_nodes, Sequence) or isinstance(n_nodes, np.ndarray):
            sizes = [check_count(s, f"n_nodes[{i}]", **limit) for i, s in enumerate(n_nodes)]
            if len(sizes) != n:
                raise InvalidInputError(f"n_nodes: got {len(sizes)} sizes for n_samples={n}")
        else:
            raise InvalidInputError(f"n_nodes must be an int, a sequence of ints (one per sample) or None, "
                                    f"got {type(n_nodes).__name__} {n_nodes!r}")
        smallest = min(s for s, h in enumerate(self.metadata["block_histogram"]) if h > 0)
        for s in sizes:
            if isinstance(s, bool) or s < 1:
                raise InvalidInputError(f"n_nodes: expected a positive node count, got {s!r}")
            if not self.config.full_graph and s < smallest:
                raise InvalidInputError(f"n_nodes={s} is below one block: the smallest block seen in training has "
                                        f"{smallest} nodes (ask for >= {smallest})")
        if self.config.full_graph:
            return [[s] for s in sizes]
        # at most one uniform per node (blocks have >= 1 node): graph i's block sizes from its own stream
        u = keyed.rand((sum(sizes),), rows=torch.repeat_interleave(torch.arange(n), torch.tensor(sizes)),
                       dtype=torch.float64).numpy()
        ends = np.cumsum(sizes)
        return [block_plan(s, self.config.block_size, self.config.block_sizes, self.metadata["block_histogram"],
                           u[e - s:e]) for s, e in zip(sizes, ends, strict=True)]

    @torch.no_grad()
    def sample(self, n_samples: int, *, seed: int | None = None, n_nodes: int | Sequence[int] | None = None,
               method: str | None = None, steps: int | None = None,
               output: Literal["networkx", "pyg"] = "networkx", inter_block_scaling: str | None = None,
               devices: int = 1) -> list:
        """``n_samples`` graphs. ``n_nodes``: one size for all, one per sample, or ``None`` (drawn from
        the training sizes); sizes beyond the training range are made of more blocks. ``method`` /
        ``steps``: the engine sampler (default ``config.method`` / ``config.steps``). ``seed=None``
        uses ``config.train.seed``. ``output="pyg"`` returns PyG ``Data``. ``inter_block_scaling``:
        overrides ``config.inter_block_scaling`` (a sampling-time choice; see ``config``).

        Graph ``i`` draws from its own streams keyed by ``(seed, i)`` (:class:`~scigen.core.streams.SampleStreams`):
        its node count and block sizes and its inter-block edges from child ``0`` of key ``i``
        (:meth:`~scigen.core.streams.SampleStreams.children`), block ``j``'s prior and sampler noise from child
        ``j + 1``; so the first ``k`` of ``sample(n)`` are ``sample(k)`` (same seed and ``n_nodes`` for those
        ``k``), and ``devices=N`` splits the graphs over ``N`` processes (Lightning Fabric) and returns the
        one-process result (with ``devices > 1`` call it under ``if __name__ == "__main__"``). With
        ``config.full_graph`` the block width is the largest requested size when it exceeds the training width,
        so there a graph also depends on the largest size among the ``n`` (not on the process count)."""
        from scigen.core.samplers import check_method
        from scigen.core.streams import SampleStreams
        from scigen.core.system.sharded import sample_in_shards

        n = check_graph_count(n_samples)
        self.require_trained("sample")
        if output not in ("networkx", "pyg"):
            raise InvalidInputError(f"output: expected 'networkx' or 'pyg', got {output!r}")
        method = self.config.method if method is None else check_method(method)
        steps = self.config.steps if steps is None else check_count(steps, "steps")
        seed = self.sample_seed(seed)
        keyed = SampleStreams(seed, torch.arange(n))
        plans = self._plans(n, n_nodes, keyed.children(torch.arange(n), torch.zeros(n, dtype=torch.long)))
        width = max([int(self.metadata["width"])] + [sum(p) for p in plans]) if self.config.full_graph \
            else int(self.metadata["width"])
        types = self.metadata["node_types"]
        typed = bool(self.metadata["typed"])
        # keys past n (last rank's padding) are dropped
        draw = self._graph_draw(lambda keys: [plans[min(i, n - 1)] for i in keys.tolist()], width, method, steps,
                                seed, inter_block_scaling)
        adj, tix, sizes = sample_in_shards(draw, n, devices=devices)
        graphs = _graphs_of(adj, tix, sizes, types, typed)
        if output == "pyg":
            from scigen.graphs.convert import to_pyg

            return [to_pyg(g, types if typed else None) for g in graphs]
        return graphs

    def _graph_draw(self, plans_of, width: int, method: str, steps: int, seed: int, inter_block_scaling,
                    pad_to: int | None = None):
        """``draw(keys)``: ``(adj [m, N, N], node type indices [m, N], sizes [m])`` of the graphs with these
        indices and block plans ``plans_of(keys)``; ``N``: ``pad_to`` or the largest graph of the call."""
        from scigen.core.streams import SampleStreams
        from scigen.graphs.sbgd.sampling import assemble_graphs, generate_blocks

        types = self.metadata["node_types"]
        typed = bool(self.metadata["typed"])
        k_range = self._k_range(inter_block_scaling)
        self.network.eval()

        @torch.no_grad()
        def draw(keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            mine = plans_of(keys)
            own = SampleStreams(seed, keys.to(self.device))
            parent = torch.repeat_interleave(torch.arange(len(mine)), torch.tensor([len(p) for p in mine]))
            child = torch.cat([torch.arange(1, len(p) + 1) for p in mine])
            adj01, tix, mask, inv_k = generate_blocks(self.process, mine, width, len(types), steps=steps, method=method,
                                                      generator=own.children(parent, child))
            per_graph = []
            for j in range(len(mine)):
                g = own.children([j], [0])
                g.draws = 2  # after the size and block-plan draws of _plans
                per_graph.append(g)
            graphs = assemble_graphs(self.network.inter, mine, adj01, tix, mask, inv_k, types, typed=typed,
                                     generator=per_graph, k_range=k_range)
            return _dense(graphs, types, typed, pad_to)

        return draw

    def sample_draw(self, *, seed: int | None = None, n_nodes: int | None = None, method: str | None = None,
                    steps: int | None = None, inter_block_scaling: str | None = None):
        """``draw(keys)`` for :meth:`~scigen.core.system.base.System.sample_to`: graph ``i`` of :meth:`sample` as
        ``adjacency`` ``[m, N, N]`` (bool, symmetric), ``node_type`` ``[m, N]`` (indices into the training node
        types) and ``n_nodes`` ``[m]``, padded to ``N`` = ``n_nodes`` or the largest training graph:
        ``model.sample_to("graphs", 10**5, devices=4, chunk_size=512)`` writes one folder of ``.npy`` files.
        ``n_nodes``: one size for all or ``None`` (drawn as in :meth:`sample`). Not with ``config.full_graph``
        (its block width is the largest size among all the graphs drawn together)."""
        from scigen.core.samplers import check_method
        from scigen.core.streams import SampleStreams

        self.require_trained("sample")
        if self.config.full_graph:
            raise InvalidInputError("sample_to: with full_graph=True a graph's block width depends on every graph "
                                    "drawn with it; use sample()")
        if n_nodes is not None and not isinstance(n_nodes, int):
            raise InvalidInputError(f"sample_to takes one n_nodes for all graphs (an int) or None, got {n_nodes!r}")
        method = self.config.method if method is None else check_method(method)
        steps = self.config.steps if steps is None else check_count(steps, "steps")
        seed = self.sample_seed(seed)
        pad_to = n_nodes if n_nodes is not None else max(self.metadata["train_sizes"])
        self._plans(1, n_nodes, SampleStreams(seed, torch.zeros(1, dtype=torch.long)))  # n_nodes checked now

        def plans_of(keys: torch.Tensor) -> list[list[int]]:
            m = len(keys)
            return self._plans(m, n_nodes, SampleStreams(seed, keys).children(torch.arange(m),
                                                                               torch.zeros(m, dtype=torch.long)))

        inner = self._graph_draw(plans_of, int(self.metadata["width"]), method, steps, seed, inter_block_scaling,
                                 pad_to)

        def draw(keys: torch.Tensor) -> dict[str, torch.Tensor]:
            adj, tix, sizes = inner(keys)
            return {"adjacency": adj, "node_type": tix, "n_nodes": sizes}

        return draw

    def _k_range(self, scaling: str | None) -> tuple[int, int] | None:
        """The training block counts ``(k_min, k_max)`` when ``per_block_count`` scaling applies."""
        scaling = self.config.inter_block_scaling if scaling is None else scaling
        if scaling not in ("none", "per_block_count"):
            raise InvalidInputError(f"inter_block_scaling: expected 'none' or 'per_block_count', got {scaling!r}")
        if scaling == "none" or self.config.full_graph:
            return None
        if "block_counts" not in self.metadata:  # a checkpoint from before the switch: sample as it did
            import warnings

            warnings.warn("inter_block_scaling='per_block_count' needs the training block counts, which this "
                          "checkpoint predates: sampling with 'none' (retrain to scale)", stacklevel=3)
            return None
        lo, hi = self.metadata["block_counts"]
        return int(lo), int(hi)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, data: Any, *, n_samples: int | None = None, train: Any = None, orbit: bool = True,
                 seed: int | None = None, polygraph: bool | None = None, **sample_kwargs: Any) -> dict[str, float]:
        """Sample graphs at the sizes of ``data`` (cycled to ``n_samples``) and score them:
        V.U.N. (validity by ``config.family``; novelty against ``train`` or the last ``fit``'s graphs)
        and the four MMD² (degree, clustering, orbit, spectre; biased, Gaussian-TV); ``polygraph``: PolyGraph
        Discrepancy (``PGD``, ``PGD_<descriptor>``) and ``VUN[polygraph]`` beside them (``None``: when the
        ``polygraph`` extra is installed and there are >= 8 graphs; ``True``: required; ``False``: none)."""
        from scigen.graphs.metrics import graph_mmds, vun

        self.require_trained("evaluate")
        from scigen.graphs.sbgd.inputs import check_against

        ref = self._graphs(data)
        check_against(ref, self.metadata, full_graph=False, what="data")
        n = len(ref) if n_samples is None else check_count(n_samples, "n_samples")
        sample_kwargs.setdefault("n_nodes", [ref[i % len(ref)].number_of_nodes() for i in range(n)])
        gen = self.sample(n, seed=seed, **sample_kwargs)
        train_graphs = self._graphs(train, "train") if train is not None else getattr(self, "_train_graphs", [])
        from scigen.graphs.metrics.pgd import evaluation_scores

        return (vun(gen, train_graphs, self.config.family) | graph_mmds(ref, gen, orbit=orbit)
                | evaluation_scores(polygraph, ref, gen, train_graphs, self.config.family))

    # ------------------------------------------------------------------ CLI / demo
    @classmethod
    def default_data(cls, quick: bool = False) -> list[nx.Graph]:
        """Small SBM graphs: 2–3 communities of 8–16 nodes (``p_in`` 0.5, ``p_out`` 0.02)."""
        from scigen.graphs.data import sbm_graphs

        return sbm_graphs(64 if quick else 200, min_blocks=2, max_blocks=3, min_size=8, max_size=16, p_in=0.5,
                          p_out=0.02, seed=0)

    @classmethod
    def read_data(cls, path: str | os.PathLike[str]) -> list[nx.Graph]:
        from scigen.graphs.sbgd.inputs import as_sbgd_graphs

        return as_sbgd_graphs(path, "--data")

    def write_samples(self, samples: Any, path: str | os.PathLike[str]) -> Path:
        """``.graphml`` → a new folder of GraphML files; anything else → the edge-list format."""
        from scigen.graphs.boundary import write_samples

        return write_samples(samples, path)

    @classmethod
    def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
        """See :func:`scigen.graphs.sbgd.demo.run_demo`."""
        from scigen.graphs.sbgd.demo import run_demo

        return run_demo(cls, out, quick=quick)


def _device_of(module: nn.Module) -> torch.device:
    for p in module.parameters():
        return p.device
    return torch.device("cpu")


def _dense(graphs: list[nx.Graph], types: Sequence[str], typed: bool,
           pad_to: int | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Generated graphs (nodes ``0..N-1``) as ``adj [B, N, N]`` (bool), node type indices ``[B, N]`` and sizes
    ``[B]``, padded to ``pad_to`` or the largest graph: what :func:`~scigen.core.system.sharded.sample_in_shards`
    gathers."""
    sizes = [g.number_of_nodes() for g in graphs]
    width = max(sizes) if pad_to is None else pad_to
    adj = torch.zeros(len(graphs), width, width, dtype=torch.bool)
    tix = torch.zeros(len(graphs), width, dtype=torch.long)
    index = {t: i for i, t in enumerate(types)}
    for b, g in enumerate(graphs):
        if g.number_of_edges():
            e = torch.tensor(list(g.edges()), dtype=torch.long)
            adj[b, e[:, 0], e[:, 1]] = True
            adj[b, e[:, 1], e[:, 0]] = True
        if typed:
            tix[b, :sizes[b]] = torch.tensor([index[g.nodes[v]["type"]] for v in range(sizes[b])], dtype=torch.long)
    return adj, tix, torch.tensor(sizes, dtype=torch.long)


def _graphs_of(adj: torch.Tensor, tix: torch.Tensor, sizes: torch.Tensor, types: Sequence[str],
               typed: bool) -> list[nx.Graph]:
    """The graphs of :func:`_dense`'s tensors (nodes ``0..N-1`` in order; ``type`` attributes when typed)."""
    out = []
    for b, n in enumerate(sizes.tolist()):
        g = nx.Graph()
        for v in range(n):
            g.add_node(v, **({"type": types[int(tix[b, v])]} if typed else {}))
        iu = torch.nonzero(torch.triu(adj[b, :n, :n], 1)).tolist()
        g.add_edges_from((int(u), int(v)) for u, v in iu)
        out.append(g)
    return out
