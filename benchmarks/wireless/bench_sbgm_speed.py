"""CSGMM speed (issue 36.2): CPU seconds per EM iteration and per estimate, the previous implementation vs
the current one, in one process on one thread.

    python benchmarks/wireless/bench_sbgm_speed.py [--repeats 5] [--out benchmarks/wireless/results]

Setting (the issue's): K = 32 components, a 32-antenna ULA observed through 16 randomly selected antennas
(``SBGM.default_data``: 2000 observations, SNR U[5, 20] dB), 256 angle atoms (the paper's grid).

* ``old``: the E-step of the previous code, kept here verbatim as the baseline: the per-(i, k) posterior
  means and variances ``[B, K, S]`` from :func:`scigen.wireless.gaussian.diag_prior_posterior`, then the
  M-step sums; its estimator ``Σ_k r_ik μ_ik`` from the same posterior.
* ``new``: :func:`scigen.wireless.sbgm.csgmm.em_step` (the ``[M, M]`` sufficient statistics) and
  :func:`scigen.wireless.sbgm.estimation.csgmm_coefficients` (cached factorisation, one real GEMM).

Measured: CPU seconds (``time.process_time``, this process only, so other load on a shared machine
disturbs it less than wall time) per EM iteration (median of ``--repeats``, after one warm-up), per
observation when estimating all 2000 in one call, and per call when estimating one observation at a time
(kernel level, and through ``SBGM.estimate`` on a one-observation Dataset, new only). Both EMs start from
the same mixture; the largest relative difference of their ``γ`` after one iteration is reported.
The target is the official code's figures quoted in the issue (0.48-0.95 CPU-s per EM iteration, 3.3 ms
per estimate), which this machine cannot run (its licence forbids redistribution).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import torch

from scigen.core.files import atomic_write_text
from scigen.wireless import SBGM, SBGMConfig
from scigen.wireless.dictionaries import Dictionary
from scigen.wireless.gaussian import diag_prior_posterior
from scigen.wireless.sbgm.csgmm import CSGMMNet, em_step, init_csgmm, mixture_log_lik, responsibilities
from scigen.wireless.sbgm.estimation import csgmm_coefficients

OFFICIAL = {"em_iteration_s": "0.48-0.95", "estimate_ms": 3.3}
PREVIOUS_REPORTED = {"em_iteration_s": 2.19, "estimate_ms": 6.0}


@torch.no_grad()
def old_em_step(net, y, zeta, phi, floor=1e-7):
    post = diag_prior_posterior(y, phi, net.gamma, zeta)
    r = responsibilities(post.log_lik, net.log_pi)
    ll = float(mixture_log_lik(post.log_lik, net.log_pi).mean())
    Nk = r.sum(0)
    second = post.mean.abs() ** 2 + post.var
    E = torch.einsum("bk,bks->ks", r, second) / Nk.clamp_min(1e-300)[:, None]
    net.log_pi.copy_(torch.log((Nk / Nk.sum()).clamp_min(1e-300)))
    net.gamma.copy_(E.clamp_min(floor))
    return ll


@torch.no_grad()
def old_coefficients(net, y, zeta, phi):
    post = diag_prior_posterior(y, phi, net.gamma, zeta)
    r = responsibilities(post.log_lik, net.log_pi)
    return (r.to(post.mean.dtype)[:, :, None] * post.mean).sum(1)


def cpu(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--components", type=int, default=32)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    data = SBGM.default_data()
    y, zeta, A = (torch.as_tensor(data[k].values) for k in ("y", "noise_var", "A"))
    d = Dictionary.build(32, angle_grid=256)
    phi = A @ d.matrix
    K = args.components
    start = CSGMMNet(K, d.grid_shape)
    init_csgmm(start, y, zeta, phi, torch.Generator().manual_seed(0))
    for _ in range(3):  # a mixture that has moved from its initialisation
        em_step(start, y, zeta, phi)

    def copy():
        n = CSGMMNet(K, d.grid_shape)
        n.load_state_dict(start.state_dict())
        return n

    a, b = copy(), copy()
    old_em_step(a, y, zeta, phi)
    em_step(b, y, zeta, phi)
    gamma_rel = float(((a.gamma - b.gamma).abs() / a.gamma.abs()).max())

    res = {}
    for name, step in (("old", old_em_step), ("new", em_step)):
        net = copy()
        res[f"{name}_em_iteration_s"] = cpu(lambda net=net, step=step: step(net, y, zeta, phi), args.repeats)
    n_one = 50
    for name, est in (("old", old_coefficients), ("new", csgmm_coefficients)):
        net = copy()
        res[f"{name}_estimate_batch_ms_per_obs"] = cpu(lambda net=net, est=est: est(net, y, zeta, phi),
                                                       args.repeats) / y.shape[0] * 1e3

        def one_by_one(net=net, est=est):
            for i in range(n_one):
                est(net, y[i : i + 1], zeta[i : i + 1], phi)

        res[f"{name}_estimate_single_ms"] = cpu(one_by_one, args.repeats) / n_one * 1e3
    model = SBGM(SBGMConfig.preset("paper", n_components=K)).fit(data, max_steps=2, progress=False)
    one = data.isel(sample=slice(0, 1))
    res["new_system_estimate_single_ms"] = cpu(lambda: [model.estimate(one) for _ in range(20)], args.repeats) / 20 * 1e3

    record = {"setting": {"K": K, "antennas": 32, "pilots": 16, "atoms": 256, "observations": int(y.shape[0]),
                          "threads": torch.get_num_threads()},
              "results": res, "gamma_max_rel_diff_old_vs_new": gamma_rel, "official_target": OFFICIAL,
              "previous_reported_in_issue": PREVIOUS_REPORTED, "repeats": args.repeats,
              "machine": platform.platform(), "python": platform.python_version(), "torch": torch.__version__}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "sbgm_speed.json", json.dumps(record, indent=2) + "\n")
    r = res
    text = f"""# CSGMM speed: previous vs current implementation (issue 36.2)

