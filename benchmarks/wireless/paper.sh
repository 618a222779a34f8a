#!/usr/bin/env bash
# Paper-scale SBGM recipe (documented; not run on the CI machine).
# The paper's SIMO setting: 16-antenna ULA, 256 angle atoms, K = 10 components, up to 1500 EM iterations,
# CSVAE latent 32 with encoder 256-128-100, lr 4e-5, batch 128; 12000 users (paper: 10000 train / 1000 val /
# 1000 test), observations at SNR U[10, 15] dB. quadriga-lib (pip install quadriga-lib) is the optional
# realistic source once wired in (see packages/wireless/README.md, limitations).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-runs/wireless-paper}
mkdir -p "$OUT"
.venv/bin/python - "$OUT" <<'PY'
import sys
from pathlib import Path

from scigen.wireless import SBGM, SBGMConfig, generate_channels, make_site, observe, pilot_matrix, write_dataset

out = Path(sys.argv[1])
site = make_site(3, seed=3)
A = pilot_matrix(16, 16, "identity")  # noisy SIMO: A = I as in the paper's 3GPP experiment
for name, n, seed in (("train", 10000, 0), ("val", 1000, 1), ("test", 1000, 2)):
    ch = generate_channels(n, n_antennas=16, site=site, seed=seed)
    write_dataset(observe(ch, A, (10.0, 15.0), seed=seed + 10), out / f"{name}.nc", overwrite=True)
PY
for MODEL in csgmm csvae; do
  echo "{\"model\": \"$MODEL\"}" > "$OUT/$MODEL.json"
  .venv/bin/scigen wireless sbgm train --preset paper --config "$OUT/$MODEL.json" --data "$OUT/train.nc" \
      --out "$OUT/$MODEL" --overwrite --threads "${THREADS:-8}"
  .venv/bin/scigen wireless sbgm evaluate --run "$OUT/$MODEL" --data "$OUT/test.nc" --out "$OUT/$MODEL.metrics.json" --overwrite
done
