"""Molecule data: :class:`MoleculeSet`, QM9 from qm9pack (EDM split) or its original xyz files, ragged batching,
zero-CoM."""

from scigen.molecules.data.batching import (
    batch_index,
    com_norm,
    ptr_from_counts,
    remove_mean,
    remove_mean_padded,
    to_padded,
    to_ragged,
    zero_com_noise,
)
from scigen.molecules.data.conformers import conformers_from_smiles, embed_smiles, load_moses_conformers
from scigen.molecules.data.dataset import MoleculeSet
from scigen.molecules.data.geom import load_geom_drugs
from scigen.molecules.data.qm9 import (
    EDM_SPLIT_SIZES,
    HARTREE_TO_EV,
    QM9_PROPERTIES,
    edm_split,
    excluded_indices,
    load_qm9,
)
from scigen.molecules.data.qm9_xyz import load_qm9_xyz

__all__ = [
    "MoleculeSet", "load_qm9", "edm_split", "excluded_indices", "EDM_SPLIT_SIZES", "HARTREE_TO_EV", "QM9_PROPERTIES",
    "batch_index", "com_norm", "ptr_from_counts", "remove_mean", "remove_mean_padded", "to_padded", "to_ragged",
    "zero_com_noise", "embed_smiles", "conformers_from_smiles", "load_moses_conformers", "load_geom_drugs",
    "load_qm9_xyz",
]
