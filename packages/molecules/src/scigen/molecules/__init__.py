"""3D molecule generation and property prediction (UniGEM, EDM) on RDKit."""

from scigen.molecules.data import MoleculeSet, edm_split, load_geom_drugs, load_moses_conformers, load_qm9
from scigen.molecules.io import from_rdkit, read_sdf, read_xyz, to_rdkit, write_sdf, write_xyz
from scigen.molecules.metrics import edm_smiles, molecule_metrics, property_mae, stability
from scigen.molecules.structures import Molecule

__version__ = "0.1.0"

SYSTEMS = {
    "unigem": "scigen.molecules.unigem.system:UniGEM",
    "edm": "scigen.molecules.unigem.system:EDM",
}

__all__ = [
    "Molecule", "MoleculeSet", "load_qm9", "edm_split", "load_moses_conformers", "load_geom_drugs", "read_xyz", "write_xyz", "read_sdf", "write_sdf",
    "to_rdkit", "from_rdkit", "molecule_metrics", "stability", "edm_smiles", "property_mae", "UniGEM", "EDM",
    "SYSTEMS",
]


def __getattr__(name):  # lazy: importing the package does not build the network modules
    if name in ("UniGEM", "EDM"):
        from scigen.molecules.unigem import system

        return getattr(system, name)
    raise AttributeError(name)
