"""The G2PT demo: tiny G2PT on random trees, tree validity against baselines, one fine-tuning round.

Tiny G2PT (``Config.preset("tiny")``) on random 10-node trees (quick: 8 nodes): tree validity /
V.U.N. / MMDs against the untrained model (same node count) and an Erdős–Rényi baseline, then one
rejection-sampling fine-tuning round toward more leaves among valid trees (reward histogram
before / after). Small trees keep the sequences short (``7n − 2`` tokens); V.U.N. is capped by
novelty there (only 106 unlabelled trees have 10 nodes, and 23 have 8), so tree validity is the
headline number. Budget: about a minute full, half a minute quick, on one CPU thread.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx

from scigen.core.system import DemoResult


def untrained_samples(model, n_samples: int, *, seed: int, **kwargs) -> list[nx.Graph | None]:
    """Samples of a model whose vocabulary is fixed (``model._setup(graphs)``) but which is untrained:
    the baseline of the demo and the benchmark (``sample`` refuses an untrained model on purpose)."""
    from scigen.graphs.g2pt.tokenizer import decode

    return [decode(s, model.vocab) for s in model._sequences(n_samples, seed=seed, **kwargs)]


def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
    """The body of ``G2PT.run_demo`` (``cls`` is the system class); the base ``demo`` adds the rest."""
    import matplotlib.pyplot as plt

    from scigen.graphs.data import erdos_renyi_like, spectre_split, tree_graphs
    from scigen.graphs.g2pt.plot import plot_demo
    from scigen.graphs.g2pt.rewards import leaf_fraction
    from scigen.graphs.metrics import graph_mmds, is_tree_graph, vun

    n_nodes, steps = (8, 300) if quick else (10, 600)
    train, _, test = spectre_split(tree_graphs(200, n_nodes, seed=0))
    model = cls(cls.Config.preset("tiny", family="tree", train={"progress": False}))
    model._setup(train)
    n = 100
    # untrained samples stop early (tiny graphs are trivially trees): fix the node count instead
    untrained = [g for g in untrained_samples(model, n, seed=1, prompt_nodes=n_nodes) if g is not None]
    before = vun(untrained, train, "tree") | graph_mmds(test, untrained)
    model.fit(train, max_steps=steps)
    after = model.evaluate(test, n_samples=n, train=train, seed=2)
    er = erdos_renyi_like(train, n, seed=3)
    er_scores = vun(er, train, "tree") | graph_mmds(test, er)

    def reward(g: nx.Graph) -> float | None:  # leaves among valid trees; invalid samples are rejected
        return leaf_fraction(g) if is_tree_graph(g) else None

    ft = model.finetune(reward, n_samples=64 if quick else 128, steps=40 if quick else 80, lr=3e-3, seed=10,
                        keep_fraction=0.2)
    tuned = model.evaluate(test, n_samples=n, train=train, seed=4, orbit=False)
    samples = [g for g in model.sample(12, seed=5) if g is not None]
    scores = {"untrained\n(n fixed)": before["validity"], "Erdős–Rényi": er_scores["validity"],
              "G2PT": after["validity"], "G2PT+RFT": tuned["validity"]}
    png = out / "g2pt_demo.png"
    fig = plot_demo(samples, ft, png, scores=scores, valid=is_tree_graph,
                    title=f"G2PT-tiny, {steps} CPU steps on {n_nodes}-node trees "
                          "(samples after fine-tuning toward more leaves)")
    plt.close(fig)
    model.save(out / "model", overwrite=True)
    metrics = {"tree_validity": after["validity"], "VUN": after["VUN"], "tree_validity_untrained": before["validity"],
               "tree_validity_ER": er_scores["validity"], "tree_validity_after_RFT": tuned["validity"],
               "MMD_degree": after["degree"], "MMD_degree_untrained": before["degree"],
               "MMD_degree_ER": er_scores["degree"], "reward_mean_before": ft["mean_before"],
               "reward_mean_after": ft["mean_after"]}
    report = {"config": model.config.model_dump(mode="json"), "after": after, "untrained": before,
              "erdos_renyi": er_scores, "after_finetune": tuned,
              "finetune": {k: v for k, v in ft.items() if k != "rounds"} | {"rounds": ft["rounds"]},
              "note": "MMD values are biased MMD² with the Gaussian-TV kernel; reward = fraction of leaves of "
                      "valid trees (invalid samples rejected)"}
    return DemoResult(metrics=metrics, files=[png, out / "model"], report=report)
