#!/usr/bin/env bash
# Inverse Flow at paper scale (Zhang & Zhou, ICML 2025; the official configs.py image recipe): not run here.
# ICM on grayscale images with the `paper` preset: Karras grid N = 11, t_min = 0.002, t_max = 0.1, rho = 7,
# sigma_data = 0.5, AdamW lr 1e-4, batch 32 random 256^2 crops, 200k steps, a wide U-Net (128 channels,
# mults 1,1,2,2,4). Needs a GPU and a folder of noisy images as one [N, H, W] .npy stack (values in [0, 1]),
# e.g. BSDS500 / FMD prepared by the user (neither is offline here).
# Usage: benchmarks/singlecell/paper_inverseflow.sh noisy.npy clean.npy OUT_DIR
set -euo pipefail
NOISY=${1:?noisy .npy stack}; CLEAN=${2:?clean .npy stack}; OUT=${3:?output folder}
python - "$NOISY" "$CLEAN" "$OUT" <<'PY'
import sys, json, numpy as np
from scigen.singlecell.inverseflow import InverseFlow, Gaussian
noisy, clean, out = np.load(sys.argv[1]), np.load(sys.argv[2]), sys.argv[3]
for algo in ("icm", "ifm"):
    m = InverseFlow(InverseFlow.Config.preset("paper", algorithm=algo), noise=Gaussian(25 / 255))
    m.fit(noisy, accelerator="gpu", checkpoint_dir=f"{out}/{algo}/ckpt", checkpoint_every=5000)
    m.save(f"{out}/{algo}/run", overwrite=True)
    print(algo, json.dumps(m.evaluate(noisy, clean=clean)))
PY
