#!/usr/bin/env bash
# UniGEM + EDM paper-scale recipe on QM9 (EDM split, all 100,000 training molecules, from qm9pack): the
# paper's EGNN (9 blocks x width 256), batch 64, lr 1e-4, EMA 0.9999 (with warm-up), 1000-step ancestral
# sampling (ddpm); prints atom / molecule stability, validity and valid x unique beside UniGEM's Table 1
# (UniGEM and its EDM row), property MAE on the full 13,083-molecule test split.
#
# Reduced budget (sized for ~10 min of one H200; an estimate, not yet timed on a GPU): MOL_STEPS (6000)
# training steps per system instead of the paper's ~1.5M (3,000 epochs), and 1,000 generated molecules
# instead of 10,000.
#
#   bash benchmarks/molecules/paper.sh                # no download: QM9 ships in qm9pack
#   PAPER_SMOKE=1 bash benchmarks/molecules/paper.sh  # CPU plumbing check
# Results: benchmarks/molecules/results/paper_unigem_vs_edm.{json,md} and paper_unigem_vs_edm_vs_paper.{json,md}.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/_paper.sh"

OUT="$(paper_out molecules)"
if [[ "$SMOKE" == 1 ]]; then
    args=(--train 64 --test 16 --steps "${MOL_STEPS:-3}" --hidden 16 --layers 2 --batch 8 --samples 4
          --sampler dpmpp_2m --sample-steps 3 --threads 1)
else
    paper_check_device
    args=(--train 0 --test 0 --steps "${MOL_STEPS:-6000}" --hidden 256 --layers 9 --batch 64 --lr 1e-4
          --ema 0.9999 --sampler ddpm --sample-steps 1000 --samples 1000 --threads 0)
fi
paper_banner "UniGEM + EDM on QM9, ${args[*]}"
"$PY" benchmarks/molecules/bench_unigem_vs_edm.py "${args[@]}" --device "$DEVICE" --name paper_unigem_vs_edm --out "$OUT"
paper_compare molecules "$OUT/paper_unigem_vs_edm.json"
