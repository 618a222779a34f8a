"""Benchmark egnn_aggregate: reference (edge-materialising) vs fused Triton vs torch.compile(reference).

Workloads mimic UniGEM/EDM: QM9-like (64 molecules of ~18 atoms, up to 29) and GEOM-like (32 molecules
of ~44 atoms, up to 181), hidden width 256, gated GCL pass (m) and coordinate pass (dx).

    python benchmarks/kernels/bench_egnn.py          # needs CUDA (forward time and peak memory)
    python benchmarks/kernels/bench_egnn.py --cpu    # reference only, small sizes
"""

from __future__ import annotations

import argparse
import time

import torch

from scigen.kernels import egnn_aggregate
from scigen.kernels.reference import egnn as ref


def workload(sizes: list[int], hid: int, device: str, dtype=torch.float32):
    g = torch.Generator().manual_seed(0)

    def r(*s, scale=1.0):
        return (torch.randn(*s, generator=g) * scale).to(device=device, dtype=dtype)

    n = sum(sizes)
    ptr = torch.tensor([0, *torch.tensor(sizes).cumsum(0).tolist()], device=device)
    return dict(
        h=r(n, hid), x=r(n, 3), ptr=ptr, W_a=r(hid, hid, scale=hid**-0.5), W_b=r(hid, hid, scale=hid**-0.5),
        b1=r(hid, scale=0.1), W2=r(hid, hid, scale=hid**-0.5), b2=r(hid, scale=0.1), w_d=r(2, hid, scale=0.1),
        x_ref=r(n, 3), w_att=r(hid, scale=hid**-0.5), b_att=r(1), w_x=r(hid, scale=hid**-0.5),
    )


def sizes_for(kind: str, g: torch.Generator) -> list[int]:
    if kind == "qm9":
        return torch.randint(9, 30, (64,), generator=g).tolist()
    return torch.randint(20, 182, (32,), generator=g).tolist()


def _ref_call(w):
    return ref.egnn_aggregate(
        w["h"], w["x"], w["x_ref"], w["ptr"], w["W_a"], w["W_b"], w["b1"], w["W2"], w["b2"], w["w_d"], w["w_att"],
        w["b_att"], w["w_x"], True, True, 15.0, 1.0, 1.0,
    )


def _op_call(w):
    return egnn_aggregate(
        w["h"], w["x"], w["ptr"], w["W_a"], w["W_b"], w["b1"], w["W2"], w["b2"], w["w_d"], x_ref=w["x_ref"],
        w_att=w["w_att"], b_att=w["b_att"], w_x=w["w_x"], check_indices=False,
    )


def _measure(fn, device: str, reps: int = 10) -> tuple[float, float]:
    fn()
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    if device == "cuda":
        torch.cuda.synchronize()
        peak = (torch.cuda.max_memory_allocated() - base) / 2**20
    else:
        peak = float("nan")
    return (time.perf_counter() - t0) / reps * 1e3, peak


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpu", action="store_true")
    a = ap.parse_args()
    device = "cpu" if a.cpu or not torch.cuda.is_available() else "cuda"
    g = torch.Generator().manual_seed(1)
    kinds = ["qm9"] if device == "cpu" else ["qm9", "geom"]
    print("| workload | edges | variant | forward (ms) | peak extra memory (MiB) |\n|---|---|---|---|---|")
    for kind in kinds:
        sizes = sizes_for(kind, g)
        if device == "cpu":
            sizes = sizes[:8]
        w = workload(sizes, 256, device)
        edges = sum(s * (s - 1) for s in sizes)
        variants = [("reference", lambda w=w: _ref_call(w))]
        if device == "cuda":
            variants.append(("triton op", lambda w=w: _op_call(w)))
            compiled = torch.compile(_ref_call, dynamic=False)
            variants.append(("torch.compile(reference)", lambda w=w, c=compiled: c(w)))
        for name, fn in variants:
            try:
                ms, mib = _measure(fn, device, reps=3 if device == "cpu" else 10)
                print(f"| {kind} | {edges} | {name} | {ms:.2f} | {mib:.0f} |")
            except Exception as exc:  # noqa: BLE001
                print(f"| {kind} | {edges} | {name} | failed: {type(exc).__name__}: {str(exc)[:80]} | - |")


if __name__ == "__main__":
    main()
