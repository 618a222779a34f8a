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
from scigen.core.streams import SampleStreams
from scigen.molecules.data.dataset import MoleculeSet

__all__ = ["as_molecule_set", "molecule_sizes", "read_molecule_file"]


_BOHR = 0.529177210903  # Å


def as_molecule_set(data: Any, *, atom_vocab: Sequence[int], max_atoms: int, properties: Sequence[str] = (),
                    what: str = "data") -> MoleculeSet:
    """``data`` as a MoleculeSet over ``atom_vocab`` padded to ``max_atoms``, holding ``properties``.

    ``data``: a MoleculeSet; a :class:`~scigen.molecules.data.store.MoleculeStore` or its path (molecules on
    disk, read per batch: returned as a store); Molecule / RDKit Mol objects (a list, one Mol, or any iterable such as
    ``Chem.SDMolSupplier``); or the path of an ``.sdf`` / ``.xyz`` file. Refused with an
    ``InvalidInputError`` naming ``what`` and what to pass instead: SMILES strings (no coordinates),
    molecules with formal charges (the models have no charge input), HOMO / gap that look like Hartree
    (median below 1; they are eV), coordinates that look like Bohr
    (hydrogens' nearest neighbours at > 1.6, a C-H bond is 1.09 Å = 2.06 Bohr), elements outside the
    vocabulary, molecules larger than ``max_atoms``, missing properties."""
    from scigen.molecules.data.store import MoleculeStore, is_molecule_store

    props = list(properties)
    if is_molecule_store(data):
        data = MoleculeStore(data, atom_vocab=atom_vocab)
    if isinstance(data, MoleculeStore):  # on disk, read per batch (scigen.molecules.data.store)
        if data.charged:
            raise InvalidInputError(f"{what}: molecule(s) {data.charged} carry formal charges; UniGEM / EDM have no "
                                    "charge input: neutralise them before writing the store")
        if data.largest > max_atoms:
            raise InvalidInputError(f"{what}: the store holds molecules of {data.largest} atoms, more than the "
                                    f"model's max_atoms={max_atoms}")
        ms = data.with_options(atom_vocab=atom_vocab, properties=props, max_atoms=max_atoms)
        _check_angstrom_store(ms, what)
        _check_ev(ms, props, what)
        return ms
    if isinstance(data, MoleculeSet):
        missing = [p for p in props if p not in data.properties]
        if missing:
            raise InvalidInputError(f"{what}: property {missing} not in the dataset (it has {data.property_names})")
        ms = MoleculeSet(data.atomic_numbers, data.positions, {p: data.properties[p] for p in props},
                         atom_vocab=atom_vocab, smiles=data.smiles, names=data.names, max_atoms=None)
    else:
        mols, bonds = _molecules(data, what)
        _check_neutral(mols, what)
        _check_angstrom(mols, bonds, what)
        ms = MoleculeSet.from_molecules(mols, atom_vocab=atom_vocab, properties=props)
    _check_ev(ms, props, what)
    big = int(ms.n_atoms.max())
    if big > max_atoms:
        k = int(np.argmax(ms.n_atoms))
        raise InvalidInputError(f"{what}: molecule {k} has {big} atoms, more than the model's max_atoms={max_atoms}")
    ms.max_atoms = max_atoms
    return ms


