"""The timeseries README's "Data larger than memory" example runs as written (training capped at a few steps) on
a small Parquet table; that the streamed runs equal the in-memory ones is test_stream.py's job."""

from __future__ import annotations

HEADING = "## Data larger than memory"


def test_readme_stream_example_runs(readme_example, capped_training, tmp_path, monkeypatch):
    from scigen.timeseries.data import synthetic_nonstationary

    monkeypatch.chdir(tmp_path)
    synthetic_nonstationary(600, 3, seed=0).rename_axis("date").reset_index().to_parquet("big.parquet")
    scope = {"__name__": "__readme__"}
    exec(compile(readme_example("timeseries", HEADING), "packages/timeseries/README.md", "exec"), scope)  # noqa: S102
    assert scope["m"].history.steps == capped_training
    assert scope["forecast"].sizes["time"] == scope["m"].config.horizon
