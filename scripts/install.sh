#!/usr/bin/env bash
# Create .venv (if missing) and install every scigen distribution from this working tree, editable.
#   bash scripts/install.sh          # the library, the CLI, every domain + the data its demo reads
#   bash scripts/install.sh --test   # ... plus the test references and the wheels with bundled data
# torch is pinned to 2.13.0 (scripts/constraints.txt) so pip takes the CPU build where it lies on disk.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${SCIGEN_VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)
"${PIP[@]}" install -q --upgrade pip
"${PIP[@]}" install -q -c scripts/constraints.txt torch==2.13.0 hatchling editables
DISTS=(-e kernels -e datasets -e shared)
# The default install is what the quick start's `scigen demo` needs: every domain, each with the
# data its demo reads (molecules: QM9 with DFT geometries from the qm9pack wheel, MIT, by QM9's author).
declare -A DEMO_EXTRAS=([molecules]="[qm9]")
for d in packages/*/; do d=${d%/}; DISTS+=(-e "$d${DEMO_EXTRAS[${d#packages/}]:-}"); done
"${PIP[@]}" install -q -c scripts/constraints.txt --no-build-isolation "${DISTS[@]}"
if [ "${1:-}" = "--test" ]; then
  "${PIP[@]}" install -q -c scripts/constraints.txt -r scripts/requirements-test.txt
  # molsets ships the MOSES SMILES but pins an unbuildable dependency: install it without deps.
  "${PIP[@]}" install -q --no-deps molsets
fi
echo "scigen installed in $VENV ($("$VENV/bin/python" -c 'import torch; print("torch", torch.__version__)'))"
