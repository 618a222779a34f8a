"""The sci-Plex3 reader on small ``.h5ad`` files written here in the two published layouts (scPerturb's
``perturbation``/``dose_value``/``dose_unit``/``cell_line`` and CPA's ``product_name``/``dose``/``cell_type``)."""

from __future__ import annotations

import numpy as np
import pytest

anndata = pytest.importorskip("anndata")
pd = pytest.importorskip("pandas")
sparse = pytest.importorskip("scipy.sparse")

from scigen.core.errors import InvalidInputError  # noqa: E402
from scigen.singlecell.data import load_sciplex3  # noqa: E402

LINES = ["A549", "K562", "MCF7"]
COMPOUNDS = ["Dexamethasone", "SAHA (Vorinostat)"]
DOSES = [10.0, 100.0, 1000.0, 10000.0]


def _cells():
    """Per cell line: 2 vehicle cells, then every compound x dose once (2 + 8 = 10 cells per line)."""
    rows = []
    for line in LINES:
        rows += [(line, "control", np.nan)] * 2
        rows += [(line, c, d) for c in COMPOUNDS for d in DOSES]
    return rows


def _write(path, layout: str):
    rows = _cells()
    rng = np.random.default_rng(0)
    X = sparse.random(len(rows), 7, density=0.4, random_state=1, format="csr",
                      data_rvs=lambda k: rng.integers(1, 20, k)).astype(np.float32)
    names = [f"cell{i}" for i in range(len(rows))]
    if layout == "scperturb":  # doses stored in uM here, to check the unit conversion
        obs = pd.DataFrame({"perturbation": [r[1] for r in rows],
                            "dose_value": [r[2] / 1000 for r in rows],
                            "dose_unit": ["uM" if r[1] != "control" else np.nan for r in rows],
                            "cell_line": [r[0] for r in rows], "time": 24.0}, index=names)
    else:
        obs = pd.DataFrame({"product_name": ["Vehicle" if r[1] == "control" else r[1] for r in rows],
                            "dose": [0.0 if r[1] == "control" else r[2] for r in rows],
                            "cell_type": [r[0] for r in rows]}, index=names)
    for col in obs.columns:
        if obs[col].dtype == object:
            obs[col] = obs[col].astype("category")
    ad = anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=[f"ENSG{i:011d}" for i in range(7)]))
    ad.write_h5ad(path)
    return ad


@pytest.mark.parametrize("layout", ["scperturb", "cpa"])
def test_reads_both_layouts_and_selects_exactly(tmp_path, layout):
    ref = _write(tmp_path / "s.h5ad", layout)
    ad = load_sciplex3(tmp_path / "s.h5ad")
    assert ad.shape == (30, 7)
    assert (ad.X != ref.X).nnz == 0  # counts unchanged
    assert ad.obs["control"].sum() == 6 and set(ad.obs["cell_line"]) == set(LINES)
    treated = ad.obs[~ad.obs["control"]]
    assert sorted(set(treated["dose_nM"])) == DOSES and (ad.obs.loc[ad.obs["control"], "dose_nM"] == 0).all()
    assert set(treated["compound"]) == set(COMPOUNDS)
    sub = load_sciplex3(tmp_path / "s.h5ad", cell_lines=["K562"], compounds="Dexamethasone", doses_nM=[100, 10000])
    assert sub.obs_names.tolist() == ["cell10", "cell11", "cell13", "cell15"]  # 2 controls + 2 doses
    assert (sub.X != ref[sub.obs_names].X).nnz == 0
    no_ctrl = load_sciplex3(tmp_path / "s.h5ad", controls=False, doses_nM=[10])
    assert len(no_ctrl) == 6 and not no_ctrl.obs["control"].any()
    few = load_sciplex3(tmp_path / "s.h5ad", max_cells=5, seed=3)
    assert len(few) == 5 and set(few.obs_names) <= set(ref.obs_names)
    assert few.obs_names.tolist() == load_sciplex3(tmp_path / "s.h5ad", max_cells=5, seed=3).obs_names.tolist()


def test_catalog_cache_location(tmp_path, monkeypatch):
    from scigen.datasets import DataNotAvailableError

    monkeypatch.setenv("SCIGEN_DATA", str(tmp_path))
    with pytest.raises(DataNotAvailableError, match=r"SrivatsanTrapnell2020_sciplex3\.h5ad"):
        load_sciplex3()
    (tmp_path / "sciPlex3").mkdir()
    _write(tmp_path / "sciPlex3" / "SrivatsanTrapnell2020_sciplex3.h5ad", "scperturb")
    assert load_sciplex3(cell_lines="MCF7").n_obs == 10


def test_bad_inputs_are_named(tmp_path):
    p = tmp_path / "s.h5ad"
    ref = _write(p, "cpa")
    with pytest.raises(InvalidInputError, match=r"compounds: \['Aspirin'\] not in s\.h5ad"):
        load_sciplex3(p, compounds=["Aspirin"])
    with pytest.raises(InvalidInputError, match=r"cell_lines: \['HeLa'\]"):
        load_sciplex3(p, cell_lines="HeLa")
    with pytest.raises(InvalidInputError, match="no cell matches"):
        load_sciplex3(p, doses_nM=[5], controls=False)
    with pytest.raises(InvalidInputError, match="max_cells"):
        load_sciplex3(p, max_cells=0)
    with pytest.raises(InvalidInputError, match="no such file"):
        load_sciplex3(tmp_path / "absent.h5ad")
    (tmp_path / "x.h5ad").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    with pytest.raises(InvalidInputError, match=r"x\.h5ad: cannot read as an AnnData"):
        load_sciplex3(tmp_path / "x.h5ad")
    foreign = ref.copy()
    foreign.obs = foreign.obs.rename(columns={"product_name": "drug"})
    foreign.write_h5ad(tmp_path / "f.h5ad")
    with pytest.raises(InvalidInputError, match=r"obs needs the columns perturbation/dose_value/dose_unit/cell_line "
                                                r"or product_name/dose/cell_type"):
        load_sciplex3(tmp_path / "f.h5ad")
    nan_dose = ref.copy()
    nan_dose.obs["dose"] = nan_dose.obs["dose"].astype(float)
    nan_dose.obs.iloc[4, nan_dose.obs.columns.get_loc("dose")] = np.nan
    nan_dose.write_h5ad(tmp_path / "n.h5ad")
    with pytest.raises(InvalidInputError, match=r"obs\['dose'\] of treated cell 'cell4' is 'nan'; expected a positive"):
        load_sciplex3(tmp_path / "n.h5ad")
    unit = _write(tmp_path / "u.h5ad", "scperturb")
    unit.obs["dose_unit"] = unit.obs["dose_unit"].cat.rename_categories({"uM": "mg"})
    unit.write_h5ad(tmp_path / "u.h5ad")
    with pytest.raises(InvalidInputError, match=r"obs\['dose_unit'\] has unit\(s\) \['mg'\]"):
        load_sciplex3(tmp_path / "u.h5ad")
