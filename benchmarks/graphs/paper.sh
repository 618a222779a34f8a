#!/usr/bin/env bash
# G2PT paper-scale recipe: G2PT-small (6 layers, 6 heads, width 384), degree edge ordering, the paper's
# lr 1e-4 and batch 60, on 64-node trees and planar graphs (SPECTRE split 128/32/40) and on MOSES;
# the paper's random node labels (G2PT_NODE_IDS=first_seen for ours); prints V.U.N., the four MMDs and MOSES validity / uniqueness / novelty / FCD beside the paper's
# G2PT-small figures (Tables 2 and 4).
#
# Reduced budget (sized for ~10 min of one H200; an estimate, not yet timed on a GPU): G2PT_STEPS (3000)
# steps per dataset instead of 300,000; 128 sampled graphs per family; MOSES on its first 200,000
# training SMILES, FCD against the first 10,000 test SMILES with 1,000 samples (the paper: the full
# 1.58M, 30,000 samples, the scaffold test set); SBM left out (its ~5,000-token sequences need longer).
#
#   bash benchmarks/graphs/paper.sh                   # no download: graphs are generated, MOSES ships in molsets
#   PAPER_SMOKE=1 bash benchmarks/graphs/paper.sh     # CPU plumbing check
# Results: benchmarks/graphs/results/paper_g2pt.{json,md} and paper_g2pt_vs_paper.{json,md}.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/_paper.sh"

OUT="$(paper_out graphs)"
if [[ "$SMOKE" == 1 ]]; then
    args=(--datasets tree,moses --size tiny --steps "${G2PT_STEPS:-4}" --batch-size 4 --n-samples 4
          --tree-nodes 12 --moses-train 200 --moses-test 50 --moses-samples 8)
else
    paper_check_device
    args=(--datasets "${G2PT_DATASETS:-tree,planar,moses}" --size small --steps "${G2PT_STEPS:-3000}" --batch-size 60
          --lr "${G2PT_LR:-1e-4}" --n-samples 128 --moses-train 200000 --moses-test 10000 --moses-samples 1000)
fi
accelerator=cpu
[[ "$DEVICE" == cuda* ]] && accelerator=gpu
paper_banner "G2PT ${args[*]}"
"$PY" benchmarks/graphs/bench_g2pt.py "${args[@]}" --node-ids "${G2PT_NODE_IDS:-random}" --accelerator "$accelerator" --name paper_g2pt --out "$OUT"
paper_compare graphs "$OUT/paper_g2pt.json"
