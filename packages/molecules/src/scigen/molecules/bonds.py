"""Bond orders from interatomic distances, EDM's rule (Hoogeboom et al., ICML 2022, App. and
``qm9/bond_analyze.py``), used by UniGEM (Feng et al., ICLR 2025) for every QM9 metric.

Typical bond lengths (pm) are the wiredchemist / chemistry-reference tables EDM uses. For a pair
at distance ``d`` (pm):

* no bond unless ``d < L1 + 10``;
* then double if the pair has a double-bond length and ``d < L2 + 5``;
* then triple if the pair has a triple-bond length and ``d < L3 + 3``;
* otherwise single.

A pair without a single-bond length never bonds. Valences (``ALLOWED_BONDS``) are EDM's; P, Hg and
Bi accept two values.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import torch

from scigen.molecules.elements import atomic_number

__all__ = ["BONDS1", "BONDS2", "BONDS3", "MARGINS_PM", "ALLOWED_BONDS", "BondTables", "bond_orders", "tables_for"]

_S1 = {
    ("H", "H"): 74, ("H", "C"): 109, ("H", "N"): 101, ("H", "O"): 96, ("H", "F"): 92, ("H", "B"): 119,
    ("H", "Si"): 148, ("H", "P"): 144, ("H", "As"): 152, ("H", "S"): 134, ("H", "Cl"): 127,
    ("H", "Br"): 141, ("H", "I"): 161,
    ("C", "C"): 154, ("C", "N"): 147, ("C", "O"): 143, ("C", "F"): 135, ("C", "Si"): 185, ("C", "P"): 184,
    ("C", "S"): 182, ("C", "Cl"): 177, ("C", "Br"): 194, ("C", "I"): 214,
    ("N", "N"): 145, ("N", "O"): 140, ("N", "F"): 136, ("N", "Cl"): 175, ("N", "Br"): 214, ("N", "S"): 168,
    ("N", "I"): 222, ("N", "P"): 177,
    ("O", "O"): 148, ("O", "F"): 142, ("O", "Br"): 172, ("O", "S"): 151, ("O", "P"): 163, ("O", "Si"): 163,
    ("O", "Cl"): 164, ("O", "I"): 194,
    ("F", "F"): 142, ("F", "S"): 158, ("F", "Si"): 160, ("F", "Cl"): 166, ("F", "Br"): 178, ("F", "P"): 156,
    ("F", "I"): 187,
    ("B", "Cl"): 175,
    ("Si", "Si"): 233, ("Si", "S"): 200, ("Si", "Cl"): 202, ("Si", "Br"): 215, ("Si", "I"): 243,
    ("Cl", "Cl"): 199, ("Cl", "P"): 203, ("Cl", "S"): 207, ("Cl", "Br"): 214,
    ("S", "S"): 204, ("S", "Br"): 225, ("S", "P"): 210, ("S", "I"): 234,
    ("Br", "Br"): 228, ("Br", "P"): 222,
    ("P", "P"): 221,
    ("I", "I"): 266,
}
_S2 = {("C", "C"): 134, ("C", "N"): 129, ("C", "O"): 120, ("C", "S"): 160, ("N", "N"): 125, ("N", "O"): 121,
       ("O", "O"): 121, ("O", "P"): 150, ("P", "S"): 186}
_S3 = {("C", "C"): 120, ("C", "N"): 116, ("C", "O"): 113, ("N", "N"): 110}


def _sym(table: dict) -> dict[tuple[str, str], float]:
    out = {}
    for (a, b), v in table.items():
        out[(a, b)] = float(v)
        out[(b, a)] = float(v)
    return out


#: Single / double / triple bond lengths in pm, symmetric, keyed by element symbols.
BONDS1, BONDS2, BONDS3 = _sym(_S1), _sym(_S2), _sym(_S3)
#: EDM's margins (pm) added to the single / double / triple lengths ("tuned to maximise the
#: stability of the QM9 true samples").
MARGINS_PM = (10.0, 5.0, 3.0)
#: EDM's allowed valences (sum of bond orders of a stable atom).
ALLOWED_BONDS: dict[str, tuple[int, ...]] = {
    "H": (1,), "C": (4,), "N": (3,), "O": (2,), "F": (1,), "B": (3,), "Al": (3,), "Si": (4,), "P": (3, 5),
    "S": (4,), "Cl": (1,), "As": (3,), "Br": (1,), "I": (1,), "Hg": (1, 2), "Bi": (3, 5),
}


class BondTables:
    """The bond-length thresholds of a vocabulary of atomic numbers as ``[K, K]`` tensors (pm, margins
    included; ``-inf`` = that bond order does not exist), and the allowed valences ``[K, 8]`` (bool)."""

    def __init__(self, vocab: Sequence[int], margins: Sequence[float] = MARGINS_PM):
        from scigen.molecules.elements import symbol

        self.vocab = tuple(atomic_number(int(z)) for z in vocab)
        syms = [symbol(z) for z in self.vocab]
        k = len(syms)
        thr = []
        for table, margin in zip((BONDS1, BONDS2, BONDS3), margins, strict=True):
            t = torch.full((k, k), float("-inf"), dtype=torch.float64)
            for i, a in enumerate(syms):
                for j, b in enumerate(syms):
                    if (a, b) in table:
                        t[i, j] = table[(a, b)] + margin
            thr.append(t)
        self.single, self.double, self.triple = thr
        self.allowed = torch.zeros(k, 8, dtype=torch.bool)
        for i, a in enumerate(syms):
            for v in ALLOWED_BONDS.get(a, ()):
                self.allowed[i, v] = True


def bond_orders(types: torch.Tensor, dist_angstrom: torch.Tensor, tables: BondTables) -> torch.Tensor:
    """EDM's bond order (0 none, 1, 2, 3) of every pair.

    Args:
        types: ``[..., n]`` indices into ``tables.vocab``. dist_angstrom: ``[..., n, n]`` distances (Å).
    Returns:
        ``[..., n, n]`` int64 bond orders (diagonal included: callers mask it).
    """
    d = dist_angstrom.double() * 100.0  # pm, as EDM
    ti, tj = types.unsqueeze(-1), types.unsqueeze(-2)
    s1, s2, s3 = (t.to(d.device)[ti, tj] for t in (tables.single, tables.double, tables.triple))
    single = d < s1
    double = single & (d < s2)
    triple = double & (d < s3)
    return single.long() + double.long() + triple.long()


@functools.lru_cache(maxsize=64)
def tables_for(vocab: tuple[int, ...]) -> BondTables:
    """Cached :class:`BondTables` of a vocabulary (EDM margins)."""
    return BondTables(vocab)
