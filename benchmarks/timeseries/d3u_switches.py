"""D3U's sampling-time switches of ours, paired on the same trained weights: the demo's recipe (``small`` preset,
400 steps, synthetic heteroscedastic series, early stopping on validation), then the test windows scored with
``calibrate`` x ``center_residuals`` on/off (both act after training: the calibration factors are fitted on the
validation windows once and applied or dropped at sampling; centring acts on the draws), same sampling seed.

    OMP_NUM_THREADS=1 python benchmarks/timeseries/d3u_switches.py [training seed ...]
"""

from __future__ import annotations

import json
import sys

import torch


def main(argv: list[str]) -> int:
    from scigen.timeseries import D3U
    from scigen.timeseries.data import split_ratio

    torch.set_num_threads(1)
    for seed in [int(a) for a in argv] or [0]:
        model = D3U(D3U.Config.preset("small", train={"max_steps": 400, "progress": False, "seed": seed}))
        sp = split_ratio(D3U.default_data(quick=False), model.config.context_length)
        model.fit(sp.train, val_data=sp.val)
        kappa = model.metadata.get("spread_scale")
        for calibrate in (True, False):
            for center in (True, False):
                model.config.center_residuals = center
                if calibrate:
                    model.metadata["spread_scale"] = kappa
                else:
                    model.metadata.pop("spread_scale", None)
                s = model.evaluate(sp.test, stride=model.config.horizon, max_windows=64, seed=1)
                print(json.dumps({"train_seed": seed, "calibrate": calibrate, "center_residuals": center,
                                  **{k: round(float(s[k]), 4) for k in ("CRPS", "QICE", "PICP", "MSE")}}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
