"""Radar fields on xarray: units, validation, synthetic storms, NetCDF/Zarr I/O, SEVIR and MeteoNet loaders."""

from scigen.weather.data.fields import DIMS, as_field, check_same_grid, make_field, time_step, to_units
from scigen.weather.data.io import open_field, read_field, write_field, write_field_blocks
from scigen.weather.data.meteonet import load_meteonet
from scigen.weather.data.sevir import load_sevir
from scigen.weather.data.synthetic import power_law_noise, synthetic_storms
from scigen.weather.data.units import UNITS, check_units, convert

__all__ = ["DIMS", "UNITS", "as_field", "check_same_grid", "check_units", "convert", "load_meteonet", "load_sevir",
           "make_field", "open_field", "power_law_noise", "read_field", "synthetic_storms", "time_step", "to_units",
           "write_field", "write_field_blocks"]
