#!/usr/bin/env bash
# Paper-scale AGDiff recipe (documented, not run here: it needs a GPU and the downloaded TU screens).
# AGDiff (Cai et al., ICML 2025): moderate sets MUTAG, DD, COX2, ER_MD; large imbalanced NCI screens
# SW-620, MOLT-4, PC-3, MCF-7 (paper: SW-620 AUC 91.60, PC-3 94.32; iGAD 85.82 / 86.04).
# 1. Fetch the TU archives on a machine with internet access, then copy the cache folders here:
#      scigen data fetch MUTAG; scigen data fetch DD; scigen data fetch COX2; scigen data fetch ER_MD
#    (the NCI screens have no dataset card yet: place SW-620/ PC-3/ ... TU folders under --tu-root).
# 2. Run the paper preset (T = 1000, 20 000 steps) against the three baselines, 5 stratified folds:
set -euo pipefail
python benchmarks/graphs/bench_agdiff.py --preset paper --steps 20000 --batch-size 128 --folds 5 \
    --datasets MUTAG,DD,COX2,ER_MD,SW-620,MOLT-4,PC-3,MCF-7 --accelerator gpu --threads 4 \
    --tu-root "${TU_ROOT:-$HOME/.cache/scigen}" --out benchmarks/graphs/results/paper
