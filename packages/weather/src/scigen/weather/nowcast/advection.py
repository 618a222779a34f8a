"""Advection input (ours, ``NowcastConfig.advection_input``): an extrapolation nowcast as extra channels.

The ICML 2025 estimator sees only the context frames. A small U-Net on few training windows learns motion
poorly, and its MSE mean then loses to plain Lucas-Kanade extrapolation (the benchmark's stage 1 MAE was
worse than pysteps'). With the switch on, each context is extrapolated ``horizon`` frames by the same
pysteps nowcast the benchmark uses as a baseline (:func:`scigen.weather.baselines.extrapolation_nowcast`:
Lucas-Kanade motion on the dB-transformed context, semi-Lagrangian advection of the last frame, NaN
outside the domain set to 0), and the estimator predicts a residual on that extrapolation; the flow sees it
as extra conditioning. Motion in ``extrapolate`` is in the data's units (rain rate / VIL kg/m²; dBZ and
the VIL byte are advected as rain rate / kg/m² and converted back). ``NowcastConfig.advection_motion =
"global"`` replaces Lucas-Kanade by one phase-correlation motion vector per context and a translation
(:mod:`scigen.weather.motion`): exact for uniformly moving storms, coarse for real radar, and free of
pysteps (which builds from source), so the default install can use the switch.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError

__all__ = ["MOTIONS", "advection_channels", "extrapolate"]

#: units advected through another one (pysteps' dB transform needs a non-negative intensity)
_VIA = {"dBZ": "mm/h", "VIL digital": "kg/m2"}


#: the motion estimators of :func:`extrapolate` (``NowcastConfig.advection_motion``)
MOTIONS = ("lucas-kanade", "global")


def _extrapolate_one(context: np.ndarray, n_leads: int, motion: str) -> np.ndarray:
    if motion == "global":
        from scigen.weather.motion import global_motion, translate_extrapolation

        return translate_extrapolation(context[-1], global_motion(context), n_leads)
    from scigen.weather import baselines as B

    return B.extrapolation_nowcast(context, n_leads)


def extrapolate(context: np.ndarray, n_leads: int, units: str = "mm/h", motion: str = "lucas-kanade") -> np.ndarray:
    """``[..., n_leads, y, x]``: the extrapolation of every context ``[..., C, y, x]`` (``C >= 2``, physical
    ``units``), in the same units. ``motion="lucas-kanade"``: pysteps' Lucas-Kanade + semi-Lagrangian (the
    ``[pysteps]`` extra); ``"global"``: one phase-correlation motion vector per context and a translation of
    the last frame (:mod:`scigen.weather.motion`, numpy/scipy only)."""
    if motion not in MOTIONS:
        raise InvalidInputError(f"motion must be one of {MOTIONS}, got {motion!r}")
    from scigen.weather.data.units import check_units, convert

    units = check_units(units)
    ctx = np.asarray(context, dtype=np.float64)
    if ctx.ndim < 3 or ctx.shape[-3] < 2:
        raise InvalidInputError(f"context: extrapolation needs [..., C >= 2, y, x] frames, got shape {ctx.shape}")
    if not np.isfinite(ctx).all():
        raise InvalidInputError("context: extrapolation input has NaN or infinite values")
    via = _VIA.get(units, units)
    flat = convert(ctx, units, via).reshape(-1, *ctx.shape[-3:])
    out = np.stack([_extrapolate_one(c, n_leads, motion) for c in flat])
    return convert(out, via, units).reshape(*ctx.shape[:-3], n_leads, *ctx.shape[-2:])


def advection_channels(transform, context: Tensor, n_leads: int, motion: str = "lucas-kanade") -> Tensor:
    """``[B, n_leads, H, W]`` in model units: :func:`extrapolate` of ``context [B, C, H, W]`` (model units,
    mapped to physical units and back by ``transform``, a :class:`~scigen.weather.nowcast.windows.Transform`)."""
    phys = transform.inverse(context.detach().cpu().numpy())
    adv = transform.forward(extrapolate(phys, n_leads, transform.units, motion))
    return torch.as_tensor(adv, device=context.device, dtype=context.dtype)
