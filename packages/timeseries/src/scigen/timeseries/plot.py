"""Plot a probabilistic forecast: context, median and 50 % / 90 % central bands (one panel per variable)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from scigen.core.plotting import save_figure

__all__ = ["plot_forecast"]


def plot_forecast(context: pd.DataFrame, forecast, path: str | os.PathLike[str] | None = None, *,
                  truth: pd.DataFrame | None = None, variables: list[str] | None = None, title: str = "", ax=None):
    """Draw ``forecast`` (DataArray ``(sample, time, variable)``) after ``context``, one panel per variable.

    ``ax``: one Axes per variable (a sequence, or one Axes for one variable); ``None`` makes a new figure.
    Returns the Figure; writes a PNG atomically only when ``path`` is given. Never sets the backend."""
    import matplotlib.pyplot as plt

    names = list(variables or [str(v) for v in forecast["variable"].values])
    if ax is None:
        fig, axes = plt.subplots(len(names), 1, figsize=(8, 2.2 * len(names)), squeeze=False, sharex=True)
    else:
        axes = np.atleast_1d(np.asarray(ax, dtype=object)).reshape(-1, 1)
        if axes.shape[0] != len(names):
            from scigen.core.errors import InvalidInputError

            raise InvalidInputError(f"ax must hold one Axes per variable ({len(names)}), got {axes.shape[0]}")
        fig = axes[0, 0].figure
    times = pd.DatetimeIndex(forecast["time"].values)
    for ax, name in zip(axes[:, 0], names, strict=True):
        s = forecast.sel(variable=name).values  # [sample, time]
        q = np.quantile(s, [0.05, 0.25, 0.5, 0.75, 0.95], axis=0)
        ax.plot(context.index, context[name], color="black", lw=1, label="context")
        ax.fill_between(times, q[0], q[4], color="tab:blue", alpha=0.2, label="90%")
        ax.fill_between(times, q[1], q[3], color="tab:blue", alpha=0.4, label="50%")
        ax.plot(times, q[2], color="tab:blue", lw=1.5, label="median")
        if truth is not None:
            ax.plot(truth.index, truth[name], color="tab:red", lw=1, label="truth")
        ax.set_ylabel(name)
    import matplotlib.dates as mdates

    loc = mdates.AutoDateLocator(maxticks=8)
    axes[-1, 0].xaxis.set_major_locator(loc)
    axes[-1, 0].xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc))
    axes[0, 0].legend(loc="upper left", fontsize=7, ncol=5)
    if title:
        axes[0, 0].set_title(title)
    if path is not None:
        save_figure(fig, Path(path), dpi=110, close=False)
    return fig
