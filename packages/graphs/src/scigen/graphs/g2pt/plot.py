"""Demo figure: a grid of generated graphs and the reward histogram before / after fine-tuning."""

from __future__ import annotations

from pathlib import Path

import networkx as nx

from scigen.core.plotting import save_figure


def plot_demo(graphs: list[nx.Graph], finetune: dict, path: Path, *, title: str = "") -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = 4
    rows = max(1, (len(graphs) + cols - 1) // cols)
    fig = plt.figure(figsize=(3 * cols + 4, 3 * rows))
    gs = fig.add_gridspec(rows, cols + 2)
    for i, g in enumerate(graphs):
        ax = fig.add_subplot(gs[i // cols, i % cols])
        nx.draw(g, nx.kamada_kawai_layout(g) if g.number_of_nodes() > 1 else None, ax=ax, node_size=25,
                node_color="tab:blue", edge_color="gray")
        ax.set_title(f"n={g.number_of_nodes()} m={g.number_of_edges()}", fontsize=8)
    ax = fig.add_subplot(gs[:, cols:])
    bins = 12
    ax.hist(finetune["rewards_before"], bins=bins, alpha=0.6, label=f"before (mean {finetune['mean_before']:.3f})")
    ax.hist(finetune["rewards_after"], bins=bins, alpha=0.6, label=f"after RFT (mean {finetune['mean_after']:.3f})")
    ax.set_xlabel("reward")
    ax.set_ylabel("samples")
    ax.legend(fontsize=8)
    ax.set_title("rejection-sampling fine-tuning")
    fig.suptitle(title)
    return save_figure(fig, path, dpi=100)
