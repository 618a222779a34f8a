"""Plots of the wireless package: NMSE vs SNR, power-angle profiles, spread CDFs. Each takes ``ax=None``,
returns the Figure, saves only when given a path, and never sets matplotlib's backend."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["plot_nmse_vs_snr", "plot_power_angle_profile"]


def _axes(ax):
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(5, 4))
        return fig, ax
    return ax.figure, ax


def _save(fig, path):
    if path is not None:
        from scigen.core.plotting import save_figure

        save_figure(fig, path)
    return fig


def plot_nmse_vs_snr(snr_db, curves: dict[str, list[float]], path=None, *, ax=None):
    """One line per estimator: NMSE (dB) against SNR (dB)."""
    fig, ax = _axes(ax)
    for name, v in curves.items():
        ax.plot(snr_db, v, marker="o", lw=2 if name.startswith("SBGM") else 1, label=name)
    ax.set_xlabel("SNR (dB)")
    ax.set_ylabel("NMSE (dB)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("channel estimation")
    return _save(fig, path)


def plot_power_angle_profile(generated, reference, angle_grid, path=None, *, ax=None):
    """Power-angle profiles (degrees) of generated samples and of the reference's planted paths."""
    from scigen.wireless.metrics import power_profile

    fig, ax = _axes(ax)
    deg = np.asarray(angle_grid) * 180 / math.pi
    for ds, label, style in ((reference, "true paths", "-"), (generated, "SBGM samples", "--")):
        prof = power_profile(ds["path_angle"].values, ds["path_power"].values, angle_grid)
        ax.plot(deg, prof, style, label=label)
    if "site_angles" in reference.attrs:
        for a in np.atleast_1d(reference.attrs["site_angles"]):
            ax.axvline(a * 180 / math.pi, color="grey", lw=0.5)
    ax.set_xlabel("angle of arrival (deg)")
    ax.set_ylabel("normalised power")
    ax.set_title("power-angle profile")
    ax.legend(fontsize=8)
    return _save(fig, path)
