"""Input checks and the macro-only split of the diffusion placer (ChipDiffusion §5.2: netlists with
standard cells are placed macro-only; every other object keeps its position)."""

from __future__ import annotations

import numpy as np
from torch.utils.data import Dataset

from scigen.core.errors import InvalidInputError
from scigen.placement.macro_only import macro_only, merge_macro_positions
from scigen.placement.metrics import evaluate_placement
from scigen.placement.netlist import Netlist
from scigen.placement.synthetic import SyntheticNetlists

__all__ = ["CircuitDataset", "MacroView", "as_netlists", "check_feasible", "read_netlists"]


def check_feasible(nl: Netlist) -> None:
    """Raise :class:`InvalidInputError` when the movable objects cannot fit: their total area exceeds
    the canvas area left by the fixed objects inside it (reported, never looped on)."""
    canvas_area = nl.chip_size[0] * nl.chip_size[1]
    fixed_area = float(nl.size[nl.fixed & ~nl.is_port].prod(1).sum())
    movable_area = float(nl.size[~nl.fixed & ~nl.is_port].prod(1).sum())
    if movable_area > canvas_area - fixed_area:
        raise InvalidInputError(
            f"netlist {nl.name!r} is infeasible: movable area {movable_area:.6g} exceeds the free canvas area "
            f"{canvas_area - fixed_area:.6g} (canvas {canvas_area:.6g} minus fixed {fixed_area:.6g})")
    big = np.nonzero(~nl.fixed & ((nl.size[:, 0] > nl.chip_size[0]) | (nl.size[:, 1] > nl.chip_size[1])))[0]
    if big.size:
        i = int(big[0])
        raise InvalidInputError(f"netlist {nl.name!r}: object {nl.names[i]!r} {nl.size[i].tolist()} is larger "
                                f"than the canvas {list(nl.chip_size)}")


def as_netlists(data, what: str) -> list[Netlist] | SyntheticNetlists:
    """A Netlist or a non-empty list/tuple of Netlists, as a list (lazy synthetic circuits as they are)."""
    if isinstance(data, Netlist):
        return [data]
    if isinstance(data, SyntheticNetlists):
        return data
    if isinstance(data, (list, tuple)) and data and all(isinstance(d, Netlist) for d in data):
        return list(data)
    raise InvalidInputError(f"{what} must be a Netlist or a non-empty list of Netlists, got {type(data).__name__}")


def read_netlists(path) -> list[Netlist]:
    """A Bookshelf ``.aux`` file, or a directory searched recursively for ``.aux`` files."""
    from pathlib import Path

    from scigen.placement.bookshelf import read_bookshelf

    p = Path(path)
    if p.is_file():
        return [read_bookshelf(p)]
    auxes = sorted(p.rglob("*.aux")) if p.is_dir() else []
    if not auxes:
        raise InvalidInputError(f"{p}: expected a .aux file or a directory containing .aux files")
    return [read_bookshelf(a) for a in auxes]


def placement_rank(nl: Netlist) -> tuple[bool, float]:
    """The key that orders placements best first: legal ones (legality >= 0.99) before the others, then by
    HPWL."""
    m = evaluate_placement(nl)
    return (m["legality"] < 0.99, m["hpwl"])


class MacroView:
    """The part of ``nl`` the placer moves: the netlist itself, or its macros when it has standard cells."""

    def __init__(self, nl: Netlist) -> None:
        if not isinstance(nl, Netlist):
            raise InvalidInputError(f"netlist must be a scigen.placement.Netlist, got {type(nl).__name__}")
        self.full = nl
        self.has_cells = bool((~nl.is_macro & ~nl.is_port).any())
        self.sub, self.keep = macro_only(nl) if self.has_cells else (nl, np.arange(nl.num_objects))
        if not (self.sub.is_macro & ~self.sub.is_port).any():
            raise InvalidInputError(f"netlist {nl.name!r} has no macros to place")

    def placed(self, x) -> Netlist:
        """The placed sub-netlist for normalised centres ``x [V, 2]``."""
        return self.sub.with_positions(self.sub.denormalize_pos(x))

    def merged(self, sub: Netlist) -> Netlist:
        """The full netlist with the placed sub-netlist's positions."""
        return merge_macro_positions(self.full, sub, self.keep) if self.has_cells else sub

    def best(self, xs) -> tuple[int, Netlist]:
        """Index and placed sub-netlist of the legal (legality >= 0.99) sample with the lowest HPWL."""
        cands = [self.placed(x) for x in xs]
        keys = [placement_rank(c) for c in cands]
        i = min(range(len(cands)), key=keys.__getitem__)
        return i, cands[i]


class CircuitDataset(Dataset):
    """Training circuits: netlist ``i`` (macro-only when it has standard cells) as a
    :class:`~scigen.placement.diffusion.process.Circuit` on ``device``, built when first used and kept."""

    def __init__(self, netlists, device, role: str = "data") -> None:
        self.netlists, self.device, self.role = netlists, device, role
        self._cache: dict[int, object] = {}

    def __len__(self) -> int:
        return len(self.netlists)

    def view(self, i: int) -> MacroView:
        view = MacroView(self.netlists[i])
        if not (~(view.sub.fixed | view.sub.is_port)).any():
            raise InvalidInputError(f"{self.role}[{i}] ({view.full.name!r}) has no movable object to learn from")
        return view

    def __getitem__(self, i: int):
        from scigen.placement.diffusion.process import Circuit

        if i not in self._cache:
            self._cache[i] = Circuit(self.view(i).sub, self.device)
        return self._cache[i]
