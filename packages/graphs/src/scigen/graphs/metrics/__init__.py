"""Graph generation metrics: Gaussian-TV MMD² on graph statistics, validity, uniqueness, novelty,
V.U.N., orbit counts, and MOSES-style molecule metrics with FCD."""

from scigen.graphs.metrics.mmd import (
    gaussian_tv_mmd2,
    graph_mmds,
    mmd_clustering,
    mmd_degree,
    mmd_orbit,
    mmd_spectral,
)
from scigen.graphs.metrics.orbits import N_ORBITS, orbit_counts
from scigen.graphs.metrics.validity import (
    VALIDITY,
    IsoIndex,
    is_lobster_graph,
    is_planar_graph,
    is_sbm_graph,
    is_tree_graph,
    novelty,
    sbm_p_value,
    uniqueness,
    validity_fn,
    vun,
)

__all__ = ["gaussian_tv_mmd2", "graph_mmds", "mmd_clustering", "mmd_degree", "mmd_orbit", "mmd_spectral", "N_ORBITS",
           "orbit_counts", "VALIDITY", "IsoIndex", "is_lobster_graph", "is_planar_graph", "is_sbm_graph",
           "is_tree_graph", "novelty", "sbm_p_value", "uniqueness", "validity_fn", "vun"]
