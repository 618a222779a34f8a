"""SBGD figures: real vs generated graphs coloured by block, and an MMD bar chart (model vs baselines).

Every function draws into ``ax`` (or a given ``fig``) and returns the Figure; only :func:`plot_demo`
writes a file, and only when given a path. None sets the matplotlib backend.
"""

from __future__ import annotations

import os

import networkx as nx
import numpy as np

from scigen.core.plotting import save_figure


def plot_blocks(graph: nx.Graph, blocks: list[list] | None = None, *, ax=None, title: str = ""):
    """One graph (spring layout, fixed seed), nodes coloured by block (``blocks``) when given."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(3, 3))
    colour = {v: i for i, blk in enumerate(blocks or [list(graph.nodes)]) for v in blk}
    nx.draw(graph, nx.spring_layout(graph, seed=0), ax=ax, node_size=12, width=0.4, edge_color="gray",
            node_color=[colour.get(v, 0) for v in graph.nodes], cmap="tab10", vmin=0, vmax=9)
    ax.set_title(title or f"n={graph.number_of_nodes()} m={graph.number_of_edges()}", fontsize=8)
    return ax.figure


def plot_mmds(scores: dict[str, dict[str, float]], *, ax=None):
    """Grouped bars: MMD² per statistic (x) for each model (``scores[model][stat]``); lower is better."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3))
    models = list(scores)
    stats = list(next(iter(scores.values())))
    w = 0.8 / max(len(models), 1)
    for i, m in enumerate(models):
        ax.bar(np.arange(len(stats)) + i * w, [scores[m][s] for s in stats], width=w, label=m)
    ax.set_xticks(np.arange(len(stats)) + 0.4 - w / 2, stats)
    ax.set_ylabel("MMD² (lower is better)")
    ax.legend(fontsize=7)
    return ax.figure


def plot_demo(real: list[nx.Graph], generated: list[nx.Graph], scores: dict[str, dict[str, float]],
              path: str | os.PathLike[str] | None = None, *, real_blocks=None, gen_blocks=None, fig=None,
              title: str = ""):
    """Top row real graphs, middle row generated graphs, bottom the MMD bars; saved atomically to ``path``."""
    import matplotlib.pyplot as plt

    k = max(min(4, len(real), len(generated)), 1)
    fig = fig or plt.figure(figsize=(2.6 * k, 8))
    grid = fig.add_gridspec(3, k)
    for i in range(k):
        if i < len(real):
            plot_blocks(real[i], real_blocks[i] if real_blocks else None, ax=fig.add_subplot(grid[0, i]),
                        title=f"real n={real[i].number_of_nodes()}")
        if i < len(generated):
            plot_blocks(generated[i], gen_blocks[i] if gen_blocks else None, ax=fig.add_subplot(grid[1, i]),
                        title=f"SBGD n={generated[i].number_of_nodes()}")
    plot_mmds(scores, ax=fig.add_subplot(grid[2, :]))
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path)
    return fig
