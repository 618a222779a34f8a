"""The singlecell README's "Data larger than memory" example runs as written (training capped at a few steps)
on small files of the layout it names; that the backed runs equal the in-memory ones is test_backed.py's job."""

from __future__ import annotations

import numpy as np
import pandas as pd

HEADING = "## Data larger than memory"


def test_readme_backed_example_runs(readme_example, capped_training, tmp_path, monkeypatch):
    import anndata

    rng = np.random.default_rng(0)
    n = 240
    day = (np.arange(n) % 3).astype(float)
    cells = anndata.AnnData(X=(rng.normal(size=(n, 4)) + day[:, None]).astype(np.float32),
                            obs=pd.DataFrame({"day": day}, index=[f"c{i}" for i in range(n)]))
    pert = np.array(["control", "a", "b"])[np.arange(n) % 3]
    screen = anndata.AnnData(X=rng.normal(size=(n, 4)).astype(np.float32),
                             obs=pd.DataFrame({"pert": pert, "dose": np.where(pert == "control", 0.0, 1.0)},
                                              index=[f"c{i}" for i in range(n)]))
    monkeypatch.chdir(tmp_path)
    cells.write_h5ad("cells.h5ad")
    screen.write_h5ad("screen.h5ad")
    scope = {"__name__": "__readme__"}
    exec(compile(readme_example("singlecell", HEADING), "packages/singlecell/README.md", "exec"), scope)  # noqa: S102
    for name in ("m", "d", "g"):
        assert scope[name].history.steps == capped_training
    assert scope["cells"].isbacked
