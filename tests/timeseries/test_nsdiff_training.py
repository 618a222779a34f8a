"""NsDiff training pieces: fit on scigen.core.train.fit, scale-equivariant g."""

from __future__ import annotations

import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.timeseries.nsdiff.model import VarianceNet


def test_variance_net_is_scale_equivariant():
    """g(c·X) = c²·g(X): a volatility level never seen in training is extrapolated proportionally."""
    torch.manual_seed(0)
    net = VarianceNet(context=24, horizon=6, window=6, hidden=16, floor=0.0)
    x = torch.randn(4, 24, 3, dtype=torch.float64) * 2 + 1
    net = net.double()
    for c in (0.1, 7.0):
        torch.testing.assert_close(net(c * x), c * c * net(x), rtol=1e-5, atol=1e-9)


def test_parts_freeze_the_other_networks_and_select_the_loss_terms():
    from scigen.timeseries import NsDiff
    from scigen.timeseries.data import synthetic_nonstationary

    cfg = dict(context_length=16, horizon=4, rolling_length=4, diffusion_steps=10, beta_end=0.7, d_model=8, n_heads=2,
               e_layers=1, d_layers=1, d_ff=8, g_hidden=8, denoiser_hidden=8, dropout=0.0, train={"batch_size": 16})
    df = synthetic_nonstationary(120, 2, seed=1)
    model = NsDiff(**cfg).fit(df, max_steps=2, parts=("g",))
    before = {k: v.clone() for k, v in model.network.state_dict().items()}
    model.fit(df, max_steps=3, parts=("f",))
    after = model.network.state_dict()
    changed = {k.split(".")[0] for k in before if k != "eps_error" and not torch.equal(before[k], after[k])}
    assert changed == {"f"}
    assert all(p.requires_grad for p in model.network.parameters())  # unfrozen afterwards
    assert model.history.steps == 5 and model.metadata["trained_steps"] == 5
    with pytest.raises(InvalidInputError, match="parts must be"):
        model.fit(df, max_steps=1, parts=("mean",))
