"""The netlist object: objects (sizes, positions, fixed/terminal flags), pins and nets, rows.

Units are the chip units of the Bookshelf files. Positions are **object centres** (Bookshelf ``.pl``
stores lower-left corners; :mod:`scigen.placement.bookshelf` converts). Pins are stored net by net in
CSR form (``net_ptr``), which is the layout :func:`scigen.kernels.net_hpwl` expects; the first pin
of every net is its driver (the reader moves the first ``O`` pin to the front and records the file
order in ``pin_order`` so that writing back is lossless).

Object classes (ChipDiffusion, Lee et al., ICML 2025, §3 and App. B):

* **ports**: terminal objects that are not macros (I/O pads, usually zero area); fixed, masked out of
  noising and loss;
* **macros**: objects taller than one placement row (``h > row_height``); without rows every
  non-port object is a macro;
* **fixed**: terminals and ``/FIXED`` objects of the ``.pl``; never moved by any placer here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import torch

from scigen.core.errors import InvalidInputError

__all__ = ["Netlist", "Row"]


def _array(value, dtype, shape: tuple[int, ...], field: str) -> np.ndarray:
    """``value`` as a ``dtype`` array of ``shape`` (-1: any length); :class:`InvalidInputError` naming
    ``Netlist.<field>`` for text in a numeric field or a wrong shape."""
    try:
        a = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"Netlist.{field}: expected {np.dtype(dtype).name} values, got {exc}") from None
    if -1 not in shape and a.size != int(np.prod(shape)):
        raise InvalidInputError(f"Netlist.{field}: expected shape {list(shape)}, got {list(a.shape)}")
    return a.reshape(shape)


@dataclass
class Row:
    """One ``CoreRow`` of a Bookshelf ``.scl`` file (all fields kept for a lossless round trip)."""

    coordinate: float
    height: float
    sitewidth: float = 1.0
    sitespacing: float = 1.0
    siteorient: str = "1"
    sitesymmetry: str = "1"
    subrow_origin: float = 0.0
    num_sites: int = 0
    direction: str = "Horizontal"

    @property
    def x_hi(self) -> float:
        return self.subrow_origin + self.num_sites * self.sitespacing


@dataclass
class Netlist:
    """A placement instance in chip units (see the module docstring).

    Attributes:
        names: V object names.
        size: [V, 2] float64 widths and heights.
        lower_left: [V, 2] float64 lower-left corners as in the ``.pl`` (the stored field, so that a
            file round trip is bit-exact); :attr:`pos` gives the centres.
        terminal: [V] bool (``terminal`` or ``terminal_NI`` in ``.nodes``).
        terminal_ni: [V] bool (``terminal_NI``: may overlap others).
        fixed: [V] bool (terminal, or ``/FIXED`` / ``/FIXED_NI`` in ``.pl``).
        orient: V orientation strings of the ``.pl`` (``N`` by default).
        pin_obj: [P] int64 object of each pin; pins sorted by net, driver first.
        pin_offset: [P, 2] float64 pin offsets from the object centre.
        pin_dir: P direction letters (``I``, ``O``, ``B``).
        net_ptr: [N+1] int64 CSR pointer: net n owns pins ``net_ptr[n]:net_ptr[n+1]``.
        net_names: N net names.
        pin_order: [P] int64, the position of each pin within its net in the source file.
        rows: the ``.scl`` rows; ``canvas`` is their bounding box unless given.
        canvas: (x_lo, y_lo, x_hi, y_hi) in chip units.
        node_weights: ``.wts`` entries (name -> weight), written back as read.
        name: design name (the ``.aux`` stem).
    """

    names: list[str]
    size: np.ndarray
    lower_left: np.ndarray
    terminal: np.ndarray
    fixed: np.ndarray
    pin_obj: np.ndarray
    pin_offset: np.ndarray
    net_ptr: np.ndarray
    canvas: tuple[float, float, float, float]
    terminal_ni: np.ndarray | None = None
    orient: list[str] | None = None
    pin_dir: list[str] | None = None
    net_names: list[str] | None = None
    pin_order: np.ndarray | None = None
    rows: list[Row] = field(default_factory=list)
    node_weights: dict[str, float] = field(default_factory=dict)
    name: str = "design"

    def __post_init__(self) -> None:
        v = len(self.names)
        self.size = _array(self.size, np.float64, (v, 2), "size")
        self.lower_left = _array(self.lower_left, np.float64, (v, 2), "lower_left")
        self.terminal = _array(self.terminal, bool, (v,), "terminal")
        self.fixed = _array(self.fixed, bool, (v,), "fixed")
        self.terminal_ni = np.zeros(v, bool) if self.terminal_ni is None else _array(self.terminal_ni, bool, (v,),
                                                                                     "terminal_ni")
        self.pin_obj = _array(self.pin_obj, np.int64, (-1,), "pin_obj")
        p = self.pin_obj.shape[0]
        self.pin_offset = _array(self.pin_offset, np.float64, (p, 2), "pin_offset")
        self.net_ptr = _array(self.net_ptr, np.int64, (-1,), "net_ptr")
        n = self.net_ptr.shape[0] - 1
        if self.orient is None:
            self.orient = ["N"] * v
        if self.pin_dir is None:
            self.pin_dir = ["B"] * p
        if self.net_names is None:
            self.net_names = [f"n{i}" for i in range(n)]
        if self.pin_order is None:
            self.pin_order = np.concatenate([np.arange(self.net_ptr[i + 1] - self.net_ptr[i]) for i in range(n)]
                                            ).astype(np.int64) if n > 0 else np.zeros(0, np.int64)
        self.canvas = tuple(float(c) for c in self.canvas)
        self.validate()

    # ------------------------------------------------------------------ checks
    def validate(self) -> None:
        """Raise :class:`InvalidInputError` for inconsistent arrays (names the field)."""
        v, p = len(self.names), self.pin_obj.shape[0]
        if len(set(self.names)) != v:
            seen, dup = set(), None
            for nm in self.names:
                if nm in seen:
                    dup = nm
                    break
                seen.add(nm)
            raise InvalidInputError(f"Netlist.names: duplicated object name {dup!r}")
        if (self.size < 0).any() or not np.isfinite(self.size).all():
            i = int(np.nonzero((self.size < 0).any(1) | ~np.isfinite(self.size).all(1))[0][0])
            raise InvalidInputError(f"Netlist.size: object {self.names[i]!r} has size {self.size[i].tolist()}, "
                                    "expected finite and >= 0")
        if not np.isfinite(self.lower_left).all():
            raise InvalidInputError("Netlist.lower_left contains NaN or inf")
        if self.net_ptr.size < 1 or self.net_ptr[0] != 0 or self.net_ptr[-1] != p or (np.diff(self.net_ptr) < 0).any():
            raise InvalidInputError(f"Netlist.net_ptr must rise from 0 to P = {p}")
        if p and (self.pin_obj.min() < 0 or self.pin_obj.max() >= v):
            raise InvalidInputError(f"Netlist.pin_obj must index the {v} objects")
        x0, y0, x1, y1 = self.canvas
        if not (x1 > x0 and y1 > y0):
            raise InvalidInputError(f"Netlist.canvas must be (x_lo, y_lo, x_hi, y_hi) with lo < hi, got {self.canvas}")
        if len(self.orient) != v or len(self.pin_dir) != p or len(self.net_names) != self.num_nets:
            raise InvalidInputError("Netlist: orient / pin_dir / net_names lengths do not match V / P / N")

    # ------------------------------------------------------------------ sizes
    @property
    def pos(self) -> np.ndarray:
        """[V, 2] object centres in chip units (``lower_left + size / 2``)."""
        return self.lower_left + self.size / 2

    @property
    def num_objects(self) -> int:
        return len(self.names)

    @property
    def num_nets(self) -> int:
        return int(self.net_ptr.shape[0] - 1)

    @property
    def num_pins(self) -> int:
        return int(self.pin_obj.shape[0])

    @property
    def chip_size(self) -> tuple[float, float]:
        return (self.canvas[2] - self.canvas[0], self.canvas[3] - self.canvas[1])

    @property
    def row_height(self) -> float | None:
        return float(min(r.height for r in self.rows)) if self.rows else None

    @property
    def is_macro(self) -> np.ndarray:
        """[V] bool: taller than one row (every non-port object when there are no rows)."""
        rh = self.row_height
        if rh is None:
            return ~self.is_port_raw()
        return (self.size[:, 1] > rh + 1e-9) & (self.size.prod(1) > 0)

    def is_port_raw(self) -> np.ndarray:
        return self.terminal & ((self.size.prod(1) == 0) | self.terminal_ni)

    @property
    def is_port(self) -> np.ndarray:
        """[V] bool: terminals that are not macros (pads); zero-area terminals always."""
        rh = self.row_height
        if rh is None:
            return self.is_port_raw()
        return self.terminal & ~self.is_macro

    @property
    def movable(self) -> np.ndarray:
        return ~self.fixed

    def net_of_pin(self) -> np.ndarray:
        """[P] int64 net index of every pin."""
        return np.repeat(np.arange(self.num_nets), np.diff(self.net_ptr))

    def copy(self) -> Netlist:
        return dataclasses.replace(
            self, names=list(self.names), size=self.size.copy(), lower_left=self.lower_left.copy(), terminal=self.terminal.copy(),
            fixed=self.fixed.copy(), terminal_ni=self.terminal_ni.copy(), orient=list(self.orient),
            pin_obj=self.pin_obj.copy(), pin_offset=self.pin_offset.copy(), pin_dir=list(self.pin_dir),
            net_ptr=self.net_ptr.copy(), net_names=list(self.net_names), pin_order=self.pin_order.copy(),
            rows=[dataclasses.replace(r) for r in self.rows], node_weights=dict(self.node_weights))

    def with_positions(self, pos) -> Netlist:
        """A copy with centre positions ``pos [V, 2]`` (chip units); fixed objects must not move."""
        pos = np.asarray(pos.detach().cpu().numpy() if isinstance(pos, torch.Tensor) else pos, dtype=np.float64)
        if pos.shape != (self.num_objects, 2):
            raise InvalidInputError(f"pos must be [V, 2] = [{self.num_objects}, 2], got {pos.shape}")
        out = self.copy()
        out.lower_left = np.where(self.fixed[:, None], self.lower_left, pos - self.size / 2)
        return out

    # ------------------------------------------------------------------ tensors for the kernels
    def pin_tensors(self, *, normalized: bool = False, dtype=torch.float64):
        """``(pin_offset [P,2], pin_obj [P], net_ptr [N+1])`` tensors (offsets in chip or [-1,1] units)."""
        off = self.pin_offset * (self._scale() if normalized else 1.0)
        return (torch.as_tensor(off, dtype=dtype), torch.as_tensor(self.pin_obj), torch.as_tensor(self.net_ptr))

    def _scale(self) -> np.ndarray:
        w, h = self.chip_size
        return np.array([2.0 / w, 2.0 / h])

    def normalize_pos(self, pos: np.ndarray) -> np.ndarray:
        """Chip-unit centres -> the [-1, 1]² canvas: ``2 (x - x_lo) / W - 1``."""
        lo = np.array(self.canvas[:2])
        return (np.asarray(pos, dtype=np.float64) - lo) * self._scale() - 1.0

    def denormalize_pos(self, pos) -> np.ndarray:
        """Inverse of :meth:`normalize_pos`."""
        pos = pos.detach().cpu().double().numpy() if isinstance(pos, torch.Tensor) else np.asarray(pos, np.float64)
        return (pos + 1.0) / self._scale() + np.array(self.canvas[:2])

    def to_graph(self):
        """A ``torch_geometric.data.Data`` on the [-1, 1]² canvas (ChipDiffusion §3 representation).

        Fields: ``x`` [V, 2] normalised sizes (2 w / W, 2 h / H); ``pos`` [V, 2] normalised centres;
        ``edge_index`` [2, E]: for every net an edge driver -> sink per sink pin, then all reversed
        (forward half first); ``edge_attr`` [E, 4] = (source pin dx, dy, target pin dx, dy) normalised;
        ``is_ports``, ``is_macros``, ``is_fixed`` [V] bool; ``pin_obj``, ``pin_offset`` (normalised),
        ``net_ptr`` for exact HPWL; ``chip_size`` [4] = canvas (x_lo, y_lo, x_hi, y_hi) float64.
        """
        from torch_geometric.data import Data

        scale = self._scale()
        off = self.pin_offset * scale
        src, dst, a_src, a_dst = [], [], [], []
        for n in range(self.num_nets):
            s, e = int(self.net_ptr[n]), int(self.net_ptr[n + 1])
            if e - s < 2:
                continue
            drv = s
            for p in range(s + 1, e):
                src.append(self.pin_obj[drv])
                dst.append(self.pin_obj[p])
                a_src.append(off[drv])
                a_dst.append(off[p])
        if src:
            ei = torch.tensor([src, dst], dtype=torch.long)
            fa = torch.tensor(np.concatenate([np.array(a_src), np.array(a_dst)], 1), dtype=torch.float32)
            edge_index = torch.cat([ei, ei.flip(0)], 1)
            edge_attr = torch.cat([fa, torch.cat([fa[:, 2:], fa[:, :2]], 1)], 0)
        else:
            edge_index = torch.zeros(2, 0, dtype=torch.long)
            edge_attr = torch.zeros(0, 4)
        return Data(
            x=torch.tensor(self.size * scale, dtype=torch.float32),
            pos=torch.tensor(self.normalize_pos(self.pos), dtype=torch.float32),
            edge_index=edge_index, edge_attr=edge_attr,
            is_ports=torch.tensor(self.is_port), is_macros=torch.tensor(self.is_macro),
            is_fixed=torch.tensor(self.fixed),
            pin_obj=torch.tensor(self.pin_obj), pin_offset=torch.tensor(off, dtype=torch.float32),
            net_ptr=torch.tensor(self.net_ptr), chip_size=torch.tensor(self.canvas, dtype=torch.float64),
            num_nodes=self.num_objects,
        )
