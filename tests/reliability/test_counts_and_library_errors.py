"""Unbounded counts are refused at once with a named limit, and inputs that used to fail inside a library
get an error naming the field and the value (issue 35, cases 9 and 11)."""

from __future__ import annotations

import subprocess
import sys
import time

import networkx as nx
import numpy as np
import pytest

from scigen.core.errors import InvalidInputError
from scigen.core.validation import check_count, max_count_for_memory


def test_check_count_maximum_and_memory_bound():
    assert check_count(5, "n", maximum=5) == 5
    with pytest.raises(InvalidInputError, match=r"n=6 exceeds the limit of 5: too big"):
        check_count(6, "n", maximum=5, why="too big")
    import os

    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert max_count_for_memory(1024) == int(0.5 * total // 1024)
    assert max_count_for_memory(1e30) == 1


@pytest.fixture(scope="module")
def sbgd():
    from scigen.graphs.sbgd import SBGD

    model = SBGD(SBGD.Config.preset("tiny"))
    model.fit(SBGD.default_data(quick=True), max_steps=2, progress=False, logger=None)
    return model


def test_sbgd_n_nodes_is_validated_as_one_value(sbgd):
    with pytest.raises(InvalidInputError, match=r"n_nodes must be a positive int, got '100'"):
        sbgd.sample(1, n_nodes="100")  # was read as the sizes '1', '0', '0'
    with pytest.raises(InvalidInputError, match=r"n_nodes must be a positive int, got nan"):
        sbgd.sample(1, n_nodes=float("nan"))
    with pytest.raises(InvalidInputError, match=r"n_nodes must be an int, a sequence of ints"):
        sbgd.sample(1, n_nodes={"a": 1})


def test_absurd_graph_counts_are_refused_quickly(sbgd):
    t0 = time.perf_counter()
    with pytest.raises(InvalidInputError, match=r"n_nodes=100000000 exceeds the limit of 100,000"):
        sbgd.sample(1, n_nodes=10**8)
    with pytest.raises(InvalidInputError, match=r"n_samples=100000000 exceeds the limit of 1,000,000"):
        sbgd.sample(10**8)
    assert time.perf_counter() - t0 < 5  # it used to hang (> 90 s)


def test_sbgd_cli_refuses_a_huge_graph_in_bounded_time(tmp_path, sbgd):
    sbgd.save(tmp_path / "run")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "scigen.core.cli", "graphs", "sbgd", "generate", "--run",
                           str(tmp_path / "run"), "--n-nodes", "100000000", "--out", str(tmp_path / "g")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "exceeds the limit" in proc.stderr and "Traceback" not in proc.stderr
    assert time.perf_counter() - t0 < 120


def test_agdiff_and_g2pt_refuse_absurd_sample_counts():
    from scigen.graphs.agdiff import AGDiff
    from scigen.graphs.g2pt import G2PT

    for cls in (AGDiff, G2PT):
        model = cls(cls.Config.preset("tiny"))
        model.fit(cls.default_data(quick=True), max_steps=2, progress=False, logger=None)
        cond = model.example_condition(cls.default_data(quick=True))
        with pytest.raises(InvalidInputError, match="exceeds the limit of 1,000,000"):
            model.sample(*cond, n_samples=10**8)


def test_agdiff_labels_must_be_zero_or_one():
    from scigen.graphs.agdiff.graphs import anomaly_labels

    g = nx.path_graph(3)
    for bad in ("yes", float("nan"), 0.5, 2, None):
        h = g.copy()
        h.graph["anomaly"] = bad
        ok = g.copy()
        ok.graph["anomaly"] = 0
        with pytest.raises(InvalidInputError, match=r"test\[1\]\.graph\['anomaly'\] must be 0 or 1, got"):
            anomaly_labels([ok, h], "test")
    h = g.copy()
    h.graph["anomaly"] = True
    ok = g.copy()
    ok.graph["anomaly"] = 0.0
    assert anomaly_labels([ok, h], "test").tolist() == [0, 1]


def test_sbgm_refuses_non_numeric_noise_variances_and_absurd_sample_counts():
    from scigen.wireless import SBGM

    data = SBGM.default_data()
    model = SBGM(SBGM.Config.preset("tiny"))
    model.fit(data, max_steps=2, progress=False)
    bad = data.copy()
    bad["noise_var"] = ("sample", np.array(["a"] * data.sizes["sample"]))
    with pytest.raises(InvalidInputError, match=r"noise_var must hold numbers .* dtype <U1"):
        model.estimate(bad)
    t0 = time.perf_counter()
    with pytest.raises(InvalidInputError, match=r"n_samples=100000000000 exceeds the limit"):
        model.sample(10**11)
    assert time.perf_counter() - t0 < 5


def test_nowcast_evaluate_refuses_zero_windows():
    from scigen.weather import Nowcast

    model = Nowcast(Nowcast.Config.preset("tiny"))
    model.metadata["trained_steps"] = 1  # the count is checked before any window is read
    with pytest.raises(InvalidInputError, match="max_windows must be a positive int, got 0"):
        model.evaluate(None, max_windows=0)


def test_gim_and_nowcast_refuse_sample_counts_that_cannot_fit_in_memory():
    from scigen.singlecell import GIM
    from scigen.weather import Nowcast

    gim = GIM(GIM.Config.preset("tiny"))
    gim.fit(GIM.default_data(quick=True), max_steps=2, progress=False, logger=None)
    t0 = time.perf_counter()
    with pytest.raises(InvalidInputError, match=r"n_samples=1000000000 exceeds the limit .* would not fit in memory"):
        gim.sample(None, n_samples=10**9)
    now = Nowcast(Nowcast.Config.preset("tiny"))
    data = Nowcast.default_data(quick=True)
    now.fit(data, max_steps=2, progress=False, logger=None)
    ctx = data.isel(time=slice(0, now.config.context_frames))
    with pytest.raises(InvalidInputError, match=r"n_samples=100000000 exceeds the limit .* members of 20 frames"):
        now.sample(ctx, n_samples=10**8)
    assert time.perf_counter() - t0 < 10  # refused before any allocation (it used to reach the allocator)


def test_agdiff_threshold_must_be_a_finite_number():
    from scigen.graphs.agdiff.metrics import detection_scores

    for bad in (float("nan"), float("inf"), "0.5", True):
        with pytest.raises(InvalidInputError, match=r"threshold must be a finite number"):
            detection_scores([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8], threshold=bad)
    assert detection_scores([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8], threshold=0.5)["f1"] == 1.0


def test_sbgm_refuses_a_geometry_whose_dictionary_cannot_fit_in_memory():
    from scigen.wireless import SBGM

    model = SBGM(SBGM.Config.preset("tiny"))
    model.fit(SBGM.default_data(), max_steps=2, progress=False)
    t0 = time.perf_counter()
    with pytest.raises(InvalidInputError, match=r"the dictionary would be a 1,000,000 x .* complex matrix"):
        model.sample(4, geometry={"n_antennas": 10**6})
    assert time.perf_counter() - t0 < 5  # it used to allocate for 23 s


def test_sbgm_observing_again_with_another_pilot_count_replaces_the_observations():
    """Issue 35, case 11: re-observing a Dataset that holds observations with an ``A`` of another size raised
    xarray's AlignmentError from inside ``observe``; the new observations replace the old ones."""
    from scigen.wireless.pilots import observe
    from scigen.wireless.synthetic import generate_channels

    ch = generate_channels(6, n_antennas=8, seed=0)
    first = observe(ch, np.eye(8, dtype=complex), 10.0)
    again = observe(first, np.eye(8, dtype=complex)[:3], 10.0)
    assert again.sizes["pilot"] == 3 and again["A"].shape == (3, 8)
    np.testing.assert_allclose(again["h"].values, ch["h"].values if "h" in ch else ch.values)
    with pytest.raises(InvalidInputError, match=r"pilot matrix A has shape \(3, 5\); expected \(n_pilots, 8\)"):
        observe(first, np.ones((3, 5)), 10.0)
