#!/usr/bin/env bash
# Diffusion macro placement paper-scale recipe: the paper's large model (preset paper), 64 noisy copies,
# lr 3e-4, trained on synthetic circuits, then the ISPD2005 macro-only protocol (pads and fixed terminals
# kept as fixed pins); prints each design's HPWL (x10^5) beside the paper's Table 10, with the random-legal
# and analytical baselines in the benchmark's own table. Wraps bench_placement.py's existing flags.
#
# Reduced budget (sized for ~10 min of one H200; an estimate, not yet timed on a GPU): PLACE_STEPS (6000)
# training steps on 2,000 circuits instead of 300,000 on 5,000; 200 sampling steps x 10 guidance steps
# instead of 1000 x 20; legaliser 5,000 steps instead of 20,000; six of the eight designs (bigblue2, 23k
# macros, and bigblue4, 8k, left out: 2 h and 20 min of sampling in the paper); two synthetic 100-macro
# circuits beside them.
#
#   bash benchmarks/placement/paper.sh                # needs ISPD2005 cached: scigen data fetch ISPD2005
#   PAPER_SMOKE=1 bash benchmarks/placement/paper.sh  # CPU plumbing check (synthetic circuits)
# Results: benchmarks/placement/results/paper_placement.{json,md} and paper_placement_vs_paper.{json,md}.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/_paper.sh"

OUT="$(paper_out placement)"
designs=(adaptec1 adaptec2 adaptec3 adaptec4 bigblue1 bigblue3)
if [[ "$SMOKE" == 1 ]]; then
    args=(--preset tiny --copies 2 --train-steps "${PLACE_STEPS:-3}" --train-circuits 4 --train-sizes 20
          --sample-steps 3 --inner-steps 1 --legalize-steps 10 --sizes 20 --circuits 1 --threads 1)
    if paper_has_data ISPD2005 2>/dev/null; then args+=(--ispd --ispd-designs adaptec1); fi
else
    paper_has_data ISPD2005 || exit 2
    paper_check_device
    args=(--preset paper --copies 64 --lr 3e-4 --train-steps "${PLACE_STEPS:-6000}" --train-circuits 2000
          --sample-steps 200 --inner-steps 10 --legalize-steps 5000 --sizes 100 --circuits 2 --threads 4
          --ispd --ispd-designs "${designs[@]}")
fi
paper_banner "diffusion placement ${args[*]}"
"$PY" benchmarks/placement/bench_placement.py "${args[@]}" --device "$DEVICE" --name paper_placement --out "$OUT"
paper_compare placement "$OUT/paper_placement.json"
