"""The SBGD demo: tiny SBGD on small SBM graphs against an Erdős–Rényi baseline.

Tiny SBGD (``Config.preset("tiny")``: Louvain blocks of <= 16 nodes) on the default data (2–3
communities of 8–16 nodes, ``p_in`` 0.5, ``p_out`` 0.02; SPECTRE split), then MMD² (degree,
clustering, orbit, spectre) of its samples and of a size/density-matched Erdős–Rényi baseline
against the test graphs, and samples at twice the largest training size. Figure: real vs generated
graphs coloured by block, and the MMD bars. Budget: about a minute on one CPU thread (quick: half).
"""

from __future__ import annotations

from pathlib import Path

from scigen.core.system import DemoResult


def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
    """The body of ``SBGD.run_demo`` (``cls`` is the system class); the base ``demo`` adds the rest."""
    import matplotlib.pyplot as plt

    from scigen.graphs.data import erdos_renyi_like, spectre_split
    from scigen.graphs.metrics import graph_mmds
    from scigen.graphs.sbgd.plot import plot_demo

    steps = 150 if quick else 400
    train, _, test = spectre_split(cls.default_data(quick=quick))
    model = cls(cls.Config.preset("tiny", train={"progress": False}))
    model.fit(train, max_steps=steps, logger=None)
    sbgd = model.evaluate(test, seed=1, orbit=not quick)
    er = graph_mmds(test, erdos_renyi_like(train, len(test), seed=2), orbit=not quick)
    stats = [k for k in ("degree", "clustering", "orbit", "spectre") if k in er]
    scores = {"SBGD": {k: sbgd[k] for k in stats}, "Erdős–Rényi": {k: er[k] for k in stats}}
    big = 2 * max(g.number_of_nodes() for g in train)
    large = model.sample(2, seed=3, n_nodes=big)
    png = out / "sbgd_demo.png"
    gen = model.sample(2, seed=4) + large
    fig = plot_demo(test[:4], gen, scores, png,
                    title=f"SBGD-tiny, {steps} CPU steps on small SBM graphs (last two generated at n={big})")
    plt.close(fig)
    model.save(out / "model", overwrite=True)
    metrics = {f"MMD_{k}": sbgd[k] for k in stats} | {f"MMD_{k}_ER": er[k] for k in stats} | {
        "VUN": sbgd["VUN"], "n_nodes_2x": float(big), "edges_2x_mean": sum(g.number_of_edges() for g in large) / 2}
    report = {"config": model.config.model_dump(mode="json"), "sbgd": sbgd, "erdos_renyi": er,
              "note": "MMD values are biased MMD² with the Gaussian-TV kernel, against the test split"}
    return DemoResult(metrics=metrics, files=[png, out / "model"], report=report)
