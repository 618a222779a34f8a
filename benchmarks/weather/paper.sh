#!/usr/bin/env bash
# Paper-scale nowcasting recipe (issue 20; not run here: GPU-scale). SEVIR VIL, 5 -> 20 frames, the `paper`
# preset (64-channel U-Nets, mults 1-2-4, attention, 4000 steps x 16). Needs the SEVIR files
# (`scigen data info SEVIR`) cropped to 128x128 and converted to a NetCDF field first, e.g.
#   python -c "from scigen.weather.data import load_sevir, write_field; \
#              write_field(load_sevir(limit=2000, units='kg/m2').isel(y=slice(128,256), x=slice(128,256)), 'sevir_train.nc')"
set -euo pipefail
scigen weather nowcast train --data sevir_train.nc --preset paper --out runs/nowcast-paper --threads 8
scigen weather nowcast evaluate --run runs/nowcast-paper --data sevir_test.nc --out runs/nowcast-paper-scores.json
# the synthetic benchmark at paper network size (the SEVIR scores come from evaluate above)
python benchmarks/weather/bench_nowcast.py --preset paper --steps 4000 --windows 256 --members 8 \
    --out benchmarks/weather/results/nowcast-paper
