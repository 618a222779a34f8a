"""The user-facing base class every paper system extends (DESIGN.md §4).

A system bundles a config (pydantic, the paper's defaults), a network, and the path + loss +
sampler wiring of one paper, behind five verbs::

    model = System(config)              # or System() for the defaults, or System(hidden=128)
    model.fit(data, max_steps=...)      # Lightning underneath (scigen.core.train)
    out = model.sample(...)             # domain-native output
    scores = model.evaluate(data)       # dict of the paper's metrics, named as in the paper
    model.save("run/"); System.load("run/")

Subclasses set ``domain``, ``name`` and ``Config`` and implement :meth:`build_network`,
:meth:`prepare_data` + :meth:`training_loss` (or override :meth:`fit`), :meth:`sample`,
:meth:`evaluate` and :meth:`run_demo`. The base class carries the glue every system shares:

* ``config.train`` (:class:`~scigen.core.system.training.TrainingOptions`) mapped onto
  :func:`scigen.core.train.fit` in one place (:meth:`train_network`); per-call options override it for
  that call and never write into the config;
* ``history`` (:class:`~scigen.core.system.training.TrainingHistory`: per-step losses, validations,
  one ``final_loss``), saved and loaded with the model; ``is_trained`` and one error for an
  untrained model (:meth:`require_trained`);
* one seed rule (:meth:`generator`: ``seed=None`` means ``config.train.seed``), ``device``,
  :meth:`to`, ``load(path, device=)``;
* the demo template (:meth:`demo`: output folder, torch threads, wall time, ``report.json``).
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import inspect
import json
import os
import time
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import Tensor, nn

from scigen.core.errors import CheckpointError, InvalidInputError, NotTrainedError
from scigen.core.files import atomic_path, atomic_write_text
from scigen.core.system.config import SystemConfig, make_config
from scigen.core.system.persistence import load_system_files, save_system_files
from scigen.core.system.training import TrainingHistory, TrainingOptions
from scigen.core.threads import torch_threads
from scigen.core.validation import check_keywords

_GUARDED_VERBS = ("sample", "evaluate", "fit", "place", "predict")


def _refuse_unknown_keywords(fn, verb: str):
    """``fn`` refusing keyword arguments its signature does not name (``InvalidInputError`` naming them and
    the valid ones) instead of Python's bare ``TypeError``; ``fn`` itself when it takes ``**kwargs``."""
    params = inspect.signature(fn).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return fn
    valid = tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self")

    @functools.wraps(fn)
    def guarded(self, *args: Any, **kwargs: Any) -> Any:
        check_keywords(kwargs, valid, f"{type(self).__name__}.{verb}")
        return fn(self, *args, **kwargs)

    guarded._keywords_guarded = True  # type: ignore[attr-defined]
    return guarded


@dataclasses.dataclass
class DemoResult:
    """What a system's demo produced: headline metrics, the files written, and the wall time."""

    metrics: dict[str, float]
    files: list[Path]
    seconds: float = 0.0
    report: dict[str, Any] = dataclasses.field(default_factory=dict)


