"""AGDiff — pseudo-anomalous graphs from a latent diffusion model for graph-level anomaly detection
(Cai, Zhang, Liu, Ng; ICML 2025, "Leveraging Diffusion Model as Pseudo-Anomalous Graph Generator for
Graph-Level Anomaly Detection").

The verbs. ``fit(normal graphs)`` runs the engine's ``fit`` twice: the VGAE (``objective.vgae_loss``,
eq. 7) on ``pretrain_share`` of the steps, then — VGAE frozen — the conditional latent DDPM and the
detector jointly (``objective.joint_loss``, eq. 14). ``score`` gives anomaly scores ``1 − h_φ(G)``,
``evaluate`` AUC and F1 on labelled graphs (``metrics``), ``sample`` decoded pseudo-anomalies of
given normal graphs (``sampling``). Only graphs marked normal (``G.graph["anomaly"] == 0``, or
unmarked) are trained on. The stratified 5-fold protocol and the baselines are in ``protocol`` and
``baselines``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import torch
from torch import nn

from scigen.core.errors import InvalidInputError
from scigen.core.system import DemoResult, System
from scigen.core.validation import check_count
from scigen.graphs.agdiff.config import AGDiffConfig
from scigen.graphs.agdiff.graphs import PackedGraphs, anomaly_labels, as_graphs, node_vocab, pack, unpack
from scigen.graphs.data.store import GraphStore
from scigen.graphs.validate import check_graph_count

#: normal training graphs kept in the saved run for ``sample()`` without graphs (edge lists + types)
REFERENCE_GRAPHS = 64


def _graph_to_json(g: nx.Graph) -> dict:
    from scigen.graphs.validate import node_type

    nodes = list(g.nodes)
    pos = {v: i for i, v in enumerate(nodes)}
    return {"types": [node_type(g, v) for v in nodes], "edges": [[pos[u], pos[v]] for u, v in g.edges]}


def _graph_from_json(d: dict) -> nx.Graph:
    g = nx.Graph(anomaly=0)
    for i, t in enumerate(d["types"]):
        g.add_node(i, type=t)
    g.add_edges_from(tuple(e) for e in d["edges"])
    return g


class AGDiff(System):
    """Graph-level anomaly detection with diffusion-generated pseudo-anomalies (module docstring)."""

    domain = "graphs"
    name = "agdiff"
    description = "AGDiff: VGAE + conditional latent DDPM pseudo-anomalies + GIN detector (graph anomaly detection)."
    Config = AGDiffConfig

    # ------------------------------------------------------------------ wiring
    @property
    def vocab(self) -> list[str]:
        if "vocab" not in self.metadata:
            raise InvalidInputError("AGDiff has no node vocabulary yet: call fit(graphs) first")
        return list(self.metadata["vocab"])

    def build_network(self) -> nn.Module:
        if "vocab" not in self.metadata:
            return nn.Module()  # placeholder until fit() has seen the node types
        from scigen.graphs.agdiff.model import AGDiffNet

        c = self.config
        return AGDiffNet(len(self.vocab), hidden=c.hidden, gin_layers=c.gin_layers, latent=c.latent_dim,
                         denoiser_hidden=c.denoiser_hidden, denoiser_layers=c.denoiser_layers, time_dim=c.time_dim,
                         condition_noise=c.condition_noise, detector_layers=c.detector_layers)

    @property
    def process(self):
        from scigen.graphs.agdiff.objective import make_process

        return make_process(self.config).bind(self.network.denoiser)

    def _graphs(self, data: Any, what: str) -> list[nx.Graph]:
        graphs = as_graphs(data, what)
        limit = self.config.max_nodes
        if limit is not None and isinstance(graphs, GraphStore):  # sizes without building the graphs
            n = graphs.n_nodes()
            big = [f"{what}[{i}] has {n[i]}" for i in np.nonzero(n > limit)[0][:5]]
            if big:
                raise InvalidInputError(f"{what}: graphs larger than max_nodes={limit}: " + "; ".join(big))
        elif limit is not None:
            big = [f"{what}[{i}] has {g.number_of_nodes()}" for i, g in enumerate(graphs) if g.number_of_nodes() > limit]
            if big:
                raise InvalidInputError(f"{what}: graphs larger than max_nodes={limit}: " + "; ".join(big[:5]))
        return graphs

    # ------------------------------------------------------------------ training
    def prepare_data(self, data: Any, *, role: str) -> torch.Tensor:
        """The normal graphs of ``data`` packed to ``[G, N, F + N + 1]`` (the first training data fixes
        the node vocabulary). Graphs marked ``anomaly = 1`` are left out: AGDiff trains on normal graphs."""
        graphs = self._graphs(data, role)
        stored = isinstance(graphs, GraphStore)  # on disk: labels read without building graphs, a view kept
        if stored:
            y = graphs.labels("anomaly") if "anomaly" in graphs.label_names else None
        else:
            y = anomaly_labels(graphs, role, required=False)
        if y is not None:
            graphs = graphs.subset(np.nonzero(y == 0)[0]) if stored else [g for g, a in zip(graphs, y, strict=True)
                                                                          if a == 0]
            if not graphs:
                raise InvalidInputError(f"{role}: every graph is marked anomalous; AGDiff trains on normal graphs")
        if role == "data" and "vocab" not in self.metadata:
            fixed = self.config.node_types
            if fixed is not None:
                extra = sorted(set(node_vocab(graphs)) - set(fixed))
                if extra:
                    raise InvalidInputError(f"{role}: node types {extra[:5]} are not in config.node_types")
            self.metadata["vocab"] = list(fixed) if fixed is not None else node_vocab(graphs)
            self.network = self.make_network()
        if role == "data":
            self.metadata["reference_graphs"] = [_graph_to_json(g) for g in graphs[:REFERENCE_GRAPHS]]
            self.metadata["n_train_graphs"] = len(graphs)
        return PackedGraphs(graphs, self.vocab, role) if stored else pack(graphs, self.vocab, role)

    def training_loss(self, network: nn.Module, batch: torch.Tensor) -> torch.Tensor:
        from scigen.graphs.agdiff.objective import joint_loss, make_process

        return joint_loss(self.config, make_process(self.config))(network, batch)

    def fit(self, data: Any, *, max_steps: int | None = None, val_data: Any = None, **options: Any) -> AGDiff:
        """Train on the normal graphs of ``data`` in two engine stages (:meth:`train_stages`) on the one budget
        ``max_steps``: ``"vgae"`` pre-trains the VGAE on ``config.stage_shares["vgae"]`` of it (0.4, at least
        one step), then ``"joint"`` trains the diffusion model and the detector on the rest (at least one),
        the VGAE frozen.

        ``options`` override ``config.train`` for this call; a ``checkpoint_dir`` gets one sub-folder
        per stage (``vgae/``, ``joint/``), so ``resume=True`` continues either stage exactly.
        """
        from scigen.core.train.stages import Stage
        from scigen.graphs.agdiff.objective import (
            joint_loss,
            make_process,
            sampling_log_rate,
            sampling_log_rate_streamed,
            vgae_loss,
        )

        rows = self.prepare_data(data, role="data")
        val = None if val_data is None else self.prepare_data(val_data, role="val_data")

        def set_edge_offset() -> None:  # the negative-sampling prior correction of the frozen decoder
            if isinstance(rows, torch.Tensor):
                _, adj, mask = unpack(rows, self.network.n_features)
                rate = sampling_log_rate(adj, mask, self.config.neg_ratio)
            else:  # graphs on disk: the same value, a chunk of graphs at a time
                rate = sampling_log_rate_streamed(rows, self.network.n_features, self.config.neg_ratio)
            self.network.vgae.edge_offset.fill_(float(rate))

        stages = [Stage("vgae", ("vgae",), loss=vgae_loss(self.config), share=self.config.stage_shares["vgae"]),
                  Stage("joint", ("condition", "denoiser", "detector"),
                        loss=joint_loss(self.config, make_process(self.config)), before=set_edge_offset)]
        self.train_stages(rows, stages, val_data=val, max_steps=max_steps, **options)
        return self

    # ------------------------------------------------------------------ scoring
    @torch.no_grad()
    def score(self, data: Any, *, batch_size: int = 256) -> np.ndarray:
        """Anomaly scores ``1 − h_φ(G)`` (higher = more anomalous) of every graph of ``data``."""
        self.require_trained("score")
        graphs = self._graphs(data, "data")
        net = self.network
        net.eval()
        out = []
        for i in range(0, len(graphs), check_count(batch_size, "batch_size")):
            part = graphs[i:i + batch_size]
            x, adj, mask = unpack(pack(part, self.vocab, "data").to(self.device), net.n_features)
            out.append(1.0 - torch.sigmoid(net.detector(x, adj, mask)).double().cpu())
        return torch.cat(out).numpy()

    def evaluate(self, data: Any, *, threshold: float | None = None) -> dict[str, float]:
        """AUC and F1 of :meth:`score` on graphs labelled ``G.graph["anomaly"]`` (rules: ``metrics``)."""
        from scigen.graphs.agdiff.metrics import detection_scores

        self.require_trained("evaluate")
        graphs = self._graphs(data, "data")
        y = anomaly_labels(graphs, "data")
        return detection_scores(y, self.score(graphs), threshold=threshold)

    # ------------------------------------------------------------------ sampling
    def reference_graphs(self) -> list[nx.Graph]:
        """The normal training graphs kept in the run (up to 64) that ``sample()`` perturbs by default."""
        return [_graph_from_json(d) for d in self.metadata.get("reference_graphs", [])]

    @torch.no_grad()
    def sample(self, graphs: Any = None, *, n_samples: int | None = None, seed: int | None = None,
               steps: int | None = None, method: str | None = None, devices: int = 1) -> list[nx.Graph]:
        """Pseudo-anomalous graphs generated from normal ``graphs`` (default: the run's reference graphs),
        cycling through them until ``n_samples`` (default ``len(graphs)``) are drawn; each keeps its source
        graph's node count. ``steps``/``method``: the reverse chain's steps and engine solver (default
        ``config.generate_steps``, DDIM); reproducible by ``seed``.

        Pseudo-anomaly ``i`` (from source graph ``i mod len(graphs)``) draws its encoder, condition and chain
        noise from its own stream keyed by ``(seed, i)`` (:class:`~scigen.core.streams.SampleStreams`), so the
        first ``k`` of ``sample(n)`` are ``sample(k)``, and ``devices=N`` splits the samples over ``N`` processes
        (Lightning Fabric) and returns the one-process result (with ``devices > 1`` call it under
        ``if __name__ == "__main__"``)."""
        from scigen.core.system.sharded import sample_in_shards
        from scigen.graphs.agdiff.sampling import to_networkx

        self.require_trained("sample")
        source = self.reference_graphs() if graphs is None else self._graphs(graphs, "graphs")
        n = len(source) if n_samples is None else check_graph_count(n_samples)
        types, adj, sizes = sample_in_shards(self._pseudo_draw(source, seed, steps, method), n, devices=devices)
        mask = torch.arange(types.shape[1])[None, :] < sizes[:, None]
        x = torch.nn.functional.one_hot(types, len(self.vocab)).float()
        return to_networkx(x, adj.float(), mask, self.vocab)

    def _pseudo_draw(self, source: list, seed: int | None, steps: int | None, method: str | None):
        """``draw(keys)``: ``(node types [m, N], adjacency [m, N, N], sizes [m])`` of the pseudo-anomalies with these
        indices (source graph ``i mod len(source)``), ``N`` the largest of the call."""
        from scigen.core.rng import preserved_rng
        from scigen.core.samplers import check_method
        from scigen.core.streams import SampleStreams, sample_streams
        from scigen.graphs.agdiff.objective import encode
        from scigen.graphs.agdiff.sampling import pseudo_graphs, pseudo_latents

        method = check_method(method, allow_none=True)
        seed = self.sample_seed(seed)
        SampleStreams(seed, [0])  # checks the seed before any process starts
        net = self.network

        @torch.no_grad()
        def draw(keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            chosen = [source[i % len(source)] for i in keys.tolist()]
            x, adj, mask = unpack(pack(chosen, self.vocab, "graphs").to(self.device), net.n_features)
            keyed = SampleStreams(seed, keys.to(self.device))
            with preserved_rng(), sample_streams(keyed):  # every draw from the sample's stream, none global
                z0 = encode(net, x, adj, mask)
                c = net.condition(z0, generator=keyed)
                z = pseudo_latents(net, self.process, z0, c, mask, self.config, generator=keyed, steps=steps,
                                   method=method)
            xf, af = pseudo_graphs(net, z, z0, x, adj, mask, self.config, hard=True)
            return xf.argmax(-1).cpu(), (af > 0.5).cpu(), mask.sum(1).cpu()

        return draw

    def sample_draw(self, *, graphs: Any = None, seed: int | None = None, steps: int | None = None,
                    method: str | None = None):
        """``draw(keys)`` for :meth:`~scigen.core.system.base.System.sample_to`: pseudo-anomaly ``i`` of
        :meth:`sample` as ``node_type`` ``[m, N]`` (indices into ``model.vocab``), ``adjacency`` ``[m, N, N]``
        (bool) and ``n_nodes`` ``[m]``, padded to the largest source graph: ``model.sample_to("pseudo", 10**5,
        graphs=normal, devices=4, chunk_size=1024)`` writes one folder of ``.npy`` files."""
        self.require_trained("sample")
        source = self.reference_graphs() if graphs is None else self._graphs(graphs, "graphs")
        width = max(g.number_of_nodes() for g in source)
        inner = self._pseudo_draw(source, seed, steps, method)

        def draw(keys: torch.Tensor) -> dict[str, torch.Tensor]:
            types, adj, sizes = inner(keys)
            w = types.shape[1]
            return {"node_type": torch.nn.functional.pad(types, (0, width - w)),
                    "adjacency": torch.nn.functional.pad(adj, (0, width - w, 0, width - w)), "n_nodes": sizes}

        return draw

    # ------------------------------------------------------------------ CLI / demo
    def example_condition(self, data: Any) -> tuple:
        graphs = as_graphs(data, "data")
        y = anomaly_labels(graphs, "data", required=False)
        normal = graphs if y is None else [g for g, a in zip(graphs, y, strict=True) if a == 0]
        return (normal[:8],)

    def sample_for_cli(self, n_samples: int, seed: int, devices: int = 1) -> list[nx.Graph]:
        return self.sample(n_samples=n_samples, seed=seed, devices=devices)

    @classmethod
    def default_data(cls, quick: bool = False) -> list[nx.Graph]:
        from scigen.graphs.agdiff.synthetic import synthetic_anomaly_graphs

        return synthetic_anomaly_graphs(120, 24, seed=0) if quick else synthetic_anomaly_graphs(300, 60, seed=0)

    @classmethod
    def read_data(cls, path: str | os.PathLike[str]) -> list[nx.Graph]:
        return as_graphs(path, "--data")

    def write_samples(self, samples: Any, path: str | os.PathLike[str]) -> Path:
        """The typed edge-list format of :func:`scigen.graphs.io.write_edgelist` (``.graphml``: a folder)."""
        from scigen.graphs.boundary import write_samples

        return write_samples(samples, path)

    @classmethod
    def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
        """See :func:`scigen.graphs.agdiff.demo.run_demo`."""
        from scigen.graphs.agdiff.demo import run_demo

        return run_demo(cls, out, quick=quick)
