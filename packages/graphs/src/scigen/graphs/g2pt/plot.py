"""G2PT figures: generated graphs, a validity bar chart (model vs baselines), the fine-tuning reward
histograms, and the demo figure composed of them.

Every function draws into ``ax`` (a new figure when ``None``) and returns the Figure; only
:func:`plot_demo` writes a file, and only when given a path. None sets the matplotlib backend.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import networkx as nx
import numpy as np

from scigen.core.plotting import save_figure


def _axes(ax, figsize):
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
        return fig, ax
    return ax.figure, ax


def plot_graph(graph: nx.Graph, *, ax=None, valid: Callable[[nx.Graph], bool] | None = None):
    """One graph (Kamada–Kawai layout), red when it fails ``valid``; title ``n=<nodes> m=<edges>``."""
    fig, ax = _axes(ax, (3, 3))
    ok = valid(graph) if valid is not None else True
    nx.draw(graph, nx.kamada_kawai_layout(graph) if graph.number_of_nodes() > 1 else None, ax=ax, node_size=25,
            node_color="tab:blue" if ok else "tab:red", edge_color="gray")
    ax.set_title(f"n={graph.number_of_nodes()} m={graph.number_of_edges()}" + ("" if ok else " (invalid)"), fontsize=8)
    return fig


def plot_scores(scores: dict[str, float], *, ax=None, ylabel: str = "tree validity"):
    """``scores`` (e.g. the validity of each model) as labelled bars on ``[0, 1.1]``."""
    fig, ax = _axes(ax, (4, 3))
    bars = ax.bar(range(len(scores)), list(scores.values()), color=[f"C{i}" for i in range(len(scores))])
    ax.bar_label(bars, fmt="%.2f", fontsize=8)
    ax.set_xticks(range(len(scores)), list(scores), fontsize=8)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel(ylabel)
    ax.set_title("valid samples (fraction)")
    return fig


def plot_rewards(finetune: dict, *, ax=None, xlabel: str = "reward (leaf fraction of valid trees)"):
    """Histograms of the rewards before / after fine-tuning (``G2PT.finetune``'s summary)."""
    fig, ax = _axes(ax, (4, 3))
    vals = list(finetune["rewards_before"]) + list(finetune["rewards_after"])
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    ax.hist([finetune["rewards_before"], finetune["rewards_after"]], bins=np.linspace(lo, hi + 1e-9, 13),
            label=[f"before (mean {finetune['mean_before']:.3f})", f"after RFT (mean {finetune['mean_after']:.3f})"])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("samples")
    ax.legend(fontsize=8)
    ax.set_title("rejection-sampling fine-tuning")
    return fig


def plot_demo(graphs: list[nx.Graph], finetune: dict, path: str | os.PathLike[str] | None = None, *,
              scores: dict[str, float] | None = None, valid: Callable[[nx.Graph], bool] | None = None,
              title: str = "", fig=None):
    """Samples in a grid (red = fails ``valid``), ``scores`` as bars and the reward histograms in one
    figure (``fig``, or a new one: a multi-panel layout takes a figure, not one ``ax``); returns it, and
    writes a PNG atomically when ``path`` is given."""
    import matplotlib.pyplot as plt

    cols = 4
    rows = max(2, (len(graphs) + cols - 1) // cols)
    if fig is None:
        fig = plt.figure(figsize=(3 * cols + 4, 3 * rows))
    else:
        fig.clear()
    gs = fig.add_gridspec(rows, cols + 2)
    for i, g in enumerate(graphs):
        plot_graph(g, ax=fig.add_subplot(gs[i // cols, i % cols]), valid=valid)
    if scores:
        plot_scores(scores, ax=fig.add_subplot(gs[: rows // 2, cols:]))
    plot_rewards(finetune, ax=fig.add_subplot(gs[rows // 2 if scores else 0:, cols:]))
    fig.suptitle(title)
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path, dpi=100, close=False)
    return fig
