"""The singlecell README's main example runs as written (the tiny preset cut to 300 steps, ~15 s on one core)
and learns: at the observed t=6 its cells are far closer to the data than the first snapshot is, and at the
held-out t=2 closer than the nearest observed snapshot (t=1); distances by POT, independently of scigen."""

from __future__ import annotations

import contextlib
import io

import numpy as np

HEADING = "## Example"


def _w2_squared(a: np.ndarray, b: np.ndarray) -> float:
    import ot

    return float(ot.emd2(ot.unif(len(a)), ot.unif(len(b)), ot.dist(a, b)))  # squared Euclidean ground cost


def test_readme_example_runs_and_learns(readme_example, tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    code = readme_example("singlecell", HEADING)
    assert 'preset("tiny")' in code and "max_steps=300" in code
    monkeypatch.chdir(tmp_path)
    scope = {"__name__": "__readme__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "packages/singlecell/README.md", "exec"), scope)  # noqa: S102
    plt.close("all")
    gen, test, model = scope["gen"], scope["test"], scope["model"]
    assert gen.n_obs == 150 * 61 and np.allclose(np.unique(gen.obs["time"]), np.linspace(0, 6, 61))
    assert model.history.steps == 300 and model.config.train.max_steps == 600  # fit's override left the config alone
    x, t = np.asarray(test.X, dtype=np.float64), test.obs["time"].to_numpy()
    g, gt = np.asarray(gen.X, dtype=np.float64), gen.obs["time"].to_numpy()
    at6, at2 = _w2_squared(g[np.isclose(gt, 6)], x[t == 6]), _w2_squared(g[np.isclose(gt, 2)], x[t == 2])
    assert at6 < 0.05 * _w2_squared(x[t == 0], x[t == 6])  # ~0.4 vs ~145
    assert at2 < 0.7 * _w2_squared(x[t == 1], x[t == 2])   # ~7 vs ~16: better than the nearest snapshot
    assert (tmp_path / "trajectories.png").stat().st_size > 1000 and (tmp_path / "run" / "scigen.json").is_file()
