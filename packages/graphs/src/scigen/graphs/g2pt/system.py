"""G2PT — Graph Generative Pre-trained Transformer (Chen, Wang, He, Du, Hassoun, Xu, Liu; ICML 2025).

Graphs become node-set + edge-set token sequences (:mod:`~scigen.graphs.g2pt.tokenizer`), a GPT-2
decoder learns them by next-token prediction (:mod:`~scigen.graphs.g2pt.model`), and sampling with
the grammar mask (:mod:`~scigen.graphs.g2pt.grammar`) turns every sample into a graph. On top:

* goal-oriented fine-tuning by rejection sampling (G2PT Alg. 2 / Alg. 3 with ``rounds > 1``):
  sample, keep valid graphs whose reward passes a threshold (or the top ``keep_fraction``),
  fine-tune on them, repeat from the fine-tuned model;
* property prediction (§4.2): the last token's hidden state → MLP head, the upper half of the
  transformer unfrozen.

Inputs: ``networkx`` graphs (node/edge attribute ``"type"`` optional) or SMILES strings (with
``family="molecule"``); outputs: ``networkx`` graphs (``G2PT.to_smiles`` for molecules).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import torch
from torch import nn

from scigen.core.errors import InvalidInputError
from scigen.core.files import atomic_write_text
from scigen.core.system import DemoResult, System, write_report
from scigen.core.system.base import Stopwatch
from scigen.graphs.g2pt.config import G2PTConfig
from scigen.graphs.g2pt.data import SequenceDataset
from scigen.graphs.g2pt.model import SIZES, G2PTNet, PropertyHead, next_token_loss
from scigen.graphs.g2pt.sampling import generate, node_prompt
from scigen.graphs.g2pt.tokenizer import Vocab, decode, encode
from scigen.graphs.validate import check_graphs


class G2PT(System):
    """Graph generation as next-token prediction (see module docstring)."""

    domain = "graphs"
    name = "g2pt"
    description = "G2PT: node-set + edge-set sequences with a GPT-2 decoder; RFT fine-tuning; property heads."
    Config = G2PTConfig

    # ------------------------------------------------------------------ wiring
    @property
    def vocab(self) -> Vocab:
        if "vocab" not in self.metadata:
            raise InvalidInputError("G2PT has no vocabulary yet: call fit(graphs) first")
        return Vocab.from_dict(self.metadata["vocab"])

    def _dims(self) -> tuple[int, int, int]:
        n_layer, n_head, d = SIZES[self.config.size]
        return self.config.n_layer or n_layer, self.config.n_head or n_head, self.config.d_model or d

    def build_network(self) -> nn.Module:
        if "vocab" not in self.metadata:
            return nn.Module()  # placeholder until fit() has seen the data
        torch.manual_seed(self.config.seed)
        n_layer, n_head, d = self._dims()
        return G2PTNet(len(self.vocab), int(self.metadata["block_size"]), n_layer, n_head, d)

    def _as_graphs(self, data: Any, what: str = "data") -> list[nx.Graph]:
        if isinstance(data, os.PathLike) or (isinstance(data, str) and Path(data).exists()):
            from scigen.graphs.io import read_graphs

            data = read_graphs(data)
        if isinstance(data, nx.Graph):
            data = [data]
        data = list(data) if data is not None else []
        if not data:
            raise InvalidInputError(f"{what}: the dataset is empty (expected graphs or SMILES)")
        if all(isinstance(x, str) for x in data):
            from scigen.graphs.convert import smiles_to_graphs

            return smiles_to_graphs(data, kekulize=self.config.kekulize, source=what)
        return check_graphs(data, what)

    def _setup(self, graphs: list[nx.Graph]) -> None:
        vocab = Vocab.from_graphs(graphs, self.config.max_nodes)
        rng = np.random.default_rng(0)
        longest = max(len(encode(g, vocab, ordering=self.config.ordering, rng=rng)) for g in graphs)
        self.metadata["vocab"] = vocab.to_dict()
        self.metadata["block_size"] = int(np.ceil(longest * self.config.length_margin)) + 4
        self.network = self.build_network()

    def _optimizer(self, lr: float):
        wd, betas = self.config.weight_decay, tuple(self.config.betas)

        def make(params):
            params = [p for p in params if p.requires_grad]
            decay = [p for p in params if p.ndim >= 2]
            rest = [p for p in params if p.ndim < 2]
            return torch.optim.AdamW([{"params": decay, "weight_decay": wd}, {"params": rest, "weight_decay": 0.0}],
                                     lr=lr, betas=betas)
        return make

    # ------------------------------------------------------------------ verbs
    def fit(self, data: Any, *, max_steps: int | None = None, **options: Any) -> G2PT:
        """Train on graphs (or SMILES). The first call fixes the vocabulary and the network size.

        ``options`` go to :func:`scigen.core.train.fit` (``batch_size``, ``lr``, ``checkpoint_dir``,
        ``strategy="ddp"``, ``devices``, ``precision``, ``progress``, ...).
        """
        from scigen.core.train import fit

        graphs = self._as_graphs(data)
        if "vocab" not in self.metadata:
            self._setup(graphs)
        self._train_graphs = graphs
        vocab = self.vocab
        steps = int(max_steps or self.config.max_steps)
        ds = SequenceDataset(graphs, vocab, ordering=self.config.ordering, copies=self.config.copies,
                             seed=self.config.seed + int(self.metadata.get("trained_steps", 0)),
                             length=self.network.block_size)
        encode(graphs[0], vocab)  # fail early on unknown types / too many nodes
        bad = [f"graphs[{i}] has {g.number_of_nodes()} nodes" for i, g in enumerate(graphs)
               if g.number_of_nodes() > vocab.max_nodes]
        if bad:
            raise InvalidInputError(f"graphs larger than the trained vocabulary (max_nodes={vocab.max_nodes}): "
                                    + "; ".join(bad[:10]))
        pad = vocab.pad
        lr = float(options.pop("lr", self.config.lr))
        options.setdefault("batch_size", self.config.batch_size)
        options.setdefault("seed", self.config.seed)
        options.setdefault("grad_clip", self.config.grad_clip or None)
        options.setdefault("lr_schedule", "cosine")
        options.setdefault("warmup_steps", min(self.config.warmup_steps, steps // 10))
        options.setdefault("optimizer", self._optimizer(lr))
        options.setdefault("logger", None)
        result = fit(self.network, lambda net, batch: next_token_loss(net, batch, pad), ds, max_steps=steps,
                     lr=lr, **options)
        self.network = result.module
        self.metadata["trained_steps"] = int(self.metadata.get("trained_steps", 0)) + int(result.steps)
        self.metadata["final_loss"] = float(result.losses[-1]) if len(result.losses) else None
        self.losses = list(result.losses)
        return self

    def sample_sequences(self, n: int, *, temperature: float | None = None, top_k: int | None = None,
                         grammar: bool = True, prompt_nodes: int | Sequence[str] | None = None,
                         prompt: Sequence[int] | None = None, seed: int | None = None,
                         batch_size: int = 128) -> list[list[int]]:
        """Token sequences (see :func:`scigen.graphs.g2pt.sampling.generate`)."""
        vocab = self.vocab
        if prompt_nodes is not None:
            prompt = node_prompt(vocab, prompt_nodes)
        gen = torch.Generator().manual_seed(self.config.seed if seed is None else int(seed))
        return generate(self.network, vocab, int(n), temperature=self.config.temperature if temperature is None
                        else temperature, top_k=top_k if top_k is not None else self.config.top_k, grammar=grammar,
                        prompt=prompt, generator=gen, batch_size=batch_size)

    def sample(self, n: int, **kwargs: Any) -> list[nx.Graph | None]:
        """``n`` generated graphs (``None`` only for undecodable samples with ``grammar=False``).

        Keywords: ``temperature``, ``top_k``, ``grammar``, ``prompt_nodes`` (an int or a list of node
        types: a fixed node set the model completes with edges), ``prompt`` (token ids), ``seed``.
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise InvalidInputError(f"n: expected a positive number of samples, got {n!r}")
        vocab = self.vocab
        return [decode(s, vocab) for s in self.sample_sequences(int(n), **kwargs)]

    @staticmethod
    def to_smiles(graphs: Sequence[nx.Graph | None]) -> list[str | None]:
        """Canonical SMILES of typed molecular graphs (``None`` for invalid molecules)."""
        from scigen.graphs.convert import graph_to_smiles

        return [None if g is None else graph_to_smiles(g) for g in graphs]

    @torch.no_grad()
    def nll(self, data: Any, *, seed: int = 0) -> float:
        """Mean next-token NLL (nats/token) of ``data`` under one random permutation per graph."""
        graphs = self._as_graphs(data)
        vocab = self.vocab
        rng = np.random.default_rng(seed)
        seqs = [torch.tensor(encode(g, vocab, ordering=self.config.ordering, rng=rng, what=f"data[{i}]"))
                for i, g in enumerate(graphs)]
        from scigen.graphs.g2pt.data import pad

        self.network.eval()
        return float(next_token_loss(self.network, pad(seqs, vocab.pad), vocab.pad))

    def evaluate(self, data: Any, *, n: int | None = None, train: Any = None, orbit: bool = True,
                 **sample_kwargs: Any) -> dict[str, float]:
        """Sample ``n`` (default ``len(data)``) graphs and score them against ``data``.

        Generic graphs: validity / uniqueness / novelty / VUN (novelty against ``train`` or the
        graphs of the last ``fit``) and the four MMD² (degree, clustering, orbit, spectre).
        ``family="molecule"``: validity, uniqueness, novelty and FCD against ``data``.
        """
        if self.config.family == "molecule":
            from scigen.graphs.metrics.molecules import molecule_metrics

            ref = list(data)
            if not ref:
                raise InvalidInputError("data: the dataset is empty")
            ref_smiles = ref if isinstance(ref[0], str) else self.to_smiles(ref)
            gen = self.to_smiles(self.sample(n or len(ref), **sample_kwargs))
            train_smiles = train if train is not None else self.to_smiles(getattr(self, "_train_graphs", []))
            return molecule_metrics(gen, train_smiles, [s for s in ref_smiles if s], fcd_metric=len(ref_smiles) > 1)
        from scigen.graphs.metrics import graph_mmds, vun

        ref = self._as_graphs(data)
        train_graphs = self._as_graphs(train, "train") if train is not None else getattr(self, "_train_graphs", [])
        gen = [g for g in self.sample(n or len(ref), **sample_kwargs) if g is not None]
        out = vun(gen, train_graphs, self.config.family)
        out.update(graph_mmds(ref, gen, orbit=orbit))
        return out

    # ------------------------------------------------------------------ fine-tuning
    def finetune(self, reward: Callable[[nx.Graph], float | None], *, rounds: int = 1, n_samples: int = 256,
                 threshold: float | None = None, keep_fraction: float = 0.25, steps: int = 200,
                 lr: float | None = None, copies: int | None = None, seed: int = 0,
                 **sample_kwargs: Any) -> dict[str, Any]:
        """Rejection-sampling fine-tuning toward ``reward`` (G2PT Alg. 2; ``rounds > 1`` = self-bootstrap).

        Each round samples ``n_samples`` graphs, scores them (``reward(g)`` may return ``None`` for an
        invalid graph, which is rejected), keeps those with ``reward >= threshold`` (or, without a
        threshold, the top ``keep_fraction``), and trains ``steps`` steps on them starting from the
        current weights. Returns ``{"rounds": [{"mean_before", "accepted", "threshold"}...],
        "rewards_before": [...], "rewards_after": [...]}``; the summary also goes into
        ``self.metadata["finetune"]``.
        """
        if not callable(reward):
            raise InvalidInputError(f"reward: expected a callable graph -> float, got {type(reward).__name__}")
        if rounds < 1 or n_samples < 2 or steps < 1:
            raise InvalidInputError(f"rounds, n_samples, steps must be >= 1, 2, 1; got {rounds}, {n_samples}, {steps}")
        if not 0 < keep_fraction <= 1:
            raise InvalidInputError(f"keep_fraction: expected in (0, 1], got {keep_fraction}")

        def score(graphs):
            return [None if g is None else reward(g) for g in graphs]

        history = []
        first = None
        for r in range(rounds):
            graphs = self.sample(n_samples, seed=seed + r, **sample_kwargs)
            rewards = score(graphs)
            vals = np.array([v for v in rewards if v is not None], dtype=np.float64)
            if first is None:
                first = vals.tolist()
            cut = threshold if threshold is not None else (float(np.quantile(vals, 1 - keep_fraction)) if len(vals)
                                                          else float("inf"))
            kept = [g for g, v in zip(graphs, rewards, strict=True) if v is not None and v >= cut]
            if not kept:
                raise InvalidInputError(f"finetune round {r}: no sample reached the threshold {cut}")
            saved_copies = self.config.copies
            self.config.copies = copies or max(1, min(saved_copies, 20))
            try:
                self.fit(kept, max_steps=steps, lr=lr or self.config.lr, warmup_steps=0,
                         resume=False, progress=False)
            finally:
                self.config.copies = saved_copies
            history.append({"round": r, "mean_before": float(vals.mean()) if len(vals) else float("nan"),
                            "accepted": len(kept), "threshold": float(cut)})
        after = score(self.sample(n_samples, seed=seed + rounds, **sample_kwargs))
        after_vals = [float(v) for v in after if v is not None]
        summary = {"rounds": history, "rewards_before": first, "rewards_after": after_vals,
                   "mean_before": float(np.mean(first)) if first else float("nan"),
                   "mean_after": float(np.mean(after_vals)) if after_vals else float("nan")}
        self.metadata["finetune"] = {k: v for k, v in summary.items() if k.startswith("mean") or k == "rounds"}
        return summary

    # ------------------------------------------------------------------ property prediction
    def fit_property(self, data: Any, targets: Sequence[float] | np.ndarray | torch.Tensor, *, max_steps: int = 500,
                     lr: float = 1e-3, batch_size: int = 32, hidden: int = 128, **options: Any) -> G2PT:
        """Fit a property head (G2PT §4.2): last-token state → MLP, upper half of the layers unfrozen.

        ``targets``: ``[N]`` or ``[N, k]`` floats (standardised internally; predictions are in the
        original units).
        """
        from scigen.core.train import fit

        graphs = self._as_graphs(data)
        y = torch.as_tensor(np.asarray(targets, dtype=np.float32))
        y = y[:, None] if y.ndim == 1 else y
        if y.shape[0] != len(graphs) or not torch.isfinite(y).all():
            raise InvalidInputError(f"targets: expected {len(graphs)} finite rows, got shape {tuple(y.shape)}")
        mean, std = y.mean(0), y.std(0).clamp_min(1e-8) if len(y) > 1 else torch.ones(y.shape[1])
        head = PropertyHead(copy.deepcopy(self.network), y.shape[1], hidden)
        n_layer = len(head.net.blocks)
        for p in head.net.parameters():
            p.requires_grad_(False)
        for blk in head.net.blocks[n_layer // 2:]:
            for p in blk.parameters():
                p.requires_grad_(True)
        for p in head.net.ln_f.parameters():
            p.requires_grad_(True)
        vocab = self.vocab
        ds = SequenceDataset(graphs, vocab, ordering=self.config.ordering, copies=self.config.copies,
                             seed=self.config.seed, length=self.network.block_size, targets=(y - mean) / std)

        def loss_fn(module, batch):
            ids, t = batch
            return torch.nn.functional.mse_loss(module(ids, vocab.pad), t)

        options.setdefault("logger", None)
        result = fit(head, loss_fn, ds, max_steps=max_steps, lr=lr, batch_size=batch_size,
                     seed=self.config.seed, **options)
        self.property_head = result.module
        self.metadata["property"] = {"mean": mean.tolist(), "std": std.tolist(), "hidden": hidden,
                                     "n_targets": int(y.shape[1])}
        return self

    @torch.no_grad()
    def predict_property(self, data: Any) -> np.ndarray:
        """Predicted properties ``[N, k]`` (original units) from the head of :meth:`fit_property`."""
        head = getattr(self, "property_head", None)
        if head is None:
            raise InvalidInputError("no property head: call fit_property(graphs, targets) first")
        graphs = self._as_graphs(data)
        vocab = self.vocab
        from scigen.graphs.g2pt.data import pad

        ids = pad([torch.tensor(encode(g, vocab, ordering=self.config.ordering, rng=np.random.default_rng(i),
                                       what=f"data[{i}]")) for i, g in enumerate(graphs)], vocab.pad)
        head.eval()
        meta = self.metadata["property"]
        out = head(ids, vocab.pad) * torch.tensor(meta["std"]) + torch.tensor(meta["mean"])
        return out.numpy()

    def state_tensors(self) -> dict[str, torch.Tensor]:
        # the LM head is tied to the token embedding: safetensors refuses shared storage, so it is
        # stored once (as the embedding) and re-tied on load
        out = {k: v for k, v in super().state_tensors().items() if not k.endswith("lm_head.weight")}
        head = getattr(self, "property_head", None)
        if head is not None:
            out.update({f"property.{k}": v.clone() for k, v in head.state_dict().items()
                        if not k.endswith("lm_head.weight")})
        return out

    def load_state_tensors(self, tensors: dict[str, torch.Tensor], *, source: str = "") -> None:
        prop = {k[len("property."):]: v for k, v in tensors.items() if k.startswith("property.")}
        main = {k: v for k, v in tensors.items() if not k.startswith("property.")}
        if "network.wte.weight" in main:
            main["network.lm_head.weight"] = main["network.wte.weight"]
        super().load_state_tensors(main, source=source)
        if prop and "property" in self.metadata:
            meta = self.metadata["property"]
            head = PropertyHead(self.build_network(), int(meta["n_targets"]), int(meta["hidden"]))
            prop["net.lm_head.weight"] = prop["net.wte.weight"]
            head.load_state_dict(prop)
            self.property_head = head.eval()

    # ------------------------------------------------------------------ CLI / demo
    @classmethod
    def default_data(cls, quick: bool = False) -> list[nx.Graph]:
        from scigen.graphs.data import tree_graphs

        return tree_graphs(200, 16 if quick else 64, seed=0)

    @classmethod
    def read_data(cls, path: str | os.PathLike[str]) -> list:
        from scigen.graphs.io import read_graphs

        return read_graphs(path)

    def write_samples(self, samples: Any, path: str | os.PathLike[str]) -> Path:
        """``.smi``/``.smiles`` → SMILES lines (molecules); ``.graphml`` → a folder of GraphML files
        named ``path`` ; anything else → the typed edge-list format."""
        from scigen.graphs.io import write_edgelist, write_graphml

        p = Path(path)
        graphs = [g for g in samples if g is not None]
        if p.suffix in (".smi", ".smiles"):
            return atomic_write_text(p, "\n".join(s or "" for s in self.to_smiles(graphs)) + "\n")
        if p.suffix == ".graphml":
            p.mkdir(parents=True, exist_ok=True)
            for i, g in enumerate(graphs):
                write_graphml(g, p / f"{i:06d}.graphml")
            return p
        return write_edgelist(graphs, p)

    def sample_for_cli(self, n: int, seed: int) -> list[nx.Graph | None]:
        return self.sample(n, seed=seed)

    @classmethod
    def extra_cli_commands(cls, app) -> None:
        import typer

        from scigen.graphs.g2pt.rewards import REWARDS

        @app.command("finetune")
        def finetune(run: Path = typer.Option(..., "--run", help="Run directory written by train."),
                     out: Path = typer.Option(..., "--out", help="Run directory to write."),
                     reward: str = typer.Option("leaves", "--reward", help=f"One of {', '.join(REWARDS)}."),
                     rounds: int = typer.Option(1, "--rounds"),
                     n_samples: int = typer.Option(256, "--n-samples"),
                     steps: int = typer.Option(200, "--steps"),
                     keep_fraction: float = typer.Option(0.25, "--keep-fraction")) -> None:
            """Rejection-sampling fine-tuning of a trained run toward a named reward."""
            try:
                if reward not in REWARDS:
                    raise InvalidInputError(f"--reward: unknown reward {reward!r}; valid: {', '.join(REWARDS)}")
                model = cls.load(run)
                summary = model.finetune(REWARDS[reward], rounds=rounds, n_samples=n_samples, steps=steps,
                                         keep_fraction=keep_fraction)
                model.save(out)
            except (ValueError, FileNotFoundError) as exc:
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(2) from None
            typer.echo(f"mean reward {summary['mean_before']:.4g} -> {summary['mean_after']:.4g}; saved to {out}")

    @classmethod
    def demo(cls, out_dir: str | os.PathLike[str], *, quick: bool = False) -> DemoResult:
        """Tiny G2PT on random 10-node trees (quick: 8 nodes): tree validity / V.U.N. / MMDs against
        the untrained model (same node count) and an Erdős–Rényi baseline, then one rejection-sampling
        fine-tuning round toward more leaves among valid trees (reward histogram before/after).

        Budget: ~57 s full, ~30 s quick of CPU time (one torch thread, measured). Small trees keep the
        sequences short (``7n − 2`` tokens); V.U.N. is capped by novelty there (only 106 unlabelled
        trees have 10 nodes, and 23 have 8), so tree validity is the headline number."""
        from scigen.graphs.data import erdos_renyi_like, spectre_split, tree_graphs
        from scigen.graphs.g2pt.plot import plot_demo
        from scigen.graphs.g2pt.rewards import leaf_fraction
        from scigen.graphs.metrics import graph_mmds, is_tree_graph, vun

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        with Stopwatch() as sw:
            n_nodes, steps = (8, 300) if quick else (10, 600)
            train, _, test = spectre_split(tree_graphs(200, n_nodes, seed=0))
            model = cls(size="tiny", family="tree", lr=3e-3, batch_size=32, copies=50, warmup_steps=20)
            model._setup(train)
            n = 100
            # untrained samples stop early (tiny graphs are trivially trees): fix the node count instead
            untrained = [g for g in model.sample(n, seed=1, prompt_nodes=n_nodes) if g is not None]
            before = vun(untrained, train, "tree") | graph_mmds(test, untrained)
            model.fit(train, max_steps=steps, progress=False)
            after = model.evaluate(test, n=n, train=train, seed=2)
            er = erdos_renyi_like(train, n, seed=3)
            er_scores = vun(er, train, "tree") | graph_mmds(test, er)

            def reward(g: nx.Graph) -> float | None:  # leaves among valid trees; invalid samples are rejected
                return leaf_fraction(g) if is_tree_graph(g) else None

            ft = model.finetune(reward, n_samples=64 if quick else 128, steps=40 if quick else 80,
                                lr=3e-3, seed=10, keep_fraction=0.2)
            tuned = model.evaluate(test, n=n, train=train, seed=4, orbit=False)
            samples = [g for g in model.sample(12, seed=5) if g is not None]
            scores = {"untrained\n(n fixed)": before["validity"], "Erdős–Rényi": er_scores["validity"],
                      "G2PT": after["validity"], "G2PT+RFT": tuned["validity"]}
            png = plot_demo(samples, ft, out / "g2pt_demo.png", scores=scores, valid=is_tree_graph,
                            title=f"G2PT-tiny, {steps} CPU steps on {n_nodes}-node trees "
                                  f"(samples after fine-tuning toward more leaves)")
            model.save(out / "model")
        metrics = {"tree_validity": after["validity"], "VUN": after["VUN"], "tree_validity_untrained": before["validity"],
                   "tree_validity_ER": er_scores["validity"], "tree_validity_after_RFT": tuned["validity"],
                   "MMD_degree": after["degree"], "MMD_degree_untrained": before["degree"],
                   "MMD_degree_ER": er_scores["degree"], "reward_mean_before": ft["mean_before"],
                   "reward_mean_after": ft["mean_after"]}
        report = write_report(out, {"system": cls.key(), "config": model.config.model_dump(mode="json"),
                                    "metrics": metrics, "after": after, "untrained": before, "erdos_renyi": er_scores,
                                    "after_finetune": tuned,
                                    "finetune": {k: v for k, v in ft.items() if k != "rounds"} | {"rounds": ft["rounds"]},
                                    "seconds": sw.seconds,
                                    "note": "MMD values are biased MMD² with the Gaussian-TV kernel; reward = "
                                            "fraction of leaves of valid trees (invalid samples rejected)"})
        return DemoResult(metrics=metrics, files=[report, png, out / "model"], seconds=sw.seconds)
