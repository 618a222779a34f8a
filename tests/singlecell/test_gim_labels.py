"""A screen as it comes (issue 37): the vehicle is called DMSO, some cells have no perturbation label. GIM names the
control field to set (with the vehicle label it found), refuses missing labels (they used to become a perturbation
called "nan"), and trains once the line it suggests is applied."""

from __future__ import annotations

import numpy as np
import pytest

from scigen.core.errors import InvalidInputError
from scigen.singlecell import GIM
from scigen.singlecell.gim.synthetic import synthetic_screen


@pytest.fixture(scope="module")
def screen():
    return synthetic_screen(4, n_functions=6, n_ood_functions=2, n_control=100, seed=0)


def test_a_vehicle_named_dmso_is_found_and_named_in_the_error(screen):
    a = screen.copy()
    a.obs["compound"] = a.obs["compound"].astype(str).replace("control", "DMSO")
    with pytest.raises(InvalidInputError, match=r"no value 'control'.*GIM\(control='DMSO'\)"):
        GIM(GIM.Config.preset("tiny")).fit(a, max_steps=1, progress=False)
    model = GIM(GIM.Config.preset("tiny"), control="DMSO").fit(a, max_steps=1, progress=False)
    assert model.is_trained


def test_cells_without_a_perturbation_label_are_refused_not_renamed_nan(screen):
    a = screen.copy()
    col = a.obs["compound"].astype(object)
    col[col == "control"] = np.nan
    a.obs["compound"] = col
    with pytest.raises(InvalidInputError, match=r"obs\['compound'\] is missing \(NaN\) for 100 of") as err:
        GIM(GIM.Config.preset("tiny")).fit(a, max_steps=1, progress=False)
    fix = str(err.value).split("usually: ")[1].split(") or drop them")[0]
    exec(fix, {"adata": a})
    assert (a.obs["compound"] == "control").sum() == 100
    assert GIM(GIM.Config.preset("tiny")).fit(a, max_steps=1, progress=False).is_trained
