"""Inverse Flow's noise models against theory: sample moments vs closed forms, log-densities vs scipy, the
correlated Gaussian's covariance vs an explicit circulant matrix, the Jacobi process's moments vs its ODEs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats
from scipy.integrate import solve_ivp

from scigen.core.errors import InvalidInputError
from scigen.singlecell.inverseflow.noise import (
    NOISE_MODELS,
    CallableNoise,
    CorrelatedGaussian,
    Gamma,
    Gaussian,
    Jacobi,
    NegativeBinomial,
    Poisson,
    Rayleigh,
    noise_from_spec,
)

N = 200_000


def _draw(model, x0_value: float, n: int = N, seed: int = 0) -> np.ndarray:
    x0 = torch.full((n, 1), x0_value, dtype=torch.float64)
    return model.draw(x0, torch.Generator().manual_seed(seed)).numpy().ravel()


def _close(sample_stat, want, se, k=5.0):
    assert abs(sample_stat - want) < k * se, (sample_stat, want, se)


@pytest.mark.parametrize("model, x0, mean, var", [
    (Gaussian(0.3), 0.7, 0.7, 0.09),
    (Poisson(0.05), 0.6, 0.6, 0.05 * 0.6),
    (Gamma(0.25), 2.0, 2.0, 0.25**2 * 4.0),
    (Rayleigh(0.4), 1.5, 1.5 * (1 + 0.4 * math.sqrt(math.pi / 2)), 1.5**2 * 0.4**2 * (4 - math.pi) / 2),
    (NegativeBinomial(3.0), 5.0, 5.0, 5.0 + 25.0 / 3.0),
], ids=["gaussian", "poisson", "gamma", "rayleigh", "negative_binomial"])
def test_sample_mean_and_variance_match_theory(model, x0, mean, var):
    x = _draw(model, x0)
    _close(x.mean(), mean, math.sqrt(var / N))
    # se of the sample variance ~ sqrt((m4 - var^2)/N); use the sample's own fourth moment
    m4 = ((x - x.mean()) ** 4).mean()
    _close(x.var(), var, math.sqrt((m4 - var**2) / N))


def test_log_probs_match_scipy():
    x0 = torch.tensor([[0.5, 1.2, 2.0]], dtype=torch.float64)
    x1 = torch.tensor([[0.8, 1.0, 2.6]], dtype=torch.float64)
    lp = Gaussian(0.3).log_prob(x1, x0).item()
    assert lp == pytest.approx(stats.norm(x0.numpy(), 0.3).logpdf(x1.numpy()).sum(), rel=1e-10)
    lp = Gamma(0.4).log_prob(x1, x0).item()
    a = 1 / 0.4**2
    assert lp == pytest.approx(stats.gamma(a, scale=x0.numpy() / a).logpdf(x1.numpy()).sum(), rel=1e-10)
    x1r = x0 * (1 + torch.tensor([[0.1, 0.5, 0.9]], dtype=torch.float64))
    lp = Rayleigh(0.5).log_prob(x1r, x0).item()
    want = (stats.rayleigh(scale=0.5).logpdf((x1r / x0 - 1).numpy()) - np.log(x0.numpy())).sum()
    assert lp == pytest.approx(want, rel=1e-10)
    k = 0.1
    counts = torch.tensor([[3.0, 14.0, 20.0]], dtype=torch.float64)
    lp = Poisson(k).log_prob(k * counts, x0).item()
    assert lp == pytest.approx(stats.poisson(x0.numpy() / k).logpmf(counts.numpy()).sum(), rel=1e-10)
    th = 2.5
    lp = NegativeBinomial(th).log_prob(counts, x0 * 10).item()
    mu = x0.numpy() * 10
    assert lp == pytest.approx(stats.nbinom(th, th / (th + mu)).logpmf(counts.numpy()).sum(), rel=1e-10)


def _g2_reference(h, w, span):
    """The official kernel written independently: cos(r)·N(r; 0, span²) on circular distances, ‖g‖₂ = 1."""
    g = np.zeros((h, w))
    for i in range(h):
        for j in range(w):
            r2 = min(i, h - i) ** 2 + min(j, w - j) ** 2
            g[i, j] = math.cos(math.sqrt(r2)) * math.exp(-r2 / (2 * span**2)) / (2 * math.pi * span**2)
    return g / np.sqrt((g**2).sum())


def _circulant(g):
    """The matrix G with (G w)[p] = Σ_q g[p − q] w[q] (circular) on flattened h × w images."""
    h, w = g.shape
    G = np.zeros((h * w, h * w))
    for p in range(h * w):
        pi, pj = divmod(p, w)
        for q in range(h * w):
            qi, qj = divmod(q, w)
            G[p, q] = g[(pi - qi) % h, (pj - qj) % w]
    return G


def test_correlated_gaussian_covariance_and_density_match_the_explicit_circulant():
    h, w, sigma, span = 4, 5, 0.2, 1.3
    model = CorrelatedGaussian(sigma, span)
    C = sigma**2 * (lambda G: G @ G.T)(_circulant(_g2_reference(h, w, span)))
    x0 = torch.rand(1, 1, h, w, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    x1 = model.draw(x0.expand(40_000, 1, h, w).contiguous(), torch.Generator().manual_seed(2))
    noise = (x1 - x0).reshape(40_000, -1).numpy()
    emp = noise.T @ noise / len(noise)
    assert np.abs(emp - C).max() < 5 * sigma**2 * math.sqrt(2 / len(noise))
    assert np.allclose(np.diag(C), sigma**2)  # ‖g‖₂ = 1: marginal variance σ²
    one = x1[:3]
    lp = model.log_prob(one, x0.expand(3, 1, h, w)).numpy()
    want = stats.multivariate_normal(x0.numpy().ravel(), C).logpdf((one - 0).reshape(3, -1).numpy())
    assert np.allclose(lp, want, rtol=1e-8)


@pytest.mark.parametrize("a, b", [(1.0, 1.0), (2.0, 3.0)])
def test_jacobi_moments_follow_the_moment_odes(a, b):
    t, x0 = 0.2, 0.3
    model = Jacobi(a=a, b=b, t=t, step=2e-3)
    x = _draw(model, x0, n=60_000)
    assert x.min() > 0 and x.max() < 1
    # d m1/dt = (a − (a+b) m1)/2 ;  d m2/dt = (a+1) m1 − (a+b+1) m2  (Itô on dx = ½(a(1−x) − bx)dt + √(x(1−x))dW)
    sol = solve_ivp(lambda _, m: [(a - (a + b) * m[0]) / 2, (a + 1) * m[0] - (a + b + 1) * m[1]], (0, t),
                    [x0, x0**2], rtol=1e-10, atol=1e-12)
    m1, m2 = sol.y[:, -1]
    assert m1 == pytest.approx(a / (a + b) + (x0 - a / (a + b)) * math.exp(-(a + b) * t / 2), rel=1e-6)
    sd = math.sqrt(m2 - m1**2)
    _close(x.mean(), m1, sd / math.sqrt(len(x)), k=6)
    _close((x**2).mean(), m2, math.sqrt(((x**2 - m2) ** 2).mean() / len(x)), k=6)


@pytest.mark.parametrize("kind", sorted(NOISE_MODELS))
def test_spec_round_trip_and_seeded_draws_are_reproducible(kind):
    model = NOISE_MODELS[kind]()
    again = noise_from_spec(model.spec())
    assert type(again) is type(model) and again.spec() == model.spec()
    x0 = torch.rand(3, 1, 6, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * 0.8 + 0.1
    a = model.draw(x0, torch.Generator().manual_seed(5))
    b = again.draw(x0, torch.Generator().manual_seed(5))
    c = model.draw(x0, torch.Generator().manual_seed(6))
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_links_of_jacobi_and_counts():
    y = torch.tensor([-3.0, 0.0, 2.0])
    assert torch.allclose(Jacobi().decode(Jacobi().encode(torch.sigmoid(y))), torch.sigmoid(y))
    assert Poisson(0.01, clip=1.0).decode(torch.tensor([-0.5, 0.5, 1.5])).tolist() == [0.0, 0.5, 1.0]
    assert NegativeBinomial().decode(torch.tensor([-2.0, 3.0])).tolist() == [0.0, 3.0]


def test_callable_noise_and_its_contract():
    def add_one(x0, generator=None):
        return x0 + 1

    x0 = torch.zeros(4, 2)
    assert torch.equal(CallableNoise(add_one, "plus one").draw(x0), torch.ones(4, 2))
    with pytest.raises(InvalidInputError, match=r"'callable summer': sample changed the shape from \(4, 2\) to \(4,\)"):
        CallableNoise(lambda x, g=None: x.sum(1), "summer").draw(x0)
    with pytest.raises(InvalidInputError, match="non-finite"):
        CallableNoise(lambda x, g=None: x / 0, "nan").draw(x0)
    with pytest.raises(InvalidInputError, match="user-defined callable"):
        noise_from_spec({"kind": "callable", "name": "plus one"})


def test_bad_parameters_and_data_are_named():
    with pytest.raises(InvalidInputError, match="Gaussian: sigma"):
        Gaussian(-1)
    with pytest.raises(InvalidInputError, match="unknown; valid"):
        noise_from_spec({"kind": "laplace"})
    with pytest.raises(InvalidInputError, match="needs values >= 0"):
        Poisson().check_data(torch.tensor([1.0, -0.5]), "adata.X")
    with pytest.raises(InvalidInputError, match=r"needs values in \(0, 1\)"):
        Jacobi().check_data(torch.tensor([0.5, 1.0]))
