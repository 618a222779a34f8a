"""The nowcast benchmark's SEVIR path: skipped (or refused with ``--sevir``) with the catalog's download
instructions when SEVIR is not cached; from a cache in the release layout, per-event coarsened fields."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "weather"


def _bench():
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("bench_nowcast", BENCH / "bench_nowcast.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _write_sevir(root: Path, vil: np.ndarray, times: list[str]) -> None:
    """The release layout: ``vil/<year>/*.h5`` with ``vil [N, y, x, frame]`` and ``CATALOG.csv``."""
    import h5py

    (root / "vil" / "2019").mkdir(parents=True)
    name = "vil/2019/SEVIR_VIL_STORMEVENTS_2019_0101_0630.h5"
    with h5py.File(root / name, "w") as h5:
        h5["id"] = np.array([f"S{i}".encode() for i in range(len(vil))])
        h5["vil"] = vil
    offsets = ":".join(str(m) for m in range(-120, -120 + 5 * vil.shape[-1], 5))
    pd.DataFrame({"id": [f"S{i}" for i in range(len(vil))], "file_name": [name] * len(vil),
                  "file_index": range(len(vil)), "img_type": ["vil"] * len(vil), "time_utc": times,
                  "minute_offsets": [offsets] * len(vil)}).to_csv(root / "CATALOG.csv", index=False)


def test_bench_with_sevir_required_stops_before_training_when_not_cached(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SCIGEN_DATA", str(tmp_path / "cache"))
    bench = _bench()
    assert bench.main(["--sevir", "--quick", "--out", str(tmp_path / "out" / "nowcast")]) == 2
    err = capsys.readouterr().err
    assert "SEVIR is not cached" in err and "CATALOG.csv" in err and "manual download" in err
    assert not (tmp_path / "out").exists()


def test_sevir_fields_are_per_event_block_means_on_separate_days(tmp_path, monkeypatch):
    from scigen.weather.data.units import vil_digital_to_kgm2

    rng = np.random.default_rng(0)
    vil = rng.integers(0, 255, (4, 24, 24, 26), dtype=np.uint8)
    # events 0 and 1 overlap in time (different places, as in SEVIR)
    _write_sevir(tmp_path / "cache" / "SEVIR", vil, ["2019-06-01 12:00:00", "2019-06-01 12:02:00",
                                                      "2019-06-03 00:00:00", "2019-06-04 00:00:00"])
    monkeypatch.setenv("SCIGEN_DATA", str(tmp_path / "cache"))
    bench = _bench()
    train, test = bench.sevir_fields(4, coarsen=12, test_share=0.25)
    assert train.sizes == {"time": 3 * 26, "y": 2, "x": 2} and test.sizes == {"time": 26, "y": 2, "x": 2}
    assert train.attrs["units"] == test.attrs["units"] == "kg/m2"
    kg = vil_digital_to_kgm2(np.moveaxis(vil[1], -1, 0))  # [frame, y, x]
    np.testing.assert_allclose(train.values[26:52], kg.reshape(26, 2, 12, 2, 12).mean(axis=(2, 4)), rtol=1e-5)
    t = pd.DatetimeIndex(train["time"].values)
    assert np.all(np.diff(t.asi8) > 0) and (t[26] - t[0]) == pd.Timedelta(days=1)
    from scigen.weather import Nowcast, NowcastConfig

    m = Nowcast(NowcastConfig.preset("tiny", channel_mults=(1,)))
    assert m.prepare_data(train, role="data").shape == (3 * 2, 25, 2, 2)  # 2 windows per 26-frame event
    thr = bench.sevir_thresholds()
    np.testing.assert_allclose(thr, vil_digital_to_kgm2(np.array([16, 74, 133, 160])))


def test_uncached_sevir_is_named_by_the_catalog(tmp_path, monkeypatch):
    from scigen.datasets import DataNotAvailableError

    monkeypatch.setenv("SCIGEN_DATA", str(tmp_path))
    with pytest.raises(DataNotAvailableError, match="SEVIR"):
        _bench().sevir_fields(8)


@pytest.mark.slow  # a --quick benchmark run (40 training steps)
def test_bench_flags_reach_the_config_and_seeds_share_one_model(tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("SCIGEN_DATA", str(tmp_path / "cache"))
    bench = _bench()
    out = tmp_path / "nowcast"
    assert bench.main(["--quick", "--lead-weight-min", "0.1", "--lead-weight-power", "2", "--out", str(out)]) == 0
    cfg = json.loads((tmp_path / "nowcast.json").read_text())["meta"]["config"]
    assert (cfg["lead_weighting"], cfg["lead_weight_min"], cfg["lead_weight_power"]) == ("linear", 0.1, 2.0)
    assert bench.main(["--quick", "--lead-weighting", "uniform", "--test-seeds", "2,5",
                       "--inflation", "2", "--out", str(out)]) == 0
    res = json.loads((tmp_path / "nowcast.json").read_text())
    assert res["meta"]["config"]["lead_weighting"] == "uniform" and "sigma_s_far" not in res["meta"]["config"]
    assert res["meta"]["test_seeds"] == [2, 5] and set(res["runs"]) == {"synthetic, test seed 2", "synthetic, test seed 5"}
    d = res["summary"]["flow_minus_steps"]["CRPS"]  # the differences are of the per-seed tables
    flow, steps = (np.array([res["runs"][f"synthetic, test seed {s}"]["results"][m]["CRPS"] for s in (2, 5)])
                   for m in ("stage 1 + flow", "pysteps STEPS"))
    np.testing.assert_allclose(d["per_seed"], flow - steps)
    assert d["sd"] == pytest.approx(np.std(flow - steps, ddof=1))
    ratio = res["runs"]["synthetic, test seed 2"]["results"]["stage 1 + flow"]["per_lead"]["spread_skill_ratio"]
    assert len(ratio) == 20 and all(r > 0 for r in ratio)
    # --inflation 2: the same members, each deviation from the ensemble mean doubled in mm/h (members pushed
    # below 0 set to 0, which only lowers the spread): more spread at every lead, less than 2x never exceeded
    res2 = res["runs"]["synthetic, test seed 2"]["results"]
    s1 = np.array(res2["stage 1 + flow"]["per_lead"]["spread_skill_spread"])
    s2 = np.array(res2["stage 1 + flow, inflation 2"]["per_lead"]["spread_skill_spread"])
    assert (s2 > s1).all() and (s2 <= 2 * s1 * (1 + 1e-5)).all()
    assert "stage 1 + flow, inflation 2 minus steps" in res["summary"]