class System(abc.ABC):
    """Base class of every scigen system. See the module docstring for the contract."""

    domain: ClassVar[str] = ""
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    Config: ClassVar[type[SystemConfig]] = SystemConfig

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """The verbs a subclass defines refuse unknown keyword arguments with one clear error (the user
        vocabulary, docs/engine-api.md): ``sample``/``evaluate``/``fit`` with an explicit signature are
        wrapped by :func:`_refuse_unknown_keywords`; those taking ``**kwargs`` check them where they go."""
        super().__init_subclass__(**kwargs)
        for verb in _GUARDED_VERBS:
            fn = cls.__dict__.get(verb)
            if callable(fn) and not getattr(fn, "_keywords_guarded", False):
                setattr(cls, verb, _refuse_unknown_keywords(fn, verb))

    def __init__(self, config: SystemConfig | dict[str, Any] | None = None, **overrides: Any) -> None:
        self.config = make_config(self.Config, config, **overrides)
        self.metadata: dict[str, Any] = {}
        self.history = TrainingHistory()
        self.network: nn.Module = self.make_network()

    # ------------------------------------------------------------------ identity
    @classmethod
    def key(cls) -> str:
        """Registry key ``"<domain>/<name>"``."""
        return f"{cls.domain}/{cls.name}"

    def __repr__(self) -> str:
        n = sum(p.numel() for p in self.network.parameters())
        return f"{type(self).__name__}({self.key()}, {n:,} parameters)"

    # ------------------------------------------------------------------ the verbs
    @abc.abstractmethod
    def build_network(self) -> nn.Module:
        """Create the (untrained) network from ``self.config`` and ``self.metadata``.

        Called through :meth:`make_network`, which seeds torch's CPU generator with :meth:`network_seed`
        for the call and restores the caller's random state afterwards: a ``build_network`` never seeds
        anything itself."""

    def network_seed(self) -> int:
        """The seed the initial weights are drawn with (default ``config.train.seed``)."""
        return int(self.training_options().seed)

    def make_network(self) -> nn.Module:
        """:meth:`build_network` with its weights drawn from :meth:`network_seed`, leaving the global
        random state (torch, numpy, Python) as it was (:func:`scigen.core.rng.seeded_rng`). Systems that
        rebuild their network once ``fit`` has seen the data call this, not ``build_network``."""
        from scigen.core.rng import seeded_rng

        with seeded_rng(self.network_seed()):
            return self.build_network()

    def fit(self, data: Any, *, max_steps: int | None = None, val_data: Any = None, **options: Any) -> System:
        """Train on ``data`` (domain-native) for ``max_steps`` steps (default ``config.train.max_steps``).

        ``options`` override fields of ``config.train`` for this call only (``lr``, ``batch_size``,
        ``progress``, ``checkpoint_dir``, ``logger`` — a name or a Lightning logger, ...). The default
        implementation turns the data into a Tensor/Dataset with :meth:`prepare_data` and trains
        :meth:`training_loss` through :meth:`train_network`. Returns ``self``.
        """
        train = self.prepare_data(data, role="data")
        val = None if val_data is None else self.prepare_data(val_data, role="val_data")
        self.train_network(train, val_data=val, max_steps=max_steps, **options)
        return self

    def prepare_data(self, data: Any, *, role: str) -> Any:
        """Validate domain-native ``data`` and return what :func:`scigen.core.train.fit` iterates (a
        Tensor ``[N, ...]`` or a Dataset). ``role`` is ``"data"`` or ``"val_data"`` (for messages, and
        because only the training data may set normalisation statistics)."""
        raise NotImplementedError(f"{self.key()} must implement prepare_data (or override fit)")

    def training_loss(self, network: nn.Module, batch: Any) -> Tensor:
        """The loss of one batch for ``network`` (the module being trained)."""
        raise NotImplementedError(f"{self.key()} must implement training_loss (or override fit)")

    def fit_options(self) -> dict[str, Any]:
        """Extra keywords of :func:`scigen.core.train.fit` this system always needs (e.g. ``collate_fn``)."""
        return {}

    def training_options(self) -> TrainingOptions:
        """The config's training section (``config.train``)."""
        opts = getattr(self.config, "train", None)
        return opts if isinstance(opts, TrainingOptions) else TrainingOptions()

    def training_budget(self) -> str:
        """What one training step consumes, for the CLI's budget note (``"batch 256"``); a system whose
        step is not ``batch_size`` samples (e.g. one circuit as many noisy copies) says so here."""
        return f"batch {self.training_options().batch_size}"

    def train_network(self, data: Any, *, val_data: Any = None, max_steps: int | None = None,
                      loss_fn: Any = None, **options: Any):
        """Run :func:`scigen.core.train.fit` on ``self.network`` with ``config.train`` + ``options``;
        keep the trained (EMA) module, extend :attr:`history`, return the ``FitResult``.

        ``loss_fn`` (default :meth:`training_loss`) is how a ``fit`` hands per-call training state (data
        statistics, a time grid, a warm-up counter) to the loss as a closure instead of keeping it on
        ``self``. The global random state is the caller's again on return (:func:`scigen.core.train.fit`)."""
        from scigen.core.rng import preserved_rng

        with preserved_rng():  # the first import of Lightning draws from Python's random (a dependency's import)
            from scigen.core.train import fit as core_fit

        kwargs = self.training_options().fit_kwargs(max_steps=max_steps, **{**self.fit_options(), **options})
        if kwargs.get("checkpoint_dir") is not None:
            from scigen.core.system.fingerprint import claim_checkpoint_dir, run_fingerprint

            claim_checkpoint_dir(kwargs["checkpoint_dir"],
                                 run_fingerprint(self.key(), self.config.model_dump(mode="json"), data),
                                 resume=bool(kwargs.get("resume")))
        from scigen.core.log import get_logger

        get_logger(f"scigen.{self.domain or 'core'}.{self.name or type(self).__name__}").debug(
            "training %s for %d steps (batch %d, lr %g) on %s", self.key(), kwargs["max_steps"], kwargs["batch_size"],
            kwargs["lr"], self.device)
        # torch's dropout layers (nn.Dropout, nn.MultiheadAttention's) draw keyed by sample under rng="per_sample"
        # and exactly as before otherwise (scigen.core.nn.dropout.keyed_layers: a class change, no new state)
        from scigen.core.nn.dropout import keyed_layers

        keyed_layers(self.network)
        result = core_fit(self.network, loss_fn or self.training_loss, data, val_data=val_data, **kwargs)
        self.network = result.module
        self.network.eval()
        self.history.extend(result)
        self.metadata["trained_steps"] = self.history.steps
        return result

    def train_stages(self, data: Any, stages: Any, *, val_data: Any = None, max_steps: int | None = None,
                     **options: Any) -> dict[str, int]:
        """Train :attr:`network` in stages (:class:`~scigen.core.train.stages.Stage`), each through
        :meth:`train_network`, on one budget ``max_steps`` (default ``config.train.max_steps``).

        Per stage: only the sub-modules named in ``stage.trainable`` train (the other parameters are
        frozen and checked to get no gradient and to come out bit-identical), on ``stage.loss``, for the
        steps :func:`~scigen.core.train.stages.split_budget` gives it (one rule for every system: fixed
        ``steps``, a ``share`` of the budget, or the rest); with ``val_data`` (and ``stage.validate``) it
        validates and early-stops as ``config.train`` says, otherwise early stopping is off; the batch
        size is at most the number of training rows. ``options`` override ``config.train`` for every stage
        (a stage's own ``options`` on top). A ``checkpoint_dir`` gets one sub-folder per stage, named after
        it; with ``resume=True`` a finished stage is skipped (its weights and history are loaded from the
        folder) and an interrupted one continues from its ``last.ckpt``, bit for bit
        (:mod:`scigen.core.system.stages`). :attr:`history` records which steps each stage trained
        (``history.stages``, ``history.stage_of(step)``) and ``metadata["stage_steps"]`` the steps per
        stage. Returns ``{stage name: steps trained}`` (stages given 0 steps are left out).
        """
        from scigen.core.system.stages import run_stages

        return run_stages(self, data, stages, val_data=val_data, max_steps=max_steps, **options)

    # ------------------------------------------------------------------ state shared by the verbs
    @property
    def is_trained(self) -> bool:
        """True once :meth:`fit` ran (or a trained run was loaded)."""
        return self.history.steps > 0 or int(self.metadata.get("trained_steps", 0) or 0) > 0

    def continues_training(self, previous: dict[str, Any], keys: tuple[str, ...]) -> bool:
        """The second-``fit`` rule (docs/engine-api.md, "The user vocabulary"): a trained model continues
        training its network, and its history grows; an untrained one builds its network fresh. For a system
        whose ``fit`` re-reads the data's shape into :attr:`metadata`, ``previous`` is the metadata before that
        and ``keys`` the entries the network's shape depends on: data of another shape is refused
        (``InvalidInputError``, the metadata restored): fresh weights come from a new model."""
        if not self.is_trained:
            return False
        changed = {k: (previous.get(k), self.metadata.get(k)) for k in keys if previous.get(k) != self.metadata.get(k)}
        if changed:
            self.metadata = previous
            detail = ", ".join(f"{k} {a!r} -> {b!r}" for k, (a, b) in changed.items())
            raise InvalidInputError(f"{type(self).__name__}.fit on a trained model continues its training, but this "
                                    f"data changes the network's shape ({detail}); build a new model to train "
                                    "fresh weights")
        return True

    def require_trained(self, verb: str = "sample") -> None:
        """Raise :class:`~scigen.core.errors.NotTrainedError` when the model has not been trained."""
        if not self.is_trained:
            raise NotTrainedError(
                f"{type(self).__name__} ({self.key()}) is untrained: call fit(data) or load a trained run "
                f"with {type(self).__name__}.load(path) before {verb}"
            )

    @property
    def device(self) -> torch.device:
        """The device of the network's parameters, or of its buffers for a network without parameters
        (an EM-fitted mixture keeps its state in buffers); CPU for a network with neither."""
        for p in self.network.parameters():
            return p.device
        for b in self.network.buffers():
            return b.device
        return torch.device("cpu")

    def to(self, device: str | torch.device) -> System:
        """Move the network to ``device``; every verb builds its inputs on the network's device."""
        try:
            device = torch.device(device)
        except (RuntimeError, TypeError) as exc:
            raise InvalidInputError(f"device {device!r} is not a torch device ({exc})") from None
        self.network.to(device)
        return self

    def sample_seed(self, seed: int | None = None) -> Any:
        """The one seed rule: ``seed``, or ``config.train.seed`` when ``seed`` is None (so an unseeded call is
        reproducible too). Checked where it is used (:meth:`generator`, :class:`~scigen.core.streams.SampleStreams`)."""
        return self.training_options().seed if seed is None else seed

    def generator(self, seed: int | None = None) -> torch.Generator:
        """A ``torch.Generator`` on the network's device seeded by the one seed rule (:meth:`sample_seed`)."""
        seed = self.sample_seed(seed)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise InvalidInputError(f"seed must be an int or None, got {seed!r}")
        return torch.Generator(device=self.device).manual_seed(int(seed))

    @abc.abstractmethod
    def sample(self, *args: Any, **kwargs: Any) -> Any:
        """Generate domain-native output."""

    def sample_draw(self, *, seed: int | None = None, **options: Any) -> Any:
        """``draw(keys)``: the arrays of the samples with these global indices, each from its own per-sample stream
        (row ``i`` from ``(seed, keys[i])`` alone), as a tensor or a tuple/dict of tensors with one row per key.
        ``None`` (the default) where a system's samples are not fixed-size arrays; :meth:`sample_to` needs it. A
        ``draw.block`` attribute (an int) makes :meth:`sample_to` hand it whole aligned batches of that many keys."""
        return None

    def sample_to(self, path: str | os.PathLike[str], n_samples: int, *, seed: int | None = None,
                  devices: int = 1, chunk_size: int | None = None, overwrite: bool = False, **options: Any) -> Path:
        """Write ``n_samples`` samples into one output at ``path`` without holding them in memory: each of
        ``devices`` processes draws its share ``chunk_size`` samples at a time and writes them into their rows of one
        ``.npy`` file (or a folder of them), renamed into place when all are written
        (:func:`~scigen.core.system.shard_writer.write_in_shards`). Sample ``i`` is the ``i``-th of
        ``sample(n_samples, seed=seed)``; read the result with
        :func:`~scigen.core.system.shard_writer.load_sharded_samples`. ``options`` go to :meth:`sample_draw`."""
        from scigen.core.system.shard_writer import write_in_shards
        from scigen.core.validation import check_count

        n = check_count(n_samples, "n_samples")
        self.require_trained("sample")
        draw = self.sample_draw(seed=seed, **options)
        if draw is None:
            raise InvalidInputError(f"{self.key()} cannot write its samples in shards: its samples are not "
                                    "fixed-size arrays; use sample() and write_samples()")
        return write_in_shards(draw, n, path, devices=devices, chunk_size=chunk_size, overwrite=overwrite,
                               block=getattr(draw, "block", 1))

    @abc.abstractmethod
    def evaluate(self, data: Any, **kwargs: Any) -> dict[str, float]:
        """The paper's metrics on ``data``, named as in the paper."""

    # ------------------------------------------------------------------ persistence
    def state_tensors(self) -> dict[str, torch.Tensor]:
        """Every tensor that :meth:`save` writes; subclasses may add buffers of their own."""
        return {f"network.{k}": v for k, v in self.network.state_dict().items()}

    def load_state_tensors(self, tensors: dict[str, torch.Tensor], *, source: str = "") -> None:
        """Inverse of :meth:`state_tensors`, with a clear error on missing/unexpected/misshapen keys."""
        net = {k[len("network.") :]: v for k, v in tensors.items() if k.startswith("network.")}
        own = self.network.state_dict()
        missing = sorted(set(own) - set(net))
        unexpected = sorted(set(net) - set(own))
        bad = [f"{k}: saved {tuple(net[k].shape)} vs model {tuple(own[k].shape)}"
               for k in own if k in net and net[k].shape != own[k].shape]
        if missing or unexpected or bad:
            parts = []
            if missing:
                parts.append(f"missing tensors {missing[:5]}{'...' if len(missing) > 5 else ''}")
            if unexpected:
                parts.append(f"unexpected tensors {unexpected[:5]}{'...' if len(unexpected) > 5 else ''}")
            if bad:
                parts.append("shape mismatch " + "; ".join(bad[:5]))
            raise CheckpointError(f"{source or 'weights'} do not fit {self.key()}: " + ", ".join(parts))
        self.network.load_state_dict(net)

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Save config, metadata, training history and weights to the directory ``path``.

        An existing ``path`` is refused unless it is a saved scigen run and ``overwrite=True``; nothing
        this did not write is ever removed (see :func:`~scigen.core.system.persistence.save_system_files`).
        """
        tensors = dict(self.state_tensors())
        tensors.update(self.history.to_tensors())
        return save_system_files(
            path,
            system=self.key(),
            config=self.config.model_dump(mode="json"),
            tensors=tensors,
            metadata=self.metadata,
            history=self.history.to_json(),
            overwrite=overwrite,
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, device: str | torch.device | None = None) -> System:
        """Load a directory written by :meth:`save` (never unpickles anything), onto ``device``."""
        header, tensors = load_system_files(path, expected_system=cls.key())
        obj = cls.__new__(cls)
        obj.config = make_config(cls.Config, header["config"])
        obj.metadata = dict(header["metadata"])
        obj.history = TrainingHistory.from_saved(header.get("history"), tensors)
        obj.network = obj.make_network()
        own = {k: v for k, v in tensors.items() if not k.startswith("history.")}
        obj.load_state_tensors(own, source=str(path))
        obj.network.eval()
        if device is not None:
            obj.to(device)
        return obj

    # ------------------------------------------------------------------ CLI hooks
    @classmethod
    def default_data(cls, quick: bool = False) -> Any:
        """The bundled / synthetic data the demo and a data-less ``train`` use."""
        raise NotImplementedError(f"{cls.key()} has no default data; pass --data")

    @classmethod
    def read_data(cls, path: str | os.PathLike[str]) -> Any:
        """Read a user's data file for ``train`` / ``evaluate``."""
        raise NotImplementedError(f"{cls.key()} does not read data files from the CLI yet")

    def write_samples(self, samples: Any, path: str | os.PathLike[str]) -> Path:
        """Write what :meth:`sample` returned to ``path`` (domain format). Default: ``.pt`` tensor."""
        path = Path(path)
        if not isinstance(samples, torch.Tensor):
            raise NotImplementedError(f"{self.key()} must override write_samples for {type(samples).__name__}")
        from safetensors.torch import save_file

        with atomic_path(path) as tmp:
            save_file({"samples": samples.detach().cpu().contiguous()}, str(tmp))
        return path

    def example_condition(self, data: Any) -> tuple:
        """The positional condition ``sample`` takes first, drawn from ``data`` (e.g. a forecast context
        or a netlist); ``()`` for an unconditional system. Used by generic tools (the cross-system API
        test, the sampler benchmark) to call ``sample(*condition, n_samples=...)`` on any system."""
        return ()

    def sample_for_cli(self, n_samples: int, seed: int) -> Any:
        """What ``scigen <domain> <system> sample --n-samples N`` generates: ``self.sample(n_samples=N, seed=)``."""
        return self.sample(n_samples=n_samples, seed=seed)

    @classmethod
    def demo(cls, out_dir: str | os.PathLike[str], *, quick: bool = False, threads: int | None = None) -> DemoResult:
        """Train a tiny model on the default data, sample, evaluate, write ``report.json`` and plots into
        ``out_dir``. ``threads`` sets torch's thread count for the run (``None``: leave it as it is).
        Systems implement :meth:`run_demo`; this template adds the folder, the threads, the wall time
        and the report (system key, quick flag, metrics, seconds, plus the system's own entries)."""
        out = Path(out_dir)
        if out.exists() and not out.is_dir():
            raise InvalidInputError(f"demo output {out} exists and is not a directory")
        out.mkdir(parents=True, exist_ok=True)
        with torch_threads(threads), Stopwatch() as sw:
            result = cls.run_demo(out, quick=quick)
        result.seconds = sw.seconds
        report = {"system": cls.key(), "quick": bool(quick), "metrics": result.metrics, "seconds": sw.seconds,
                  "threads": torch.get_num_threads() if threads is None else threads, **result.report}
        path = write_report(out, report)
        result.files = [path] + [f for f in result.files if Path(f) != path]
        return result

    @classmethod
    def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
        """The system's demo body (see :meth:`demo`): return metrics, the files written and report entries."""
        raise NotImplementedError(f"{cls.key()} has no demo")


def write_report(out_dir: str | os.PathLike[str], report: dict[str, Any]) -> Path:
    """Write ``report.json`` atomically into ``out_dir`` (used by every demo)."""
    try:
        text = json.dumps(report, indent=2, sort_keys=True, default=float) + "\n"
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"demo report is not JSON-serialisable: {exc}") from exc
    return atomic_write_text(Path(out_dir) / "report.json", text)


class Stopwatch:
    """``with Stopwatch() as sw: ...; sw.seconds`` — wall time of a block."""

    def __enter__(self) -> Stopwatch:
        self._t0 = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._t0
