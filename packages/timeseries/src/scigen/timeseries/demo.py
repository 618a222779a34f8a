"""The steps every forecasting demo shares (NsDiff, D3U): train the ``small`` preset on the default data, and
write the forecast plot of the first test window and the saved model."""

from __future__ import annotations

from pathlib import Path

__all__ = ["plot_and_save", "train_small"]


def train_small(cls, steps: int, *, quick: bool):
    """``(model, splits)``: ``cls``'s ``small`` preset trained ``steps`` steps on ``cls.default_data(quick)``,
    split by ratio, with early stopping on the validation split."""
    from scigen.timeseries.data import split_ratio

    model = cls(cls.Config.preset("small", train={"max_steps": steps, "progress": False}))
    sp = split_ratio(cls.default_data(quick=quick), model.config.context_length)
    model.fit(sp.train, val_data=sp.val)
    return model, sp


def plot_and_save(model, sp, out: Path, **plot_kw) -> list[Path]:
    """``[forecast.png, model/]`` under ``out``: the forecast of the first test context against its truth, and
    the saved model. ``plot_kw`` go to :func:`scigen.timeseries.plot.plot_forecast`."""
    from scigen.core.plotting import save_figure
    from scigen.timeseries.plot import plot_forecast

    c = model.config
    context = sp.test.iloc[: c.context_length]
    fc = model.sample(context, n_samples=c.n_samples)
    fig = plot_forecast(context, fc, truth=sp.test.iloc[c.context_length : c.context_length + c.horizon], **plot_kw)
    png = save_figure(fig, out / "forecast.png", dpi=110)
    model.save(out / "model", overwrite=True)
    return [png, out / "model"]
