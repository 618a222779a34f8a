"""Probabilistic time-series forecasting with diffusion (NsDiff, D3U) on pandas and xarray."""

__version__ = "0.1.0"
