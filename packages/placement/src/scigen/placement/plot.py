"""Placement plot: canvas, objects (macros, other movable, fixed, ports) and optionally nets, into an Axes
(and a PNG when given a path)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from scigen.core.plotting import save_figure
from scigen.placement.netlist import Netlist

__all__ = ["plot_placement", "plot_placements"]


def _draw(ax, nl: Netlist, p: np.ndarray, title: str, show_nets: bool, max_nets: int) -> None:
    from matplotlib.collections import LineCollection, PatchCollection
    from matplotlib.patches import Rectangle

    x0, y0, x1, y1 = nl.canvas
    ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, lw=1.5, ec="black"))
    kinds = [(nl.is_port, "tab:red", "port"), (nl.fixed & ~nl.is_port, "tab:gray", "fixed"),
             (~nl.fixed & nl.is_macro, "tab:blue", "macro"), (~nl.fixed & ~nl.is_macro & ~nl.is_port, "tab:green", "cell")]
    for mask, color, label in kinds:
        idx = np.nonzero(mask)[0]
        if not len(idx):
            continue
        rects = [Rectangle(tuple(p[i] - nl.size[i] / 2), nl.size[i, 0], nl.size[i, 1]) for i in idx]
        ax.add_collection(PatchCollection(rects, fc=color, ec="black", lw=0.4, alpha=0.45, label=label))
        if label == "port":
            ax.scatter(p[idx, 0], p[idx, 1], s=8, c=color, marker="s")
    if show_nets and nl.num_pins:
        pins = p[nl.pin_obj] + nl.pin_offset
        segs = []
        for n in range(min(nl.num_nets, max_nets)):
            s, e = int(nl.net_ptr[n]), int(nl.net_ptr[n + 1])
            segs += [(pins[s], pins[q]) for q in range(s + 1, e)]
        ax.add_collection(LineCollection(segs, colors="tab:orange", linewidths=0.4, alpha=0.5))
    pad = 0.02 * max(x1 - x0, y1 - y0)
    ax.set_xlim(min(x0, (p - nl.size / 2)[:, 0].min()) - pad, max(x1, (p + nl.size / 2)[:, 0].max()) + pad)
    ax.set_ylim(min(y0, (p - nl.size / 2)[:, 1].min()) - pad, max(y1, (p + nl.size / 2)[:, 1].max()) + pad)
    ax.set_aspect("equal")
    ax.set_title(title or nl.name, fontsize=10)


def plot_placement(nl: Netlist, path: str | os.PathLike | None = None, pos=None, *, ax=None, title: str = "",
                   show_nets: bool = True, max_nets: int = 2000):
    """Draw the placement (centres ``pos`` in chip units, default the netlist's) into ``ax`` (a new figure
    when None); return the Figure, and write a PNG atomically only when ``path`` is given.

    Nets are drawn as a star from the driver pin to every sink pin (at most ``max_nets`` nets). Never sets
    matplotlib's backend.
    """
    return plot_placements([(nl, title)], path, [pos], ax=ax, show_nets=show_nets, max_nets=max_nets)


def plot_placements(panels: list[tuple[Netlist, str]], path: str | os.PathLike | None = None,
                    positions: list | None = None, *, ax=None, show_nets: bool = True, max_nets: int = 2000):
    """Side-by-side placements: one panel per ``(netlist, title)`` (e.g. several placers on one circuit), into
    ``ax`` (an Axes, or one per panel; a new figure when None). Returns the Figure; saves a PNG only when
    ``path`` is given (the figure stays open)."""
    import matplotlib.pyplot as plt

    if not panels:
        raise ValueError("panels must hold at least one (netlist, title) pair")
    positions = positions or [None] * len(panels)
    axes = None if ax is None else (list(np.ravel(ax)) if isinstance(ax, (list, tuple, np.ndarray)) else [ax])
    if axes is None:
        x0, y0, x1, y1 = panels[0][0].canvas
        fig, grid = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 5.2 * (y1 - y0) / (x1 - x0)),
                                 squeeze=False)
        axes = list(grid[0])
    elif len(axes) != len(panels):
        raise ValueError(f"ax must hold one Axes per panel ({len(panels)}), got {len(axes)}")
    fig = axes[0].figure
    for a, (nl, title), pos in zip(axes, panels, positions, strict=True):
        p = nl.pos if pos is None else np.asarray(pos, np.float64)
        _draw(a, nl, p, title, show_nets, max_nets)
    if path is not None:
        fig.tight_layout()
        save_figure(fig, Path(path), dpi=100, close=False)
    return fig
