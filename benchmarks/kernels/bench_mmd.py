"""Benchmark mmd_rbf (forward + backward).

CPU (default): peak resident memory and time of the tiled op vs the dense O(n·m) formula at
n = m = 10^4, d = 3, three bandwidths (each variant in a fresh subprocess; ``ru_maxrss`` delta).
GPU (``--gpu``, needs CUDA): time of the reference op (``SCIGEN_KERNELS=reference`` path), the Triton
op, and ``torch.compile`` of the dense formula, as ratios against the reference.

Writes ``<out>.json`` and ``<out>.md`` (default ``benchmarks/kernels/results/mmd_{cpu,gpu}``).

    python benchmarks/kernels/bench_mmd.py                 # CPU memory table
    python benchmarks/kernels/bench_mmd.py --gpu           # GPU timing table
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import torch
from _bench import gpu_time_ms, write_results

BW = [0.5, 1.0, 2.0]
RESULTS = Path(__file__).parent / "results"


def _data(n: int, d: int, device: str):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, d, generator=g)
    y = 0.8 * torch.randn(n, d, generator=g) + 0.3
    return x.to(device), y.to(device)


def dense_mmd2(x, y, bandwidths=BW):
    """Biased MMD² by the direct formula: full n×m distance and kernel matrices."""
    h = torch.as_tensor(bandwidths, dtype=x.dtype, device=x.device)

    def k(a, b):
        return torch.exp(-torch.cdist(a, b).pow(2)[..., None] / (2 * h**2)).sum(-1).mean()

    return k(x, x) + k(y, y) - 2 * k(x, y)


def _child(variant: str, n: int) -> None:
    from scigen.kernels import mmd_rbf

    torch.set_num_threads(1)
    x, y = _data(n, 3, "cpu")
    x.requires_grad_(True)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    v = mmd_rbf(x, y, BW) if variant == "tiled" else dense_mmd2(x, y)
    v.backward()
    dt = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "variant": variant,
                "n": n,
                "peak_extra_MiB": (peak - base) / 1024,
                "seconds": dt,
                "mmd2": float(v),
            }
        )
    )


def memory_table(n: int, out: Path) -> list[dict]:
    rows = []
    for variant in ("tiled", "dense"):
        res = subprocess.run(
            [sys.executable, __file__, "--child", variant, "--n", str(n)],
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
    lines = ["| variant | n = m | peak extra RSS (MiB) | fwd+bwd time (s) | MMD² |", "|---|---|---|---|---|"]
    lines += [
        f"| {r['variant']} | {r['n']} | {r['peak_extra_MiB']:.0f} | {r['seconds']:.2f} | {r['mmd2']:.6f} |"
        for r in rows
    ]
    write_results(out, rows, lines)
    return rows


def _time(fn, reps: int = 5) -> float:
    return gpu_time_ms(fn, reps)


def gpu_table(out: Path) -> list[dict]:
    from scigen.kernels import mmd_rbf

    compiled = torch.compile(dense_mmd2)
    rows = []
    for n in (1_000, 4_096, 16_384):
        x, y = _data(n, 3, "cuda")
        x.requires_grad_(True)

        def run(f, x=x, y=y):
            def go():
                x.grad = None
                f(x, y).backward()

            return go

        os.environ["SCIGEN_KERNELS"] = "reference"
        t_ref = _time(run(lambda a, b: mmd_rbf(a, b, BW)))
        os.environ["SCIGEN_KERNELS"] = "auto"
        t_tri = _time(run(lambda a, b: mmd_rbf(a, b, BW)))
        t_cmp = _time(run(compiled)) if n <= 4_096 else float("nan")  # dense n² memory beyond
        rows.append(
            {
                "n": n,
                "reference_ms": t_ref,
                "triton_ms": t_tri,
                "compile_dense_ms": t_cmp,
                "device": torch.cuda.get_device_name(),
            }
        )
    lines = [
        "| n = m (d=3, 3 bw) | reference ms | Triton ms (× ref) | compile(dense) ms (× ref) |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r['n']} | {r['reference_ms']:.2f} | {r['triton_ms']:.2f} ({r['reference_ms'] / r['triton_ms']:.1f}×) | "
        f"{r['compile_dense_ms']:.2f} ({r['reference_ms'] / r['compile_dense_ms']:.1f}×) |"
        for r in rows
    ]
    write_results(out, rows, lines)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--child", choices=["tiled", "dense"])
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    if a.child:
        _child(a.child, a.n)
    elif a.gpu:
        if not torch.cuda.is_available():
            sys.exit("no CUDA device")
        gpu_table(a.out or RESULTS / "mmd_gpu")
    else:
        memory_table(a.n, a.out or RESULTS / "mmd_cpu")


if __name__ == "__main__":
    main()