def _molecules(data: Any, what: str) -> tuple[list, list]:
    """Molecule records of a path, one RDKit Mol, or an iterable of Molecule / RDKit Mol (``None`` entries,
    RDKit's unparseable SDF records, and strings are errors naming their index), and each one's bond lengths
    (``None`` for a record without bonds: XYZ, Molecule)."""
    from scigen.molecules.convert import check_molecule
    from scigen.molecules.io import read_sdf, read_xyz
    from scigen.molecules.structures import Molecule

    if isinstance(data, (str, os.PathLike)):
        p = Path(data)
        if p.suffix.lower() in (".sdf", ".xyz") or p.exists():
            if p.suffix.lower() not in (".sdf", ".xyz"):
                raise InvalidInputError(f"{what}: {p} is not an .sdf or .xyz file")
            data = read_sdf(p, as_rdkit=True) if p.suffix.lower() == ".sdf" else read_xyz(p)
        else:
            raise InvalidInputError(f"{what}: {str(data)[:60]!r} is not an .sdf / .xyz path; SMILES have no 3-D "
                                    "coordinates: embed them first (scigen.molecules.data.conformers_from_smiles)")
    if isinstance(data, Molecule) or type(data).__name__ == "Mol":
        data = [data]
    if isinstance(data, (bytes, dict)) or not hasattr(data, "__iter__"):
        raise InvalidInputError(f"{what}: expected a MoleculeSet, Molecule / RDKit Mol objects or an .sdf / .xyz "
                                f"path, got {type(data).__name__}")
    mols, bonds = [], []
    for k, m in enumerate(data):
        if m is None:
            raise InvalidInputError(f"{what}[{k}]: is None (an SDF record RDKit could not parse; "
                                    "scigen.molecules.read_sdf names the reason)")
        if isinstance(m, str):
            raise InvalidInputError(f"{what}[{k}]: got the string {m[:40]!r}; SMILES have no 3-D coordinates: "
                                    "embed them first (scigen.molecules.data.conformers_from_smiles(smiles))")
        mols.append(check_molecule(m, f"{what}[{k}]"))
        bonds.append(None if isinstance(m, Molecule) else _bond_lengths(mols[-1].positions, m))
    if not mols:
        raise InvalidInputError(f"{what}: no molecules")
    return mols, bonds


