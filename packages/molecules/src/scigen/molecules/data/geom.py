"""GEOM-Drugs (Axelrod & Gómez-Bombarelli, *Sci Data* 9, 185 (2022)) from its ``rdkit_folder`` release.

The user downloads ``rdkit_folder.tar.gz`` (catalog card ``GEOM-Drugs``: ``scigen data fetch GEOM-Drugs``
or place the file by hand; tens of GB). Its documented layout::

    rdkit_folder/summary_drugs.json     {SMILES: {"pickle_path": "drugs/<name>.pickle", "charge": ..,
                                                   "totalconfs": .., "uniqueconfs": .., ...}, ...}
    rdkit_folder/drugs/<name>.pickle    {"conformers": [{"rd_mol": rdkit Mol with one 3-D conformer,
                                                         "totalenergy": E_h, "boltzmannweight": w, ...}],
                                         "smiles": .., "charge": .., ...}

Summary entries without ``pickle_path`` are skipped (as EDM's ``build_geom_dataset`` does). Like EDM
(Hoogeboom et al. 2022, App. C) the ``conformers`` lowest-``totalenergy`` conformers of each molecule
are kept, with hydrogens.

**Pickles execute code when loaded.** They are read with a restricted unpickler that resolves only
``rdkit.Chem.rdchem.Mol`` (plus plain containers and numbers); anything else in a file is refused
with an error naming it.
"""

from __future__ import annotations

import io as _io
import json
import os
import pickle
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from scigen.core.errors import InvalidInputError
from scigen.molecules.elements import GEOM_ATOMS
from scigen.molecules.io import BadRecord, _finish

__all__ = ["load_geom_drugs", "geom_root", "read_geom_pickle", "UnsafePickleError"]

_ALLOWED_GLOBALS = {("rdkit.Chem.rdchem", "Mol")}


class UnsafePickleError(InvalidInputError):
    """A GEOM pickle refers to something other than an RDKit Mol or plain data."""


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in _ALLOWED_GLOBALS:
            from rdkit import Chem

            return Chem.rdchem.Mol
        raise UnsafePickleError(f"refusing to unpickle {module}.{name}: a GEOM pickle holds only RDKit Mols and "
                                "plain data (is this file from the official GEOM release?)")


def read_geom_pickle(path: str | os.PathLike) -> dict:
    """One GEOM molecule pickle, read with the restricted unpickler (see the module docstring)."""
    data = Path(path).read_bytes()
    out = _RestrictedUnpickler(_io.BytesIO(data)).load()
    if not isinstance(out, dict) or not isinstance(out.get("conformers"), list):
        raise InvalidInputError(f"{path}: expected a dict with a 'conformers' list (GEOM rdkit_folder format)")
    return out


def geom_root(root: str | os.PathLike | None = None) -> Path:
    """The ``rdkit_folder`` directory: ``root`` itself, ``root/rdkit_folder``, or (``root=None``) the
    catalog's cached copy (``scigen.datasets.path("GEOM-Drugs")``, which raises
    :class:`scigen.datasets.DataNotAvailableError` naming the fetch command when it is not cached)."""
    if root is None:
        from scigen.datasets import path as dataset_path

        root = dataset_path("GEOM-Drugs")
    root = Path(root)
    for cand in (root, root / "rdkit_folder"):
        if (cand / "summary_drugs.json").is_file():
            return cand
    raise FileNotFoundError(f"{root}: no summary_drugs.json here or in {root / 'rdkit_folder'}; expected GEOM's "
                            "extracted rdkit_folder.tar.gz (scigen data fetch GEOM-Drugs; scigen data info GEOM-Drugs)")


def load_geom_drugs(root: str | os.PathLike | None = None, *, conformers: int = 30, limit: int | None = None,
                    skip_bad: bool = False, atom_vocab: Sequence[int] = GEOM_ATOMS, max_atoms: int | None = None):
    """GEOM-Drugs as a :class:`MoleculeSet` of conformers (ragged types + coordinates, Å, explicit H).

    Args:
        root: the extracted release (see :func:`geom_root`); ``None`` = the catalog cache.
        conformers: keep this many lowest-``totalenergy`` conformers per molecule (EDM: 30).
        limit: read only the first ``limit`` molecules of ``summary_drugs.json`` (file order).
        skip_bad: skip molecules whose pickle is missing or unreadable (one warning listing them)
            instead of raising one error listing all of them.

    Returns a MoleculeSet whose ``smiles`` are the summary keys, ``names`` ``"<smiles>#<k>"`` (k-th
    lowest energy), with properties ``totalenergy`` (Hartree) and ``boltzmannweight``.
    """
    from scigen.molecules.convert import from_rdkit
    from scigen.molecules.data.dataset import MoleculeSet

    if isinstance(conformers, bool) or not isinstance(conformers, int) or conformers < 1:
        raise InvalidInputError(f"conformers: expected a positive integer, got {conformers!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InvalidInputError(f"limit: expected a positive integer or None, got {limit!r}")
    base = geom_root(root)
    summary = json.loads((base / "summary_drugs.json").read_text())
    if not isinstance(summary, dict):
        raise InvalidInputError(f"{base / 'summary_drugs.json'}: expected a JSON object SMILES -> entry")
    entries = [(s, d) for s, d in summary.items() if isinstance(d, dict) and "pickle_path" in d]
    if limit is not None:
        entries = entries[:limit]
    z, pos, energy, weight, smiles, names = [], [], [], [], [], []
    bad: list[BadRecord] = []
    for i, (smi, entry) in enumerate(entries):
        p = base / entry["pickle_path"]
        try:
            data = read_geom_pickle(p)
            confs = sorted(data["conformers"], key=lambda c: float(c.get("totalenergy", np.inf)))[:conformers]
            mols = [(from_rdkit(c["rd_mol"]), c) for c in confs]
        except UnsafePickleError:
            raise
        except (OSError, KeyError, TypeError, ValueError, pickle.UnpicklingError, EOFError) as exc:
            bad.append(BadRecord(i, i + 1, f"{smi}: {p}: {type(exc).__name__}: {exc}"))
            continue
        for k, (m, c) in enumerate(mols):
            z.append(m.atomic_numbers)
            pos.append(m.positions)
            energy.append(float(c.get("totalenergy", np.nan)))
            weight.append(float(c.get("boltzmannweight", np.nan)))
            smiles.append(smi)
            names.append(f"{smi}#{k}")
    _finish(base / "summary_drugs.json", [], bad, skip_bad)
    if not z:
        raise InvalidInputError(f"{base}: no conformers could be read")
    return MoleculeSet(z, pos, {"totalenergy": energy, "boltzmannweight": weight}, atom_vocab=atom_vocab,
                       smiles=smiles, names=names, max_atoms=max_atoms)
