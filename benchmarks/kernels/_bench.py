"""Helpers shared by the kernel benchmark scripts (run as ``python benchmarks/kernels/bench_*.py``)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import torch


def gpu_time_ms(fn, reps: int = 10) -> float:
    """Mean wall time of ``fn()`` in milliseconds on CUDA (one warm-up call, synchronised)."""
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / reps * 1e3


def write_results(out: Path, rows: list[dict], lines: list[str]) -> None:
    """Write ``rows`` as ``out.json`` and the markdown ``lines`` as ``out.md``, and print the table."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(rows, indent=2))
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