def _bond_lengths(pos: np.ndarray, rdmol) -> np.ndarray | None:
    ij = np.array([(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in rdmol.GetBonds()], dtype=np.int64)
    return np.linalg.norm(pos[ij[:, 0]] - pos[ij[:, 1]], axis=1) if ij.size else np.zeros(0)


_HARTREE_EV = 27.211386246


def _check_ev(ms: MoleculeSet, props: list, what: str) -> None:
    """HOMO and gap are eV (EDM's units; QM9's raw files are Hartree): a median |HOMO| or gap below 1 eV
    (QM9: HOMO -11 to -3 eV, gap 1 to 17 eV; in Hartree both are below 0.65) is refused, not read as eV."""
    for p in ("homo", "gap"):
        if p in props:
            med = float(np.median(np.abs(ms.properties[p])))
            if med < 1.0:
                raise InvalidInputError(
                    f"{what}: property {p!r} has median |value| {med:.3g}, Hartree-sized; the model's {p} is in eV "
                    f"(EDM's units): multiply Hartree values by {_HARTREE_EV} (values already standardised: pass "
                    "the raw eV, the model normalises them itself)")


def _check_neutral(mols: list, what: str) -> None:
    charged = [k for k, m in enumerate(mols) if np.any(m.charges != 0)]
    if charged:
        raise InvalidInputError(
            f"{what}: molecule(s) {charged[:10]} carry formal charges; UniGEM / EDM have no charge input "
            "(QM9 and GEOM are read as neutral atoms), so neutralise them first "
            "(rdkit.Chem.MolStandardize.rdMolStandardize.Uncharger) or leave them out")


def _check_angstrom(mols: list, bonds: list, what: str) -> None:
    """Coordinates are Å. An RDKit Mol (or SDF record) whose median bond is longer than
    2.0 Å (organic bonds are 0.96-1.9 Å, in Bohr 1.8-3.6), or a bondless record (XYZ, Molecule) whose
    hydrogens' median nearest-neighbour distance exceeds 1.6 Å (H-X bonds 0.96-1.61 Å), is refused rather
    than silently read in the wrong unit."""
    for k, (m, b) in enumerate(zip(mols, bonds, strict=True)):
        if b is not None:  # an RDKit Mol: its own bonds (none: nothing to judge by)
            if b.size == 0:
                continue
            med, kind = float(np.median(b)), "median bond length"
            bad = med > 2.0
        else:
            h = np.nonzero(m.atomic_numbers == 1)[0]
            if m.n_atoms < 2 or h.size == 0:
                continue
            d = np.linalg.norm(m.positions[h, None, :] - m.positions[None, :, :], axis=-1)
            d[np.arange(h.size), h] = np.inf
            med, kind = float(np.median(d.min(1))), "median distance of a hydrogen to its nearest atom"
            bad = med > 1.6
        if bad:
            raise InvalidInputError(
                f"{what}[{k}]: {kind} {med:.2f} (a C-H bond is "
                f"1.09 Å, C-C 1.54 Å); coordinates must be in Å - if they are Bohr, multiply them by {_BOHR}")


def _check_angstrom_store(store, what: str) -> None:
    """:func:`_check_angstrom` on a store's molecules (bondless records), streamed in blocks of 4096."""
    arrays = store.arrays
    for start, stop, z in arrays.chunks("z", 4096):
        pos, off = arrays.field("pos", start, stop), arrays.offsets("z", start, stop)
        off = off - off[0]
        mols = [_Atoms(z[a:b], pos[a:b]) for a, b in zip(off[:-1], off[1:], strict=True)]
        try:
            _check_angstrom(mols, [None] * len(mols), what)
        except InvalidInputError as exc:  # the block's index -> the store's
            k = int(str(exc).split("[", 1)[1].split("]", 1)[0])
            raise InvalidInputError(str(exc).replace(f"{what}[{k}]", f"{what}[{start + k}]", 1)) from None


class _Atoms:
    def __init__(self, z: np.ndarray, pos: np.ndarray) -> None:
        self.atomic_numbers, self.positions, self.n_atoms = z, pos, int(z.shape[0])


def read_molecule_file(path: str | os.PathLike, atom_vocab: Sequence[int]) -> MoleculeSet:
    """Molecules from an ``.xyz`` or ``.sdf`` file as a MoleculeSet over ``atom_vocab`` plus the file's own
    elements (so a model can name an unknown one), with the checks of :func:`as_molecule_set` (charges, Å);
    numeric SD fields present on every record become
    properties. Bad files and records are ``InvalidInputError`` naming the file (:mod:`scigen.molecules.io`)."""
    p = Path(path)
    if p.suffix.lower() not in (".xyz", ".sdf"):
        raise InvalidInputError(f"{p}: expected a .xyz or .sdf file")
    mols, bonds = _molecules(p, str(p))
    _check_neutral(mols, str(p))
    _check_angstrom(mols, bonds, str(p))
    common = set.intersection(*(set(m.properties) for m in mols))
    vocab = tuple(sorted({int(z) for m in mols for z in m.atomic_numbers} | set(atom_vocab)))
    return MoleculeSet.from_molecules(mols, atom_vocab=vocab, properties=sorted(common))


def molecule_sizes(n: int, n_atoms, histogram: dict | None, max_atoms: int, generator) -> torch.Tensor:
    """Atom counts ``[n]``: ``n_atoms`` (one int or ``n`` ints in ``[1, max_atoms]``) or ``n`` draws from the
    training ``histogram`` (``{"n_atoms": count}``). ``generator``: a ``torch.Generator`` (a multinomial draw) or
    a :class:`~scigen.core.streams.SampleStreams` of ``n`` keys (one uniform per molecule through the inverse
    CDF of the histogram: molecule ``i``'s size depends on its key only)."""
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
    if isinstance(generator, SampleStreams):
        if len(generator) != n:
            raise InvalidInputError(f"molecule sizes: {len(generator)} streams for {n} molecules")
        cdf = torch.cumsum(probs.double(), 0)
        cdf = cdf / cdf[-1]
        u = generator.rand((n,), dtype=torch.float64).cpu()
        # P(first j with cdf[j] > u) = cdf[j] - cdf[j-1]: the histogram's frequencies
        return keys[torch.searchsorted(cdf, u, right=True).clamp_(max=len(items) - 1)]
    return keys[torch.multinomial(probs, n, replacement=True, generator=generator)]
