"""3D molecule generation and property prediction (UniGEM, EDM) on RDKit.

Every public name is imported on first use (PEP 562), so ``import scigen.molecules`` (what
``scigen list`` does to read :data:`SYSTEMS`) loads neither torch nor RDKit.
"""

from __future__ import annotations

from scigen.core.lazy import lazy_names

__version__ = "0.1.0"

SYSTEMS = {
    "unigem": "scigen.molecules.unigem.system:UniGEM",
    "edm": "scigen.molecules.unigem.system:EDM",
}

#: extra CLI verbs per system, registered without importing the system class (fast --help)
CLI_COMMANDS = {"unigem": "scigen.molecules.unigem.cli:add_predict_command",
                "edm": "scigen.molecules.unigem.cli:add_predict_command"}

#: public name -> module that defines it
_LAZY = {
    "Molecule": "scigen.molecules.structures",
    "MoleculeSet": "scigen.molecules.data",
    "MoleculeStore": "scigen.molecules.data.store",
    "write_molecules": "scigen.molecules.data.store",
    "load_qm9": "scigen.molecules.data",
    "edm_split": "scigen.molecules.data",
    "load_moses_conformers": "scigen.molecules.data",
    "load_geom_drugs": "scigen.molecules.data",
    "read_xyz": "scigen.molecules.io",
    "write_xyz": "scigen.molecules.io",
    "read_sdf": "scigen.molecules.io",
    "write_sdf": "scigen.molecules.io",
    "to_rdkit": "scigen.molecules.convert",
    "from_rdkit": "scigen.molecules.convert",
    "molecule_metrics": "scigen.molecules.metrics",
    "stability": "scigen.molecules.metrics",
    "edm_smiles": "scigen.molecules.metrics",
    "property_mae": "scigen.molecules.metrics",
    "posebusters_checks": "scigen.molecules.pose_checks",
    "posebusters_metrics": "scigen.molecules.pose_checks",
    "UniGEM": "scigen.molecules.unigem.system",
    "EDM": "scigen.molecules.unigem.system",
}

__all__ = [*_LAZY, "SYSTEMS"]


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
