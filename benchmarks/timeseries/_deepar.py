"""DeepAR (Salinas et al. 2020) from GluonTS (``gluonts.torch.DeepAREstimator``) on the benchmark's windows.

A global univariate model over the variables of the standardised training frame (each variable one
series, as GluonTS trains DeepAR), Student-t output, trained for a fixed number of Lightning steps;
each test window's context is one item to forecast, 100 sample paths. Optional: ``pip install
gluonts==0.17.0`` (installs with the torch pin); the benchmark skips it when GluonTS is missing.
"""

from __future__ import annotations

import shutil
import tempfile
import time

import numpy as np
import pandas as pd
import torch


def deepar_rows(name: str, model, sp, steps: int, max_windows: int, n_samples: int = 100) -> list[dict]:
    """Train DeepAR on ``sp.train`` (standardised with ``model``'s scaler) and score the test windows of ``model``."""
    try:
        from gluonts.dataset.common import ListDataset
        from gluonts.torch import DeepAREstimator
    except ImportError:
        print("DeepAR skipped: gluonts is not installed")
        return []
    from scigen.timeseries.metrics import forecast_metrics

    c = model.config
    tmp = tempfile.mkdtemp(prefix="deepar-")
    freq = _period_freq(pd.infer_freq(sp.train.index)
                        or pd.tseries.frequencies.to_offset(pd.Timedelta(model.metadata["step"])).freqstr)
    z = model.scaler.transform(sp.train.to_numpy())
    train = ListDataset([{"start": sp.train.index[0], "target": z[:, i]} for i in range(z.shape[1])], freq=freq)
    est = DeepAREstimator(freq=freq, prediction_length=c.horizon, context_length=c.context_length,
                          num_layers=2, hidden_size=32, batch_size=64, num_batches_per_epoch=50,
                          trainer_kwargs={"max_steps": steps, "enable_progress_bar": False, "logger": False,
                                          "accelerator": "cpu", "default_root_dir": tmp})
    torch.manual_seed(0)
    t0 = time.perf_counter()
    predictor = est.train(train)
    secs = time.perf_counter() - t0
    shutil.rmtree(tmp, ignore_errors=True)
    X, Y = model.evaluation_windows(sp.test, stride=c.horizon, max_windows=max_windows)
    Xn = X.cpu().numpy()
    starts = [sp.test.index[i * c.horizon] for i in range(Xn.shape[0])]
    items = [{"start": starts[w], "target": Xn[w, :, v]} for w in range(Xn.shape[0]) for v in range(Xn.shape[2])]
    t0 = time.perf_counter()
    fcs = list(predictor.predict(ListDataset(items, freq=freq), num_samples=n_samples))
    samples = np.stack([f.samples for f in fcs]).reshape(Xn.shape[0], Xn.shape[2], n_samples, c.horizon)
    samples = torch.as_tensor(samples.transpose(2, 0, 3, 1), dtype=torch.float64)  # [S, W, H, N]
    s = forecast_metrics(samples, Y.cpu().double())
    return [{"dataset": name, "model": "DeepAR (GluonTS)", **s, "QICE_x100": 100 * s["QICE"],
             "windows": float(Xn.shape[0]), "train_s": secs, "sample_s": time.perf_counter() - t0, "steps": steps,
             "best_step": "fixed"}]


def _period_freq(freq: str) -> str:
    """A frequency GluonTS can turn into ``pd.Period`` starts: the begin-anchored ``QS-OCT`` / ``MS`` / ``YS``
    that pandas infers for macrodata-like indices become their period aliases (``Q`` / ``M`` / ``Y``)."""
    try:
        pd.Period("2000-01-01", freq=freq)
        return freq
    except ValueError:
        base = freq.split("-")[0]
        return {"QS": "Q", "MS": "M", "YS": "Y", "AS": "Y", "BQS": "Q", "BMS": "M"}.get(base, base.rstrip("S"))
