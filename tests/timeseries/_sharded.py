"""What the forecasters' 2-process sampling tests share: a script that loads a saved forecaster and samples on two
processes (each rank saves what it returns), and the comparison with one process."""

from __future__ import annotations

import textwrap

import numpy as np

SCRIPT = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    import pandas as pd
    import scigen.timeseries

    if __name__ == "__main__":
        model = getattr(scigen.timeseries, sys.argv[4]).load(sys.argv[1])
        out = model.sample(pd.read_pickle(sys.argv[3]), 7, seed=5, devices=2).values
        np.save(os.path.join(sys.argv[2], f"rank{int(os.environ.get('LOCAL_RANK', 0))}.npy"), out)
    """
)


def assert_two_processes_draw_the_forecasts_of_one(model, path, df, tmp_path, run_script) -> None:
    """``model.sample(df, 7, seed=5, devices=2)`` returns, on both ranks, what one process draws (to 1e-5)."""
    df.to_pickle(tmp_path / "df.pkl")
    run_script(tmp_path / "run.py", path, tmp_path, tmp_path / "df.pkl", type(model).__name__, cwd=tmp_path, text=SCRIPT)
    one = model.sample(df, 7, seed=5).values
    for r in (0, 1):
        np.testing.assert_allclose(np.load(tmp_path / f"rank{r}.npy"), one, rtol=0, atol=1e-5)
