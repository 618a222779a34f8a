"""NsDiff forecasts keyed by sample index (issue 33.3): forecast ``i`` of ``sample(context, n, seed=s)`` depends
only on ``(s, i)``: the same drawn alone, among ``n``, or on either of two processes (``devices=2``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scigen.timeseries import NsDiff
from scigen.timeseries.data import synthetic_nonstationary

from ._sharded import assert_two_processes_draw_the_forecasts_of_one

TINY = dict(context_length=16, horizon=4, rolling_length=4, diffusion_steps=10, beta_end=0.4, d_model=8,
            n_heads=2, e_layers=1, d_layers=1, d_ff=16, g_hidden=16, denoiser_hidden=16, n_samples=8, dropout=0.0,
            train={"batch_size": 16, "lr": 3e-3})


@pytest.fixture(scope="module", params=["denoiser", "g"])
def trained(request, tmp_path_factory):
    """Both sampling routes: the paper's ancestral chain (``sigma_source='denoiser'``) and the engine's sampler."""
    df = synthetic_nonstationary(200, 2, seed=3)
    model = NsDiff(**TINY, sigma_source=request.param)
    model.fit(df, max_steps=2, progress=False)
    path = tmp_path_factory.mktemp("nsdiff") / "model"
    model.save(path)
    return model, path, df


def test_the_first_k_of_n_forecasts_are_the_k_forecasts(trained):
    model, _, df = trained
    nine, three = model.sample(df, 9, seed=2).values, model.sample(df, 3, seed=2).values
    np.testing.assert_allclose(three, nine[:3], rtol=0, atol=1e-5)
    assert not np.allclose(model.sample(df, 3, seed=3).values, three)
    assert np.isfinite(nine).all() and nine.shape == (9, 4, 2)



def test_sample_to_writes_the_forecasts_of_sample(trained, tmp_path):
    """``sample_to`` (chunks of 3, one ``.npy``): forecast ``i`` of ``sample(context, n)`` in the data's units;
    without a context, the last training window's (what the CLI samples)."""
    model, _, df = trained
    got = np.load(model.sample_to(tmp_path / "f.npy", 7, seed=2, chunk_size=3, context=df))
    np.testing.assert_allclose(got, model.sample(df, 7, seed=2).values, rtol=0, atol=1e-5)
    cli = np.load(model.sample_to(tmp_path / "cli.npy", 4, seed=2))
    np.testing.assert_allclose(cli, model.sample_for_cli(4, 2).values, rtol=0, atol=1e-5)

@pytest.mark.slow  # 2-process runs in the default suite: the engine's and SBGM's
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_two_processes_draw_the_forecasts_of_one(trained, tmp_path, run_script):
    model, path, df = trained
    assert_two_processes_draw_the_forecasts_of_one(model, path, df, tmp_path, run_script)
