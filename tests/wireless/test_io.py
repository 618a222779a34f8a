"""Channel files: .nc and .h5 round trips keep complex values, dims and attributes; no silent overwrite."""

from __future__ import annotations

import numpy as np
import pytest

from scigen.core.errors import InvalidInputError
from scigen.wireless import SBGM, read_dataset, write_dataset


@pytest.mark.parametrize("suffix", [".nc", ".h5"])
def test_round_trip(tmp_path, suffix):
    ds = SBGM.default_data(quick=True).isel(sample=slice(7))
    p = write_dataset(ds, tmp_path / f"obs{suffix}")
    back = read_dataset(p)
    for k in ("h", "y", "A", "noise_var", "path_angle"):
        np.testing.assert_array_equal(back[k].values, ds[k].values)
        assert back[k].dims == ds[k].dims
    assert np.iscomplexobj(back["y"].values)
    np.testing.assert_allclose(back.attrs["site_angles"], ds.attrs["site_angles"])
    with pytest.raises(InvalidInputError, match="exists"):
        write_dataset(ds, p)
    write_dataset(ds.isel(sample=slice(2)), p, overwrite=True)
    assert read_dataset(p).sizes["sample"] == 2


def test_unreadable_files_are_named(tmp_path):
    bad = tmp_path / "x.nc"
    bad.write_text("not netcdf")
    with pytest.raises(InvalidInputError, match="x.nc"):
        read_dataset(bad)
    with pytest.raises(InvalidInputError, match="does not exist"):
        read_dataset(tmp_path / "missing.h5")
    with pytest.raises(InvalidInputError, match="unknown channel file type"):
        write_dataset(SBGM.default_data(quick=True).isel(sample=slice(2)), tmp_path / "x.csv")
