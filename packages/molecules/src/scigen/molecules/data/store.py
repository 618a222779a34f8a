"""Molecules larger than memory: an on-disk store written one molecule at a time, read per batch.

:func:`write_molecules` writes any iterable of :class:`~scigen.molecules.structures.Molecule` / RDKit ``Mol``
(``Chem.SDMolSupplier`` over a multi-GB SDF, a generator over GEOM pickles, a :class:`MoleculeSet`) into a
:mod:`scigen.core.ragged` store: atomic numbers and coordinates concatenated (``[atoms]`` int16,
``[atoms, 3]`` float64, Å) with per-molecule offsets, the properties one ``float64`` row per molecule, the
names as bytes. :class:`MoleculeStore` is the torch ``Dataset`` over it: item ``i`` is read from disk when
asked for and is exactly :class:`MoleculeSet`'s item ``i`` (centred ``pos``, vocabulary ``types``, ``mask``
and ``props`` padded to ``max_atoms``), so ``UniGEM.fit(store)`` (or the store's path) trains the weights
``UniGEM.fit(molecule_set)`` trains, reading one batch at a time.

What stays in memory: the property table (``8·P`` bytes per molecule, for the normalisation statistics,
computed exactly as in memory) and nothing else per atom; the size histogram, the elements and the
charged molecules are gathered while writing (``attrs``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from scigen.core.errors import InvalidInputError
from scigen.core.ragged import RaggedArrays, is_ragged_store, write_ragged
from scigen.molecules.elements import QM9_ATOMS, SYMBOLS
from scigen.molecules.structures import Molecule

__all__ = ["MoleculeStore", "is_molecule_store", "write_molecules"]

_KIND = "scigen.molecules/1"


def write_molecules(path: str | os.PathLike[str], molecules: Iterable[Any], *, properties: Sequence[str] = (),
                    overwrite: bool = False) -> Path:
    """Write ``molecules`` (an iterable of Molecule / RDKit Mol, or a :class:`MoleculeSet`) to the store
    ``path``, holding one molecule at a time; ``properties`` names the numeric properties every molecule
    must carry (kept as float64). Each molecule is checked as :class:`MoleculeSet` checks it (shapes,
    elements, finite coordinates); errors name its index. Returns ``path``."""
    from scigen.molecules.convert import check_molecule
    from scigen.molecules.data.dataset import MoleculeSet

    props = [str(p) for p in properties]
    if isinstance(molecules, MoleculeSet):
        missing = [p for p in props if p not in molecules.properties]
        if missing:
            raise InvalidInputError(f"properties {missing} are not in the MoleculeSet (it has {molecules.property_names})")
        ms = molecules
        molecules = (ms.molecule(i) for i in range(len(ms)))
    attrs: dict[str, Any] = {"kind": _KIND, "properties": props}
    sizes: dict[int, int] = {}
    elements: set[int] = set()
    charged: list[int] = []

    def records():
        for k, m in enumerate(molecules):
            if m is None or isinstance(m, str):
                raise InvalidInputError(f"molecules[{k}]: expected a Molecule or an RDKit Mol with a conformer, "
                                        f"got {m!r:.40}")
            mol = check_molecule(m, f"molecules[{k}]")
            missing = [p for p in props if p not in mol.properties]
            if missing:
                raise InvalidInputError(f"molecules[{k}]: property {missing} missing (every molecule needs {props})")
            y = np.array([mol.properties[p] for p in props], dtype=np.float64)
            if not np.isfinite(y).all():
                raise InvalidInputError(f"molecules[{k}]: property {props[int(np.argmin(np.isfinite(y)))]!r} is NaN or inf")
            n = mol.n_atoms
            sizes[n] = sizes.get(n, 0) + 1
            elements.update(int(z) for z in np.unique(mol.atomic_numbers))
            if np.any(mol.charges != 0) and len(charged) < 10:
                charged.append(k)
            yield {"z": mol.atomic_numbers.astype(np.int16), "pos": mol.positions, "props": y,
                   "name": np.frombuffer((mol.name or f"mol_{k}").encode(), np.uint8)}
        attrs.update(size_histogram={str(s): c for s, c in sorted(sizes.items())}, elements=sorted(elements),
                     max_atoms=max(sizes) if sizes else 0, charged=charged)

    return write_ragged(path, records(), ragged=("z", "pos", "name"), attrs=attrs, overwrite=overwrite)


def is_molecule_store(path: Any) -> bool:
    """True when ``path`` is a folder written by :func:`write_molecules`."""
    return is_ragged_store(path, kind=_KIND)


class _Names(Sequence):
    def __init__(self, arrays: RaggedArrays) -> None:
        self.arrays = arrays

    def __len__(self) -> int:
        return len(self.arrays)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        j = self.arrays._index(i)
        a, b = self.arrays.offsets("name", j, j + 1)
        return self.arrays._read("name.bin", np.dtype(np.uint8), int(a), int(b - a)).tobytes().decode()


class MoleculeStore(Dataset):
    """A :func:`write_molecules` store as a torch ``Dataset`` (module docstring): the interface of
    :class:`MoleculeSet` that training, ``predict`` and ``evaluate`` use, read from disk per item."""

    def __init__(self, path: str | os.PathLike[str], *, atom_vocab: Sequence[int] = QM9_ATOMS,
                 properties: Sequence[str] | None = None, max_atoms: int | None = None) -> None:
        self.arrays = RaggedArrays(path)
        a = self.arrays.attrs
        if a.get("kind") != _KIND:
            raise InvalidInputError(f"{path}: a ragged store, but not of molecules (write one with "
                                    "scigen.molecules.write_molecules)")
        self.path = Path(path)
        self.atom_vocab = tuple(int(z) for z in atom_vocab)
        unknown = sorted(set(a["elements"]) - set(self.atom_vocab))
        if unknown:
            raise InvalidInputError(f"{path}: unknown element(s) {[SYMBOLS[z] for z in unknown]} for this model; it "
                                    f"knows {[SYMBOLS[v] for v in self.atom_vocab]}")
        stored = list(a["properties"])
        self._columns = list(stored if properties is None else properties)
        missing = [p for p in self._columns if p not in stored]
        if missing:
            raise InvalidInputError(f"{path}: property {missing} not in the store (it has {stored})")
        self._col_index = [stored.index(p) for p in self._columns]
        self._properties: dict[str, np.ndarray] | None = None
        self.max_atoms = int(a["max_atoms"]) if max_atoms is None else int(max_atoms)
        if int(a["max_atoms"]) > self.max_atoms:
            raise InvalidInputError(f"{path}: molecules of {a['max_atoms']} atoms > max_atoms={self.max_atoms}")
        self._lut = np.full(max(self.atom_vocab) + 1, -1, np.int64)
        self._lut[list(self.atom_vocab)] = np.arange(len(self.atom_vocab))
        self.names = _Names(self.arrays)
        self.smiles = None

    def with_options(self, *, atom_vocab: Sequence[int], properties: Sequence[str], max_atoms: int) -> MoleculeStore:
        """The same files seen with another vocabulary / property selection / padding width."""
        return MoleculeStore(self.path, atom_vocab=atom_vocab, properties=properties, max_atoms=max_atoms)

    # ------------------------------------------------------------------ summaries (from the write)
    @property
    def property_names(self) -> list[str]:
        return list(self._columns)

    @property
    def properties(self) -> dict[str, np.ndarray]:
        """``{name: float64 [N]}`` (read once, in blocks: 8 bytes per molecule and property)."""
        if self._properties is None:
            y = np.concatenate([v[:, self._col_index] for _, _, v in self.arrays.chunks("props", 65536)])
            self._properties = {p: y[:, j].copy() for j, p in enumerate(self._columns)}
        return self._properties

    @property
    def charged(self) -> list[int]:
        """The first (up to 10) molecules that carry formal charges."""
        return list(self.arrays.attrs["charged"])

    def size_histogram(self) -> dict[int, int]:
        return {int(k): int(v) for k, v in self.arrays.attrs["size_histogram"].items()}

    @property
    def largest(self) -> int:
        return int(self.arrays.attrs["max_atoms"])

    # ------------------------------------------------------------------ records
    def molecule(self, i: int) -> Molecule:
        r = self.arrays[i]
        y = r["props"][self._col_index]
        return Molecule(r["z"].astype(np.int64), r["pos"], properties=dict(zip(self._columns, map(float, y), strict=True)),
                        name=r["name"].tobytes().decode())

    def __len__(self) -> int:
        return len(self.arrays)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        r = self.arrays[i]
        z, p = r["z"].astype(np.int64), r["pos"]
        n, nm = z.shape[0], self.max_atoms
        pos = torch.zeros(nm, 3)
        pos[:n] = torch.as_tensor(p - p.mean(0), dtype=torch.float32)
        types = torch.zeros(nm, dtype=torch.long)
        types[:n] = torch.as_tensor(self._lut[z])
        mask = torch.zeros(nm, dtype=torch.bool)
        mask[:n] = True
        props = torch.tensor([float(v) for v in r["props"][self._col_index]], dtype=torch.float32)
        return {"pos": pos, "types": types, "mask": mask, "props": props}

    def __repr__(self) -> str:
        return (f"MoleculeStore({str(self.path)!r}, {len(self)} molecules, up to {self.largest} atoms, "
                f"properties {self.property_names})")
