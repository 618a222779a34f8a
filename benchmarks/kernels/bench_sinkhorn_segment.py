"""Benchmark sinkhorn_log and segment_sum/segment_max.

CPU (default): peak resident memory and time of ``sinkhorn_log`` forward+backward with the op's
adjoint backward (stores potentials only) vs plain autograd through the unrolled reference
iterations (stores T softmax-sized tensors), B = 4, n = m = 256, T = 100; fresh subprocess each.
GPU (``--gpu``): time of reference vs Triton vs ``torch.compile(reference)`` for both ops.

Writes ``<out>.json`` and ``<out>.md`` under ``benchmarks/kernels/results/``.
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

RESULTS = Path(__file__).parent / "results"


def _cost(bsz: int, n: int, device: str):
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(bsz, n, 2, generator=g), torch.randn(bsz, n, 2, generator=g) + 0.5
    return torch.cdist(x, y).pow(2).to(device)


def _child(variant: str, bsz: int, n: int, iters: int) -> None:
    from scigen.kernels import sinkhorn_log
    from scigen.kernels.reference import sinkhorn as ref

    torch.set_num_threads(1)
    cost = _cost(bsz, n, "cpu").requires_grad_(True)
    a = torch.full((bsz, n), 1.0 / n)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    if variant == "adjoint":
        tc = sinkhorn_log(cost, a, a, eps=0.05, n_iters=iters, return_plan=False)
    else:
        f, g, _, _ = ref.sinkhorn_potentials(cost, a, a, 0.05, iters)
        tc = (ref.plan_from_potentials(cost, f, g, 0.05) * cost).sum((1, 2))
    tc.sum().backward()
    dt = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "variant": variant,
                "B": bsz,
                "n": n,
                "iters": iters,
                "peak_extra_MiB": (peak - base) / 1024,
                "seconds": dt,
                "cost_sum": float(tc.sum()),
            }
        )
    )


def memory_table(out: Path, bsz: int = 4, n: int = 256, iters: int = 100) -> None:
    rows = []
    for variant in ("adjoint", "unrolled_autograd"):
        cmd = [
            sys.executable,
            __file__,
            "--child",
            variant,
            "--B",
            str(bsz),
            "--n",
            str(n),
            "--iters",
            str(iters),
        ]
        rows.append(
            json.loads(
                subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()[-1]
            )
        )
    lines = [
        "| sinkhorn backward | B | n = m | T | peak extra RSS (MiB) | fwd+bwd s | Σ⟨P,C⟩ |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['variant']} | {r['B']} | {r['n']} | {r['iters']} | {r['peak_extra_MiB']:.0f} | {r['seconds']:.2f} | "
        f"{r['cost_sum']:.6f} |"
        for r in rows
    ]
    write_results(out, rows, lines)


def _time(fn, reps: int = 10) -> float:
    return gpu_time_ms(fn, reps)


def _three(fn_op, fn_ref_compiled) -> tuple[float, float, float]:
    os.environ["SCIGEN_KERNELS"] = "reference"
    t_ref = _time(fn_op)
    os.environ["SCIGEN_KERNELS"] = "auto"
    return t_ref, _time(fn_op), _time(fn_ref_compiled)


def gpu_table(out: Path) -> None:
    from scigen.kernels import segment_max, segment_sum, sinkhorn_log
    from scigen.kernels.reference import segment as rseg
    from scigen.kernels.reference import sinkhorn as rsk

    rows = []
    for bsz, n in ((8, 256), (4, 1024)):
        cost = _cost(bsz, n, "cuda")
        a = torch.full((bsz, n), 1.0 / n, device="cuda")
        comp = torch.compile(rsk.sinkhorn_potentials)
        t = _three(
            lambda c=cost, a=a: sinkhorn_log(c, a, a, 0.05, 100),
            lambda c=cost, a=a, comp=comp: comp(c, a, a, 0.05, 100),
        )
        rows.append({"op": "sinkhorn_log fwd", "size": f"B={bsz}, n=m={n}, T=100", "ms": t})
    e, s, f = 2_000_000, 50_000, 64
    src = torch.randn(e, f, device="cuda")
    ptr = torch.sort(torch.randint(0, e + 1, (s + 1,), device="cuda")).values
    ptr[0], ptr[-1] = 0, e
    for name, op, rf in (
        ("segment_sum", segment_sum, rseg.segment_sum),
        ("segment_max", segment_max, lambda x, p: rseg.segment_minmax(x, p, False)),
    ):
        comp = torch.compile(rf)
        t = _three(lambda op=op: op(src, ptr), lambda comp=comp: comp(src, ptr))
        rows.append({"op": f"{name} fwd", "size": f"E={e}, S={s}, F={f}", "ms": t})
    for r in rows:
        r["device"] = torch.cuda.get_device_name()
    lines = [
        "| op | size | reference ms | Triton ms (× ref) | compile(ref) ms (× ref) |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['op']} | {r['size']} | {r['ms'][0]:.2f} | {r['ms'][1]:.2f} ({r['ms'][0] / r['ms'][1]:.1f}×) | "
        f"{r['ms'][2]:.2f} ({r['ms'][0] / r['ms'][2]:.1f}×) |"
        for r in rows
    ]
    write_results(out, rows, lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--child", choices=["adjoint", "unrolled_autograd"])
    ap.add_argument("--B", type=int, default=4)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    if a.child:
        _child(a.child, a.B, a.n, a.iters)
    elif a.gpu:
        if not torch.cuda.is_available():
            sys.exit("no CUDA device")
        gpu_table(a.out or RESULTS / "sinkhorn_segment_gpu")
    else:
        memory_table(a.out or RESULTS / "sinkhorn_cpu", a.B, a.n, a.iters)


if __name__ == "__main__":
    main()
