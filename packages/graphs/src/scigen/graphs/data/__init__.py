"""Graph datasets: seeded synthetic families, the SPECTRE split, MOSES / QM9 SMILES, TU benchmarks."""

from scigen.graphs.data.generators import (
    GENERATORS,
    community_graphs,
    erdos_renyi_like,
    generate,
    lobster_graphs,
    planar_graphs,
    sbm_graphs,
    sized_sbm_graphs,
    spectre_split,
    tree_graphs,
)
from scigen.graphs.data.molecules import moses, moses_fcd_stats, qm9, read_smiles
from scigen.graphs.data.store import GraphStore, is_graph_store, write_graph_store
from scigen.graphs.data.tu import TUData, TUFormatError, load_tu, read_tu

__all__ = ["GENERATORS", "community_graphs", "erdos_renyi_like", "generate", "lobster_graphs", "planar_graphs",
           "sbm_graphs", "sized_sbm_graphs", "spectre_split", "tree_graphs", "moses", "moses_fcd_stats", "qm9", "read_smiles",
           "TUData", "TUFormatError", "load_tu", "read_tu", "GraphStore", "is_graph_store", "write_graph_store"]
