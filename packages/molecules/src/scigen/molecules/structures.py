"""``Molecule``: atomic numbers, 3-D coordinates (Å), formal charges and properties of one molecule.

The internal record of the readers, datasets and metrics; what users get from ``sample`` is an RDKit
``Mol`` (:func:`scigen.molecules.convert.to_rdkit`). Pure numpy: no RDKit import here.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from scigen.core.errors import InvalidInputError
from scigen.molecules.elements import as_atomic_numbers, atomic_number, symbol

__all__ = ["Molecule", "validate_molecule"]


@dataclasses.dataclass
class Molecule:
    """One molecule. ``atomic_numbers [n]`` int64, ``positions [n, 3]`` float64 (Å), ``charges [n]``
    formal charges (int64, zeros if unknown), ``properties`` (name -> float, physical units), ``name``."""

    atomic_numbers: np.ndarray
    positions: np.ndarray
    charges: np.ndarray | None = None
    properties: dict[str, float] = dataclasses.field(default_factory=dict)
    name: str = ""

    def __post_init__(self) -> None:
        self.atomic_numbers = as_atomic_numbers(self.atomic_numbers, "atomic_numbers")
        try:
            self.positions = np.asarray(self.positions, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"positions: expected numbers [n, 3] (Å), got {exc}") from None
        if self.charges is None:
            self.charges = np.zeros_like(self.atomic_numbers)
        self.charges = np.asarray(self.charges, dtype=np.int64).reshape(-1)

    @property
    def n_atoms(self) -> int:
        return int(self.atomic_numbers.shape[0])

    @property
    def symbols(self) -> list[str]:
        return [symbol(int(z)) for z in self.atomic_numbers]

    def __repr__(self) -> str:
        formula: dict[str, int] = {}
        for s in self.symbols:
            formula[s] = formula.get(s, 0) + 1
        f = "".join(f"{k}{v if v > 1 else ''}" for k, v in formula.items())
        return f"Molecule({self.name or f}, {self.n_atoms} atoms)"


def validate_molecule(mol: Molecule, what: str = "molecule") -> Molecule:
    """Check shapes, known elements and finite coordinates of a :class:`Molecule` (returned as is);
    raises ``InvalidInputError`` naming ``what``."""
    if not isinstance(mol, Molecule):
        raise InvalidInputError(f"{what}: expected a scigen Molecule, got {type(mol).__name__}")
    n = mol.atomic_numbers.shape[0]
    if n == 0:
        raise InvalidInputError(f"{what}: has no atoms")
    if mol.positions.shape != (n, 3):
        raise InvalidInputError(f"{what}: positions must have shape [{n}, 3], got {list(mol.positions.shape)}")
    if mol.charges.shape != (n,):
        raise InvalidInputError(f"{what}: charges must have shape [{n}], got {list(mol.charges.shape)}")
    if not np.isfinite(mol.positions).all():
        bad = np.nonzero(~np.isfinite(mol.positions).all(1))[0].tolist()
        raise InvalidInputError(f"{what}: NaN or inf coordinates at atom(s) {bad[:10]}")
    for z in mol.atomic_numbers:
        atomic_number(int(z))
    return mol
