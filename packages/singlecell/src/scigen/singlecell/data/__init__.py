"""Offline data: seeded synthetic marginals, scanpy time courses and pbmc68k_reduced, the Kaggle multiome and
sci-Plex3 loaders."""

from scigen.singlecell.data.kaggle import load_kaggle_multiome
from scigen.singlecell.data.scanpy_data import (
    KRUMSIEK_SNAPSHOTS,
    bin_time_course,
    krumsiek11_time_course,
    load_pbmc68k_reduced,
    sim_time_course,
)
from scigen.singlecell.data.sciplex import load_sciplex3
from scigen.singlecell.data.synthetic import (
    SYNTHETIC,
    alpha_gaussians,
    gaussian_checkerboard_moons,
    s_gaussians,
    synthetic,
    three_gaussians,
)

__all__ = [
    "KRUMSIEK_SNAPSHOTS",
    "SYNTHETIC",
    "alpha_gaussians",
    "bin_time_course",
    "gaussian_checkerboard_moons",
    "krumsiek11_time_course",
    "load_kaggle_multiome",
    "load_pbmc68k_reduced",
    "load_sciplex3",
    "s_gaussians",
    "sim_time_course",
    "synthetic",
    "three_gaussians",
]
