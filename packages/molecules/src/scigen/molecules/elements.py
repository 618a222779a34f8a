"""Element symbols, atomic numbers and the atom-type vocabularies of the datasets.

QM9 (Ramakrishnan et al. 2014) has the five elements H, C, N, O, F; EDM (Hoogeboom et al. 2022)
encodes them one-hot in that order and also feeds the atomic number ("charge") as a feature.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scigen.core.errors import InvalidInputError

__all__ = ["SYMBOLS", "QM9_ATOMS", "GEOM_ATOMS", "atomic_number", "symbol", "encode_types", "as_atomic_numbers"]

# Z = 1 ... 86 (enough for GEOM-Drugs' H ... Bi, Hg)
SYMBOLS: tuple[str, ...] = (
    "X", "H", "He", "Li", "Be", "B", "C", "N", "O", "F", "Ne", "Na", "Mg", "Al", "Si", "P", "S", "Cl",
    "Ar", "K", "Ca", "Sc", "Ti", "V", "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn", "Ga", "Ge", "As", "Se",
    "Br", "Kr", "Rb", "Sr", "Y", "Zr", "Nb", "Mo", "Tc", "Ru", "Rh", "Pd", "Ag", "Cd", "In", "Sn", "Sb",
    "Te", "I", "Xe", "Cs", "Ba", "La", "Ce", "Pr", "Nd", "Pm", "Sm", "Eu", "Gd", "Tb", "Dy", "Ho", "Er",
    "Tm", "Yb", "Lu", "Hf", "Ta", "W", "Re", "Os", "Ir", "Pt", "Au", "Hg", "Tl", "Pb", "Bi", "Po", "At",
    "Rn",
)
_Z = {s.upper(): z for z, s in enumerate(SYMBOLS) if z > 0}

#: EDM's QM9 vocabulary, in EDM's one-hot order (atomic numbers).
QM9_ATOMS: tuple[int, ...] = (1, 6, 7, 8, 9)

#: EDM's GEOM-Drugs vocabulary (``geom_with_h``), in EDM's one-hot order: H B C N O F Al Si P S Cl As Br I Hg Bi.
GEOM_ATOMS: tuple[int, ...] = (1, 5, 6, 7, 8, 9, 13, 14, 15, 16, 17, 33, 35, 53, 80, 83)


def atomic_number(sym: str | int) -> int:
    """Atomic number of an element symbol (case-insensitive) or a valid integer Z."""
    if isinstance(sym, (int, np.integer)) and not isinstance(sym, bool):
        if 1 <= int(sym) < len(SYMBOLS):
            return int(sym)
        raise InvalidInputError(f"unknown element: atomic number {sym} (expected 1..{len(SYMBOLS) - 1})")
    z = _Z.get(str(sym).strip().upper())
    if z is None:
        raise InvalidInputError(f"unknown element {sym!r}")
    return z


def symbol(z: int) -> str:
    """Element symbol of atomic number ``z``."""
    return SYMBOLS[atomic_number(int(z))]


def encode_types(atomic_numbers: Sequence[int] | np.ndarray, vocab: Sequence[int], *, what: str = "molecule") -> np.ndarray:
    """Indices of ``atomic_numbers`` in ``vocab`` (int64); an element outside ``vocab`` is an error
    naming the element and the vocabulary."""
    lut = {int(z): i for i, z in enumerate(vocab)}
    z = np.asarray(atomic_numbers, dtype=np.int64).reshape(-1)
    bad = sorted({int(v) for v in z if int(v) not in lut})
    if bad:
        names = [SYMBOLS[b] if 0 < b < len(SYMBOLS) else str(b) for b in bad]
        raise InvalidInputError(f"{what}: unknown element(s) {names} for this model; it knows "
                                f"{[SYMBOLS[v] for v in vocab]}")
    return np.array([lut[int(v)] for v in z], dtype=np.int64)


def as_atomic_numbers(values, what: str = "atomic_numbers") -> np.ndarray:
    """``values`` as a 1-D int64 array of atomic numbers. Element symbols (``"C"``), non-integral or
    non-numeric entries are an :class:`InvalidInputError` naming ``what`` and the first bad entry."""
    arr = np.asarray(values, dtype=object if isinstance(values, (list, tuple)) else None).reshape(-1)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    for k, v in enumerate(arr):
        if isinstance(v, str):
            hint = f" (atomic number {_Z[v.strip().upper()]})" if v.strip().upper() in _Z else ""
            raise InvalidInputError(f"{what}[{k}]: expected an atomic number (int), got the string {v!r}{hint}; "
                                    "convert element symbols with scigen.molecules.elements.atomic_number")
        if (isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not np.isfinite(float(v))
                or float(v) != int(v)):
            raise InvalidInputError(f"{what}[{k}]: expected an atomic number (int), got {v!r}")
    return arr.astype(np.int64)
