#!/usr/bin/env bash
# The GPU check a session runs once when it is lent a GPU machine (DEVELOPERS.md: kernels, every system at its
# paper preset, DDP), as one script whose report goes into the session's note.
#
#   bash benchmarks/gpu/check.sh            # on the GPU machine: compiled Triton kernels, paper presets on cuda
#   bash benchmarks/gpu/check.sh --smoke    # anywhere (CI runs this through tests/integration): CPU, Triton in
#                                           # interpreter mode, paper presets with 2 steps and 2-step samplers
#
# The GPU machine is bare and offline: the scigen distributions are installed there from this tree without
# dependencies, and what its image lacks travels as wheels in .whl/ and .whl2/ (benchmarks/gpu/prepare_wheels.sh
# writes them here; more than one call's 64 MiB, so one call carries .whl2 with INSTALL_ONLY=1, the next .whl;
# both install into .site/, which stays on the warm machine). PYTHON picks the interpreter (default: .venv/bin/python
# when it exists, else python3). REPORT picks the report file (default: benchmarks/gpu/results/check_<mode>.md;
# on the device machine point it into $OUT). STEPS (default 20): training steps per paper preset; KERNEL_BENCH=0
# skips the kernel timings (a short lease). Exit status: the number of failed parts (0 = all passed).
set -uo pipefail
cd "$(dirname "$0")/../.."
smoke=0
[[ "${1:-}" == "--smoke" ]] && smoke=1
PYTHON=${PYTHON:-$([[ -x .venv/bin/python ]] && echo .venv/bin/python || echo python3)}
mode=$([[ $smoke == 1 ]] && echo smoke || echo gpu)
REPORT=${REPORT:-benchmarks/gpu/results/check_${mode}.md}
mkdir -p "$(dirname "$REPORT")"
export PYTHONUNBUFFERED=1
failed=0
start=$(date +%s)
log() { echo "[check +$(( $(date +%s) - start ))s] $*"; }

[[ -d .site ]] && export PYTHONPATH="$PWD/.site${PYTHONPATH:+:$PYTHONPATH}"
if [[ "${INSTALL_ONLY:-0}" == 1 ]] || ! "$PYTHON" -c "import scigen.core" 2>/dev/null; then
  log "installing the scigen distributions from this tree (no dependencies; missing ones from .whl/)"
  site=${SITE:-$PWD/.site}  # ignored by git; stays on a warm machine between calls
  for w in .whl*/; do
    compgen -G "${w}*.whl" >/dev/null || continue
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$site" "$w"*.whl || exit 100
  done
  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
  # an install-only call carries part of the wheels (e.g. .whl2 without hatchling): the scigen distributions are
  # built by the next call, which carries the rest
  [[ "${INSTALL_ONLY:-0}" == 1 ]] && { log "wheels installed into $site"; exit 0; }
  "$PYTHON" -m pip install -q --no-index --no-deps --no-build-isolation --target "$site" \
    ./kernels ./shared ./datasets ./packages/* || exit 100
fi

{
  echo "# GPU check ($mode), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo '```'
  "$PYTHON" - <<'EOF'
import platform, torch
print("python", platform.python_version(), "| torch", torch.__version__, "| cuda", torch.cuda.is_available(),
      "|", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu")
EOF
  echo '```'
} > "$REPORT"

part() {  # part NAME COMMAND...: run, record pass/fail and the last lines in the report
  local name=$1; shift
  log "$name"
  local out; out=$(mktemp)
  "$@" >"$out" 2>&1
  local rc=$?
  { echo; echo "## $name: $([[ $rc == 0 ]] && echo passed || echo "FAILED (exit $rc)")"; echo; echo '```'
    grep -v -i "warning" "$out" | tail -n 25; echo '```'; } >> "$REPORT"
  tail -n 5 "$out"
  [[ $rc == 0 ]] || failed=$((failed + 1))
  rm -f "$out"
}

if [[ $smoke == 1 ]]; then
  export TRITON_INTERPRET=1 CUDA_VISIBLE_DEVICES=""
  part "kernels (Triton interpreter vs the PyTorch references)" \
    "$PYTHON" -m pytest -q -p no:cacheprovider tests/kernels -x
  part "every system at its paper preset (CPU smoke: 2 steps, 2-step samplers)" \
    "$PYTHON" benchmarks/gpu/paper_presets.py --steps 2 --smoke --device cpu --max-memory-gib 6 --out "${REPORT%.md}_presets"
  part "DDP: two gloo processes equal one process on the union batch" \
    "$PYTHON" -m pytest -q -p no:cacheprovider tests/core/test_train_ddp.py
else
  unset TRITON_INTERPRET
  part "kernels on the GPU (compiled Triton vs the PyTorch references)" \
    "$PYTHON" -m pytest -q -p no:cacheprovider -m "gpu or not gpu" tests/kernels
  if [[ "${KERNEL_BENCH:-1}" == 1 ]]; then
    part "kernel timings (Triton vs PyTorch, same run)" \
      bash -c "for b in benchmarks/kernels/bench_*.py; do $PYTHON \$b || exit 1; done"
  fi
  part "every system at its paper preset on cuda (${STEPS:-20} steps, the paper's sampler)" \
    "$PYTHON" benchmarks/gpu/paper_presets.py --steps "${STEPS:-20}" --device cuda --out "${REPORT%.md}_presets"
  part "DDP: two gloo processes equal one process on the union batch" \
    "$PYTHON" -m pytest -q -p no:cacheprovider tests/core/test_train_ddp.py
  part "bf16-mixed on the GPU: the toy trains with finite losses" \
    "$PYTHON" -c "from scigen.core.toy.system import ToySystem as T; import math; \
m = T(train={'max_steps': 50, 'progress': False, 'logger': None, 'precision': 'bf16-mixed', 'accelerator': 'gpu'}); \
m.fit(T.default_data(quick=True)); assert all(math.isfinite(x) for x in m.history.losses); print('losses', m.history.losses[-3:])"
fi

log "done: $failed part(s) failed; report in $REPORT"
cat "$REPORT"
exit "$failed"
