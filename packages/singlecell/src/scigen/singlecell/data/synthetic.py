"""Seeded synthetic marginals from the MMSFM paper (Lee et al., ICML 2025; reference ``data/datagen.py``).

Every generator returns an ``anndata.AnnData`` with ``n`` cells per time point, 2 features
(``var_names = ["x", "y"]``), ``obs["time"]`` (float) and ``obs["marginal"]`` (the index); the
exact component laws are stored in ``uns["synthetic"]`` so tests can compare against the truth.

* ``s_gaussians``: 7 marginals ``N(mu_i, 0.5 I)``, means (0,0), (1,4), (5,4), (6,0), (7,-4), (11,-4), (12,0);
* ``alpha_gaussians``: 7 marginals ``N(mu_i, 0.5 I)``, means (6,6), (2,6), (-3,0), (-6,3), (-3,6), (2,0), (6,0);
* ``three_gaussians``: ``N(mu_i, I)`` with means (0,0), (3,3), (6,0);
* ``gaussian_checkerboard_moons``: ``N(0, 0.25 I)`` -> an 8-cell checkerboard -> two moons (noise 0.05).

``times`` defaults to ``0, 1, ..., M-1`` (as the reference); pass irregular times, e.g.
``times=(0, 1, 2, 4, 5, 8, 9)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scigen.core.errors import InvalidInputError

__all__ = ["SYNTHETIC", "S_MEANS", "ALPHA_MEANS", "THREE_MEANS", "alpha_gaussians", "gaussian_checkerboard_moons",
           "s_gaussians", "synthetic", "three_gaussians"]

S_MEANS = ((0, 0), (1, 4), (5, 4), (6, 0), (7, -4), (11, -4), (12, 0))
ALPHA_MEANS = ((6, 6), (2, 6), (-3, 0), (-6, 3), (-3, 6), (2, 0), (6, 0))
THREE_MEANS = ((0, 0), (3, 3), (6, 0))


def _check(n: int, times: Sequence[float] | None, m: int) -> np.ndarray:
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidInputError(f"n must be a positive int (cells per time point), got {n!r}")
    t = np.arange(m, dtype=float) if times is None else np.asarray(times, dtype=float)
    if t.shape != (m,):
        raise InvalidInputError(f"times must have {m} entries (one per marginal), got {t.shape[0] if t.ndim else t}")
    if not np.all(np.diff(t) > 0):
        raise InvalidInputError(f"times must be strictly increasing, got {t.tolist()}")
    return t


def _adata(xs: list[np.ndarray], t: np.ndarray, info: dict):
    import anndata
    import pandas as pd

    X = np.concatenate(xs).astype(np.float32)
    marg = np.concatenate([np.full(len(x), i) for i, x in enumerate(xs)])
    obs = pd.DataFrame({"time": t[marg], "marginal": marg}, index=[f"cell_{i}" for i in range(len(X))])
    ad = anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=["x", "y"]))
    ad.uns["synthetic"] = {**info, "times": t.tolist()}
    return ad


def _gaussians(means, var: float, n: int, seed: int, times, name: str):
    t = _check(n, times, len(means))
    rng = np.random.default_rng(seed)
    xs = [rng.normal(np.asarray(mu, float), np.sqrt(var), size=(n, 2)) for mu in means]
    return _adata(xs, t, {"name": name, "means": [list(m) for m in means], "variance": var})


def s_gaussians(n: int = 1000, *, seed: int = 0, times: Sequence[float] | None = None):
    """S-shaped chain of 7 isotropic Gaussians (variance 0.5 per axis)."""
    return _gaussians(S_MEANS, 0.5, n, seed, times, "s_gaussians")


def alpha_gaussians(n: int = 1000, *, seed: int = 0, times: Sequence[float] | None = None):
    """α-shaped chain of 7 isotropic Gaussians (variance 0.5 per axis)."""
    return _gaussians(ALPHA_MEANS, 0.5, n, seed, times, "alpha_gaussians")


def three_gaussians(n: int = 1000, *, seed: int = 0, times: Sequence[float] | None = None):
    """Three unit-variance Gaussians at (0,0), (3,3), (6,0)."""
    return _gaussians(THREE_MEANS, 1.0, n, seed, times, "three_gaussians")


def _checkerboard(n: int, rng: np.random.Generator) -> np.ndarray:
    # 8 unit cells of a 4 x 4 board on [-2, 2]^2 (the black squares)
    x1 = rng.uniform(-2, 2, n)
    x2 = rng.uniform(0, 1, n) + rng.integers(0, 2, n) * 2 - 2 + (np.floor(x1) % 2)
    return np.stack([x1, x2], 1)


def _moons(n: int, rng: np.random.Generator, noise: float = 0.05) -> np.ndarray:
    n1 = n // 2
    a = rng.uniform(0, np.pi, n1)
    b = rng.uniform(0, np.pi, n - n1)
    upper = np.stack([np.cos(a), np.sin(a)], 1)
    lower = np.stack([1 - np.cos(b), 0.5 - np.sin(b)], 1)
    pts = np.concatenate([upper, lower]) + rng.normal(0, noise, (n, 2))
    return pts[rng.permutation(n)]


def gaussian_checkerboard_moons(n: int = 1000, *, seed: int = 0, times: Sequence[float] | None = None):
    """``N(0, 0.25 I)`` -> 8-cell checkerboard on ``[-2, 2]²`` -> two moons (sklearn's layout, noise 0.05)."""
    t = _check(n, times, 3)
    rng = np.random.default_rng(seed)
    xs = [rng.normal(0, 0.5, (n, 2)), _checkerboard(n, rng), _moons(n, rng)]
    return _adata(xs, t, {"name": "gaussian_checkerboard_moons"})


SYNTHETIC = {
    "s_gaussians": s_gaussians,
    "alpha_gaussians": alpha_gaussians,
    "three_gaussians": three_gaussians,
    "gaussian_checkerboard_moons": gaussian_checkerboard_moons,
}


def synthetic(name: str, n: int = 1000, *, seed: int = 0, times: Sequence[float] | None = None):
    """Dispatch by name (``SYNTHETIC``); an unknown name lists the valid ones."""
    if name not in SYNTHETIC:
        raise InvalidInputError(f"unknown synthetic dataset {name!r}; valid: {', '.join(SYNTHETIC)}")
    return SYNTHETIC[name](n, seed=seed, times=times)
