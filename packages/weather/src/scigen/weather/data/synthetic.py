"""Offline synthetic radar: advected storms from power-law noise, with growth/decay and a known motion.

Each event is a Gaussian random field with a power-law spectrum ``|k|^{-beta}`` (the scaling of radar
rain fields, Seed et al. 2013; the noise pysteps' STEPS draws), evolving in the Lagrangian frame as an
AR(1) process ``L_{n+1} = rho·L_n + sqrt(1 − rho²)·W_n`` (fresh power-law noise ``W_n``), advected by a
uniform motion ``(u, v)`` pixels per step (an exact Fourier shift on the periodic grid:
``f_n(x) = L_n(x − n·(u, v))``), and turned into rain by ``R = A_n·(exp(s·f) − exp(s·f_0))`` where
``f > f_0`` (a fraction ``wet`` of the pixels), 0 elsewhere, with growth/decay ``A_n = A_0·exp(g·n)``.
With ``rho = 1`` and ``g = 0`` frame ``n`` is frame 0 shifted by ``n·(u, v)``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scigen.core.errors import InvalidInputError
from scigen.core.validation import check_count

__all__ = ["power_law_noise", "synthetic_storms"]


def _wavenumbers(size: int) -> tuple[np.ndarray, np.ndarray]:
    k = np.fft.fftfreq(size)
    return np.meshgrid(k, k, indexing="ij")


def power_law_noise(size: int, beta: float, rng: np.random.Generator) -> np.ndarray:
    """A zero-mean, unit-variance ``[size, size]`` Gaussian field with power spectrum ``∝ |k|^{-beta}``."""
    ky, kx = _wavenumbers(size)
    k = np.hypot(ky, kx)
    k[0, 0] = 1.0
    amp = k ** (-beta / 2)
    amp[0, 0] = 0.0
    f = np.fft.ifft2(np.fft.fft2(rng.standard_normal((size, size))) * amp).real
    return (f - f.mean()) / f.std()


def _shift(f: np.ndarray, dy: float, dx: float) -> np.ndarray:
    """``f(y − dy, x − dx)`` on the periodic grid (Fourier shift theorem; exact for integer shifts)."""
    ky, kx = _wavenumbers(f.shape[0])
    return np.fft.ifft2(np.fft.fft2(f) * np.exp(-2j * np.pi * (ky * dy + kx * dx))).real


def synthetic_storms(n_events: int = 8, frames: int = 25, size: int = 32, *, seed: int = 0, beta: float = 3.0,
                     rho: float = 0.97, max_speed: float = 1.5, growth: float = 0.02, wet: float = 0.35,
                     intensity: float = 2.0, contrast: float = 1.0, step_minutes: int = 5,
                     pixel_km: float = 1.0, gap_minutes: int = 60, start: str = "2024-06-01T12:00",
                     motion: tuple[float, float] | None = None):
    """``n_events`` storms of ``frames`` frames on a ``size × size`` grid, concatenated along ``time`` with
    ``gap_minutes`` between events (so no nowcast window crosses two events).

    Per event (seeded): motion ``(u, v) ~ U(−max_speed, max_speed)²`` px/step, growth rate
    ``g ~ U(−growth, growth)`` per step (``motion=(u, v)`` fixes the motion of every event), amplitude ``A_0 = intensity·U(0.5, 1.5)`` mm/h. Returns a field
    DataArray in mm/h (``attrs``: ``motion_u``, ``motion_v`` in px/step, per event; an ``event``
    coordinate along ``time``)."""
    n_events, frames, size = check_count(n_events, "n_events"), check_count(frames, "frames"), check_count(size, "size")
    if not 0 < wet < 1:
        raise InvalidInputError(f"wet must be a fraction in (0, 1), got {wet}")
    if not 0 <= rho <= 1:
        raise InvalidInputError(f"rho must lie in [0, 1], got {rho}")
    from scipy.stats import norm

    from scigen.weather.data.fields import make_field

    rng = np.random.default_rng(seed)
    f0 = float(norm.ppf(1 - wet))
    out, times, event, us, vs = [], [], [], [], []
    t0 = pd.Timestamp(start)
    step, gap = pd.Timedelta(minutes=step_minutes), pd.Timedelta(minutes=gap_minutes)
    for e in range(n_events):
        u, v = rng.uniform(-max_speed, max_speed, size=2)
        if motion is not None:
            u, v = (float(m) for m in motion)
        g = rng.uniform(-growth, growth)
        amp = intensity * rng.uniform(0.5, 1.5)
        lag = power_law_noise(size, beta, rng)
        for n in range(frames):
            if n:
                lag = rho * lag + np.sqrt(1 - rho**2) * power_law_noise(size, beta, rng)
            f = _shift(lag, n * v, n * u)
            r = np.where(f > f0, amp * np.exp(g * n) * (np.exp(contrast * f) - np.exp(contrast * f0)), 0.0)
            out.append(r)
            times.append(t0 + n * step)
            event.append(e)
        t0 = times[-1] + gap
        us.append(float(u))
        vs.append(float(v))
    da = make_field(np.stack(out), times, units="mm/h", y=np.arange(size) * pixel_km, x=np.arange(size) * pixel_km,
                    attrs={"motion_u": np.array(us), "motion_v": np.array(vs), "source": "synthetic_storms",
                           "motion_units": "pixels per time step (u along x, v along y)"})
    return da.assign_coords(event=("time", np.array(event)))
