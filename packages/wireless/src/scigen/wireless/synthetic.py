"""An offline geometric multipath generator with planted clusters (our design; research note §4.3).

A *site* fixes ``n_clusters`` clusters, each with a mean angle of arrival, a mean delay, a mean
Doppler shift and a power (exponentially decaying with delay). A *user* sees each cluster with
probability ``visibility`` (at least one), and each visible cluster contributes ``subpaths`` paths
with Laplacian offsets around the cluster means (angle spread ``angle_spread``, delay spread
``delay_spread``, Doppler spread ``doppler_spread``) and complex Gaussian gains. The channel is

    h[n, k, l] = Σ_p g_p · exp(−jπ n sin θ_p) · exp(−j2π k Δf τ_p) · exp(+j2π l T ν_p),

the atoms of :mod:`scigen.wireless.dictionaries` with the same signs, and ``Σ_p E|g_p|² = 1`` per user,
so ``E‖h‖² = N = antennas·subcarriers·symbols`` exactly. The planted path parameters are returned with
the channels (``path_angle``, ``path_delay``, ``path_doppler``, ``path_power``; paths of invisible
clusters have power 0), and the site's cluster means as attributes. A parameter of a dimension of size 1 is reported as 0.

A uniform planar array (``array=(rows, cols)``, antenna ``m·cols + n``, half-wavelength spacing) needs a
site with elevations (``make_site(planar=True)``): each path has an elevation ``φ_p`` (Laplacian
spread ``elevation_spread`` around its cluster's) and an azimuth ``θ_p``, and the antenna factor becomes
the URA plane wave ``exp(−jπ (m sin φ_p + n cos φ_p sin θ_p))`` (Heath & Lozano, §7.4), i.e. the
:func:`~scigen.wireless.dictionaries.upa_atoms` atom at spatial angles ``θ_v = φ_p`` and
``θ_h = arcsin(cos φ_p sin θ_p)``; ``path_elevation`` is returned too.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import xarray as xr

from scigen.core.errors import InvalidInputError
from scigen.wireless.channels import CHANNEL_DIMS

__all__ = ["Site", "generate_channels", "make_site"]


@dataclass(frozen=True)
class Site:
    """Cluster means of one site: angles (rad), delays (s), Dopplers (Hz), powers (sum 1)."""

    angles: tuple[float, ...]
    delays: tuple[float, ...]
    dopplers: tuple[float, ...]
    powers: tuple[float, ...]
    elevations: tuple[float, ...] | None = None


def make_site(n_clusters: int = 3, *, seed: int = 0, max_angle: float = math.radians(60), tau_max: float = 6e-6,
              nu_max: float = 250.0, delay_decay: float | None = None, planar: bool = False,
              max_elevation: float = math.radians(30)) -> Site:
    """Draw a site: angles uniform on ``±max_angle`` (at least 10° apart), delays uniform on
    ``[0.05, 0.6)·tau_max``, Dopplers uniform on ``±0.8·nu_max``, powers ``∝ exp(−delay/decay)``;
    ``planar`` adds elevations uniform on ``±max_elevation`` (drawn last, so the rest is unchanged)."""
    if n_clusters < 1:
        raise InvalidInputError(f"n_clusters must be >= 1, got {n_clusters}")
    rng = np.random.default_rng(seed)
    for _ in range(1000):
        ang = rng.uniform(-max_angle, max_angle, n_clusters)
        if n_clusters == 1 or np.min(np.diff(np.sort(ang))) > math.radians(10):
            break
    dly = rng.uniform(0.05, 0.6, n_clusters) * tau_max
    dop = rng.uniform(-0.8, 0.8, n_clusters) * nu_max
    decay = delay_decay or 0.3 * tau_max
    pw = np.exp(-dly / decay)
    pw = pw / pw.sum()
    el = tuple(rng.uniform(-max_elevation, max_elevation, n_clusters).tolist()) if planar else None
    return Site(tuple(ang.tolist()), tuple(dly.tolist()), tuple(dop.tolist()), tuple(pw.tolist()), el)


def generate_channels(n_samples: int, *, n_antennas: int | None = None, n_subcarriers: int = 1, n_symbols: int = 1,
                      site: Site | None = None, subpaths: int = 4, visibility: float = 0.7,
                      angle_spread: float = math.radians(2.0), delay_spread: float = 0.1e-6,
                      doppler_spread: float = 10.0, subcarrier_spacing: float = 15e3,
                      symbol_time: float = 1e-3 / 14, seed: int = 0, array: tuple[int, int] | None = None,
                      elevation_spread: float = math.radians(2.0), spacing: float | None = None) -> xr.Dataset:
    """``n_samples`` channels of users of ``site`` (default ``make_site()``) with their planted paths.

    Returns a Dataset with ``h (sample, antenna, subcarrier, symbol)`` complex and ``path_angle``,
    ``path_delay``, ``path_doppler``, ``path_power`` ``(sample, path)``; attributes hold the geometry and
    the site. Dimensions of size 1 carry no dependence on their parameter. ``n_antennas`` defaults to 32
    (a ULA) or to ``rows·cols`` with ``array=(rows, cols)`` (a UPA; see the module docstring). ``subcarrier_spacing``: Δf in Hz (``spacing`` is its deprecated
    old name)."""
    if spacing is not None:
        from scigen.core.deprecation import warn_renamed

        warn_renamed("generate_channels(spacing=...)", "subcarrier_spacing=")
    else:
        spacing = subcarrier_spacing
    if array is not None:
        if len(array) != 2 or any(int(r) < 1 for r in array):
            raise InvalidInputError(f"array must be (rows, cols) of positive ints, got {array}")
        array = (int(array[0]), int(array[1]))
        if n_antennas is not None and n_antennas != array[0] * array[1]:
            raise InvalidInputError(f"array={array} has rows*cols = {array[0] * array[1]} antennas but "
                                    f"n_antennas = {n_antennas}")
        n_antennas = array[0] * array[1]
    n_antennas = 32 if n_antennas is None else n_antennas
    for nm, v in (("n_samples", n_samples), ("n_antennas", n_antennas), ("n_subcarriers", n_subcarriers),
                  ("n_symbols", n_symbols), ("subpaths", subpaths)):
        if int(v) < 1:
            raise InvalidInputError(f"{nm} must be >= 1, got {v}")
    if not 0 < visibility <= 1:
        raise InvalidInputError(f"visibility must lie in (0, 1], got {visibility}")
    site = site or make_site(planar=array is not None)
    if array is not None and site.elevations is None:
        raise InvalidInputError("array=(rows, cols) needs a site with elevations (make_site(planar=True))")
    rng = np.random.default_rng(seed)
    C, P = len(site.angles), subpaths
    vis = rng.random((n_samples, C)) < visibility
    none = ~vis.any(1)
    vis[none, rng.integers(0, C, int(none.sum()))] = True
    pw = np.asarray(site.powers)[None, :] * vis
    pw = pw / pw.sum(1, keepdims=True)  # [B, C], visible clusters' powers sum to 1
    ang = np.asarray(site.angles)[None, :, None] + rng.laplace(0, angle_spread / math.sqrt(2), (n_samples, C, P))
    ang = np.clip(ang, -math.pi / 2 + 1e-3, math.pi / 2 - 1e-3)
    dly = np.abs(np.asarray(site.delays)[None, :, None] + rng.laplace(0, delay_spread / math.sqrt(2), (n_samples, C, P)))
    dop = np.asarray(site.dopplers)[None, :, None] + rng.laplace(0, doppler_spread / math.sqrt(2), (n_samples, C, P))
    gains = (rng.standard_normal((n_samples, C, P)) + 1j * rng.standard_normal((n_samples, C, P))) / math.sqrt(2)
    gains = gains * np.sqrt(pw[:, :, None] / P)
    if array is not None:  # drawn after the gains, so a ULA run with the same seed is unchanged
        el = np.asarray(site.elevations)[None, :, None] + rng.laplace(0, elevation_spread / math.sqrt(2),
                                                                      (n_samples, C, P))
        el = np.clip(el, -math.pi / 2 + 1e-3, math.pi / 2 - 1e-3).reshape(n_samples, C * P)
    B = n_samples
    ang, dly, dop, gains = (a.reshape(B, C * P) for a in (ang, dly, dop, gains))
    n = np.arange(n_antennas)[None, None, :]
    k = np.arange(n_subcarriers)[None, None, :]
    ell = np.arange(n_symbols)[None, None, :]
    if array is not None:
        m, q = n[..., None] // array[1], n[..., None] % array[1]
        phase = m * np.sin(el)[:, :, None, None] + q * (np.cos(el) * np.sin(ang))[:, :, None, None]
        a_ang = np.exp(-1j * math.pi * phase)[..., 0]
    elif n_antennas > 1:
        a_ang = np.exp(-1j * math.pi * n * np.sin(ang)[:, :, None])
    else:
        a_ang = np.ones((B, C * P, 1))
    a_dly = np.exp(-2j * math.pi * k * spacing * dly[:, :, None]) if n_subcarriers > 1 else np.ones((B, C * P, 1))
    a_dop = np.exp(2j * math.pi * ell * symbol_time * dop[:, :, None]) if n_symbols > 1 else np.ones((B, C * P, 1))
    h = np.einsum("bp,bpn,bpk,bpl->bnkl", gains, a_ang, a_dly, a_dop)
    # a parameter the configuration cannot see (a dimension of size 1) is reported as 0, like the dictionary's
    ang, dly, dop = (v if n > 1 else np.zeros_like(v) for v, n in ((ang, n_antennas), (dly, n_subcarriers),
                                                                   (dop, n_symbols)))
    power = np.abs(gains) ** 2
    paths = {"path_angle": (("sample", "path"), ang), "path_delay": (("sample", "path"), dly),
             "path_doppler": (("sample", "path"), dop), "path_power": (("sample", "path"), power)}
    if array is not None:
        paths["path_elevation"] = (("sample", "path"), el)
    attrs = {"n_antennas": n_antennas, "n_subcarriers": n_subcarriers, "n_symbols": n_symbols,
             "subcarrier_spacing": spacing,
             "symbol_time": symbol_time, "seed": seed, "source": "scigen.wireless.synthetic"}
    if array is not None:
        attrs["array"] = np.asarray(array)
    attrs.update({f"site_{k}": np.asarray(v) for k, v in asdict(site).items() if v is not None})
    return xr.Dataset({"h": (CHANNEL_DIMS, h), **paths}, attrs=attrs)
