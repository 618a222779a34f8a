"""Sparse Bayesian generative modelling of wireless channels (SBGM)."""

__version__ = "0.1.0"
