#!/usr/bin/env bash
# Paper-scale D3U (Li et al., ICLR 2025): 96 -> 192 windows, the `paper` preset, on the benchmark CSVs the paper uses.
# Not run here (GPU-scale). Needs the datasets in the scigen-datasets cache: `scigen data fetch ETTm1` etc.
# Each run: stage 1 trains the forecaster (MSE), stage 2 the residual PatchDN with it frozen (early stopping on val);
# evaluate prints CRPS, CRPS_sum, QICE, PICP, MSE, MAE on the test split (standardised, 100 samples, DPM-Solver++ 20).
set -euo pipefail
OUT=${OUT:-runs/d3u-paper}
for data in ETTm1 ETTm2 ECL Weather Traffic Solar; do
  for fc in patchtst itransformer; do
    python - "$data" "$fc" "$OUT" <<'PY'
import sys
from scigen.timeseries import D3U
from scigen.timeseries.data import load_dataset, split_ett, split_ratio
name, fc, out = sys.argv[1:]
df = load_dataset(name)
sp = split_ett(df, 96) if name.startswith("ETT") else split_ratio(df, 96)
model = D3U(D3U.Config.preset("paper"), forecaster=fc)
model.fit(sp.train, val_data=sp.val, checkpoint_dir=f"{out}/{name}-{fc}/ckpt")
model.save(f"{out}/{name}-{fc}/run", overwrite=True)
print(name, fc, model.evaluate(sp.test, stride=1))
PY
  done
done
