"""``MoleculeSet``: a list of molecules (atom types, coordinates, properties) as a torch ``Dataset``.

Items are padded to ``max_atoms`` so the default collate stacks them (``pos [N,3]`` float32, centred;
``types [N]`` int64 indices into ``atom_vocab``; ``mask [N]`` bool; ``props [P]`` float32 in physical
units) — pass the set straight to :func:`scigen.core.train.fit`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch
from torch.utils.data import Dataset

from scigen.core.errors import InvalidInputError
from scigen.molecules.convert import check_molecule
from scigen.molecules.elements import QM9_ATOMS, as_atomic_numbers, encode_types
from scigen.molecules.structures import Molecule

__all__ = ["MoleculeSet"]


class MoleculeSet(Dataset):
    """Molecules over a fixed atom vocabulary (atomic numbers), with optional per-molecule properties."""

    def __init__(self, atomic_numbers: Sequence, positions: Sequence, properties: Mapping[str, Sequence[float]] | None = None,
                 *, atom_vocab: Sequence[int] = QM9_ATOMS, smiles: Sequence[str] | None = None,
                 names: Sequence[str] | None = None, max_atoms: int | None = None):
        if len(atomic_numbers) != len(positions):
            raise InvalidInputError(f"atomic_numbers ({len(atomic_numbers)}) and positions ({len(positions)}) "
                                    "must list the same number of molecules")
        if len(atomic_numbers) == 0:
            raise InvalidInputError("a MoleculeSet needs at least one molecule")
        self.atom_vocab = tuple(int(z) for z in atom_vocab)
        self.atomic_numbers = [as_atomic_numbers(z, f"atomic_numbers[{k}]") for k, z in enumerate(atomic_numbers)]
        self.positions = [np.asarray(p, dtype=np.float64) for p in positions]
        self.types = []
        for k, (z, p) in enumerate(zip(self.atomic_numbers, self.positions, strict=True)):
            check_molecule(Molecule(z, p), f"molecule {k}")
            self.types.append(encode_types(z, self.atom_vocab, what=f"molecule {k}"))
        self.properties = {k: _property_column(k, v, len(self)) for k, v in (properties or {}).items()}
        self.smiles = list(smiles) if smiles is not None else None
        self.names = list(names) if names is not None else [f"mol_{i}" for i in range(len(self))]
        n = self.n_atoms
        self.max_atoms = int(n.max()) if max_atoms is None else int(max_atoms)
        if int(n.max()) > self.max_atoms:
            big = int(np.argmax(n))
            raise InvalidInputError(f"molecule {big} has {int(n[big])} atoms > max_atoms={self.max_atoms}")

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_molecules(cls, molecules: Sequence, *, atom_vocab: Sequence[int] = QM9_ATOMS,
                       properties: Sequence[str] = (), max_atoms: int | None = None) -> MoleculeSet:
        """From :class:`Molecule` or RDKit ``Mol`` objects; ``properties`` names must be present on each."""
        mols = [check_molecule(m, f"molecules[{k}]") for k, m in enumerate(molecules)]
        props = {}
        for p in properties:
            missing = [k for k, m in enumerate(mols) if p not in m.properties]
            if missing:
                raise InvalidInputError(f"property {p!r} is missing on molecule(s) {missing[:10]}")
            props[p] = [m.properties[p] for m in mols]
        return cls([m.atomic_numbers for m in mols], [m.positions for m in mols], props, atom_vocab=atom_vocab,
                   names=[m.name or f"mol_{k}" for k, m in enumerate(mols)], max_atoms=max_atoms)

    # ------------------------------------------------------------------ views
    @property
    def n_atoms(self) -> np.ndarray:
        return np.array([z.shape[0] for z in self.atomic_numbers], dtype=np.int64)

    @property
    def property_names(self) -> list[str]:
        return list(self.properties)

    def molecule(self, i: int) -> Molecule:
        return Molecule(self.atomic_numbers[i], self.positions[i],
                        properties={k: float(v[i]) for k, v in self.properties.items()}, name=self.names[i])

    def to_molecules(self) -> list[Molecule]:
        return [self.molecule(i) for i in range(len(self))]

    def subset(self, indices: Sequence[int]) -> MoleculeSet:
        idx = [int(i) for i in indices]
        return MoleculeSet([self.atomic_numbers[i] for i in idx], [self.positions[i] for i in idx],
                           {k: v[idx] for k, v in self.properties.items()}, atom_vocab=self.atom_vocab,
                           smiles=[self.smiles[i] for i in idx] if self.smiles else None,
                           names=[self.names[i] for i in idx], max_atoms=self.max_atoms)

    def size_histogram(self) -> dict[int, int]:
        """``{n_atoms: count}``, EDM's ``DistributionNodes`` prior over molecule sizes."""
        vals, counts = np.unique(self.n_atoms, return_counts=True)
        return {int(v): int(c) for v, c in zip(vals, counts, strict=True)}

    # ------------------------------------------------------------------ Dataset
    def __len__(self) -> int:
        return len(self.atomic_numbers)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        n, nm = self.atomic_numbers[i].shape[0], self.max_atoms
        pos = torch.zeros(nm, 3)
        p = self.positions[i] - self.positions[i].mean(0)
        pos[:n] = torch.as_tensor(p, dtype=torch.float32)
        types = torch.zeros(nm, dtype=torch.long)
        types[:n] = torch.as_tensor(self.types[i])
        mask = torch.zeros(nm, dtype=torch.bool)
        mask[:n] = True
        props = torch.tensor([float(v[i]) for v in self.properties.values()], dtype=torch.float32)
        return {"pos": pos, "types": types, "mask": mask, "props": props}

    def __repr__(self) -> str:
        return (f"MoleculeSet({len(self)} molecules, atoms {int(self.n_atoms.min())}-{int(self.n_atoms.max())}, "
                f"properties {self.property_names})")


def _property_column(name: str, values, n: int) -> np.ndarray:
    """``values`` as ``n`` finite float64 numbers; strings, NaN/inf or a wrong length name the property."""
    try:
        v = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"properties[{name!r}]: expected numbers, got {exc}") from None
    if v.shape[0] != n:
        raise InvalidInputError(f"properties[{name!r}] has {v.shape[0]} values for {n} molecules")
    bad = np.nonzero(~np.isfinite(v))[0]
    if bad.size:
        raise InvalidInputError(f"properties[{name!r}]: NaN or inf at molecule(s) {bad[:10].tolist()}")
    return v
