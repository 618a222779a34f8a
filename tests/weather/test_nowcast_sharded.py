"""Nowcast ensembles keyed by member index (issue 33.3): member ``i`` of ``sample(context, n_samples=n,
seed=s)`` depends only on ``(s, i)``: the same among ``k < n`` members, or on either of two processes
(``devices=2``)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import torch

from scigen.weather import Nowcast, NowcastConfig


def test_the_first_k_of_n_members_are_the_k_members(trained2):
    model, data = trained2
    ctx = data.isel(time=slice(3, 9))
    big = model.sample(ctx, n_samples=5, seed=3, method="heun", steps=2)
    small = model.sample(ctx, n_samples=2, seed=3, method="heun", steps=2)
    np.testing.assert_allclose(small.values, big.values[:2], rtol=0, atol=1e-6)
    assert small.dims == big.dims and np.array_equal(small["valid_time"].values, big["valid_time"].values)
    assert not np.allclose(model.sample(ctx, n_samples=2, seed=4, method="heun", steps=2).values, small.values)


def test_sample_to_writes_the_members_of_sample_and_refuses_coupled_ones(trained2, tmp_path):
    """``sample_to`` (chunks of 2): member ``i``'s fields equal ``sample``'s member ``i``; with spread inflation (which
    uses the whole ensemble) it refuses by name and writes nothing."""
    from scigen.core.errors import InvalidInputError
    from scigen.core.system.shard_writer import load_sharded_samples

    model, data = trained2
    ctx = data.isel(time=slice(3, 9))
    got = load_sharded_samples(model.sample_to(tmp_path / "m", 5, context=ctx, seed=3, method="heun", steps=2,
                                               chunk_size=2))
    want = model.sample(ctx, n_samples=5, seed=3, method="heun", steps=2)
    # chunks batch the members differently: float32 rounding of batched convolutions (measured 8e-7 relative)
    np.testing.assert_allclose(got["forecast"], want.values, rtol=1e-5, atol=1e-6)
    model.config.spread_inflation = 1.5
    try:
        with pytest.raises(InvalidInputError, match="spread_inflation"):
            model.sample_to(tmp_path / "x", 3, context=ctx)
    finally:
        model.config.spread_inflation = 1.0
    assert not (tmp_path / "x").exists()

def test_keyed_members_start_from_mean_plus_independent_per_lead_noise(trained2):
    """A zero velocity (an untrained flow) leaves ``x1 = mean + sigma_l·eps``: with keyed streams the
    deviation has standard deviation ``sigma_l`` at every lead (within 2 %, 64 x 4 x 16 x 16 values), and the
    ``B`` contexts of one member draw different noise (correlation ~ 0: |r| < 0.05 over 16 384 pairs)."""
    from scigen.weather.nowcast.forecast import draw_members

    _, data = trained2
    m = Nowcast(NowcastConfig.preset("tiny", sigma_s=0.3))
    m.prepare_data(data, role="data")
    m.metadata["trained_steps"] = 1
    ctx = m.windows(data)[:4, :5]
    d = (draw_members(m, ctx, 64, 0, None, None, keyed=True) - draw_members(m, ctx, 1, 0, None, None, "mean")).double()
    np.testing.assert_allclose(d.std(dim=(0, 1, 3, 4)).numpy(), m.config.source_noise(), rtol=0.02)
    a, b = d[:, 0].flatten(), d[:, 1].flatten()
    assert abs(float(torch.corrcoef(torch.stack([a, b]))[0, 1])) < 0.05


SCRIPT = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    from scigen.weather import Nowcast
    from scigen.weather.data import synthetic_storms

    if __name__ == "__main__":
        model = Nowcast.load(sys.argv[1])
        model.config.spread_inflation, model.config.probability_matching = 1.5, True
        ctx = synthetic_storms(4, 26, 16, seed=0).isel(time=slice(3, 9))
        fc = model.sample(ctx, n_samples=3, seed=5, method="heun", steps=2, devices=2)
        rank = int(os.environ.get("LOCAL_RANK", 0))
        np.save(os.path.join(sys.argv[2], f"rank{rank}.npy"), fc.values)
    """
)


# the weather domain's one 2-process sampling test in the default suite
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_two_processes_draw_the_ensemble_of_one(trained2, tmp_path, run_script):
    """3 members on 2 processes (2 + 1, the last rank's extra key drawn and dropped), with spread inflation and
    probability matching (both applied to the gathered ensemble), equal one process's: each rank integrates its
    members from the same keyed noise with the same float32 network; only float32 reduction order over a
    different number of rows may differ (atol 1e-5 in mm/h, fields of order 1-10)."""
    model, data = trained2
    model.save(tmp_path / "model")
    run_script(tmp_path / "run.py", tmp_path / "model", tmp_path, cwd=tmp_path, text=SCRIPT)
    one = Nowcast.load(tmp_path / "model")
    one.config.spread_inflation, one.config.probability_matching = 1.5, True
    fc = one.sample(data.isel(time=slice(3, 9)), n_samples=3, seed=5, method="heun", steps=2)
    for r in (0, 1):
        np.testing.assert_allclose(np.load(tmp_path / f"rank{r}.npy"), fc.values, rtol=0, atol=1e-5)
