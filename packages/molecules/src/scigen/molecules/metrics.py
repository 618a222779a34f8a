"""EDM's molecule metrics (Hoogeboom et al., ICML 2022, Sec. 5.1; ``qm9/analyze.py``,
``qm9/rdkit_functions.py``), used unchanged by UniGEM (Feng et al., ICLR 2025, Table 1).

* **atom stability**: fraction of atoms whose summed bond orders (EDM's distance rule,
  :mod:`scigen.molecules.bonds`) equal an allowed valence of their element;
* **molecule stability**: fraction of molecules whose atoms are all stable;
* **validity**: fraction of molecules whose RDKit molecule (same distance-based bonds) passes
  ``SanitizeMol``; the SMILES of a valid molecule is that of its *largest fragment*;
* **uniqueness**: distinct valid SMILES / valid molecules;
* **novelty**: distinct valid SMILES not in the training SMILES / distinct valid SMILES (EDM's
  definition; pass training SMILES built by :func:`edm_smiles` from training geometries, as EDM's
  ``retrieve_qm9_smiles`` does);
* **valid_x_unique**: validity × uniqueness (the "V×U" column of the tables).

All fractions are in [0, 1] (papers print ×100). Property MAE: :func:`property_mae`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import torch

from scigen.core.errors import InvalidInputError
from scigen.molecules.bonds import bond_orders, tables_for
from scigen.molecules.convert import check_molecule
from scigen.molecules.structures import Molecule

__all__ = ["atom_valences", "stability", "edm_smiles", "molecule_metrics", "property_mae"]


def _checked(molecules) -> list[Molecule]:
    """Molecules or RDKit Mols (what ``sample`` returns) as checked :class:`Molecule` records."""
    return [check_molecule(m, f"molecules[{k}]") for k, m in enumerate(molecules)]


def atom_valences(molecules: Sequence[Molecule], *, chunk: int = 1024) -> list[np.ndarray]:
    """Sum of EDM bond orders of every atom, one int array per molecule (batched on padded tensors)."""
    mols = _checked(molecules)
    if not mols:
        return []
    vocab = sorted({int(z) for m in mols for z in m.atomic_numbers})
    lut = {z: i for i, z in enumerate(vocab)}
    tables = tables_for(tuple(vocab))
    out: list[np.ndarray] = []
    for s in range(0, len(mols), chunk):
        part = mols[s:s + chunk]
        nmax = max(m.n_atoms for m in part)
        pos = torch.zeros(len(part), nmax, 3, dtype=torch.float64)
        typ = torch.zeros(len(part), nmax, dtype=torch.long)
        mask = torch.zeros(len(part), nmax, dtype=torch.bool)
        for b, m in enumerate(part):
            pos[b, :m.n_atoms] = torch.as_tensor(m.positions)
            typ[b, :m.n_atoms] = torch.as_tensor([lut[int(z)] for z in m.atomic_numbers])
            mask[b, :m.n_atoms] = True
        # float32 distances, as EDM computes them on float32 coordinates
        dist = torch.cdist(pos.float(), pos.float())
        order = bond_orders(typ, dist, tables)
        pair = mask[:, :, None] & mask[:, None, :] & ~torch.eye(nmax, dtype=torch.bool)[None]
        val = (order * pair).sum(-1)
        out.extend(val[b, :m.n_atoms].numpy() for b, m in enumerate(part))
    return out


def stability(molecules: Sequence[Molecule]) -> dict[str, object]:
    """``{"atom_stable": [per molecule bool arrays], "mol_stable": bool array, "atom_stability",
    "molecule_stability"}`` under EDM's valences."""
    from scigen.molecules.bonds import ALLOWED_BONDS
    from scigen.molecules.elements import symbol

    molecules = _checked(molecules)
    vals = atom_valences(molecules)
    flags = []
    for m, v in zip(molecules, vals, strict=True):
        ok = np.array([int(vv) in ALLOWED_BONDS.get(symbol(int(z)), ()) for z, vv in zip(m.atomic_numbers, v, strict=True)],
                      dtype=bool)
        flags.append(ok)
    mol_ok = np.array([f.all() for f in flags], dtype=bool)
    n_atoms = sum(f.size for f in flags)
    return {"atom_stable": flags, "mol_stable": mol_ok,
            "atom_stability": float(sum(f.sum() for f in flags) / max(n_atoms, 1)),
            "molecule_stability": float(mol_ok.mean()) if mol_ok.size else 0.0}


