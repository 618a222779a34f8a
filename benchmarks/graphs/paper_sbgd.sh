#!/usr/bin/env bash
# Paper-scale SBGD benchmark (not run here: needs a GPU for hours). SBGD vs its full-graph baseline vs
# G2PT at N = 100 / 500 / 2000 (memory measured, not extrapolated, when the GPU holds the full graph),
# 20k training steps per model on 75-125-node community graphs, size generalisation at 400 and 1000.
set -euo pipefail
cd "$(dirname "$0")/../.."
python benchmarks/graphs/bench_sbgd.py --out benchmarks/graphs/results/paper \
    --memory-n 100 500 2000 --full-max-n 2000 --g2pt-max-n 2000 \
    --block-size 32 --batch-size 16 --steps 20000 --sample-steps 1000 \
    --n-train 256 --n-test 64 --big-n 400 1000 --n-big 16 --threads 8
