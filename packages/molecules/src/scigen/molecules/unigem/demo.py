"""The UniGEM / EDM demo: a small model trained for about a minute (quick: ~15 s of CPU) on a QM9 subset.

Reports stability / validity of its samples against the untrained model, UniGEM's property MAE on
held-out molecules against the predict-the-mean baseline, and writes the samples as SDF, a plot
(``metrics.png``) and the model. To fit the time budget the samples use 50 ancestral (``ddpm``) steps
(quick) or the engine's DPM-Solver++(2M) with 30 steps on the zero-CoM subspace, not EDM's 1000
ancestral steps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scigen.core.plotting import save_figure
from scigen.core.system import DemoResult

__all__ = ["run_demo", "plot_metrics"]


def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
    from scigen.molecules.data.qm9 import load_qm9
    from scigen.molecules.io import write_sdf
    from scigen.molecules.metrics import element_fractions, molecule_metrics

    # quick: a 120-step model is too rough for a 20-step solver (its x0 estimates at high noise fling atoms
    # tens of Å away), so it samples with EDM's ancestral steps on a 50-step grid
    n_train, steps, n_samples, n_test = (1000, 120, 60, 100) if quick else (2000, 300, 150, 300)
    method, sample_steps = ("ddpm", 50) if quick else ("dpmpp_2m", 30)
    data = load_qm9("all", limit=n_train + n_test)
    train, test = data.subset(range(n_train)), data.subset(range(n_train, n_train + n_test))
    model = cls(cls.Config.preset("tiny", method=method, steps=sample_steps, train={"progress": False}))
    model.metadata["size_histogram"] = {str(k): v for k, v in train.size_histogram().items()}
    before = molecule_metrics(model._generate(n_samples // 2, seed=1))  # the untrained network
    model.fit(train, max_steps=steps)
    samples = model.sample(n_samples, seed=2, progress=False)
    after = model.evaluate(test, samples=samples)
    sdf = write_sdf(samples, out / "samples.sdf")
    pred = model.predict(test) if model.config.properties else None
    fig = plot_metrics(before, after, losses=model.history.losses, test=test, pred=pred,
                       title=f"{cls.key()}: {model.history.steps} steps on {n_train} QM9 molecules")
    png = save_figure(fig, out / "metrics.png", dpi=110)
    model.save(out / "model", overwrite=True)
    metrics = dict(after)
    metrics["atom_stability_untrained"] = before["atom_stability"]
    metrics["validity_untrained"] = before["validity"]
    metrics["hydrogen_fraction"] = element_fractions(samples).get("H", 0.0)  # QM9: 0.51
    return DemoResult(metrics=metrics, files=[sdf, png, out / "model"],
                      report={"config": model.config.model_dump(mode="json"),
                              "note": "fractions in [0,1]; MAE of gap/homo/lumo in meV; samples with "
                                      f"{method}, {sample_steps} steps"})


def plot_metrics(before: dict, after: dict, path=None, *, title: str = "", losses=(), test=None, pred=None, ax=None):
    """EDM metrics of untrained vs trained samples, and the held-out gap parity plot (UniGEM) or the
    training loss (EDM). ``ax``: two Axes to draw into (a new figure when None). Returns the Figure;
    saves only when ``path`` is given; never sets the backend."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    else:
        axes = list(ax)
        fig = axes[0].figure
    keys = ["atom_stability", "molecule_stability", "validity", "valid_x_unique"]
    a = axes[0]
    xs = np.arange(len(keys))
    a.bar(xs - 0.2, [before[k] for k in keys], 0.4, label="untrained", color="tab:gray")
    a.bar(xs + 0.2, [after[k] for k in keys], 0.4, label="trained", color="tab:blue")
    a.set_xticks(xs, [k.replace("_", "\n").replace("\nx\n", "×") for k in keys], fontsize=8)
    a.set_ylim(0, 1)
    a.legend(fontsize=8)
    a.set_title("samples (EDM metrics)", fontsize=9)
    a.text(0.01, -0.2, "EDM's validity scores the largest fragment: scattered atoms (untrained) count as valid",
           transform=a.transAxes, fontsize=6.5, color="0.35")
    a = axes[1]
    if pred is not None and "gap" in pred:
        y, p = test.properties["gap"], pred["gap"].to_numpy()
        base, mae = after["mae_mean_baseline_gap"], after["mae_gap"]  # meV; baseline: the training mean
        a.scatter(y, p, s=6, alpha=0.6)
        lo, hi = float(min(y.min(), p.min())), float(max(y.max(), p.max()))
        a.plot([lo, hi], [lo, hi], "k--", lw=0.8)
        a.set_xlabel("DFT gap (eV)")
        a.set_ylabel("predicted gap (eV)")
        a.set_title(f"held-out gap: MAE {mae:.0f} meV (predict-the-mean {base:.0f} meV)", fontsize=9)
    else:
        a.plot(list(losses), lw=0.6, color="tab:blue")
        a.set_xlabel("step")
        a.set_ylabel("training loss")
        a.set_yscale("log")
        a.set_title("training loss", fontsize=9)
    fig.suptitle(title, fontsize=10)
    if path is not None:
        save_figure(fig, path, dpi=110, close=False)
    return fig
