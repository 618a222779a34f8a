"""The NsDiff demo: the ``small`` preset on the synthetic non-stationary series, against a Gaussian baseline."""

from __future__ import annotations

from pathlib import Path

import torch

from scigen.core.system import DemoResult
from scigen.timeseries.demo import plot_and_save, train_small
from scigen.timeseries.metrics import forecast_metrics

__all__ = ["DEMO_STEPS", "run_demo"]

#: training steps of the demo (quick, full); the model is the ``small`` preset
DEMO_STEPS = {True: 150, False: 600}


def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
    """Train ``cls`` (NsDiff) on the default data, evaluate on test windows, compare with ``N(0, 1)`` in
    standardised units (the training mean and variance per variable), plot one forecast, save the model."""
    model, sp = train_small(cls, DEMO_STEPS[bool(quick)], quick=quick)
    c = model.config
    windows = 8 if quick else 40
    scores = model.evaluate(sp.test, stride=c.horizon, max_windows=windows)
    _, Y = model._windows(sp.test, c.horizon, "test")
    Y = Y[:windows].cpu()
    base = forecast_metrics(torch.randn((c.n_samples, *Y.shape), generator=torch.Generator().manual_seed(1)), Y)
    files = plot_and_save(model, sp, out)
    metrics = {**scores, "CRPS_gaussian_baseline": base["CRPS"]}
    return DemoResult(metrics=metrics, files=files,
                      report={"config": c.model_dump(mode="json"),
                              "note": "standardised space; QICE is a fraction (QICE_x100 = paper scale); PICP = "
                                      "fraction of targets in the 5-95% interval; baseline = N(train mean, train "
                                      "variance) per variable"})
