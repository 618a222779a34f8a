"""Time-series data: validation, windows, splits, standardisation, benchmark loaders, offline data."""

from scigen.timeseries.data.loaders import (
    DATASETS,
    load_benchmark_csv,
    load_dataset,
    load_ett,
    load_lstnet_txt,
    load_netcdf,
)
from scigen.timeseries.data.synthetic import macrodata, synthetic_nonstationary
from scigen.timeseries.data.validate import SOURCE, as_frame, check_columns, source_label
from scigen.timeseries.data.windows import (
    Splits,
    Standardizer,
    make_windows,
    split_ett,
    split_ratio,
    standard_split,
    time_features,
)

__all__ = [
    "DATASETS",
    "SOURCE",
    "Splits",
    "Standardizer",
    "as_frame",
    "check_columns",
    "load_benchmark_csv",
    "load_dataset",
    "load_ett",
    "load_lstnet_txt",
    "load_netcdf",
    "macrodata",
    "make_windows",
    "source_label",
    "split_ett",
    "split_ratio",
    "standard_split",
    "synthetic_nonstationary",
    "time_features",
]
