"""D3U's official-recipe switches against the defaults, on the demo's recipe (``small`` preset, 400 steps in both
stages, the synthetic heteroscedastic series, early stopping on validation, calibration on): PatchTST's encoder
norm (``f_norm``: "layer" ours, "batch" the paper's) and the learning-rate schedule (``train.lr_schedule``:
constant ours, "step" = the official ``lradj type1``, halving every epoch). The 64 test windows at stride =
horizon scored with 50 samples, sampling seed 1.

    OMP_NUM_THREADS=1 python benchmarks/timeseries/d3u_recipe.py [training seed ...]
"""

from __future__ import annotations

import json
import sys

import torch


def main(argv: list[str]) -> int:
    from scigen.timeseries import D3U
    from scigen.timeseries.data import split_ratio

    torch.set_num_threads(1)
    rows = [("defaults", {}, {}), ("f_norm=batch", {"f_norm": "batch"}, {}),
            ("lr_schedule=step", {}, {"lr_schedule": "step"}),
            ("both (the paper's)", {"f_norm": "batch"}, {"lr_schedule": "step"})]
    for seed in [int(a) for a in argv] or [0]:
        for name, over, train in rows:
            model = D3U(D3U.Config.preset("small", **over,
                                          train={"max_steps": 400, "progress": False, "seed": seed, **train}))
            sp = split_ratio(D3U.default_data(quick=False), model.config.context_length)
            model.fit(sp.train, val_data=sp.val)
            s = model.evaluate(sp.test, stride=model.config.horizon, max_windows=64, seed=1)
            print(json.dumps({"train_seed": seed, "setting": name, "steps": model.history.steps,
                              **{k: round(float(s[k]), 4) for k in ("CRPS", "QICE", "PICP", "MSE")}}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
