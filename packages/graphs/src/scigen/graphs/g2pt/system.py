"""G2PT — Graph Generative Pre-trained Transformer (Chen, Wang, He, Du, Hassoun, Xu, Liu; ICML 2025).

The verbs. Graphs become node-set + edge-set token sequences (``tokenizer``), a GPT-2 decoder learns
them by next-token prediction (``model``, ``objective``), sampling with the grammar mask (``grammar``,
``sampling``) turns every sample into a graph; rejection-sampling fine-tuning (``finetune``),
property prediction (``property``), evaluation (``evaluation``), the demo (``demo``) and the extra
CLI verb (``cli``) sit in their own modules. Inputs: networkx graphs, PyG ``Data``/``Dataset``,
SMILES (``family="molecule"``) or a path (``inputs``); outputs: networkx graphs, or PyG ``Data``
with ``output="pyg"`` (``outputs``; ``G2PT.to_smiles`` for molecules).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import torch
from torch import nn

from scigen.core.errors import InvalidInputError
from scigen.core.system import DemoResult, System
from scigen.core.validation import check_count, check_keywords
from scigen.graphs.boundary import Output, as_graphs, to_output, write_samples
from scigen.graphs.g2pt.config import G2PTConfig
from scigen.graphs.g2pt.data import SequenceDataset, pad
from scigen.graphs.g2pt.inputs import check_vocab
from scigen.graphs.g2pt.model import SIZES, G2PTNet, next_token_loss
from scigen.graphs.g2pt.objective import gpt_adamw, warmup_steps
from scigen.graphs.g2pt.sampling import generate, node_prompt
from scigen.graphs.g2pt.tokenizer import Vocab, decode, encode
from scigen.graphs.validate import check_graph_count

#: the sampling keywords of :meth:`G2PT.sample` besides ``n_samples``, ``seed`` and ``output``
_SAMPLE_OPTIONS = ("temperature", "top_k", "grammar", "prompt_nodes", "prompt", "batch_size")


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

    def build_network(self) -> nn.Module:
        if "vocab" not in self.metadata:
            return nn.Module()  # placeholder until fit() has seen the data
        n_layer, n_head, d = SIZES[self.config.size]
        c = self.config
        return G2PTNet(len(self.vocab), int(self.metadata["block_size"]), c.n_layer or n_layer, c.n_head or n_head,
                       c.d_model or d)

    @property
    def _token_format(self) -> dict[str, str]:
        """The sequence-format keywords of :func:`~.tokenizer.encode` this model was configured with."""
        return {"ordering": self.config.ordering, "node_ids": self.config.node_ids}

    def _graphs(self, data: Any, what: str = "data") -> list[nx.Graph]:
        return as_graphs(data, what, kekulize=self.config.kekulize)

    def _setup(self, graphs: list[nx.Graph]) -> None:
        """Fix the vocabulary and the context length from the first training data; build the network."""
        vocab = Vocab.from_graphs(graphs, self.config.max_nodes)
        rng = np.random.default_rng(0)
        longest = max(len(encode(g, vocab, rng=rng, **self._token_format)) for g in graphs)
        self.metadata["vocab"] = vocab.to_dict()
        self.metadata["block_size"] = int(np.ceil(longest * self.config.length_margin)) + 4
        self.network = self.make_network()

    # ------------------------------------------------------------------ training
    def prepare_data(self, data: Any, *, role: str, copies: int | None = None, seed: int | None = None):
        """A :class:`SequenceDataset` of ``data`` (the first training data fixes the vocabulary).

        Augmentation seed: ``seed`` (default ``config.train.seed``) plus the steps trained so far, so a
        second ``fit`` draws fresh permutations instead of replaying the first run's."""
        graphs = self._graphs(data, role)
        if role == "data" and "vocab" not in self.metadata:
            self._setup(graphs)
        vocab = self.vocab
        check_vocab(graphs, vocab, role)
        if role == "data":
            self._train_graphs = graphs
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise InvalidInputError(f"seed must be an int or None, got {seed!r}")
        base = self.sample_seed(seed)
        return SequenceDataset(graphs, vocab, **self._token_format,
                               copies=(self.config.copies if copies is None else check_count(copies, "copies"))
                               if role == "data" else 1,
                               seed=base + self.history.steps, length=self.network.block_size)

    def training_loss(self, network: nn.Module, batch: torch.Tensor) -> torch.Tensor:
        """G2PT's next-token cross-entropy (eq. 1), not an engine diffusion loss (see ``objective``)."""
        return next_token_loss(network, batch, self.vocab.pad)

    def fit(self, data: Any, *, max_steps: int | None = None, val_data: Any = None, copies: int | None = None,
            **options: Any) -> G2PT:
        """Train on graphs / PyG data / SMILES / a path; the first call fixes the vocabulary and network.

        ``options`` override ``config.train`` for this call (``lr``, ``batch_size``, ``seed``,
        ``checkpoint_dir``, ``progress``, ...; ``strategy="ddp"``, ``devices`` too). ``copies``
        overrides ``config.copies`` (permutations per graph) for this call. This overrides the base
        ``fit`` only to hand the engine GPT-2's AdamW groups at the call's ``lr`` and the warm-up rule
        of :mod:`~scigen.graphs.g2pt.objective`; training runs in ``System.train_network``.
        """
        train = self.prepare_data(data, role="data", copies=copies, seed=options.get("seed"))
        val = None if val_data is None else self.prepare_data(val_data, role="val_data", seed=options.get("seed"))
        opts = self.training_options()
        steps = opts.max_steps if max_steps is None else max_steps
        options.setdefault("warmup_steps", warmup_steps(opts.warmup_steps, steps))
        options.setdefault("optimizer", gpt_adamw(options.get("lr", opts.lr),
                                                  options.get("weight_decay", opts.weight_decay), self.config.betas))
        self.train_network(train, val_data=val, max_steps=max_steps, **options)
        return self

    # ------------------------------------------------------------------ sampling
    def _sequences(self, n: int, *, seed: int | None, temperature: float | None = None, top_k: int | None = None,
                   grammar: bool = True, prompt_nodes: int | Sequence[str] | None = None,
                   prompt: Sequence[int] | None = None, batch_size: int = 128,
                   keys: torch.Tensor | None = None) -> list[list[int]]:
        """``n`` sequences; sequence ``j`` draws from the stream of ``keys[j]`` (default ``j``) under ``seed``."""
        from scigen.core.streams import SampleStreams

        if prompt_nodes is not None:
            prompt = node_prompt(self.vocab, prompt_nodes)
        c = self.config
        seed = self.sample_seed(seed)
        streams = SampleStreams(seed, torch.arange(n) if keys is None else keys)
        return generate(self.network, self.vocab, n, temperature=c.temperature if temperature is None else temperature,
                        top_k=c.top_k if top_k is None else top_k, grammar=grammar, prompt=prompt,
                        generator=streams, batch_size=batch_size)

    def sample_sequences(self, n_samples: int, *, seed: int | None = None, devices: int = 1,
                         **kwargs: Any) -> list[list[int]]:
        """Token sequences (keywords of :meth:`sample` except ``output``)."""
        from scigen.core.system.sharded import sample_in_shards

        n = check_graph_count(n_samples)
        check_keywords(kwargs, ("n_samples", "seed", "output", "devices", *_SAMPLE_OPTIONS), "G2PT.sample")
        self.require_trained("sample")
        draw = self._token_draw(seed, None, kwargs)
        out = sample_in_shards(lambda keys: tuple(draw(keys).values()), n, devices=devices)
        return [row[:k] for row, k in zip(out[0].tolist(), out[1].tolist(), strict=True)]

    def _token_draw(self, seed: int | None, width: int | None, kwargs: dict):
        """``draw(keys)``: ``{"tokens" [m, w] (padded with the pad id), "length" [m]}`` of the sequences with these
        indices; ``w``: ``width`` or the longest of the call."""
        pad_id = self.vocab.pad

        def draw(keys: torch.Tensor) -> dict[str, torch.Tensor]:
            seqs = self._sequences(len(keys), seed=seed, keys=keys, **kwargs)
            ids = torch.full((len(seqs), width or max(len(s) for s in seqs)), pad_id, dtype=torch.long)
            for j, s in enumerate(seqs):
                ids[j, :len(s)] = torch.tensor(s, dtype=torch.long)
            return {"tokens": ids, "length": torch.tensor([len(s) for s in seqs], dtype=torch.long)}

        return draw

    def sample_draw(self, *, seed: int | None = None, **kwargs: Any):
        """``draw(keys)`` for :meth:`~scigen.core.system.base.System.sample_to`: sequence ``i`` of :meth:`sample` as
        ``tokens`` ``[m, block_size]`` (the vocabulary's ids, padded with its pad id) and ``length`` ``[m]``;
        ``model.sample_to("graphs", 10**6, devices=4, chunk_size=4096)`` writes one folder of ``.npy`` files, and
        ``decode(tokens[i, :length[i]], model.vocab)`` (:func:`scigen.graphs.g2pt.tokenizer.decode`) gives graph
        ``i``. Keywords: those of :meth:`sample` except ``output`` and ``devices``."""
        check_keywords(kwargs, _SAMPLE_OPTIONS, "G2PT.sample_draw")
        self.require_trained("sample")
        return self._token_draw(seed, self.network.block_size, kwargs)

    @torch.no_grad()
    def sample(self, n_samples: int, *, seed: int | None = None, output: Output = "networkx", devices: int = 1,
               **kwargs: Any) -> list:
        """``n_samples`` generated graphs (``None`` only for undecodable samples with ``grammar=False``).

        G2PT samples tokens autoregressively (G2PT §3.3): ``temperature`` and ``top_k`` (defaults from
        the config) shape the next-token distribution; the engine's ``method``/``steps`` do not apply.
        Keywords: ``grammar``, ``prompt_nodes`` (an int or a list of node types: a fixed node set the
        model completes with edges), ``prompt`` (token ids), ``batch_size``. ``seed=None`` uses
        ``config.train.seed``. ``output="pyg"`` returns PyG ``Data`` (type indices in the vocabulary).

        Sample ``i`` draws its tokens from its own stream keyed by ``(seed, i)``
        (:class:`~scigen.core.streams.SampleStreams`; one uniform per step, inverse-CDF over the shaped
        next-token distribution), so it does not depend on the other samples: the first ``k`` of
        ``sample(n)`` are ``sample(k)`` (same seed, any ``batch_size``), and ``devices=N`` splits the samples
        over ``N`` processes (Lightning Fabric) and returns the one-process result; with ``devices > 1`` call
        it under ``if __name__ == "__main__"`` (the script is re-launched per process).
        """
        seqs = self.sample_sequences(n_samples, seed=seed, devices=devices, **kwargs)
        vocab = self.vocab
        return to_output([decode(s, vocab) for s in seqs], output, vocab.node_types, vocab.edge_types)

    @staticmethod
    def to_smiles(graphs: Sequence[nx.Graph | None]) -> list[str | None]:
        """Canonical SMILES of typed molecular graphs (``None`` for invalid molecules)."""
        from scigen.graphs.convert import graph_to_smiles

        return [None if g is None else graph_to_smiles(g) for g in graphs]

    # ------------------------------------------------------------------ evaluation
    @torch.no_grad()
    def nll(self, data: Any, *, seed: int = 0) -> float:
        """Mean next-token NLL (nats/token) of ``data`` under one random permutation per graph (also for
        an untrained network with a vocabulary: the baseline of a learning curve)."""
        graphs = self._graphs(data)
        vocab = self.vocab
        rng = np.random.default_rng(seed)
        seqs = [torch.tensor(encode(g, vocab, rng=rng, what=f"data[{i}]", **self._token_format))
                for i, g in enumerate(graphs)]
        self.network.eval()
        return float(next_token_loss(self.network, pad(seqs, vocab.pad).to(self.device), vocab.pad))

    def evaluate(self, data: Any, *, n_samples: int | None = None, train: Any = None, orbit: bool = True,
                 seed: int | None = None, polygraph: bool | None = None, **sample_kwargs: Any) -> dict[str, float]:
        """Sample ``n_samples`` (default ``len(data)``) graphs and score them against ``data``.

        Generic graphs: validity / uniqueness / novelty / VUN (novelty against ``train`` or the
        graphs of the last ``fit``) and the four MMD² (degree, clustering, orbit, spectre); ``polygraph``:
        PolyGraph Discrepancy (``PGD``, ``PGD_<descriptor>``) and PolyGraph's ``VUN[polygraph]`` beside them
        (``None``: when the ``polygraph`` extra is installed and there are >= 8 graphs; ``True``: required;
        ``False``: none). ``family="molecule"``: validity, uniqueness, novelty and FCD against ``data``.
        """
        from scigen.graphs.g2pt.evaluation import evaluate

        self.require_trained("evaluate")
        return evaluate(self, data, n_samples=n_samples, train=train, orbit=orbit, seed=seed, polygraph=polygraph,
                        **sample_kwargs)

    # ------------------------------------------------------------------ fine-tuning, properties
    def finetune(self, reward: Callable[[nx.Graph], float | None], **kwargs: Any) -> dict[str, Any]:
        """Rejection-sampling fine-tuning toward ``reward`` (G2PT Alg. 2; ``rounds > 1`` = self-bootstrap).

        Keywords of :func:`~scigen.graphs.g2pt.finetune.rejection_finetune` (``rounds``, ``n_samples``,
        ``threshold``, ``keep_fraction``, ``steps``, ``lr``, ``copies``, ``seed``, sampling keywords).
        Returns ``{"rounds": [...], "rewards_before", "rewards_after", "mean_before", "mean_after"}``;
        the means and rounds also go into ``self.metadata["finetune"]``.
        """
        from scigen.graphs.g2pt.finetune import rejection_finetune

        self.require_trained("finetune")
        summary = rejection_finetune(self, reward, **kwargs)
        self.metadata["finetune"] = {k: v for k, v in summary.items() if k.startswith("mean") or k == "rounds"}
        return summary

    def fit_property(self, data: Any, targets: Sequence[float] | np.ndarray | torch.Tensor, *, max_steps: int = 500,
                     lr: float = 1e-3, batch_size: int = 32, hidden: int = 128, **options: Any) -> G2PT:
        """Fit a property head (G2PT §4.2): last-token state → MLP, upper half of the layers unfrozen.

        ``targets``: ``[N]`` or ``[N, k]`` floats (standardised internally; predictions are in the
        original units). ``options``: training options of this head's run (``progress``, ...).
        """
        from scigen.graphs.g2pt.property import check_targets, fit_head

        self.require_trained("fit_property")
        graphs = self._graphs(data)
        y = check_targets(targets, len(graphs))
        self.property_head, self.metadata["property"] = fit_head(
            self.network, self.vocab, graphs, y, copies=self.config.copies, seed=self.training_options().seed,
            max_steps=max_steps, lr=lr, batch_size=batch_size, hidden=hidden, **self._token_format, **options)
        return self

    def predict_property(self, data: Any) -> np.ndarray:
        """Predicted properties ``[N, k]`` (original units) from the head of :meth:`fit_property`."""
        from scigen.graphs.g2pt.property import predict

        head = getattr(self, "property_head", None)
        if head is None:
            raise InvalidInputError("no property head: call fit_property(graphs, targets) first")
        return predict(head, self.vocab, self._graphs(data), self.metadata["property"], **self._token_format)

    # ------------------------------------------------------------------ persistence
    def state_tensors(self) -> dict[str, torch.Tensor]:
        from scigen.graphs.g2pt.property import head_tensors, untie

        return untie(super().state_tensors()) | head_tensors(getattr(self, "property_head", None))

    def load_state_tensors(self, tensors: dict[str, torch.Tensor], *, source: str = "") -> None:
        from scigen.graphs.g2pt.property import load_head, retie

        main = retie({k: v for k, v in tensors.items() if not k.startswith("property.")}, "network.")
        super().load_state_tensors(main, source=source)
        head = load_head(tensors, self.metadata.get("property"), self.build_network)
        if head is not None:
            self.property_head = head

    # ------------------------------------------------------------------ CLI / demo
    @classmethod
    def default_data(cls, quick: bool = False) -> list[nx.Graph]:
        from scigen.graphs.data import tree_graphs

        return tree_graphs(200, 16 if quick else 64, seed=0)

    @classmethod
    def read_data(cls, path: str | os.PathLike[str]) -> list[nx.Graph]:
        return as_graphs(path, "--data")

    def write_samples(self, samples: Any, path: str | os.PathLike[str]) -> Path:
        """``.smi``/``.smiles`` → SMILES lines (molecules); ``.graphml`` → a new folder ``path`` of
        GraphML files (built beside and renamed into place); anything else → the typed edge-list format."""
        return write_samples(samples, path, self.to_smiles)

    @classmethod
    def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
        """See :func:`scigen.graphs.g2pt.demo.run_demo`."""
        from scigen.graphs.g2pt.demo import run_demo

        return run_demo(cls, out, quick=quick)
