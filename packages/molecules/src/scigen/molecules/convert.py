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
        return validate_molecule(from_rdkit(mol), what)
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


def to_rdkit(mol: Molecule, *, bonds: str = "distance", sanitize: bool = False):
    """An RDKit ``Mol`` with one conformer from a :class:`Molecule`.

    ``bonds="distance"``: EDM's distance rule (what EDM/UniGEM's validity uses); ``"none"``: no bonds
    (use ``rdkit.Chem.rdDetermineBonds`` for charge-aware perception). ``sanitize=True`` raises RDKit's
    error for an invalid molecule; the default leaves it unsanitised so any output can be written.
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
    return out


def from_rdkit(rdmol, conf_id: int = -1) -> Molecule:
    """A :class:`Molecule` (atomic numbers, conformer ``conf_id`` positions, formal charges, numeric
    SD properties, name) from an RDKit ``Mol``; a Mol without a conformer is an error."""
    from rdkit import Chem

    if not isinstance(rdmol, Chem.Mol):
        raise InvalidInputError(f"rdmol: expected an RDKit Mol, got {type(rdmol).__name__}")
    if rdmol.GetNumConformers() == 0:
        raise InvalidInputError("rdmol: has no 3-D conformer (embed one, e.g. AllChem.EmbedMolecule)")
    atoms = list(rdmol.GetAtoms())
    props = {}
    for k, v in rdmol.GetPropsAsDict(includePrivate=False).items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            props[k] = float(v)
    return Molecule(
        np.array([a.GetAtomicNum() for a in atoms]),
        np.asarray(rdmol.GetConformer(conf_id).GetPositions(), dtype=np.float64),
        np.array([a.GetFormalCharge() for a in atoms]),
        props,
        rdmol.GetProp("_Name") if rdmol.HasProp("_Name") else "",
    )
