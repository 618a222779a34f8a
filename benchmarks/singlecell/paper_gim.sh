#!/usr/bin/env bash
# GIM at paper scale (not run here; a GPU or a long CPU run). Schneider et al., ICML 2025.
# 1. The synthetic screen (the paper's split: 40 Hill functions x 4 doses x 50 cells + 800 observational),
#    5 seeds, paper-length training, every variant and baseline in the same run:
set -euo pipefail
python benchmarks/singlecell/bench_gim.py --steps 20000 --seeds 5 --out benchmarks/singlecell/results/paper
# 2. sci-Plex3 (place SrivatsanTrapnell2020_sciplex3.h5ad where `scigen data info sciPlex3` says), one cell
#    line, the 1000 nM dose held out (the paper evaluates held-out dosages), 50 PCs, the paper preset:
python - <<'PY'
from scigen.singlecell.data import load_sciplex3
from scigen.singlecell.gim.sciplex import GIM_SCIPLEX_SETTINGS, prepare_sciplex
from scigen.singlecell.gim.system import GIM

ad = prepare_sciplex(load_sciplex3(cell_lines="A549", max_cells=100000), n_comps=50, holdout_doses_nM=[1000.0])
model = GIM(GIM.Config.preset("paper", **GIM_SCIPLEX_SETTINGS)).fit(ad)
print(model.evaluate(ad))
model.save("gim_sciplex_run", overwrite=True)
PY
