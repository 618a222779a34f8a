"""MMSFM demo recipe (tiny preset, S-Gaussians, t=2 held out) at lr 1e-3 (default) vs 1e-4 (reference), two training seeds."""
import json
import time

import torch

from scigen.singlecell.data import s_gaussians
from scigen.singlecell.mmsfm.system import MMSFM

torch.set_num_threads(1)
train = s_gaussians(300, seed=0)
test = s_gaussians(300, seed=1)
for lr in (1e-3, 1e-4):
    for seed in (0, 1):
        t0 = time.time()
        m = MMSFM(MMSFM.Config.preset("tiny", holdout=[2.0], train={"lr": lr, "seed": seed, "progress": False}))
        m.fit(train)
        s = m.evaluate(test, times=[2.0, 6.0])
        row = {"lr": lr, "seed": seed, "W2_squared@2": s["W2_squared@2"], "W1@6": s["W1@6"], "s": time.time() - t0}
        print(json.dumps(row), flush=True)
