"""shared/README.md's main example (the toy system through the System API) runs as written and learns:
the W2 of its samples to held-out data, computed here with POT, is far below an untrained network's (~1.4),
and the saved run samples exactly what the trained model samples."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import torch


def test_readme_core_example_runs_and_learns(readme_example, tmp_path, monkeypatch):
    import ot

    from scigen.core.toy import toy_data
    from scigen.core.toy.system import ToySystem

    code = readme_example("shared", "## Example")
    assert 'preset("tiny")' in code and "n_samples=" in code
    monkeypatch.chdir(tmp_path)
    scope = {"__name__": "__readme__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "shared/README.md", "exec"), scope)  # noqa: S102
    x = scope["x"].double().numpy()
    ref = toy_data("eight_gaussians", 1000, seed=1).double().numpy()
    w2 = float(np.sqrt(ot.emd2(ot.unif(len(x)), ot.unif(len(ref)), ot.dist(x, ref))))
    assert x.shape == (1000, 2) and w2 < 0.6, w2
    again = ToySystem.load(tmp_path / "toy_run").sample(n_samples=3, seed=0)
    torch.testing.assert_close(again, scope["model"].sample(n_samples=3, seed=0))
