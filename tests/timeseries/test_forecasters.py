"""The shared point forecasters: shapes, tokens, normalisation, variable symmetry, and each one trained alone
with MSE beats the seasonal-naive forecast on the synthetic set."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from scigen.timeseries import D3U
from scigen.timeseries.baselines import seasonal_naive
from scigen.timeseries.data import split_ratio, synthetic_nonstationary
from scigen.timeseries.forecasters import FORECASTERS, build_forecaster, check_forecaster
from scigen.timeseries.forecasters.itransformer import ITransformer
from scigen.timeseries.forecasters.patchtst import PatchTST
from scigen.timeseries.forecasters.revin import RevIN

WIDTHS = dict(d_model=16, n_heads=2, e_layers=1, d_ff=32, dropout=0.0)


def _random(m: nn.Module) -> nn.Module:
    torch.manual_seed(3)
    for name, p in m.named_parameters():
        if not name.startswith("revin"):
            nn.init.normal_(p, std=0.2)
    return m.eval()


@pytest.mark.parametrize("name", FORECASTERS)
@pytest.mark.parametrize("context,horizon", [(24, 5), (17, 12), (48, 1)])
def test_forecasters_map_context_to_horizon(name, context, horizon):
    torch.manual_seed(0)
    f = build_forecaster(name, 3, context, horizon, **WIDTHS)
    y, tok = check_forecaster(f.eval(), torch.randn(4, context, 3), horizon)
    assert y.shape == (4, horizon, 3)
    if name == "nstransformer":
        assert tok is None  # mixes variables in every token
    else:
        assert tok.shape[:2] == (4, 3)


def test_revin_inverts_exactly():
    r = RevIN(3)
    with torch.no_grad():
        r.weight.copy_(torch.tensor([0.5, 2.0, -1.5]))
        r.bias.copy_(torch.tensor([0.1, -0.3, 2.0]))
    x = torch.randn(5, 20, 3, dtype=torch.float64) * 4 + 7
    z, stats = r.double().normalize(x)
    assert torch.allclose(z.mean(1), r.bias.expand(5, 3), atol=1e-10)
    assert torch.allclose(r.denormalize(z, stats), x, atol=1e-5)


@pytest.mark.parametrize("cls", [PatchTST, ITransformer])
def test_normalising_forecasters_are_affine_equivariant(cls):
    """Instance normalisation in, inverse out: f(a·x + b) = a·f(x) + b per variable."""
    f = _random(cls(3, 32, 8, **WIDTHS)).double()
    x = torch.randn(2, 32, 3, dtype=torch.float64)
    a, b = torch.tensor([3.0, 0.5, 10.0], dtype=torch.float64), torch.tensor([-2.0, 5.0, 100.0], dtype=torch.float64)
    assert torch.allclose(f(a * x + b), a * f(x) + b, atol=1e-4 * 100)


def test_patchtst_is_channel_independent_and_itransformer_permutation_equivariant():
    p = _random(PatchTST(4, 32, 8, **WIDTHS))
    x = torch.randn(2, 32, 4)
    x2 = x.clone()
    x2[:, :, 0] = torch.randn(2, 32) * 5
    assert torch.allclose(p(x2)[:, :, 1:], p(x)[:, :, 1:], atol=1e-5)
    it = _random(ITransformer(4, 32, 8, **WIDTHS))
    perm = torch.tensor([2, 0, 3, 1])
    assert torch.allclose(it(x[:, :, perm]), it(x)[:, :, perm], atol=1e-5)
    assert not torch.allclose(it(x2)[:, :, 1:], it(x)[:, :, 1:], atol=1e-5)  # variates attend to each other


def test_seasonal_naive_repeats_the_last_season():
    t = torch.arange(40, dtype=torch.float64)
    x = torch.sin(2 * torch.pi * t / 8)[None, :, None]  # period 8
    y = seasonal_naive(x[:, :30], 10, 8)
    assert torch.allclose(y[0, :, 0], x[0, 30:40, 0], atol=1e-12)
    assert torch.equal(seasonal_naive(torch.arange(6.0)[None, :, None], 5, 2)[0, :, 0], torch.tensor([4.0, 5, 4, 5, 4]))


@pytest.fixture(scope="module")
def synthetic():
    df = synthetic_nonstationary(1500, 3, seed=0)
    return split_ratio(df, 48)


@pytest.mark.parametrize("name", FORECASTERS)
def test_each_forecaster_alone_beats_seasonal_naive(name, synthetic):
    model = D3U(D3U.Config.preset("tiny"), forecaster=name)
    model.fit(synthetic.train, max_steps=80, stage="forecaster", progress=False)
    X, Y = model.evaluation_windows(synthetic.test, stride=4)
    marks = model.evaluation_marks(synthetic.test, stride=4)  # NS-Transformer's calendar features (timeF)
    assert (marks is not None) == (name == "nstransformer")
    mse = float(((model.point_forecast(X, marks) - Y) ** 2).mean())
    naive = float(((seasonal_naive(X, model.config.horizon, 24) - Y) ** 2).mean())
    assert mse < 0.85 * naive, (mse, naive)
