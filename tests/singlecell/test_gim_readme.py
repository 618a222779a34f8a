"""The singlecell README's GIM example runs as written and learns: the targets of compounds at unseen
doses are ranked well above chance (AUROC by scikit-learn) and predicted cells of new doses are closer to the observed
ones than the control cells are (exact W2 by POT, independently of scigen)."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest


def _w2(a, b) -> float:
    import ot

    return float(np.sqrt(ot.emd2(ot.unif(len(a)), ot.unif(len(b)), ot.dist(a, b))))


@pytest.mark.slow  # 13 s at load ~1, ~290 s at load ~19 on the 2-core box (300 steps + 60 x 200 cells + OT)
def test_gim_readme_example_runs_and_learns(readme_example, tmp_path, monkeypatch):
    from sklearn.metrics import roc_auc_score

    code = readme_example("singlecell", "## GIM example")
    assert "max_steps=300" in code
    monkeypatch.chdir(tmp_path)
    scope = {"__name__": "__readme__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "packages/singlecell/README.md", "exec"), scope)  # noqa: S102
    adata, pred, targets = scope["adata"], scope["pred"], scope["targets"]
    assert pred.n_obs == 200 * 12 * 5 and targets.shape == (12 * 5, 8)
    truth = adata.uns["gim_truth"]
    names = [c.split("@")[0] for c in targets.index]
    y = truth["targets"][[list(truth["compounds"]).index(n) for n in names]]
    assert roc_auc_score(y.ravel(), targets.to_numpy().ravel()) > 0.8
    obs, x = adata.obs, np.asarray(adata.X, dtype=np.float64)
    ctrl = x[(obs["compound"] == "control").to_numpy()][:200]
    better = 0
    for cond in np.unique(pred.obs["gim_condition"]):
        comp, dose = cond.split("@")
        true = x[((obs["compound"] == comp) & np.isclose(obs["dose"], float(dose))).to_numpy()]
        gen = np.asarray(pred.X[(pred.obs["gim_condition"] == cond).to_numpy()], dtype=np.float64)
        better += _w2(gen, true) < _w2(ctrl, true)
    assert better >= 0.6 * 60
    assert (tmp_path / "gim_run" / "scigen.json").is_file()
    assert 0.0 <= scope["scores"]["SHD"] and np.isfinite(scope["scores"]["W2@ood_partial"])
