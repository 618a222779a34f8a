"""A time course whose day column holds labels ("day0", "D2.5", as many atlases ship it, issue 37): the error names
the value and gives the one line that converts it; that line, run as given, makes the data trainable."""

from __future__ import annotations

import anndata as ad
import numpy as np
import pandas as pd
import pytest

from scigen.core.errors import InvalidInputError
from scigen.singlecell import MMSFM


@pytest.mark.parametrize("labels, times", [(["day0", "day2", "day4.5"], [0.0, 2.0, 4.5]),
                                           (["D0", "D2", "D4"], [0.0, 2.0, 4.0])])
def test_day_labels_are_refused_with_the_conversion_that_works(labels, times):
    X = np.random.default_rng(0).normal(size=(300, 4)).astype(np.float32)
    adata = ad.AnnData(X, obs=pd.DataFrame({"day": pd.Categorical(np.repeat(labels, 100))},
                                           index=[str(i) for i in range(300)]))
    with pytest.raises(InvalidInputError, match=rf"obs\['day'\] must be numeric, found the value '{labels[0]}'") as err:
        MMSFM(MMSFM.Config.preset("tiny")).fit(adata, time_key="day", max_steps=1, progress=False)
    fix = str(err.value).split("carry the time in their digits: ")[1]
    exec(fix, {"adata": adata})  # the line the message gives
    assert sorted(set(adata.obs["day"])) == times
    model = MMSFM(MMSFM.Config.preset("tiny")).fit(adata, time_key="day", max_steps=1, progress=False)
    assert model.metadata["times"] == times


def test_a_plain_label_without_digits_gets_no_conversion_hint():
    X = np.zeros((20, 2), np.float32)
    adata = ad.AnnData(X, obs=pd.DataFrame({"day": ["early"] * 10 + ["late"] * 10}, index=[str(i) for i in range(20)]))
    with pytest.raises(InvalidInputError, match="found the value 'early'$"):
        MMSFM(MMSFM.Config.preset("tiny")).fit(adata, time_key="day", max_steps=1, progress=False)
