"""The user-facing base class every paper system extends (DESIGN.md §4).

A system bundles a config (pydantic, the paper's defaults), a network, and the path + loss +
sampler wiring of one paper, behind five verbs::

    model = System(config)              # or System() for the defaults, or System(hidden=128)
    model.fit(data, max_steps=...)      # Lightning underneath (scigen.core.train)
    out = model.sample(...)             # domain-native output
    scores = model.evaluate(data)       # dict of the paper's metrics, named as in the paper
    model.save("run/"); System.load("run/")

Subclasses set ``domain``, ``name`` and ``Config`` and implement :meth:`build_network`, :meth:`fit`,
:meth:`sample` and :meth:`evaluate`; they get persistence and the CLI verbs for free, and override
the ``cli_*`` / :meth:`demo` class methods to speak their domain's file formats.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import nn

from scigen.core.errors import CheckpointError, InvalidInputError
from scigen.core.files import atomic_path, atomic_write_text
from scigen.core.system.config import SystemConfig, make_config
from scigen.core.system.persistence import load_system_files, save_system_files


@dataclasses.dataclass
class DemoResult:
    """What a system's demo produced: headline metrics, the files written, and the wall time."""

    metrics: dict[str, float]
    files: list[Path]
    seconds: float = 0.0
    summary: str = ""


class System(abc.ABC):
    """Base class of every scigen system. See the module docstring for the contract."""

    domain: ClassVar[str] = ""
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    Config: ClassVar[type[SystemConfig]] = SystemConfig

    def __init__(self, config: SystemConfig | dict[str, Any] | None = None, **overrides: Any) -> None:
        self.config = make_config(self.Config, config, **overrides)
        self.metadata: dict[str, Any] = {}
        self.network: nn.Module = self.build_network()

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
        """Create the (untrained) network from ``self.config`` and ``self.metadata``."""

    @abc.abstractmethod
    def fit(self, data: Any, *, max_steps: int, **options: Any) -> System:
        """Train on ``data`` (domain-native); return ``self``."""

    @abc.abstractmethod
    def sample(self, *args: Any, **kwargs: Any) -> Any:
        """Generate domain-native output."""

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

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Save config, metadata and weights to the directory ``path`` (atomically)."""
        return save_system_files(
            path,
            system=self.key(),
            config=self.config.model_dump(mode="json"),
            tensors=self.state_tensors(),
            metadata=self.metadata,
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> System:
        """Load a directory written by :meth:`save` (never unpickles anything)."""
        header, tensors = load_system_files(path, expected_system=cls.key())
        obj = cls.__new__(cls)
        obj.config = make_config(cls.Config, header["config"])
        obj.metadata = header["metadata"]
        obj.network = obj.build_network()
        obj.load_state_tensors(tensors, source=str(path))
        obj.network.eval()
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

    def sample_for_cli(self, n: int, seed: int) -> Any:
        """What ``scigen <domain> <system> sample --n N`` generates. Default: ``self.sample(n)``."""
        torch.manual_seed(seed)
        return self.sample(n)

    @classmethod
    def demo(cls, out_dir: str | os.PathLike[str], *, quick: bool = False) -> DemoResult:
        """Train a tiny model on the default data, sample, evaluate, write a report into ``out_dir``."""
        raise NotImplementedError(f"{cls.key()} has no demo")


def write_report(out_dir: str | os.PathLike[str], report: dict[str, Any]) -> Path:
    """Write ``report.json`` atomically into ``out_dir`` (used by every demo)."""
    try:
        text = json.dumps(report, indent=2, sort_keys=True, default=float) + "\n"
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"demo report is not JSON-serialisable: {exc}") from exc
    return atomic_write_text(Path(out_dir) / "report.json", text)


@contextlib.contextmanager
def torch_threads(n: int | None):
    """Run a block with ``torch.set_num_threads(n)`` and restore the previous count afterwards.

    Demos use ``n = 1``: their networks are small, intra-op parallelism buys little, and on a shared or
    loaded machine oversubscribed threads made them many times slower (measured in the molecules and
    placement demos: 9× and 3×). ``None`` leaves the setting alone.
    """
    if n is None:
        yield
        return
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidInputError(f"threads must be a positive int or None, got {n!r}")
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class Stopwatch:
    """``with Stopwatch() as sw: ...; sw.seconds`` — wall time of a block."""

    def __enter__(self) -> Stopwatch:
        self._t0 = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._t0
