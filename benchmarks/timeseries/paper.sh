#!/usr/bin/env bash
# NsDiff paper-scale recipe: ETTh1 (context 96 -> horizon 192, 12/4/4-month split), the paper's networks
# (NsDiff defaults), f pre-trained then g and the denoiser (and TMDM around the same f), 100 samples per
# test window; prints CRPS / CRPS_sum / QICE / MSE / MAE beside the released code's ETTh1 figures.
#
# Reduced budget (sized for ~10 min of one H200; an estimate, not yet timed on a GPU): at most
# NSDIFF_STEPS (4000) steps per stage, early-stopped on the validation loss (patience 5 x 200 steps);
# test windows at stride = horizon (~14 windows), where the paper scores every sliding window.
#
#   bash benchmarks/timeseries/paper.sh             # needs ETTh1 cached: scigen data fetch ETTh1
#   PAPER_SMOKE=1 bash benchmarks/timeseries/paper.sh   # CPU plumbing check (synthetic data)
# Results: benchmarks/timeseries/results/paper_nsdiff.{json,md} and paper_nsdiff_vs_paper.{json,md}.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/_paper.sh"

OUT="$(paper_out timeseries)"
if [[ "$SMOKE" == 1 ]]; then
    datasets=synthetic
    if paper_has_data ETTh1 2>/dev/null; then datasets=synthetic,ETTh1; fi
    args=(--quick --datasets "$datasets" --steps "${NSDIFF_STEPS:-20}" --threads 1)
else
    paper_has_data ETTh1 || exit 2
    paper_check_device
    args=(--datasets ETTh1 --steps "${NSDIFF_STEPS:-4000}" --threads 0)
fi
paper_banner "NsDiff on ETTh1, ${args[*]}"
"$PY" benchmarks/timeseries/bench_nsdiff.py "${args[@]}" --device "$DEVICE" --name paper_nsdiff --out "$OUT"
paper_compare timeseries "$OUT/paper_nsdiff.json"
