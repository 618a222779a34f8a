"""Seeded synthetic perturbation screens with ground truth (graph, targets, Hill dose responses).

The paper's split sizes are GIM's (Schneider et al., ICML 2025, synthetic setup as quoted in
``shared/research/singlecell.md`` §1.3): 40 Hill functions × 4 doses × 50 cells + 800 observational cells
for training; a *partially* out-of-distribution test set (the same 40 functions at doses 0.25, 0.75, 1.25,
1.75, 2.25) and a *fully* OOD one (20 new functions at the training doses). Everything else is **ours**
(the paper's graph model, mechanisms and features could not be read):

* a linear-Gaussian SCM on ``d`` variables, an Erdős–Rényi DAG with ``expected_degree`` edges per node,
  weights ``±U(0.5, 1.2)``, noise scales ``U(0.5, 1.0)``, intercept 0;
* a function ("compound") ``f`` has 1 or 2 target variables ``T_f`` and a Hill dose response per target,
  ``ψ_j(c) = E_j · cⁿ / (EC50ⁿ + cⁿ)`` with ``E_j = ±U(1.5, 3)``, ``EC50 ~ U(0.5, 1.5)``, ``n ~ U(1, 4)``
  shared by its targets; the intervention is a mean shift ``x_j += ψ_j(c)`` on ``j ∈ T_f``;
* its features are ``γ_f = Q [E ⊙ 1_T, 1_T, EC50, n]`` with ``Q`` a random orthogonal matrix fixed by
  the seed (so the features carry the mechanism, but not in the variables' coordinates).

The result is an AnnData: ``X`` = cells (var ``g0..``), ``obs["compound"]`` (``"control"`` for the
observational cells), ``obs["dose"]`` (0 for controls), ``obs["split"]`` (``train`` / ``ood_partial`` /
``ood_full``), ``obsm["perturbation_features"]`` (per cell; zeros for controls), and the truth in
``uns["gim_truth"]``: ``W`` ``[d, d]``, ``compounds``, ``targets`` ``[F, d]`` (0/1), ``emax``, ``ec50``,
``hill_n``.
"""

from __future__ import annotations

import numpy as np

from scigen.core.errors import InvalidInputError

__all__ = ["OOD_PARTIAL_DOSES", "TRAIN_DOSES", "hill", "synthetic_screen", "true_targets"]

TRAIN_DOSES = (0.5, 1.0, 1.5, 2.0)
OOD_PARTIAL_DOSES = (0.25, 0.75, 1.25, 1.75, 2.25)


def hill(c, emax, ec50, n):
    """``emax · cⁿ / (ec50ⁿ + cⁿ)`` (Hill 1910), 0 at ``c = 0``; broadcasts."""
    c = np.asarray(c, dtype=float)
    cn = np.power(c, n)
    return emax * cn / (np.power(ec50, n) + cn)


def _dag(rng, d: int, degree: float) -> np.ndarray:
    p = min(1.0, degree / max(d - 1, 1) * 2)  # expected edges = p·d(d−1)/2 = degree·d
    order = rng.permutation(d)
    w = np.zeros((d, d))
    for a in range(d):
        for b in range(a + 1, d):
            if rng.random() < p:
                w[order[a], order[b]] = rng.choice([-1.0, 1.0]) * rng.uniform(0.5, 1.2)
    return w


def _sample(rng, w, sigma, shift, n) -> np.ndarray:
    d = w.shape[0]
    eps = rng.standard_normal((n, d)) * sigma
    return (shift + eps) @ np.linalg.inv(np.eye(d) - w)


def synthetic_screen(d: int = 10, *, n_functions: int = 40, n_ood_functions: int = 20, cells: int = 50,
                     n_control: int = 800, doses=TRAIN_DOSES, ood_doses=OOD_PARTIAL_DOSES,
                     expected_degree: float = 1.0, seed: int = 0):
    """A seeded screen (see the module docstring). ``cells`` per (function, dose) context."""
    import anndata
    import pandas as pd

    for name, v in (("d", d), ("n_functions", n_functions), ("cells", cells), ("n_control", n_control)):
        if isinstance(v, bool) or not isinstance(v, int) or v < (2 if name in ("d", "cells", "n_control") else 1):
            raise InvalidInputError(f"synthetic_screen: {name} must be a positive int (d, cells, n_control >= 2), got {v!r}")
    rng = np.random.default_rng(seed)
    w = _dag(rng, d, expected_degree)
    sigma = rng.uniform(0.5, 1.0, size=d)
    n_all = n_functions + n_ood_functions
    targets = np.zeros((n_all, d))
    emax = np.zeros((n_all, d))
    ec50 = rng.uniform(0.5, 1.5, size=n_all)
    hill_n = rng.uniform(1.0, 4.0, size=n_all)
    for f in range(n_all):
        t = rng.choice(d, size=int(rng.integers(1, 3)), replace=False)
        targets[f, t] = 1
        emax[f, t] = rng.choice([-1.0, 1.0], size=len(t)) * rng.uniform(1.5, 3.0, size=len(t))
    raw = np.concatenate([emax, targets, ec50[:, None], hill_n[:, None]], axis=1)
    q, _ = np.linalg.qr(rng.standard_normal((raw.shape[1], raw.shape[1])))
    feats = raw @ q
    names = [f"f{i:02d}" for i in range(n_all)]

    blocks, comp, dose, split = [], [], [], []

    def add(x, name, c, s):
        blocks.append(x)
        comp.extend([name] * len(x))
        dose.extend([c] * len(x))
        split.extend([s] * len(x))

    add(_sample(rng, w, sigma, 0.0, n_control), "control", 0.0, "train")
    plan = [(f, c, "train") for f in range(n_functions) for c in doses]
    plan += [(f, c, "ood_partial") for f in range(n_functions) for c in ood_doses]
    plan += [(f, c, "ood_full") for f in range(n_functions, n_all) for c in doses]
    for f, c, s in plan:
        shift = hill(c, emax[f], ec50[f], hill_n[f]) * targets[f]
        add(_sample(rng, w, sigma, shift, cells), names[f], float(c), s)
    x = np.concatenate(blocks).astype(np.float32)
    obs = pd.DataFrame({"compound": comp, "dose": np.asarray(dose, dtype=float), "split": split},
                       index=[f"cell{i}" for i in range(len(x))])
    index = {n: i for i, n in enumerate(names)}
    per_cell = np.stack([feats[index[c]] if c in index else np.zeros(feats.shape[1]) for c in comp])
    ad = anndata.AnnData(X=x, obs=obs, var=pd.DataFrame(index=[f"g{j}" for j in range(d)]))
    ad.obsm["perturbation_features"] = per_cell.astype(np.float32)
    ad.uns["gim_truth"] = {"W": w, "noise_scale": sigma, "compounds": np.asarray(names), "targets": targets,
                           "emax": emax, "ec50": ec50, "hill_n": hill_n, "seed": seed}
    return ad


def true_targets(adata, compounds) -> np.ndarray | None:
    """The true 0/1 target rows of ``compounds`` from ``adata.uns["gim_truth"]`` (``None`` without truth)."""
    truth = adata.uns.get("gim_truth") if hasattr(adata, "uns") else None
    if truth is None:
        return None
    index = {str(n): i for i, n in enumerate(np.asarray(truth["compounds"]).tolist())}
    if not all(str(c) in index for c in compounds):
        return None
    return np.asarray(truth["targets"])[[index[str(c)] for c in compounds]]
