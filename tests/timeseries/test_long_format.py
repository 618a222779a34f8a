"""Forecasting data as neuralforecast / statsforecast users hold it (issue 37): Nixtla's long format
(``unique_id``, ``ds``, ``y``) trains exactly like the same series in wide form; gaps between series, duplicate
rows and exogenous columns are refused by name."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scigen.core.errors import InvalidInputError
from scigen.timeseries import NsDiff
from scigen.timeseries.data.validate import as_frame


def _wide():
    idx = pd.date_range("2020-01-01", periods=300, freq="h")
    return pd.DataFrame(np.random.default_rng(0).normal(size=(300, 3)), index=idx, columns=["a", "b", "c"])


def _long(wide):
    return wide.rename_axis("ds").reset_index().melt(id_vars="ds", var_name="unique_id", value_name="y")


def test_long_format_is_the_wide_frame():
    wide = _wide()
    got = as_frame(_long(wide).sample(frac=1.0, random_state=0))  # any row order
    pd.testing.assert_frame_equal(got, as_frame(wide))


def test_long_format_trains_exactly_like_wide():
    wide = _wide()
    a = NsDiff(NsDiff.Config.preset("tiny")).fit(wide, max_steps=2, progress=False)
    b = NsDiff(NsDiff.Config.preset("tiny")).fit(_long(wide), max_steps=2, progress=False)
    assert a.history.losses == b.history.losses


def test_long_format_gaps_duplicates_and_covariates_are_named():
    long = _long(_wide())
    with pytest.raises(InvalidInputError, match=r"'b' has no row at ds=2020-01-01 03:00:00"):
        as_frame(long.drop(index=long[(long.unique_id == "b")].index[3]))
    with pytest.raises(InvalidInputError, match=r"series 'a' has two rows at ds="):
        as_frame(pd.concat([long, long.iloc[[0]]]))
    with pytest.raises(InvalidInputError, match=r"extra column\(s\) \['temperature'\]"):
        as_frame(long.assign(temperature=1.0))