def edm_smiles(molecule: Molecule) -> str | None:
    """EDM's validity routine: RDKit molecule with distance-based bonds; ``None`` if ``SanitizeMol``
    fails, else the canonical SMILES of the largest fragment."""
    from rdkit import Chem, RDLogger

    from scigen.molecules.convert import to_rdkit

    mol = to_rdkit(molecule)
    RDLogger.DisableLog("rdApp.*")
    try:
        Chem.SanitizeMol(mol)
    except (ValueError, RuntimeError, Chem.rdchem.MolSanitizeException):
        return None
    finally:
        RDLogger.EnableLog("rdApp.*")
    frags = Chem.GetMolFrags(mol, asMols=True, sanitizeFrags=False)
    largest = max(frags, key=lambda f: f.GetNumAtoms(), default=mol)
    try:
        Chem.SanitizeMol(largest)
        return Chem.MolToSmiles(largest)
    except (ValueError, RuntimeError, Chem.rdchem.MolSanitizeException):
        return None


def molecule_metrics(molecules: Sequence[Molecule], train_smiles: Iterable[str] | None = None) -> dict[str, float]:
    """Atom/molecule stability, validity, uniqueness, valid×unique and (with ``train_smiles``) novelty
    of any number of molecules (fractions in [0, 1])."""
    from rdkit import RDLogger

    if len(molecules) == 0:
        raise InvalidInputError("molecules: need at least one molecule to score")
    molecules = _checked(molecules)
    st = stability(molecules)
    RDLogger.DisableLog("rdApp.*")
    try:
        smiles = [edm_smiles(m) for m in molecules]
    finally:
        RDLogger.EnableLog("rdApp.*")
    valid = [s for s in smiles if s is not None]
    unique = set(valid)
    out = {"atom_stability": st["atom_stability"], "molecule_stability": st["molecule_stability"],
           "validity": len(valid) / len(molecules), "uniqueness": len(unique) / len(valid) if valid else 0.0}
    out["valid_x_unique"] = out["validity"] * out["uniqueness"]
    if train_smiles is not None:
        ref = set(train_smiles)
        out["novelty"] = len([s for s in unique if s not in ref]) / len(unique) if unique else 0.0
    return out


def element_fractions(molecules: Sequence[Molecule]) -> dict[str, float]:
    """``{element symbol: fraction of all atoms}`` over ``molecules`` (QM9: H 0.51, C 0.35, O 0.08, N 0.06,
    F 0.002). A generator that has collapsed onto one element shows here before it shows in stability."""
    from scigen.molecules.elements import symbol

    molecules = _checked(molecules)
    z = np.concatenate([np.asarray(m.atomic_numbers).reshape(-1) for m in molecules]) if molecules else np.zeros(0)
    if z.size == 0:
        raise InvalidInputError("molecules: need at least one atom to count elements")
    vals, counts = np.unique(z, return_counts=True)
    return {symbol(int(v)): float(c) / z.size for v, c in zip(vals, counts, strict=True)}


def property_mae(pred: Mapping[str, Sequence[float]], true: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """``{name: mean |pred − true|}`` for every property in ``pred`` (same units as the inputs: EDM's
    α Bohr³, gap/homo/lumo eV — multiply by 1000 for the papers' meV —, μ D, Cv cal/(mol K))."""
    out = {}
    for k, p in pred.items():
        if k not in true:
            raise InvalidInputError(f"property {k!r} has predictions but no true values; true has {list(true)}")
        p, t = np.asarray(p, dtype=np.float64), np.asarray(true[k], dtype=np.float64)
        if p.shape != t.shape:
            raise InvalidInputError(f"property {k!r}: {p.shape[0] if p.ndim else p} predictions for "
                                    f"{t.shape[0] if t.ndim else t} molecules")
        out[k] = float(np.abs(p - t).mean())
    return out
