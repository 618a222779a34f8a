"""The AGDiff demo: tiny AGDiff on the synthetic anomaly set, ROC against the WL-kernel baseline.

Half of the normal graphs train (normal only, the paper's protocol); the other half plus every
anomaly is the test set. Headline: AUC and F1 (top-k rule, ``metrics``) of AGDiff and, in the same
figure, of a Weisfeiler–Lehman kernel + one-class SVM (``baselines``). Budget: about a minute full,
half a minute quick, on one CPU thread.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scigen.core.system import DemoResult


def split_normal(graphs, *, seed: int = 0, train_share: float = 0.5):
    """(train normal graphs, test graphs = the other normal graphs + all anomalies), seeded."""
    from scigen.graphs.agdiff.graphs import anomaly_labels

    y = anomaly_labels(graphs)
    rng = np.random.default_rng(seed)
    normal = rng.permutation(np.flatnonzero(y == 0))
    k = int(round(train_share * normal.size))
    test = sorted(normal[k:].tolist() + np.flatnonzero(y == 1).tolist())
    return [graphs[i] for i in normal[:k]], [graphs[i] for i in test]


def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
    """The body of ``AGDiff.run_demo`` (``cls`` is the system class); the base ``demo`` adds the rest."""
    import matplotlib.pyplot as plt

    from scigen.graphs.agdiff.baselines import WLOneClass
    from scigen.graphs.agdiff.graphs import anomaly_labels
    from scigen.graphs.agdiff.metrics import detection_scores
    from scigen.graphs.agdiff.plot import plot_roc

    graphs = cls.default_data(quick=quick)
    train, test = split_normal(graphs, seed=0)
    steps = 200 if quick else 400
    model = cls(cls.Config.preset("tiny", train={"progress": False, "logger": None}))
    model.fit(train, max_steps=steps)
    y = anomaly_labels(test)
    scores = {"AGDiff": model.score(test), "WL kernel + OCSVM": WLOneClass().fit(train).score(test)}
    results = {k: detection_scores(y, s) for k, s in scores.items()}
    png = out / "agdiff_roc.png"
    fig = plot_roc(y, scores, png, title=f"AGDiff-tiny ({steps} CPU steps) on the synthetic set: "
                                         f"{len(train)} normal train graphs, {len(test)} test ({int(y.sum())} anomalous)")
    plt.close(fig)
    model.save(out / "model", overwrite=True)
    pseudo = model.sample(test[:4], n_samples=4, seed=0)
    metrics = {"AUC": results["AGDiff"]["auc"], "F1": results["AGDiff"]["f1"],
               "AUC_WL_OCSVM": results["WL kernel + OCSVM"]["auc"], "F1_WL_OCSVM": results["WL kernel + OCSVM"]["f1"]}
    report = {"config": model.config.model_dump(mode="json"), "results": results,
              "pseudo_anomaly_edges": [g.number_of_edges() for g in pseudo],
              "note": "F1 = macro-F1 at the top-k cut (k = number of anomalies in the test set)"}
    return DemoResult(metrics=metrics, files=[png, out / "model"], report=report)
