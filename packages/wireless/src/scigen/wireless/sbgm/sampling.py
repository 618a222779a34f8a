"""Sampling physically readable channels from a trained SBGM (Böck et al., ICML 2025, Sec. 3.3).

1. draw a prior variance vector ``γ`` (CSGMM: ``k ~ Cat(π)``, ``γ = γ_k``; CSVAE: ``γ = γ_θ(z)``, ``z ~ N(0, I)``);
2. draw ``s ~ CN(0, diag γ)``;
3. keep the ``max_paths`` entries of largest magnitude and rescale them so that ``‖s‖²`` is unchanged
   (:func:`strongest_paths`);
4. ``h = D′ s`` with the dictionary ``D′`` of *any* configuration on the same grids (other antenna,
   subcarrier or symbol counts): no retraining;
5. the kept grid indices are the paths: angle / delay / Doppler from the grid, power ``|s|²/S``.
"""

from __future__ import annotations

import torch
import xarray as xr
from torch import Tensor

from scigen.core import streams
from scigen.wireless.channels import CHANNEL_DIMS
from scigen.wireless.dictionaries import Dictionary

__all__ = ["channels_from_coefficients", "draw_coefficients", "strongest_paths"]


def draw_coefficients(gamma: Tensor, generator) -> Tensor:
    """``s ~ CN(0, diag γ)`` for ``gamma [n, S]`` (complex128); ``generator``: a ``torch.Generator`` or per-sample
    :class:`~scigen.core.streams.SampleStreams` (row ``i`` from key ``i``)."""
    re = streams.randn(gamma.shape, generator=generator, dtype=torch.float64, device=gamma.device)
    im = streams.randn(gamma.shape, generator=generator, dtype=torch.float64, device=gamma.device)
    return torch.complex(re, im) * torch.sqrt(gamma.double() / 2)


def strongest_paths(s: Tensor, max_paths: int | None) -> tuple[Tensor, Tensor]:
    """``(s_sparse [n, S], index [n, P])``: the ``P = max_paths`` largest-magnitude entries of each row,
    rescaled so that each row keeps its energy ``‖s‖²``; ``None`` keeps every entry."""
    n, S = s.shape
    P = S if max_paths is None else min(int(max_paths), S)
    mag = s.abs()
    idx = torch.topk(mag, P, dim=1).indices
    kept = torch.gather(s, 1, idx)
    scale = torch.sqrt((mag**2).sum(1, keepdim=True) / (kept.abs() ** 2).sum(1, keepdim=True).clamp_min(1e-300))
    out = torch.zeros_like(s)
    out.scatter_(1, idx, kept * scale)
    return out, idx


def channel_arrays(s_sparse: Tensor, index: Tensor, dictionary: Dictionary) -> dict[str, Tensor]:
    """The arrays of :func:`channels_from_coefficients`, one row per channel (on ``s_sparse``'s device): ``h``
    ``[n, antenna, subcarrier, symbol]`` (complex) and ``path_angle``, ``path_delay``, ``path_doppler``,
    ``path_power``, ``path_index`` ``[n, path]``."""
    D = dictionary.matrix.to(s_sparse.device)
    n = s_sparse.shape[0]
    out = {"h": (s_sparse @ D.T).reshape(n, dictionary.n_antennas, dictionary.n_subcarriers, dictionary.n_symbols)}
    for k, v in dictionary.parameters(index.cpu()).items():
        out[f"path_{k}"] = v.to(s_sparse.device)
    out["path_power"] = torch.gather(s_sparse, 1, index).abs() ** 2 / dictionary.n_atoms
    out["path_index"] = index.to(torch.int64)
    return out


def channels_from_coefficients(s_sparse: Tensor, index: Tensor, dictionary: Dictionary) -> xr.Dataset:
    """``h = D s`` as ``(sample, antenna, subcarrier, symbol)`` plus the path table ``(sample, path)``:
    ``path_angle`` (rad), ``path_delay`` (s), ``path_doppler`` (Hz), ``path_power`` (``|s|²/S``: the
    power of the path gain ``s/√S`` of a unit-norm-free atom, as in the generator), ``path_index``."""
    arrays = {k: v.cpu().numpy() for k, v in channel_arrays(s_sparse, index, dictionary).items()}
    ds = xr.Dataset({"h": (CHANNEL_DIMS, arrays.pop("h"))})
    for k, v in arrays.items():
        ds[k] = (("sample", "path"), v)
    return ds
