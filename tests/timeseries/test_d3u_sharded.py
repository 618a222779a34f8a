"""D3U forecasts keyed by sample index (issue 33.3): without centring, forecast ``i`` of
``sample(context, n, seed=s)`` depends only on ``(s, i)``; with ``center_residuals`` (a mean over all ``n``
draws, taken after the gather) ``devices=2`` still gives the one-process forecasts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scigen.timeseries import D3U
from scigen.timeseries.data import synthetic_nonstationary

from ._sharded import assert_two_processes_draw_the_forecasts_of_one

TINY = dict(context_length=16, horizon=5, f_d_model=8, f_n_heads=2, f_e_layers=1, f_d_ff=16, d_model=8, n_heads=2,
            t_embed_dim=16, n_samples=8, steps=5, train={"batch_size": 32, "progress": False})


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    df = synthetic_nonstationary(200, 2, seed=1)
    model = D3U(**TINY).fit(df, max_steps=4)
    path = tmp_path_factory.mktemp("d3u") / "model"
    model.save(path)
    return model, path, df


def test_the_first_k_of_n_uncentred_forecasts_are_the_k_forecasts(trained):
    model, _, df = trained
    model.config.center_residuals = False
    try:
        nine, three = model.sample(df, 9, seed=2).values, model.sample(df, 3, seed=2).values
    finally:
        model.config.center_residuals = True
    np.testing.assert_allclose(three, nine[:3], rtol=0, atol=1e-5)
    assert not np.allclose(model.sample(df, 3, seed=3).values, model.sample(df, 3, seed=2).values)



def test_sample_to_writes_uncentred_forecasts_and_refuses_centred_ones(trained, tmp_path):
    """Centred forecasts depend on all ``n`` drawn together: ``sample_to`` refuses them by name; uncentred ones are
    written a chunk at a time and equal ``sample``'s."""
    from scigen.core.errors import InvalidInputError

    model, _, df = trained
    with pytest.raises(InvalidInputError, match="center_residuals"):
        model.sample_to(tmp_path / "c.npy", 5, seed=2, context=df)
    model.config.center_residuals = False
    try:
        got = np.load(model.sample_to(tmp_path / "f.npy", 5, seed=2, chunk_size=2, context=df))
        want = model.sample(df, 5, seed=2).values
    finally:
        model.config.center_residuals = True
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    assert not (tmp_path / "c.npy").exists()

def test_centring_is_over_all_draws(trained):
    """Centred draws: their mean over the draws is the point forecast ``Ŷ`` (the residuals' mean is zero), and
    they are the uncentred draws shifted by one common offset."""
    model, _, df = trained
    centred = model.sample(df, 6, seed=2).values
    model.config.center_residuals = False
    try:
        raw = model.sample(df, 6, seed=2).values
    finally:
        model.config.center_residuals = True
    np.testing.assert_allclose(centred - raw, np.broadcast_to((centred - raw)[:1], raw.shape), atol=1e-5)
    # the unkeyed path (evaluate's) centres each window's draws on Ŷ too: the same mean over draws
    x = torch.as_tensor(model.scaler.transform(df.to_numpy()[-TINY["context_length"]:]), dtype=torch.float32)[None]
    ref = model.scaler.inverse(model._sample_std(x, 4, 0, None, None)[:, 0].double().numpy())
    np.testing.assert_allclose(centred.mean(0), ref.mean(0), rtol=1e-4, atol=1e-4)


@pytest.mark.slow  # 2-process runs in the default suite: the engine's and SBGM's
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_two_processes_draw_the_centred_forecasts_of_one(trained, tmp_path, run_script):
    model, path, df = trained
    assert_two_processes_draw_the_forecasts_of_one(model, path, df, tmp_path, run_script)
