"""RDKit ``Mol`` <-> :class:`~scigen.molecules.structures.Molecule`, and the one input check every
reader, dataset and metric uses (:func:`check_molecule`: a Molecule or an RDKit Mol with a conformer).

RDKit bonds for coordinates-only molecules are EDM's distance rule (:mod:`scigen.molecules.bonds`),
exactly as EDM/UniGEM build molecules for their validity metric. Imports RDKit lazily.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scigen.core.errors import InvalidInputError
from scigen.molecules.structures import Molecule, validate_molecule

__all__ = ["check_molecule", "distance_bonds", "from_rdkit", "to_rdkit"]


def check_molecule(mol: Any, what: str = "molecule") -> Molecule:
    """Validate a :class:`Molecule` (or an RDKit ``Mol`` with a conformer): shapes, known elements,
    finite coordinates. Returns a :class:`Molecule`; raises ``InvalidInputError`` naming ``what``."""
    if isinstance(mol, Molecule):
        return validate_molecule(mol, what)
    try:
        from rdkit import Chem
    except ImportError:  # pragma: no cover
        Chem = None
    if Chem is not None and isinstance(mol, Chem.Mol):
        return validate_molecule(from_rdkit(mol, what=what), what)
    raise InvalidInputError(f"{what}: expected a scigen Molecule or an RDKit Mol, got {type(mol).__name__}")


def distance_bonds(atomic_numbers: np.ndarray, positions: np.ndarray) -> list[tuple[int, int, int]]:
    """EDM's distance-based bonds ``(i, j, order)`` (i < j, order 1-3); pairs of elements without a
    tabulated bond length never bond."""
    import torch

    from scigen.molecules.bonds import bond_orders, tables_for

    vocab = tuple(sorted({int(z) for z in atomic_numbers}))
    lut = {z: i for i, z in enumerate(vocab)}
    types = torch.tensor([lut[int(z)] for z in atomic_numbers])
    pos = torch.as_tensor(np.asarray(positions, dtype=np.float32))
    order = bond_orders(types, torch.cdist(pos, pos), tables_for(vocab))
    ii, jj = torch.triu_indices(len(types), len(types), 1)
    o = order[ii, jj]
    keep = o > 0
    return [(int(a), int(b), int(c)) for a, b, c in zip(ii[keep], jj[keep], o[keep], strict=True)]


def to_rdkit(mol: Molecule, *, bonds: str = "distance", sanitize: bool = False, implicit_hs: bool = True):
    """An RDKit ``Mol`` with one conformer from a :class:`Molecule`.

    ``bonds="distance"``: EDM's distance rule (what EDM/UniGEM's validity uses); ``"none"``: no bonds
    (use ``rdkit.Chem.rdDetermineBonds`` for charge-aware perception). ``sanitize=True`` raises RDKit's
    error for an invalid molecule; the default leaves it unsanitised so any output can be written.
    ``implicit_hs=False`` marks every atom ``NoImplicit`` (RDKit then adds no hydrogens the molecule does
    not have: what ``sample`` returns); the default lets RDKit fill valences, as EDM's validity does.
    """
    from rdkit import Chem
    from rdkit.Geometry import Point3D

    mol = check_molecule(mol)
    if bonds not in ("distance", "none"):
        raise InvalidInputError(f"bonds: expected 'distance' or 'none', got {bonds!r}")
    rw = Chem.RWMol()
    for z, q in zip(mol.atomic_numbers, mol.charges, strict=True):
        a = Chem.Atom(int(z))
        a.SetFormalCharge(int(q))
        a.SetNoImplicit(not implicit_hs)
        rw.AddAtom(a)
    if bonds == "distance":
        kinds = {1: Chem.BondType.SINGLE, 2: Chem.BondType.DOUBLE, 3: Chem.BondType.TRIPLE}
        for i, j, o in distance_bonds(mol.atomic_numbers, mol.positions):
            rw.AddBond(i, j, kinds[o])
    conf = Chem.Conformer(mol.n_atoms)
    for k, (x, y, w) in enumerate(mol.positions):
        conf.SetAtomPosition(k, Point3D(float(x), float(y), float(w)))
    rw.AddConformer(conf, assignId=True)
    out = rw.GetMol()
    if mol.name:
        out.SetProp("_Name", mol.name)
    for key, val in mol.properties.items():
        out.SetDoubleProp(str(key), float(val))
    if sanitize:
        Chem.SanitizeMol(out)
    else:
        out.UpdatePropertyCache(strict=False)
        if not implicit_hs:
            Chem.AssignRadicals(out)  # open valences are radicals, so SMILES shows [CH2] not CH3
    return out


def from_rdkit(rdmol, conf_id: int | None = None, *, what: str = "rdmol") -> Molecule:
    """A :class:`Molecule` (atomic numbers, conformer positions, formal charges, numeric SD properties,
    name) from an RDKit ``Mol``. Nothing is guessed, so these are errors naming ``what``:

    * no conformer, or a 2-D one (``Conformer.Is3D()`` false: a depiction, or an SDF record marked 2D);
    * several conformers and no ``conf_id`` (pass one Mol per conformer, or ``conf_id``);
    * hydrogens without coordinates (implicit H, or H counts such as ``[NH3+]``): the models are
      all-atom, so add them with ``Chem.AddHs(mol, addCoords=True)``.
    """
    from rdkit import Chem

    if not isinstance(rdmol, Chem.Mol):
        raise InvalidInputError(f"{what}: expected an RDKit Mol, got {type(rdmol).__name__}")
    n_conf = rdmol.GetNumConformers()
    if n_conf == 0:
        raise InvalidInputError(f"{what}: has no 3-D conformer (embed one, e.g. AllChem.EmbedMolecule, or "
                                "scigen.molecules.data.conformers_from_smiles for SMILES)")
    if conf_id is None:
        if n_conf > 1:
            raise InvalidInputError(
                f"{what}: has {n_conf} conformers; pass one Mol per conformer "
                "([Chem.Mol(m, confId=c.GetId()) for c in m.GetConformers()]) or from_rdkit(m, conf_id=...)")
        conf_id = -1
    conf = rdmol.GetConformer(conf_id)
    if not conf.Is3D():
        raise InvalidInputError(f"{what}: its conformer is 2-D (a depiction, or an SDF record marked 2D); "
                                "embed a 3-D one (AllChem.EmbedMolecule) or mark the record 3D")
    rdmol.UpdatePropertyCache(strict=False)
    atoms = list(rdmol.GetAtoms())
    hidden = [(a.GetIdx(), a.GetNumImplicitHs() + a.GetNumExplicitHs()) for a in atoms]
    hidden = [(i, h) for i, h in hidden if h]
    if hidden:
        n_h = sum(h for _, h in hidden)
        raise InvalidInputError(
            f"{what}: {n_h} hydrogen(s) without coordinates (implicit, on atom(s) {[i for i, _ in hidden][:10]}); "
            "the models are all-atom: add them with Chem.AddHs(mol, addCoords=True) (read SDF files with "
            "removeHs=False)")
    props = {}
    for k, v in rdmol.GetPropsAsDict(includePrivate=False).items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            props[k] = float(v)
    return Molecule(
        np.array([a.GetAtomicNum() for a in atoms]),
        np.asarray(conf.GetPositions(), dtype=np.float64),
        np.array([a.GetFormalCharge() for a in atoms]),
        props,
        rdmol.GetProp("_Name") if rdmol.HasProp("_Name") else "",
    )
