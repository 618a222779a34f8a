#!/usr/bin/env bash
# Build the documentation site offline into docs/_build/html (warnings are errors, references checked,
# tutorials executed with a cache under docs/_build/jupyter_cache), then check every internal link.
#
#   bash scripts/docs.sh                                  # runs `scigen demo --quick` for the gallery if needed
#   SCIGEN_DEMO_DIR=scigen-demo bash scripts/docs.sh      # the gallery from an existing `scigen demo` output
#
# Needs the doc tools: pip install -r scripts/requirements-docs.txt (into the same environment as scigen).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x .venv/bin/python ]; then PY=.venv/bin/python; SCIGEN=.venv/bin/scigen; else PY=python; SCIGEN=scigen; fi
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" MKL_NUM_THREADS="${MKL_NUM_THREADS:-1}"
export PYTHONWARNINGS="${PYTHONWARNINGS:-ignore::DeprecationWarning}"  # the tutorials' kernels draw inline
start=$(date +%s)

demo="${SCIGEN_DEMO_DIR:-}"
if [ -z "$demo" ]; then
  demo=docs/_build/demo
  if ! ls "$demo"/*/report.json >/dev/null 2>&1; then
    echo "[docs] no SCIGEN_DEMO_DIR: running scigen demo --quick --out $demo for the gallery"
    rm -rf "$demo"
    "$SCIGEN" demo --quick --out "$demo"
  fi
fi
if ! ls "$demo"/*/report.json >/dev/null 2>&1; then
  echo "[docs] $demo holds no */report.json: point SCIGEN_DEMO_DIR at a scigen demo output" >&2
  exit 2
fi
export SCIGEN_DEMO_DIR="$(cd "$demo" && pwd)"

# -n: nitpicky (every cross-reference must resolve); -W --keep-going: every warning is reported, then fails
"$PY" -m sphinx -b html -n -W --keep-going -j "${DOCS_JOBS:-2}" -d docs/_build/doctrees docs docs/_build/html
"$PY" scripts/docs_check_links.py docs/_build/html
echo "[docs] built docs/_build/html in $(( $(date +%s) - start )) s"
