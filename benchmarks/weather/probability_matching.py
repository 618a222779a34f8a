"""Probability matching (nowcast switch ``probability_matching``) on/off on the same trained demo model.

Trains the demo's model (tiny preset, 400 steps, synthetic storms seed 0), then scores validation seeds 2, 5, 6
(8 windows each) with the switch off and on (the same members: sampling is seeded), printing JSON:
flow CRPS / FSS / CSI-M / spectral distance, the 1-D Wasserstein distance between the members' and the
truth's pixel intensities (mm/h), and the wet fractions (> 0.1 mm/h).

    python benchmarks/weather/probability_matching.py                              # the paper setting
    python benchmarks/weather/probability_matching.py '{"advection_input": true}' 400  # with LK advection input
"""
import json
import sys

import numpy as np
import torch
from scipy.stats import wasserstein_distance

from scigen.weather import Nowcast
from scigen.weather.data.synthetic import synthetic_storms

torch.set_num_threads(1)
over = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 400
c = Nowcast.Config.preset("tiny", train={"max_steps": steps, "progress": False}, **over)
m = Nowcast(c)
m.fit(synthetic_storms(24, 30, 32, seed=0), logger=None)
rows = {}
for seed in (2, 5, 6):
    test = synthetic_storms(8, 25, 32, seed=seed)
    for pm in (False, True):
        m.config.probability_matching = pm
        s = m.evaluate(test, max_windows=8, seed=0)
        n = c.context_frames + c.horizon
        ctx, truth = test.isel(time=slice(0, c.context_frames)), test.isel(time=slice(c.context_frames, n))
        fc = m.sample(ctx, n_samples=4, seed=0)
        tv, fv = truth.values.ravel(), fc.values.ravel()
        r = rows.setdefault(pm, [])
        r.append({"CRPS": s["flow/CRPS"], "FSS": s["flow/FSS"], "CSI-M": s["flow/CSI-M"], "spec": s["flow/spectral_distance"],
                  "W1_int": wasserstein_distance(tv, fv), "wet_truth": float((tv > 0.1).mean()), "wet_members": float((fv > 0.1).mean()),
                  "stage1_CRPS": s["stage1/CRPS"]})
out = {("on" if k else "off"): {key: float(np.mean([x[key] for x in v])) for key in v[0]} for k, v in rows.items()}
out["per_seed"] = {("on" if k else "off"): v for k, v in rows.items()}
print(json.dumps({"over": over, "steps": steps, **out}))
