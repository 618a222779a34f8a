"""Precipitation nowcasting with a posterior-mean estimator and a rectified flow, on xarray."""

__version__ = "0.1.0"
