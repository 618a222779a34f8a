#!/usr/bin/env bash
# Download, on a machine with the package registries, the wheels that the GPU machine's image lacks, into .whl/
# (ignored by git), for `benchmarks/gpu/check.sh` there (its interpreter: CPython 3.12 on x86-64 Linux; the
# image already has torch, lightning, triton, torch-geometric, xarray, scipy, pandas, h5py, matplotlib, typer,
# rich, numba, scikit-learn, statsmodels, seaborn, safetensors, torchdiffeq). Name .whl in the device call's
# carry; check.sh installs them with --no-index --no-deps. About 85 MiB: .whl2/ holds POT (33 MiB), .whl/ the rest
# (RDKit 32 MiB); one device call carries at most 64 MiB, so they travel in two calls (README.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
for d in /.whl/ /.whl2/ /.site/; do grep -qx "$d" .git/info/exclude 2>/dev/null || echo "$d" >> .git/info/exclude; done
mkdir -p .whl .whl2
PY=${PY:-python3}
platforms=()
for n in 2_28 2_27 2_24 2_17 2014 1; do
  [[ $n == 2014 || $n == 1 ]] && platforms+=(--platform "manylinux${n}_x86_64") || platforms+=(--platform "manylinux_${n}_x86_64")
done
# the scigen distributions' dependencies that the image lacks (pyproject.toml files), and their own needs
missing=(
  pot pydantic pydantic-core annotated-types typing-inspection pooch platformdirs
  rdkit fcd-torch grakel pymetis
  anndata array-api-compat legacy-api-wrap natsort session-info2 scverse-misc zarr numcodecs donfig crc32c
  google-crc32c
  scanpy umap-learn pynndescent
  h5netcdf hatchling editables trove-classifiers
)
# the versions this tree is tested with (the project's .venv) where there is one, so that pairs such as
# pydantic / pydantic-core match
frozen=$([[ -x .venv/bin/python ]] && .venv/bin/python -m pip freeze 2>/dev/null || true)
for name in "${missing[@]}"; do
  pin=$(grep -i "^${name}==" <<<"$frozen" | head -n1 || true)
  pkg=${pin:-$name}
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${platforms[@]}" -d .whl "$pkg" || echo "prepare_wheels: no 3.12 x86-64 wheel for $pkg (check.sh will report it)"
done
mv .whl/pot-*.whl .whl2/  # POT alone is half of the 64 MiB a device call may carry
du -sh .whl .whl2
