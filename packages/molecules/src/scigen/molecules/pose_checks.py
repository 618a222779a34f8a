"""PoseBusters' plausibility checks on generated 3-D molecules (the ``posebusters`` extra).

PoseBusters (Buttenschoen, Morris & Deane 2024, *PoseBusters: AI-based docking methods fail to generate
physically valid poses or generalise to novel sequences*, Chem. Sci. 15, 3130) tests a molecule's
chemistry (RDKit sanitisation, InChI conversion, one connected fragment, no radicals) and geometry
(bond lengths, bond angles and internal clashes against RDKit's distance-geometry bounds widened by
25 % / 25 % / 30 %, aromatic rings and trigonal double bonds flat to 0.25 Å, saturated six-rings not
flat, and in the ``"mol"`` configuration the energy ratio to an ETKDG ensemble). Its ``"mol"`` /
``"mol_fast"`` configurations are the ones for a molecule without a protein or a reference pose.

:func:`posebusters_checks` runs them on molecules as EDM/UniGEM build them (RDKit molecules with EDM's
distance bonds, what ``sample`` returns; a :class:`~scigen.molecules.structures.Molecule` is converted
the same way with :func:`~scigen.molecules.convert.to_rdkit`); an RDKit ``Mol`` keeps its own bonds.
Molecules that RDKit sanitises are sanitised first (aromaticity and ring information are what the
flatness checks match on); the others are passed as they are and fail ``sanitization``, which is
therefore the same test as EDM's validity (tests/molecules/test_pose_checks.py).
:func:`posebusters_metrics` gives each check's pass rate (``posebusters/<check>``, a fraction) and the
fraction of molecules passing them all (``posebusters/all``), reported beside atom / molecule stability
and validity by ``evaluate``.
"""

from __future__ import annotations

from collections.abc import Sequence
from copy import deepcopy

from scigen.core.errors import InvalidInputError

__all__ = ["CONFIGS", "posebusters_checks", "posebusters_metrics"]

#: PoseBusters configurations for a lone molecule: ``mol_fast`` (every check but the energy ratio) and ``mol``
CONFIGS = ("mol_fast", "mol")


def _rdkit_mols(molecules) -> list:
    from rdkit import Chem, RDLogger

    from scigen.molecules.convert import check_molecule, to_rdkit

    out = []
    RDLogger.DisableLog("rdApp.*")
    try:
        for k, m in enumerate(molecules):
            if isinstance(m, Chem.Mol):
                if m.GetNumConformers() == 0:
                    raise InvalidInputError(f"molecules[{k}]: an RDKit Mol without a 3-D conformer")
                mol = deepcopy(m)
            else:
                mol = to_rdkit(check_molecule(m, f"molecules[{k}]"))
            try:
                trial = deepcopy(mol)
                Chem.SanitizeMol(trial)
                mol = trial
            except (ValueError, RuntimeError, Chem.rdchem.MolSanitizeException):
                pass  # left unsanitised: PoseBusters' sanitization check fails it
            out.append(mol)
    finally:
        RDLogger.EnableLog("rdApp.*")
    return out


def _quiet_bust(buster, mols):
    """``buster.bust(mols)`` without RDKit's per-molecule messages and PoseBusters' log warnings (one line per
    unsanitisable sample would flood ``evaluate``'s output)."""
    import logging
    import warnings

    from rdkit import RDLogger

    log = logging.getLogger("posebusters")
    level = log.level
    RDLogger.DisableLog("rdApp.*")
    log.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return buster.bust(mols)
    finally:
        log.setLevel(level)
        RDLogger.EnableLog("rdApp.*")


def posebusters_checks(molecules: Sequence, *, config: str = "mol_fast"):
    """A ``pandas.DataFrame`` with one row per molecule and one boolean column per PoseBusters check
    (``sanitization``, ``inchi_convertible``, ``all_atoms_connected``, ``no_radicals``, ``bond_lengths``,
    ``bond_angles``, ``internal_steric_clash``, ``aromatic_ring_flatness``,
    ``non-aromatic_ring_non-flatness``, ``double_bond_flatness``, and ``internal_energy`` with
    ``config="mol"``). A check that has nothing to test (no aromatic ring, say) passes, as in PoseBusters; a
    check that could not run (PoseBusters reports NaN: the geometry checks of a molecule RDKit cannot
    sanitise) fails, as in PoseBusters' all-checks-pass rate."""
    try:
        from posebusters import PoseBusters
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("PoseBusters checks need the posebusters package: pip install 'scigen-molecules[posebusters]'") from e
    import numpy as np
    import pandas as pd

    if config not in CONFIGS:
        raise InvalidInputError(f"config: expected one of {CONFIGS}, got {config!r}")
    mols = _rdkit_mols(molecules)
    if not mols:
        raise InvalidInputError("molecules: need at least one molecule to check")
    df = _quiet_bust(PoseBusters(config), mols)
    df = df.drop(columns=[c for c in ("mol_pred_loaded",) if c in df.columns])
    ok = df.apply(lambda col: col.map(lambda v: v is True or v is np.True_ or v == 1.0))  # NaN (not run) -> False
    return pd.DataFrame(ok.to_numpy(dtype=bool), columns=list(df.columns), index=pd.RangeIndex(len(mols), name="molecule"))


def posebusters_metrics(molecules: Sequence, *, config: str = "mol_fast") -> dict[str, float]:
    """``{"posebusters/<check>": pass rate, "posebusters/all": fraction passing every check}`` (fractions)."""
    df = posebusters_checks(molecules, config=config)
    out = {f"posebusters/{c}": float(df[c].mean()) for c in df.columns}
    out["posebusters/all"] = float(df.all(axis=1).mean())
    return out
