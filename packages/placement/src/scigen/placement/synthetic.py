"""The synthetic netlist generator of ChipDiffusion (Lee et al., ICML 2025, §4.1 and App. C, "V2").

Per circuit, in normalised units (canvas [-1, 1]², width 2):

1. a target density ``d* ~ U(0.75, 0.9)``;
2. objects with long side ``clip(Exp(scale), lo, hi)``, aspect ``U(0.25, 1)``, random orientation,
   sorted by area (largest first);
3. rejection placement: up to 10 uniform centre draws per object, accepted when it overlaps no placed
   object; the *drawn* area (accepted or not, as in the paper) accumulates into the density, and the
   generator stops once ``Σ drawn area / canvas area >= d*`` (or ``max_objects`` were drawn);
4. pins per object ``~ Binomial(max(ceil(t·A^p), 4), 1/2)`` clipped to [1, 256] (``A`` the normalised
   area, t = 128, p = 0.65), uniform on the object's perimeter;
5. each pin is a driver with probability 0.3; driver a connects to pin b of another object with
   probability ``min(f·s^e·exp(-d_1(a, b)/s), 0.9)`` (f = 0.0212, e = -1.42, ``d_1`` the L1 distance),
   with one scale ``s ~ LogUniform(0.05, 1.6)`` per circuit; a driver and its sinks form one net; an
   object left unconnected joins, by its first pin, the net of the nearest driver.

The result is a legal reference placement (no overlaps, inside the canvas) in chip units, every object
movable, written as Bookshelf by :func:`scigen.placement.bookshelf.write_bookshelf`. The placed density
(area actually placed / canvas) is ``GeneratedInfo.placed_density`` and is below the drawn density.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scigen.core.errors import InvalidInputError
from scigen.placement.netlist import Netlist, Row

__all__ = ["GeneratedInfo", "SynthConfig", "SyntheticNetlists", "generate_netlist", "generate_netlists"]


@dataclass(frozen=True)
class SynthConfig:
    """Generator settings (defaults: the paper's ``v1`` configuration; ``max_objects`` 400)."""

    max_objects: int = 400
    max_placed: int | None = None
    density: tuple[float, float] = (0.75, 0.9)
    size_scale: float = 0.08
    size_clip: tuple[float, float] = (0.02, 1.0)
    aspect: tuple[float, float] = (0.25, 1.0)
    attempts: int = 10
    pin_t: float = 128.0
    pin_p: float = 0.65
    max_pins: int = 256
    source_prob: float = 0.3
    edge_f: float = 0.0212
    edge_e: float = -1.42
    edge_scale: tuple[float, float] = (0.05, 1.6)
    chip_size: float = 1000.0
    row_height: float = 4.0

    def __post_init__(self):
        if self.max_objects < 1:
            raise InvalidInputError(f"SynthConfig.max_objects must be >= 1, got {self.max_objects}")
        lo, hi = self.density
        if not 0 < lo <= hi < 1:
            raise InvalidInputError(f"SynthConfig.density must satisfy 0 < lo <= hi < 1, got {self.density}")
        if not self.size_scale > 0:
            raise InvalidInputError(f"SynthConfig.size_scale must be > 0, got {self.size_scale}")
        if self.chip_size <= 0 or self.row_height <= 0 or self.chip_size % self.row_height:
            raise InvalidInputError(f"SynthConfig.chip_size ({self.chip_size}) must be a positive multiple of "
                                    f"row_height ({self.row_height})")

    @classmethod
    def for_size(cls, n: int, **kw) -> SynthConfig:
        """Settings whose circuits have (at most, and usually exactly) ``n`` placed objects: size scale
        ``0.5 / sqrt(n)`` and placement stopped after ``n`` accepted objects (density permitting)."""
        kw.setdefault("size_scale", 0.5 / math.sqrt(n))
        kw.setdefault("max_objects", int(n * 4))
        kw.setdefault("max_placed", int(n))
        return cls(**kw)


@dataclass(frozen=True)
class GeneratedInfo:
    """What the generator did: target and drawn density, placed density, scale ``s``, counts."""

    target_density: float
    drawn_density: float
    placed_density: float
    edge_scale: float
    num_drawn: int
    num_placed: int


def _overlaps(c: np.ndarray, s: np.ndarray, cs: np.ndarray, ss: np.ndarray) -> bool:
    if not len(cs):
        return False
    ox = (s[0] + ss[:, 0]) / 2 - np.abs(c[0] - cs[:, 0])
    oy = (s[1] + ss[:, 1]) / 2 - np.abs(c[1] - cs[:, 1])
    return bool(((ox > 1e-12) & (oy > 1e-12)).any())


def _perimeter_offsets(rng: np.random.Generator, w: float, h: float, k: int) -> np.ndarray:
    u = rng.uniform(0, 2 * (w + h), size=k)
    out = np.empty((k, 2))
    for i, t in enumerate(u):
        if t < w:
            out[i] = (t - w / 2, -h / 2)
        elif t < w + h:
            out[i] = (w / 2, t - w - h / 2)
        elif t < 2 * w + h:
            out[i] = (w / 2 - (t - w - h), h / 2)
        else:
            out[i] = (-w / 2, h / 2 - (t - 2 * w - h))
    return out


def generate_netlist(seed: int, config: SynthConfig | None = None, *, name: str | None = None,
                     return_info: bool = False):
    """One synthetic circuit (module docstring) as a :class:`Netlist` in chip units; seeded.

    Returns the netlist, or ``(netlist, GeneratedInfo)`` with ``return_info=True``.
    """
    cfg = config or SynthConfig()
    rng = np.random.default_rng(seed)
    target = rng.uniform(*cfg.density)
    n = cfg.max_objects
    lo, hi = cfg.size_clip
    long = np.clip(rng.exponential(cfg.size_scale, n), lo, hi)
    short = long * rng.uniform(*cfg.aspect, n)
    # objects shorter than a placement row would be standard cells: keep them at least a row tall
    min_side = 2.0 * (cfg.row_height * 1.25) / cfg.chip_size
    short = np.maximum(short, min_side)
    flip = rng.random(n) < 0.5
    sizes = np.stack([np.where(flip, short, long), np.where(flip, long, short)], 1)
    sizes = sizes[np.argsort(-sizes.prod(1), kind="stable")]

    centres, kept = [], []
    drawn = 0.0
    k = 0
    for k in range(n):
        s = sizes[k]
        for _ in range(cfg.attempts):
            c = rng.uniform(-1 + s / 2, 1 - s / 2)
            if not _overlaps(c, s, np.array(centres).reshape(-1, 2), sizes[kept].reshape(-1, 2)):
                centres.append(c)
                kept.append(k)
                break
        drawn += s.prod() / 4.0
        if drawn >= target or (cfg.max_placed is not None and len(kept) >= cfg.max_placed):
            break
    num_drawn = k + 1
    size_n = sizes[kept]
    pos_n = np.array(centres).reshape(-1, 2)
    v = len(kept)

    # pins on the perimeter
    area = size_n.prod(1)
    trials = np.maximum(np.ceil(cfg.pin_t * area ** cfg.pin_p), 4).astype(int)
    npins = np.clip(rng.binomial(trials, 0.5), 1, cfg.max_pins)
    pin_obj = np.repeat(np.arange(v), npins)
    pin_off = np.concatenate([_perimeter_offsets(rng, size_n[i, 0], size_n[i, 1], npins[i]) for i in range(v)])
    pin_xy = pos_n[pin_obj] + pin_off
    scale = math.exp(rng.uniform(math.log(cfg.edge_scale[0]), math.log(cfg.edge_scale[1])))
    is_src = rng.random(len(pin_obj)) < cfg.source_prob
    src = np.nonzero(is_src)[0]
    sink_cand = np.nonzero(~is_src)[0]
    nets: list[list[int]] = []
    if len(src) and len(sink_cand):
        d = np.abs(pin_xy[src, None, :] - pin_xy[None, sink_cand, :]).sum(-1)
        p = np.minimum(cfg.edge_f * scale ** cfg.edge_e * np.exp(-d / scale), 0.9)
        p[pin_obj[src][:, None] == pin_obj[sink_cand][None, :]] = 0.0
        conn = rng.random(p.shape) < p
        for a, row in zip(src, conn, strict=True):
            sinks = sink_cand[row]
            if len(sinks):
                nets.append([int(a)] + [int(b) for b in sinks])
    connected = np.zeros(v, bool)
    for net in nets:
        connected[pin_obj[net]] = True
    for i in np.nonzero(~connected)[0]:
        first = int(np.nonzero(pin_obj == i)[0][0])
        others = src[pin_obj[src] != i]
        if not len(others):
            continue
        j = int(others[np.argmin(np.abs(pin_xy[others] - pin_xy[first]).sum(1))])
        for net in nets:
            if net[0] == j:
                net.append(first)
                break
        else:
            nets.append([j, first])
    # to chip units
    c = cfg.chip_size
    size_c = size_n * c / 2
    ll = (pos_n + 1) * c / 2 - size_c / 2
    flat = [q for net in nets for q in net]
    ptr = np.cumsum([0] + [len(net) for net in nets])
    dirs = ["O" if k2 == 0 else "I" for net in nets for k2 in range(len(net))]
    n_rows = int(round(c / cfg.row_height))
    rows = [Row(coordinate=r * cfg.row_height, height=cfg.row_height, subrow_origin=0.0, num_sites=int(c))
            for r in range(n_rows)]
    nl = Netlist(names=[f"o{i}" for i in range(v)], size=size_c, lower_left=ll, terminal=np.zeros(v, bool),
                 fixed=np.zeros(v, bool), pin_obj=pin_obj[flat] if flat else np.zeros(0, np.int64),
                 pin_offset=pin_off[flat] * c / 2 if flat else np.zeros((0, 2)), pin_dir=dirs, net_ptr=ptr,
                 net_names=[f"n{i}" for i in range(len(nets))], rows=rows, canvas=(0.0, 0.0, c, c),
                 name=name or f"synth{seed}")
    if return_info:
        info = GeneratedInfo(target_density=float(target), drawn_density=float(drawn),
                             placed_density=float(area.sum() / 4.0), edge_scale=float(scale),
                             num_drawn=int(num_drawn), num_placed=int(v))
        return nl, info
    return nl


def generate_netlists(n: int, seed: int = 0, config: SynthConfig | None = None) -> list[Netlist]:
    """``n`` circuits with seeds ``seed, seed + 1, ...``."""
    return [generate_netlist(seed + i, config) for i in range(int(n))]


class SyntheticNetlists(Sequence):
    """``n`` circuits of about ``objects`` objects with seeds ``seed, seed + 1, ...``, each generated when it
    is first indexed (a training run of ``k`` steps touches at most ``k`` of them)."""

    def __init__(self, n: int, objects: int, seed: int = 0) -> None:
        if int(n) < 1 or int(objects) < 2:
            raise InvalidInputError(f"need n >= 1 circuits of objects >= 2, got n={n}, objects={objects}")
        self.n, self.objects, self.seed = int(n), int(objects), int(seed)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        if not -self.n <= i < self.n:
            raise IndexError(f"circuit {i} of {self.n}")
        return generate_netlist(self.seed + i % self.n, SynthConfig.for_size(self.objects))

