"""Offline data: a seeded non-stationary multivariate generator and statsmodels' ``macrodata``.

:func:`synthetic_nonstationary` draws ``y_t = m_t + s_t ⊙ u_t`` where, per variable ``i``,

* ``m_t,i = a_i + d_i·(t/L) + A_i·sin(2π t / P + φ_i)`` — level, linear drift and a season of period ``P``;
* ``s_t,i = s0_i·(1 + 2 t/L)·(1 + b sin(2π t / P + ψ_i))`` — a scale that triples over the series and
  breathes with the season (``b = scale_amplitude``, 0.5 by default) (heteroscedastic, as NsDiff's GaussianNS data whose mean and variance drift);
* ``u_t = ρ u_{t−1} + sqrt(1 − ρ²) L_c z_t`` — stationary AR(1) innovations with unit marginal variance
  and cross-correlation ``L_c L_cᵀ = C`` (``C_ij = c`` off the diagonal).

So ``Var(y_t,i) = s_t,i²`` exactly and the one-step conditional law given the past is Gaussian with
mean ``m_t + s_t ρ u_{t−1}`` and sd ``s_t sqrt(1 − ρ²)``. Unlike the reference code, it is seeded.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

from scigen.core.errors import InvalidInputError
from scigen.timeseries.data.validate import as_frame

__all__ = ["macrodata", "synthetic_nonstationary"]


def synthetic_nonstationary(
    length: int = 2000,
    n_vars: int = 3,
    *,
    period: int = 24,
    rho: float = 0.6,
    corr: float = 0.5,
    freq: str = "1h",
    start: str = "2020-01-01",
    seed: int = 0,
    scale_amplitude: float = 0.5,
    return_components: bool = False,
):
    """A seeded ``DataFrame`` ``[length, n_vars]`` (columns ``"x0" …``) whose mean and variance drift.

    With ``return_components`` also returns ``(mean, scale)`` frames ``m_t`` and ``s_t`` (see module doc).
    """
    if not isinstance(length, int) or length < 2:
        raise InvalidInputError(f"length must be an integer >= 2, got {length!r}")
    if not isinstance(n_vars, int) or n_vars < 1:
        raise InvalidInputError(f"n_vars must be a positive integer, got {n_vars!r}")
    if not 0 <= scale_amplitude < 1:
        raise InvalidInputError(f"scale_amplitude must lie in [0, 1), got {scale_amplitude}")
    if not -1 < rho < 1:
        raise InvalidInputError(f"rho must lie in (-1, 1), got {rho}")
    if n_vars > 1 and not -1 / (n_vars - 1) < corr < 1:
        raise InvalidInputError(f"corr must lie in (-1/(n_vars-1), 1) for a valid correlation matrix, got {corr}")
    rng = np.random.default_rng(seed)
    t = np.arange(length)[:, None] / 1.0
    a = rng.normal(0.0, 1.0, n_vars)
    d = rng.uniform(1.0, 3.0, n_vars) * rng.choice([-1.0, 1.0], n_vars)
    amp = rng.uniform(0.5, 1.5, n_vars)
    phi, psi = rng.uniform(0, 2 * np.pi, n_vars), rng.uniform(0, 2 * np.pi, n_vars)
    s0 = rng.uniform(0.2, 0.4, n_vars)
    mean = a + d * t / length + amp * np.sin(2 * np.pi * t / period + phi)
    scale = s0 * (1 + 2 * t / length) * (1 + scale_amplitude * np.sin(2 * np.pi * t / period + psi))
    C = np.full((n_vars, n_vars), corr) + (1 - corr) * np.eye(n_vars)
    Lc = np.linalg.cholesky(C)
    z = rng.standard_normal((length, n_vars)) @ Lc.T
    u = np.empty_like(z)
    u[0] = z[0]
    for k in range(1, length):
        u[k] = rho * u[k - 1] + np.sqrt(1 - rho**2) * z[k]
    idx = pd.date_range(start, periods=length, freq=freq, name="time")
    cols = [f"x{i}" for i in range(n_vars)]
    df = pd.DataFrame(mean + scale * u, index=idx, columns=cols)
    if return_components:
        return df, pd.DataFrame(mean, index=idx, columns=cols), pd.DataFrame(scale, index=idx, columns=cols)
    return df


def _statsmodels_file(*parts: str) -> Path:
    spec = importlib.util.find_spec("statsmodels")
    if spec is None or spec.origin is None:
        raise InvalidInputError("macrodata is read from the statsmodels wheel, which is not installed: "
                                "pip install 'scigen-timeseries[macrodata]' (or pip install statsmodels)")
    return Path(spec.origin).parent.joinpath(*parts)


def macrodata(columns: list[str] | None = None) -> pd.DataFrame:
    """US quarterly macro data 1959Q1-2009Q3 (203 × 12) from the ``statsmodels`` wheel.

    Indexed by quarter start; ``year``/``quarter`` become the index. ``columns`` selects variables.
    Source: statsmodels ``datasets/macrodata`` (US Bureau of Economic Analysis, Federal Reserve, BLS).
    """
    raw = pd.read_csv(_statsmodels_file("datasets", "macrodata", "macrodata.csv"))
    idx = pd.PeriodIndex.from_fields(year=raw.pop("year").astype(int), quarter=raw.pop("quarter").astype(int),
                                     freq="Q").to_timestamp()
    df = raw.set_axis(idx, axis=0)
    if columns is not None:
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise InvalidInputError(f"columns {missing} are not in macrodata; valid: {list(df.columns)}")
        df = df[list(columns)]
    return as_frame(df, name="macrodata")
