"""Reference nowcasts: persistence and pysteps' (Pulkkinen et al. 2019, GMD 12) extrapolation and STEPS.

* :func:`persistence`: the last context frame at every lead.
* :func:`extrapolation_nowcast`: Lucas-Kanade optical flow (``pysteps.motion.get_method("LK")``) on the
  context in dB units, then semi-Lagrangian advection of the last frame (``pysteps.extrapolation``).
* :func:`steps_nowcast`: the STEPS ensemble (Bowler, Pierce & Seed 2006; Seed et al. 2013) on the same
  motion, ``pysteps.nowcasts.get_method("steps")`` in dB units, back-transformed to rain rate.

Inputs are rain rates ``context [C, y, x]`` in mm/h; outputs ``[L, y, x]`` (``[m, L, y, x]`` for STEPS).
pysteps is the ``[pysteps]`` extra.
"""

from __future__ import annotations

import numpy as np

from scigen.core.errors import InvalidInputError

__all__ = ["extrapolation_nowcast", "lk_motion", "persistence", "steps_nowcast"]


def _pysteps():
    try:
        import pysteps  # noqa: F401
    except ImportError:
        raise InvalidInputError("the pysteps baselines need pysteps: pip install 'scigen-weather[pysteps]'") from None
    import pysteps

    return pysteps


def persistence(context: np.ndarray, horizon: int) -> np.ndarray:
    """``[horizon, y, x]``: the last frame of ``context [C, y, x]`` repeated."""
    return np.repeat(np.asarray(context, dtype=np.float64)[-1:], horizon, axis=0)


def _to_db(r: np.ndarray, threshold: float = 0.1, zerovalue: float = -15.0) -> np.ndarray:
    from pysteps.utils.transformation import dB_transform

    return dB_transform(np.asarray(r, dtype=np.float64), metadata={"unit": "mm/h", "transform": None,
                                                                    "threshold": threshold, "zerovalue": 0.0},
                        threshold=threshold, zerovalue=zerovalue)[0]


def _from_db(db: np.ndarray, threshold: float = 0.1) -> np.ndarray:
    r = 10 ** (np.asarray(db, dtype=np.float64) / 10)
    return np.where(r >= threshold, r, 0.0)


def lk_motion(context: np.ndarray) -> np.ndarray:
    """``[2, y, x]`` motion (pixels per step) by pysteps' Lucas-Kanade on the dB-transformed context."""
    ps = _pysteps()
    if np.asarray(context).shape[0] < 2:
        raise InvalidInputError("Lucas-Kanade motion needs at least 2 context frames")
    return ps.motion.get_method("LK")(_to_db(context), verbose=False)


def extrapolation_nowcast(context: np.ndarray, horizon: int, motion: np.ndarray | None = None) -> np.ndarray:
    """``[horizon, y, x]`` mm/h: semi-Lagrangian advection of the last frame along the LK motion."""
    ps = _pysteps()
    v = lk_motion(context) if motion is None else motion
    out = ps.extrapolation.get_method("semilagrangian")(np.asarray(context, dtype=np.float64)[-1], v, horizon)
    return np.nan_to_num(out, nan=0.0).clip(min=0.0)


def steps_nowcast(context: np.ndarray, horizon: int, n_members: int, *, seed: int = 0, n_cascade_levels: int = 4,
                  kmperpixel: float = 1.0, timestep: float = 5.0, motion: np.ndarray | None = None) -> np.ndarray:
    """``[n_members, horizon, y, x]`` mm/h: the STEPS ensemble (last 3 context frames, AR(2), dB units)."""
    ps = _pysteps()
    ctx = np.asarray(context, dtype=np.float64)
    if ctx.shape[0] < 3:
        raise InvalidInputError("STEPS needs at least 3 context frames (an AR(2) model)")
    v = lk_motion(ctx) if motion is None else motion
    db = _to_db(ctx[-3:])
    if not np.any(db > -10.0):
        return np.zeros((n_members, horizon, *ctx.shape[1:]))
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):  # STEPS prints its progress
        fc = ps.nowcasts.get_method("steps")(db, v, horizon, n_ens_members=n_members, n_cascade_levels=n_cascade_levels,
                                             precip_thr=-10.0, kmperpixel=kmperpixel, timestep=timestep,
                                             noise_method="nonparametric", vel_pert_method=None,
                                             mask_method="incremental", seed=seed, num_workers=1)
    return np.nan_to_num(_from_db(fc), nan=0.0)
