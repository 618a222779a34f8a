"""Inverse Flow (Zhang & Zhou, ICML 2025): ICM and IFM denoising with a known noise model."""

from scigen.singlecell.inverseflow import noise
from scigen.singlecell.inverseflow.config import InverseFlowConfig
from scigen.singlecell.inverseflow.guard import CollapseError, CollapseWarning, collapse_report
from scigen.singlecell.inverseflow.noise import (
    CallableNoise,
    CorrelatedGaussian,
    Gamma,
    Gaussian,
    Jacobi,
    NegativeBinomial,
    NoiseMismatchWarning,
    NoiseModel,
    Poisson,
    Rayleigh,
)
from scigen.singlecell.inverseflow.system import InverseFlow

__all__ = ["CallableNoise", "CollapseError", "CollapseWarning", "CorrelatedGaussian", "Gamma", "Gaussian",
           "InverseFlow", "InverseFlowConfig", "Jacobi", "NegativeBinomial", "NoiseMismatchWarning", "NoiseModel", "Poisson", "Rayleigh",
           "collapse_report", "noise"]