`python benchmarks/wireless/bench_sbgm_speed.py` — one process, one thread, CPU seconds (`time.process_time`,
median of {args.repeats} after a warm-up). K = {K}, 32-antenna ULA, 16 selected antennas, 256 angle atoms,
{y.shape[0]} observations. Target: the official code's figures quoted in the issue (not runnable here).

| | previous | current | ratio | official (target) |
|---|---|---|---|---|
| one EM iteration (CPU s) | {r['old_em_iteration_s']:.3f} | {r['new_em_iteration_s']:.3f} | {r['old_em_iteration_s'] / r['new_em_iteration_s']:.1f}x | {OFFICIAL['em_iteration_s']} |
| estimate, one observation per call (CPU ms) | {r['old_estimate_single_ms']:.2f} | {r['new_estimate_single_ms']:.2f} | {r['old_estimate_single_ms'] / r['new_estimate_single_ms']:.1f}x | {OFFICIAL['estimate_ms']} |
| estimate, 2000 in one call (CPU ms per observation) | {r['old_estimate_batch_ms_per_obs']:.3f} | {r['new_estimate_batch_ms_per_obs']:.3f} | {r['old_estimate_batch_ms_per_obs'] / r['new_estimate_batch_ms_per_obs']:.1f}x | — |
| `SBGM.estimate` of a one-observation Dataset (CPU ms) | — | {r['new_system_estimate_single_ms']:.2f} | — | — |

One EM iteration from the same mixture: largest relative difference of `γ`, previous vs current:
{gamma_rel:.1e} (float64 round-off; `tests/wireless/test_csgmm_reference.py` checks both against the paper's
equations). The issue reported the previous code at 2.19 CPU-s per EM iteration and 6.0 ms per estimate.
Machine: {platform.platform()}, torch {torch.__version__}; a shared machine, so compare the ratios.
"""
    atomic_write_text(out / "sbgm_speed.md", text)
    print(text)


if __name__ == "__main__":
    main()
