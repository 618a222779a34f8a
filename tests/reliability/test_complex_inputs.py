"""Complex-valued data is refused with a message naming the field, never silently cast to its real part
(issue 35, case 7): Inverse Flow (API and CLI), the time-series systems (a complex DataFrame column) and
nowcasting (a complex field)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.core.validation import check_real

from .helpers import assert_one_line_error, cli


def test_check_real_accepts_real_and_names_complex_in_every_container():
    import xarray as xr

    for real in (np.zeros(3), torch.zeros(3), pd.DataFrame({"a": [1.0]}), xr.DataArray(np.zeros(2)), np.zeros(2, int)):
        check_real(real, "x")
    for bad, needle in ((np.zeros(3, complex), "complex128"), (torch.zeros(3, dtype=torch.complex64), "complex64"),
                        (xr.DataArray(np.zeros(2, np.complex64)), "complex64"),
                        (pd.DataFrame({"a": [1.0], "h": [1 + 2j]}), "['h']")):
        with pytest.raises(InvalidInputError, match="complex") as info:
            check_real(bad, "x", hint="split it")
        assert needle in str(info.value) and "split it" in str(info.value)


def test_inverse_flow_refuses_complex_arrays_and_anndata():
    import anndata

    from scigen.singlecell.inverseflow import InverseFlow

    model = InverseFlow(width=8, depth=1)
    z = (np.random.default_rng(0).normal(size=(16, 2)) + 1j).astype(np.complex64)
    with pytest.raises(InvalidInputError, match="complex"):
        model.fit(z, max_steps=1, progress=False, logger=None)
    with pytest.raises(InvalidInputError, match=r"use_rep=.X. holds complex"):
        model.fit(anndata.AnnData(X=z), max_steps=1, progress=False, logger=None)
    assert not model.is_trained


def test_inverse_flow_cli_train_refuses_a_complex_npy(tmp_path):
    np.save(tmp_path / "complex.npy", np.ones((16, 2), dtype=np.complex128))
    result = cli("singlecell", "inverseflow", "train", "--data", str(tmp_path / "complex.npy"), "--out",
                 str(tmp_path / "run"), "--max-steps", "1")
    assert_one_line_error(result, "complex")
    assert not (tmp_path / "run").exists()


def test_time_series_refuse_a_complex_column():
    from scigen.timeseries import D3U, NsDiff

    idx = pd.date_range("2020-01-01", periods=200, freq="h")
    df = pd.DataFrame({"load": np.arange(200.0), "phasor": np.exp(1j * np.arange(200.0))}, index=idx)
    for cls in (D3U, NsDiff):
        with pytest.raises(InvalidInputError, match=r"\['phasor'\] hold complex"):
            cls(cls.Config.preset("tiny")).fit(df, max_steps=1, progress=False, logger=None)


def test_nowcast_refuses_a_complex_field():
    import xarray as xr

    from scigen.weather.data.fields import as_field

    time = pd.date_range("2020-01-01", periods=3, freq="5min")
    field = xr.DataArray(np.ones((3, 4, 4), np.complex64), dims=("time", "y", "x"), coords={"time": time},
                         name="rain", attrs={"units": "mm/h"})
    with pytest.raises(InvalidInputError, match=r"rain\) holds complex"):
        as_field(field, "context")
