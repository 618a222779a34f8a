"""Demo figure: a grid of generated graphs, a validity bar chart (model vs baselines) and the reward
histogram before / after fine-tuning."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import networkx as nx
import numpy as np

from scigen.core.plotting import save_figure


def plot_demo(graphs: list[nx.Graph], finetune: dict, path: Path, *, scores: dict[str, float] | None = None,
              valid: Callable[[nx.Graph], bool] | None = None, title: str = "") -> Path:
    """Samples (red = fails ``valid``), ``scores`` as bars (e.g. validity per model) and the
    fine-tuning reward histograms; returns the PNG path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = 4
    rows = max(2, (len(graphs) + cols - 1) // cols)
    fig = plt.figure(figsize=(3 * cols + 4, 3 * rows))
    gs = fig.add_gridspec(rows, cols + 2)
    for i, g in enumerate(graphs):
        ax = fig.add_subplot(gs[i // cols, i % cols])
        ok = valid(g) if valid is not None else True
        nx.draw(g, nx.kamada_kawai_layout(g) if g.number_of_nodes() > 1 else None, ax=ax, node_size=25,
                node_color="tab:blue" if ok else "tab:red", edge_color="gray")
        ax.set_title(f"n={g.number_of_nodes()} m={g.number_of_edges()}" + ("" if ok else " (invalid)"), fontsize=8)
    if scores:
        ax = fig.add_subplot(gs[: rows // 2, cols:])
        bars = ax.bar(range(len(scores)), list(scores.values()), color=[f"C{i}" for i in range(len(scores))])
        ax.bar_label(bars, fmt="%.2f", fontsize=8)
        ax.set_xticks(range(len(scores)), list(scores), fontsize=8)
        ax.set_ylim(0, 1.1)
        ax.set_ylabel("tree validity")
        ax.set_title("valid samples (fraction)")
    ax = fig.add_subplot(gs[rows // 2 if scores else 0:, cols:])
    vals = list(finetune["rewards_before"]) + list(finetune["rewards_after"])
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    ax.hist([finetune["rewards_before"], finetune["rewards_after"]], bins=np.linspace(lo, hi + 1e-9, 13),
            label=[f"before (mean {finetune['mean_before']:.3f})", f"after RFT (mean {finetune['mean_after']:.3f})"])
    ax.set_xlabel("reward (leaf fraction of valid trees)")
    ax.set_ylabel("samples")
    ax.legend(fontsize=8)
    ax.set_title("rejection-sampling fine-tuning")
    fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, path, dpi=100)
