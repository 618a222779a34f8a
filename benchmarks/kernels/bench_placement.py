"""Benchmark the placement kernels: box_overlap_energy (+grad), net_hpwl, wa_wirelength.

GPU (when CUDA exists): forward+backward time of the reference, the Triton op and ``torch.compile`` of
a dense PyTorch formula, for a few sizes.
CPU: peak resident memory of the tiled reference vs a dense (V × V) PyTorch formula for the overlap
energy and its gradient at V = 10^4 (each variant in a fresh subprocess; ``ru_maxrss`` delta).

    python benchmarks/kernels/bench_placement.py --memory           # CPU memory table
    python benchmarks/kernels/bench_placement.py --gpu              # GPU timing table
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import torch
from _bench import gpu_time_ms


def _boxes(v: int, device: str, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    pos = (torch.rand(v, 2, generator=g) * 2 - 1).to(device)
    side = (0.5 / v**0.5) * (1 + torch.rand(v, 2, generator=g))
    return pos, side.to(device), torch.ones(v, dtype=torch.bool, device=device)


def dense_energy(pos, size, mask, k, canvas=(-1.0, 1.0, -1.0, 1.0)):
    """The same energy as box_overlap_energy, written densely (V × V × 2 temporaries)."""
    o = (size[:, None, :] + size[None, :, :]) / 2 - (pos[:, None, :] - pos[None, :, :]).abs()
    sp = torch.nn.functional.softplus(o, beta=k)
    pair = mask[:, None] & mask[None, :] & ~torch.eye(pos.shape[0], dtype=torch.bool, device=pos.device)
    e = (sp.prod(-1) * pair).sum() / 2
    lo = pos.new_tensor([canvas[0], canvas[2]])
    hi = pos.new_tensor([canvas[1], canvas[3]])
    sp_b = torch.nn.functional.softplus(pos + size / 2 - hi, beta=k) + torch.nn.functional.softplus(lo - pos + size / 2, beta=k)
    return e + (sp_b * size.flip(-1) * mask[:, None]).sum()


def _memory_child(variant: str, v: int) -> None:
    from scigen.kernels import box_overlap_energy  # imported before the baseline in both variants

    pos, size, mask = _boxes(v, "cpu")
    torch.set_num_threads(1)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    p = pos.clone().requires_grad_(True)
    t0 = time.perf_counter()
    if variant == "tiled":
        e = box_overlap_energy(p, size, mask, 20.0)
    else:
        e = dense_energy(p, size, mask, 20.0)
    e.backward()
    dt = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"variant": variant, "V": v, "peak_extra_MiB": (peak - base) / 1024, "seconds": dt,
                      "energy": float(e.detach())}))


def memory_table(v: int) -> None:
    rows = []
    for variant in ("tiled", "dense"):
        out = subprocess.run([sys.executable, __file__, "--child", variant, "--V", str(v)], capture_output=True,
                             text=True, check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print("| variant | V | peak extra RSS (MiB) | fwd+bwd (s) | energy |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['variant']} | {r['V']} | {r['peak_extra_MiB']:.0f} | {r['seconds']:.2f} | {r['energy']:.6g} |")


def _time(fn, reps: int = 10) -> float:
    return gpu_time_ms(fn, reps)


def _overlap_row(v: int, compiled) -> None:
    from scigen.kernels import box_overlap_energy
    from scigen.kernels.reference import overlap as ref_o

    pos, size, mask = _boxes(v, "cuda")
    canvas = (-1.0, 1.0, -1.0, 1.0)

    def ref_fn():
        ref_o.overlap_energy_reference(pos, size, mask, 20.0, canvas)
        ref_o.overlap_energy_grad_reference(pos, size, mask, 20.0, canvas)

    def tri_fn():
        p = pos.clone().requires_grad_(True)
        box_overlap_energy(p, size, mask, 20.0).backward()

    def comp_fn():
        p = pos.clone().requires_grad_(True)
        compiled(p, size, mask, 20.0).backward()

    t_ref = _time(ref_fn, 3)
    t_tri = _time(tri_fn)
    if v > 10000:
        t_comp = "skipped (dense V×V)"
    else:
        try:
            t_comp = f"{_time(comp_fn):.2f}"
        except Exception as exc:  # noqa: BLE001
            t_comp = f"failed: {type(exc).__name__}"
    print(f"| box_overlap_energy fwd+bwd | V={v} | {t_ref:.2f} | {t_tri:.2f} | {t_comp} |")


def _wirelength_rows(n: int) -> None:
    from scigen.kernels import net_hpwl, wa_wirelength
    from scigen.kernels.reference import wirelength as ref_w

    g = torch.Generator().manual_seed(0)
    deg = torch.randint(2, 12, (n,), generator=g)
    ptr = torch.cat([torch.zeros(1, dtype=torch.long), deg.cumsum(0)]).cuda()
    p_ = int(ptr[-1])
    pos = torch.rand(n, 2, device="cuda")
    off = torch.rand(p_, 2, device="cuda") * 0.01
    obj = torch.randint(0, n, (p_,), device="cuda")
    pins = pos[obj] + off
    for name, op, rf, extra in (
        ("net_hpwl", net_hpwl, ref_w.hpwl_reference, ()),
        ("wa_wirelength", wa_wirelength, ref_w.wa_reference, (0.01,)),
    ):

        def tri_fn(op=op, extra=extra):
            p = pos.clone().requires_grad_(True)
            op(p, off, obj, ptr, *extra, check_indices=False).sum().backward()

        def ref_fn(rf=rf, extra=extra):
            rf(pins, ptr, *extra)

        print(f"| {name} fwd+bwd (reference: fwd only) | N={n}, P={p_} | {_time(ref_fn):.2f} | {_time(tri_fn):.2f} | - |")


def gpu_table() -> None:
    compiled = torch.compile(dense_energy)
    print("| op | size | reference (ms) | triton op (ms) | torch.compile dense (ms) |\n|---|---|---|---|---|")
    for v in (1000, 10000, 50000):
        _overlap_row(v, compiled)
    for n in (10_000, 200_000):
        _wirelength_rows(n)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--V", type=int, default=10_000)
    ap.add_argument("--child", choices=["tiled", "dense"])
    a = ap.parse_args()
    if a.child:
        _memory_child(a.child, a.V)
    elif a.gpu:
        if not torch.cuda.is_available():
            sys.exit("no CUDA device")
        gpu_table()
    else:
        memory_table(a.V)


if __name__ == "__main__":
    main()
