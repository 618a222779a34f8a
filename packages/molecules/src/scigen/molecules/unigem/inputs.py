"""Input checks of UniGEM / EDM: molecules against the model (vocabulary, size, properties) and the
molecule sizes of a sampling call (given, or drawn from the training histogram: EDM's
``DistributionNodes`` prior)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from scigen.core.errors import InvalidInputError
from scigen.molecules.data.dataset import MoleculeSet

__all__ = ["as_molecule_set", "molecule_sizes", "read_molecule_file"]


def as_molecule_set(data: Any, *, atom_vocab: Sequence[int], max_atoms: int, properties: Sequence[str] = (),
                    what: str = "data") -> MoleculeSet:
    """``data`` (a MoleculeSet, or Molecule / RDKit Mol objects) as a MoleculeSet over ``atom_vocab`` padded
    to ``max_atoms``, holding ``properties``; every mismatch is an ``InvalidInputError`` naming ``what``."""
    props = list(properties)
    if isinstance(data, MoleculeSet):
        missing = [p for p in props if p not in data.properties]
        if missing:
            raise InvalidInputError(f"{what}: property {missing} not in the dataset (it has {data.property_names})")
        ms = MoleculeSet(data.atomic_numbers, data.positions, {p: data.properties[p] for p in props},
                         atom_vocab=atom_vocab, smiles=data.smiles, names=data.names, max_atoms=None)
    elif isinstance(data, (list, tuple)):
        ms = MoleculeSet.from_molecules(data, atom_vocab=atom_vocab, properties=props)
    else:
        raise InvalidInputError(f"{what}: expected a MoleculeSet or a list of Molecule / RDKit Mol, "
                                f"got {type(data).__name__}")
    big = int(ms.n_atoms.max())
    if big > max_atoms:
        k = int(np.argmax(ms.n_atoms))
        raise InvalidInputError(f"{what}: molecule {k} has {big} atoms, more than the model's max_atoms={max_atoms}")
    ms.max_atoms = max_atoms
    return ms


def read_molecule_file(path: str | os.PathLike, atom_vocab: Sequence[int]) -> MoleculeSet:
    """Molecules from an ``.xyz`` or ``.sdf`` file as a MoleculeSet over ``atom_vocab`` plus the file's own
    elements (so a model can name an unknown one); numeric SD fields present on every record become
    properties. Bad files and records are ``InvalidInputError`` naming the file (:mod:`scigen.molecules.io`)."""
    from scigen.molecules.io import read_sdf, read_xyz

    p = Path(path)
    if p.suffix.lower() not in (".xyz", ".sdf"):
        raise InvalidInputError(f"{p}: expected a .xyz or .sdf file")
    mols = read_xyz(p) if p.suffix.lower() == ".xyz" else read_sdf(p)
    common = set.intersection(*(set(m.properties) for m in mols))
    vocab = tuple(sorted({int(z) for m in mols for z in m.atomic_numbers} | set(atom_vocab)))
    return MoleculeSet.from_molecules(mols, atom_vocab=vocab, properties=sorted(common))


def molecule_sizes(n: int, n_atoms, histogram: dict | None, max_atoms: int, generator: torch.Generator) -> torch.Tensor:
    """Atom counts ``[n]``: ``n_atoms`` (one int or ``n`` ints in ``[1, max_atoms]``) or ``n`` draws from the
    training ``histogram`` (``{"n_atoms": count}``)."""
    if n_atoms is not None:
        given = [n_atoms] * n if np.isscalar(n_atoms) else list(n_atoms)
        wrong = [v for v in given if isinstance(v, bool) or not isinstance(v, (int, np.integer))]
        if wrong:
            raise InvalidInputError(f"n_atoms: expected an int or a list of ints, got {wrong[0]!r}")
        sizes = torch.as_tensor(given, dtype=torch.long)
        if sizes.numel() != n:
            raise InvalidInputError(f"n_atoms: {sizes.numel()} sizes given for n_samples={n} molecules")
        if bool((sizes < 1).any()) or int(sizes.max()) > max_atoms:
            raise InvalidInputError(f"n_atoms: sizes must lie in [1, max_atoms={max_atoms}], "
                                    f"got range [{int(sizes.min())}, {int(sizes.max())}]")
        return sizes
    if not histogram:
        raise InvalidInputError("the model has no size histogram (train it first) - pass n_atoms=")
    items = sorted((int(k), float(v)) for k, v in histogram.items())  # JSON round trips reorder keys
    keys = torch.tensor([k for k, _ in items])
    probs = torch.tensor([v for _, v in items])
    return keys[torch.multinomial(probs, n, replacement=True, generator=generator)]
