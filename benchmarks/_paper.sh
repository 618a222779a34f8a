# Shared setup of benchmarks/<domain>/paper.sh (sourced by them, never run on its own): the repository
# root as the working directory, the interpreter, the device, smoke mode, the dataset check and the
# table of the run's metrics beside the paper's figures (benchmarks/_paper.py).
#
# Environment: PYTHON (default: the checkout's .venv, else python3), PAPER_DEVICE (default cuda; cpu in
# smoke mode), PAPER_SMOKE=1 (a tiny budget on the CPU that checks the plumbing in a minute or two),
# PAPER_OUT (result folder; default benchmarks/<domain>/results, smoke: a temporary folder).

PAPER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$PAPER_ROOT"
if [[ -n "${PYTHON:-}" ]]; then
    PY="$PYTHON"
elif [[ -x "$PAPER_ROOT/.venv/bin/python" ]]; then
    PY="$PAPER_ROOT/.venv/bin/python"
else
    PY="$(command -v python3 || command -v python)"
fi
SMOKE="${PAPER_SMOKE:-0}"
if [[ "$SMOKE" == 1 ]]; then
    DEVICE="${PAPER_DEVICE:-cpu}"
else
    DEVICE="${PAPER_DEVICE:-cuda}"
fi

# paper_out DOMAIN: the result folder (created)
paper_out() {
    local out
    if [[ -n "${PAPER_OUT:-}" ]]; then
        out="$PAPER_OUT"
    elif [[ "$SMOKE" == 1 ]]; then
        out="${TMPDIR:-/tmp}/scigen-paper-smoke/$1"
    else
        out="$PAPER_ROOT/benchmarks/$1/results"
    fi
    mkdir -p "$out"
    echo "$out"
}

# paper_check_device: stop (exit 2) when a CUDA device is asked for and torch sees none
paper_check_device() {
    if [[ "$DEVICE" == cuda* ]] && ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
        echo "error: PAPER_DEVICE=$DEVICE but torch sees no CUDA device; run on a GPU machine," \
             "or set PAPER_SMOKE=1 (tiny CPU budget) or PAPER_DEVICE=cpu (the full budget on the CPU: hours)" >&2
        exit 2
    fi
}

# paper_has_data NAME: 0 when the scigen-datasets cache holds NAME; otherwise prints how to fetch it
# (on stderr) and returns 2
paper_has_data() {
    "$PY" - "$1" <<'PYEOF'
import sys

from scigen.datasets import DataNotAvailableError, path

try:
    path(sys.argv[1])
except DataNotAvailableError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(2)
PYEOF
}

# paper_compare DOMAIN RESULT_JSON: the measured metrics beside the paper's (writes <result>_vs_paper.{md,json})
paper_compare() {
    local note=""
    [[ "$SMOKE" == 1 ]] && note="SMOKE run (PAPER_SMOKE=1): a tiny CPU budget that checks the plumbing; not a result"
    "$PY" "$PAPER_ROOT/benchmarks/_paper.py" "$1" "$2" --note "$note"
}

# paper_banner TEXT...: what runs, on which device, at which budget
paper_banner() {
    echo "== $* (device $DEVICE$([[ "$SMOKE" == 1 ]] && echo ', SMOKE: tiny budget, not a result'))"
}
