"""Random numbers keyed by sample: each sample's draws depend only on a seed and the sample's index.

A global generator (or a ``torch.Generator``) hands out numbers in the order they are asked for, so what
sample ``i`` receives depends on which other samples share its batch and on how a run is split over
processes. :class:`SampleStreams` removes that dependence: it is a *counter-based* generator (Salmon et al.,
"Parallel random numbers: as easy as 1, 2, 3", SC 2011), where the ``j``-th number of draw ``d`` of the
sample with key ``k`` is a fixed function of ``(seed, k, d, j)``. Consequences:

* **training under DDP equals one process on the union batch**: with ``fit(..., rng="per_sample")`` the
  noise and times of dataset row ``i`` at step ``s`` are the same whichever rank holds the row;
* **sampling is identical for any world size or batch size**: sample ``i`` of ``sample(n, seed=...)`` is
  the same whether drawn alone, in a batch of ``n`` or on rank 1 of 2;
* **CPU and CUDA draw the same numbers** (integer arithmetic, then float64 transforms, to float tolerance).

The bits: SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014)
applied to ``mix(mix(mix(seed) + key) + draw) + position`` with its golden-ratio increment; uniforms take the
top 53 bits (float64) and normals are Box–Muller pairs. All in int64 tensor arithmetic, wrapping modulo 2^64.

Use: engine losses, time samplers, paths and samplers accept a :class:`SampleStreams` wherever they take
``generator=``; inside :func:`sample_streams` (what ``fit`` opens around each per-sample batch) a
``generator=None`` draw comes from the active streams. Domain code draws through :func:`randn`,
:func:`rand` and :func:`randint` here, which take either kind of generator.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator, Sequence

import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError

__all__ = ["SampleStreams", "as_streams", "current_streams", "rand", "randint", "randn", "sample_streams", "splitmix64"]

_MASK64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15  # SplitMix64's increment (2^64 / golden ratio, odd)
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB


def _signed(v: int) -> int:
    """An unsigned 64-bit constant as the int64 with the same bits."""
    v &= _MASK64
    return v - (1 << 64) if v >= 1 << 63 else v


_S_GAMMA, _S_M1, _S_M2 = _signed(_GAMMA), _signed(_M1), _signed(_M2)


def _shr(z: Tensor, s: int) -> Tensor:
    """Logical right shift of int64 bits (torch's ``>>`` on int64 is arithmetic: sign bits are masked off)."""
    return (z >> s) & ((1 << (64 - s)) - 1)


def _mix(z: Tensor) -> Tensor:
    """SplitMix64's output function on int64 tensors (wrapping multiplication = arithmetic modulo 2^64)."""
    z = (z ^ _shr(z, 30)) * _S_M1
    z = (z ^ _shr(z, 27)) * _S_M2
    return z ^ _shr(z, 31)


def splitmix64(state: int, n: int) -> list[int]:
    """The first ``n`` outputs of SplitMix64 from ``state`` in pure Python (the published algorithm: the
    reference the tensor implementation is tested against)."""
    out = []
    for _ in range(n):
        state = (state + _GAMMA) & _MASK64
        z = state
        z = ((z ^ (z >> 30)) * _M1) & _MASK64
        z = ((z ^ (z >> 27)) * _M2) & _MASK64
        out.append(z ^ (z >> 31))
    return out


def _key_states(seed: int, keys: Tensor) -> Tensor:
    """One 64-bit state per key: ``mix(mix(seed·γ) + key·γ)`` (distinct seeds and keys decorrelate)."""
    s = _mix(torch.tensor(_signed(int(seed) * _GAMMA), dtype=torch.int64, device=keys.device))
    return _mix(s + keys.to(torch.int64) * _S_GAMMA)


class SampleStreams:
    """Independent random streams, one per sample key (module docstring).

    Args:
        seed: the run's seed (an int; any size, taken modulo 2^64).
        keys: ``[B]`` integer keys, one per row of every draw (dataset indices in training, sample indices
            in sampling); equal keys give equal streams.

    Every draw advances a draw counter shared by all rows, so the ``d``-th draw of a row depends on
    ``(seed, key, d)`` only. A draw's shape must start with ``B`` (one row per key), or name the key of
    each row with ``rows=`` (e.g. the graph index of each node of a batch of graphs): rows of the same key
    then take consecutive positions of that key's stream, in order.
    """

    def __init__(self, seed: int, keys: Tensor | Sequence[int]) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise InvalidInputError(f"seed must be an int, got {seed!r}")
        keys = torch.as_tensor(keys)
        if keys.ndim != 1 or keys.dtype.is_floating_point or keys.dtype == torch.bool:
            raise InvalidInputError(f"keys must be a 1-D integer tensor, got {keys.dtype} of shape {tuple(keys.shape)}")
        self.seed, self.keys = int(seed), keys.to(torch.int64)
        self._states = _key_states(self.seed, self.keys)
        self.draws = 0

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    def __repr__(self) -> str:
        return f"SampleStreams(seed={self.seed}, keys={len(self)}, draws={self.draws})"

    @property
    def device(self) -> torch.device:
        return self.keys.device

    # ------------------------------------------------------------------ bits
    def _bits(self, shape: Sequence[int], rows: Tensor | None, device, width: int = 1) -> Tensor:
        """``width`` 64-bit words per element of ``shape`` (int64 ``[*shape, width]``) for this draw."""
        shape = tuple(int(s) for s in shape)
        if not shape:
            raise InvalidInputError("a per-sample draw needs a shape with a leading row dimension, got ()")
        device = torch.device(device) if device is not None else self.device
        states = self._states.to(device)
        per_row = math.prod(shape[1:]) * width
        if rows is None:
            if shape[0] != len(self):
                raise InvalidInputError(
                    f"per-sample random streams: a draw of shape {shape} has {shape[0]} rows but there are "
                    f"{len(self)} samples (one row per sample, or pass rows= naming each row's sample)")
            row_state, pos0 = states, torch.zeros(shape[0], dtype=torch.int64, device=device)
        else:
            rows = torch.as_tensor(rows, device=device).to(torch.int64)
            if rows.shape != (shape[0],):
                raise InvalidInputError(f"rows must be [{shape[0]}] (the sample of each row), got {tuple(rows.shape)}")
            if rows.numel() and (int(rows.min()) < 0 or int(rows.max()) >= len(self)):
                raise InvalidInputError(f"rows must index the {len(self)} samples, got values in "
                                        f"[{int(rows.min())}, {int(rows.max())}]")
            row_state = states[rows]
            # position of each row among the rows of its sample (rows of one sample in order)
            order = torch.argsort(rows, stable=True)
            sorted_rows = rows[order]
            first = torch.searchsorted(sorted_rows, sorted_rows, right=False)
            rank_sorted = torch.arange(shape[0], device=device) - first
            pos0 = torch.empty_like(rank_sorted)
            pos0[order] = rank_sorted
        self.draws += 1
        draw_state = _mix(row_state + _signed(self.draws * _GAMMA))  # [R]
        counter = pos0[:, None] * per_row + torch.arange(per_row, device=device, dtype=torch.int64)[None, :] + 1
        words = _mix(draw_state[:, None] + counter * _S_GAMMA)
        return words.reshape(*shape, width)

    @staticmethod
    def _unit(words: Tensor) -> Tensor:
        """Uniforms in [0, 1) (float64) from the top 53 bits of each word."""
        return _shr(words, 11).to(torch.float64) * (2.0 ** -53)

    # ------------------------------------------------------------------ draws
    def rand(self, shape: Sequence[int], *, rows: Tensor | None = None, device=None, dtype=None) -> Tensor:
        """Uniform on [0, 1)."""
        u = self._unit(self._bits(shape, rows, device))[..., 0]
        return u.to(dtype or torch.get_default_dtype())

    def randn(self, shape: Sequence[int], *, rows: Tensor | None = None, device=None, dtype=None) -> Tensor:
        """Standard normal (Box–Muller on two uniforms per element, in float64)."""
        u = self._unit(self._bits(shape, rows, device, width=2))
        r = torch.sqrt(-2.0 * torch.log1p(-u[..., 0]))  # 1 - u in (0, 1]: finite radius
        z = r * torch.cos((2.0 * math.pi) * u[..., 1])
        return z.to(dtype or torch.get_default_dtype())

    def paired_rand(self, *, device=None, dtype=None) -> tuple[Tensor, Tensor]:
        """``(u [B], odd [B])``: one uniform shared by keys ``2m`` and ``2m + 1`` (and ``odd``: the key is odd). For
        antithetic pairs ``u`` / ``1 − u`` keyed by sample: each sample's value depends on its key only, each
        marginal stays uniform, and partners pair whether or not they share a batch."""
        pair = SampleStreams.__new__(SampleStreams)
        pair.seed, pair.keys, pair.draws = self.seed, self.keys // 2, self.draws
        pair._states = _key_states(self.seed, pair.keys)
        u = pair.rand((len(self),), device=device, dtype=dtype)
        self.draws += 1
        return u, (self.keys % 2 == 1).to(u.device)

    def children(self, parent: Tensor, child: Tensor, *, bits: int = 20) -> SampleStreams:
        """Fresh streams for the sub-items of these samples (the blocks of a graph, the noisy copies of a circuit,
        the windows of a trajectory): sub-item ``j`` is child ``child[j]`` of sample ``parent[j]`` (an index into
        these keys) and gets the key ``keys[parent[j]] · 2^bits + child[j]``, so its draws depend on its sample's
        key and its own place only. ``child`` must lie in ``[0, 2^bits)``."""
        parent = torch.as_tensor(parent, device=self.keys.device).to(torch.int64)
        child = torch.as_tensor(child, device=self.keys.device).to(torch.int64)
        if child.numel() and (int(child.min()) < 0 or int(child.max()) >= 1 << bits):
            raise InvalidInputError(f"child indices must lie in [0, 2^{bits}), got values in "
                                    f"[{int(child.min())}, {int(child.max())}]")
        return SampleStreams(self.seed, self.keys[parent] * (1 << bits) + child)

    def randint(self, low: int, high: int, shape: Sequence[int], *, rows: Tensor | None = None,
                device=None) -> Tensor:
        """Integers uniform on ``[low, high)`` (``floor(u · (high − low))``: bias below 2^-53 · range)."""
        if high <= low:
            raise InvalidInputError(f"randint needs low < high, got [{low}, {high})")
        u = self._unit(self._bits(shape, rows, device))[..., 0]
        return (low + torch.floor(u * (high - low))).to(torch.int64).clamp_(max=high - 1)


_ACTIVE: contextvars.ContextVar[SampleStreams | None] = contextvars.ContextVar("scigen_sample_streams", default=None)


@contextlib.contextmanager
def sample_streams(streams: SampleStreams | None) -> Iterator[SampleStreams | None]:
    """Within the block, engine draws with ``generator=None`` come from ``streams`` (``None``: the global generator)."""
    token = _ACTIVE.set(streams)
    try:
        yield streams
    finally:
        _ACTIVE.reset(token)


def current_streams() -> SampleStreams | None:
    """The streams of the enclosing :func:`sample_streams` block, or ``None``."""
    return _ACTIVE.get()


def as_streams(generator) -> SampleStreams | None:
    """``generator`` if it is a :class:`SampleStreams`, the active streams when it is ``None``, else ``None``."""
    g = _source(generator)
    return g if isinstance(g, SampleStreams) else None


def _source(generator):
    if generator is None:
        return current_streams()
    if isinstance(generator, (torch.Generator, SampleStreams)):
        return generator
    raise TypeError(f"generator must be a torch.Generator, a SampleStreams or None, got {type(generator).__name__}")


def randn(shape: Sequence[int], *, generator=None, device=None, dtype=None, rows: Tensor | None = None) -> Tensor:
    """A standard normal draw from ``generator`` (a ``torch.Generator``, a :class:`SampleStreams`, or ``None``:
    the active streams, else torch's global generator). ``rows`` applies to streams only."""
    g = _source(generator)
    if isinstance(g, SampleStreams):
        return g.randn(shape, rows=rows, device=device, dtype=dtype)
    return torch.randn(tuple(shape), generator=g, device=device, dtype=dtype)


def rand(shape: Sequence[int], *, generator=None, device=None, dtype=None, rows: Tensor | None = None) -> Tensor:
    """A uniform [0, 1) draw; ``generator`` as in :func:`randn`."""
    g = _source(generator)
    if isinstance(g, SampleStreams):
        return g.rand(shape, rows=rows, device=device, dtype=dtype)
    return torch.rand(tuple(shape), generator=g, device=device, dtype=dtype)


def randint(low: int, high: int, shape: Sequence[int], *, generator=None, device=None,
            rows: Tensor | None = None) -> Tensor:
    """Integers uniform on ``[low, high)``; ``generator`` as in :func:`randn`."""
    g = _source(generator)
    if isinstance(g, SampleStreams):
        return g.randint(low, high, shape, rows=rows, device=device)
    return torch.randint(low, high, tuple(shape), generator=g, device=device)
