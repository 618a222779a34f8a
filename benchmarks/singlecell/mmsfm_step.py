"""MMSFM training-step cost: our step (as ``fit`` runs it) against the official code's algorithm in the same run
(issue 36.3).

Baseline = one step computed the way the official code computes it (Lee, Moradijamei & Shakeri, ICML 2025;
Shakeri-Lab/MMSFM ``scripts/modelagent.py`` ``TripletAgent`` with ``multimarginal_cfm.py``'s Schrödinger-bridge
flow matcher, the settings of its ``runner.sh``: triplet windows, exact OT, monotone cubic spline, stratified
times, ``diff_ref=miniflow``), written here from the algorithm:

- each window draws ``b`` cells of each of its marginals with ``np.random.randint``;
- the first pair is coupled by an exact OT plan (POT ``ot.emd`` on squared Euclidean costs, uniform weights)
  and ``b`` index pairs drawn from the flattened plan (``np.random.choice``), each later marginal by a plan
  to the previous one and one ``np.random.choice`` per row from the conditional plan;
- stratified times: the batch split over the window's intervals, uniform within each (numpy);
- one scipy ``PchipInterpolator`` per trajectory, evaluated row by row for the mean (twice: once for
  ``x_t``, once for the drift target, as the reference's bridge flow matcher does) and its derivative;
- ``x_t = mu_t + sigma_t eps`` with ``sigma_t = sigma sqrt(tau (1 - tau))`` over the window, drift target
  ``sigma_t'/sigma_t (x_t - mu_t) + mu_t'``, score target with ``lambda_t = 2 sigma_t / sigma^2``;
- the windows concatenated, one drift and one score network call, the two mean-squared losses summed,
  ``.item()`` of each (the reference logs them every step), backward, AdamW step.

Ours: ``fit``'s batch (the index table's rows through the system's collate), ``MMSFM.training_loss``
(row-aligned chained OT through the engine's ``chain_coupling``, the batched PCHIP spline of
``scigen.singlecell.mmsfm.spline``, the engine's ``sf2m_loss``), backward, AdamW step. Same networks
(``MMSFM.network``'s drift and score MLPs), same batch size, same optimiser; the paper preset's sizes
(width 64, depth 2, batch 64, k = 2, sigma 0.15), and torch's default AdamW for both.

Rows: the S-Gaussians (2 genes, 7 times, t = 5 held out as in ``runner.sh``: 6 training times, 4 windows) and
the same cells embedded in 50 dimensions (a random orthonormal map plus noise, a PCA-space stand-in).
Reported: median CPU seconds per step over ``--steps`` steps after 2 warm-up steps, one thread, and
ours / baseline (below 1 = ours faster)::

    OMP_NUM_THREADS=1 python benchmarks/singlecell/mmsfm_step.py --steps 20
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import numpy as np
import ot
import torch
from scipy.interpolate import PchipInterpolator

from scigen.singlecell.mmsfm import MMSFM


def _plan(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    cost = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    a = np.full(len(x), 1.0 / len(x))
    return ot.emd(a, np.full(len(y), 1.0 / len(y)), cost)


def _official_window(z: np.ndarray, zt: np.ndarray, sigma: float, rng: np.random.RandomState):
    """``(t, x_t, u_t, eps, lambda_t)`` of one window ``z [k+1, b, d]`` at knot times ``zt [k+1]``."""
    m, b, d = z.shape
    pi = _plan(z[0], z[1])
    flat = rng.choice(b * b, size=b, p=(pi / pi.sum()).ravel())
    i, j = np.divmod(flat, b)
    zhat = np.empty_like(z)
    zhat[0], zhat[1] = z[0, i], z[1, j]
    prev = j
    for k in range(2, m):
        pk = _plan(zhat[k - 1], z[k])
        cond = pk / pk.sum(axis=1, keepdims=True)
        nxt = np.array([rng.choice(b, p=cond[r]) for r in prev])
        zhat[k] = z[k, nxt]
        prev = nxt
    # stratified times: the batch split over the intervals (the remainder to random ones), uniform within each
    n_int = m - 1
    sizes = np.full(n_int, b // n_int)
    sizes[rng.choice(n_int, size=b % n_int, replace=False)] += 1
    order = rng.permutation(b)
    t = np.zeros(b)
    start = 0
    for q, size in enumerate(sizes):
        t[order[start:start + size]] = rng.uniform(zt[q], zt[q + 1], size=size)
        start += size
    splines = [PchipInterpolator(zt, zhat[:, r, :]) for r in range(b)]

    def mean():
        return np.stack([splines[r](t[r]) for r in range(b)])

    mu = mean()
    a_, c_ = zt[0], zt[-1]
    tau = (t - a_) / (c_ - a_)
    sig = sigma * np.sqrt(tau * (1 - tau))
    eps = rng.standard_normal((b, d))
    xt = mu + sig[:, None] * eps
    mu2 = mean()  # the reference recomputes the mean for the drift target
    dmu = np.stack([splines[r](t[r], 1) for r in range(b)])
    ratio = (1 - 2 * tau) / (2 * tau * (1 - tau) + 1e-8) / (c_ - a_)
    ut = ratio[:, None] * (xt - mu2) + dmu
    lam = 2 * sig / (sigma ** 2 + 1e-8)
    return t, xt, ut, eps, lam


def official_step(net, opt, marginals: list[np.ndarray], zt: np.ndarray, k: int, b: int, sigma: float,
                  rng: np.random.RandomState) -> None:
    parts = []
    for w in range(len(marginals) - k):
        z = np.stack([marginals[w + q][rng.randint(len(marginals[w + q]), size=b)] for q in range(k + 1)])
        parts.append(_official_window(z, zt[w:w + k + 1], sigma, rng))
    t, xt, ut, eps, lam = (torch.from_numpy(np.concatenate(p)).float() for p in zip(*parts, strict=True))
    opt.zero_grad()
    flow = torch.mean((net.drift(xt, t) - ut) ** 2)
    score = torch.mean((lam[:, None] * net.score(xt, t) + eps) ** 2)
    flow.item(), score.item()
    (flow + score).backward()
    opt.step()


def ours_step(m: MMSFM, net, opt, table: torch.Tensor, collate, b: int, g: torch.Generator) -> None:
    rows = table[torch.randint(len(table), (b,), generator=g)]
    opt.zero_grad()
    loss = m.training_loss(net, collate(rows))
    float(loss.detach())
    loss.backward()
    opt.step()


def _median_step(step, steps: int) -> float:
    out = []
    for i in range(steps + 2):
        t0 = time.process_time()
        step()
        if i >= 2:
            out.append(time.process_time() - t0)
    return statistics.median(out)


def _embedded(adata, dim: int, seed: int = 0):
    import anndata as ad

    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((dim, adata.n_vars)))
    x = np.asarray(adata.X) @ q.T + 0.05 * rng.standard_normal((adata.n_obs, dim))
    return ad.AnnData(x.astype(np.float32), obs=adata.obs.copy())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    torch.set_num_threads(1)
    from scigen.singlecell.data import s_gaussians
    from scigen.singlecell.mmsfm.state import index_table
    from scigen.singlecell.mmsfm.system import _MarginalRows

    base = s_gaussians(1000, seed=0)
    print("| data | genes | windows x batch | ours s/step | official algorithm s/step | ours / official |")
    print("|---|---|---|---|---|---|")
    for name, adata in (("S-Gaussians", base), ("S-Gaussians in 50-d", _embedded(base, 50))):
        m = MMSFM.Config.preset("paper")
        model = MMSFM(m, train={"progress": False, "logger": None})
        times = sorted(set(adata.obs["time"].tolist()))
        model.fit(adata, time_key="time", holdout=[times[5]], max_steps=1)
        c, b = model.config, int(model.training_options().batch_size)
        train_times = model.metadata["train_times"]
        snaps = [torch.as_tensor(np.asarray(adata.X[(adata.obs["time"] == tt).to_numpy()]), dtype=torch.float64)
                 for tt in train_times]
        scaled = [model._scale(s).float() for s in snaps]
        zt = model._zt(train_times).double().numpy()
        net = model.network.train()
        table = index_table([len(s) for s in scaled], 0)
        collate = _MarginalRows(scaled)
        g = torch.Generator().manual_seed(0)
        opt = torch.optim.AdamW(net.parameters(), lr=c.train.lr)
        torch.manual_seed(0)
        ours = _median_step(functools.partial(ours_step, model, net, opt, table, collate, b, g), args.steps)
        npm = [s.numpy() for s in scaled]
        rng = np.random.RandomState(0)
        opt = torch.optim.AdamW(net.parameters(), lr=c.train.lr)
        base_s = _median_step(functools.partial(official_step, net, opt, npm, zt, c.k, b, c.sigma, rng), args.steps)
        n_win = len(train_times) - c.k
        print(f"| {name} | {adata.n_vars} | {n_win} x {b} | {ours:.4f} | {base_s:.4f} | {ours / base_s:.3f} |",
              flush=True)


if __name__ == "__main__":
    main()
