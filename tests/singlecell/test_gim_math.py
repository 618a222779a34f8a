"""GIM's backends and metrics against closed forms and references (scipy, sklearn)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.linalg import solve_continuous_lyapunov
from scipy.stats import multivariate_normal
from sklearn.metrics import r2_score, roc_auc_score

from scigen.singlecell.gim.metrics import auroc, r2_means
from scigen.singlecell.gim.model import GIMHead
from scigen.singlecell.gim.scm import gaussian_loglik, kds, lyapunov, notears_h, scm_moments, sde_moments, shd
from scigen.singlecell.gim.synthetic import hill

pytestmark = pytest.mark.usefixtures("float64_default")  # closed-form checks in float64 (tests/conftest.py)


def _scm(d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    w = torch.triu(torch.randn(d, d, generator=g) * 0.8, diagonal=1)
    b = torch.randn(d, generator=g) * 0.3
    log_sigma = torch.randn(d, generator=g) * 0.2
    return w, b, log_sigma, g


def _stats(x):
    return torch.tensor([float(len(x))]), x.sum(0)[None], (x.T @ x)[None]


def test_exact_loglik_equals_the_implied_gaussian_density():
    w, b, ls, g = _scm()
    shift = torch.tensor([0.0, 1.5, 0.0, -0.7])
    lscale = torch.tensor([0.0, 0.3, 0.0, 0.0])
    mean, cov = scm_moments(w, b, ls, shift, lscale)
    x = torch.randn(7, 4, generator=g)
    n, s1, s2 = _stats(x)
    got = gaussian_loglik(w, b, ls, n, s1, s2, shift[None], lscale[None])
    ref = multivariate_normal(mean.numpy(), cov.numpy()).logpdf(x.numpy()).sum()
    assert got.item() == pytest.approx(ref, rel=1e-10)


def test_loglik_with_a_cycle_keeps_the_jacobian():
    w = torch.tensor([[0.0, 0.5], [0.4, 0.0]])  # cyclic: det(I - W) = 0.8
    b, ls = torch.zeros(2), torch.zeros(2)
    mean, cov = scm_moments(w, b, ls, torch.zeros(2), torch.zeros(2))
    x = torch.randn(5, 2, generator=torch.Generator().manual_seed(1))
    got = gaussian_loglik(w, b, ls, *_stats(x), torch.zeros(1, 2), torch.zeros(1, 2))
    assert got.item() == pytest.approx(multivariate_normal(mean.numpy(), cov.numpy()).logpdf(x.numpy()).sum())


def test_ancestral_samples_match_the_likelihood_by_monte_carlo():
    """E_p[log p(x)] = −entropy of N(mean, cov): the mean exact log-likelihood of 40k ancestral draws."""
    w, b, ls, g = _scm(seed=3)
    shift = torch.tensor([1.0, 0.0, 0.0, 0.0])
    eps = torch.randn(40000, 4, generator=g) * torch.exp(ls)
    x = (b + shift + eps) @ torch.linalg.inv(torch.eye(4) - w)
    mc = gaussian_loglik(w, b, ls, *_stats(x), shift[None], torch.zeros(1, 4)).item() / len(x)
    _, cov = scm_moments(w, b, ls, shift, torch.zeros(4))
    neg_entropy = -0.5 * (4 * (1 + np.log(2 * np.pi)) + np.linalg.slogdet(cov.numpy())[1])
    assert mc == pytest.approx(neg_entropy, abs=0.03)


def test_marginal_over_bernoulli_targets_matches_monte_carlo():
    """log Σ_I P(I) p(D | I) by enumeration of 2^d patterns vs the log-mean-exp over drawn patterns."""
    w, b, ls, g = _scm(d=3, seed=5)
    psi = torch.tensor([2.0, -1.0, 1.0])
    pi = torch.tensor([0.7, 0.2, 0.5])
    x = torch.randn(6, 3, generator=g) + 1.0
    pats = torch.tensor([[(k >> j) & 1 for j in range(3)] for k in range(8)], dtype=torch.float64)
    prior = (pats * pi.log() + (1 - pats) * (1 - pi).log()).sum(1)
    n, s1, s2 = _stats(x)
    ll = gaussian_loglik(w, b, ls, n, s1, s2, (pats * psi)[:, None], torch.zeros(8, 1, 3))[:, 0]
    exact = torch.logsumexp(prior + ll, 0).item()
    draws = (torch.rand(200000, 3, generator=g) < pi).double()
    ll_d = gaussian_loglik(w, b, ls, n, s1, s2, (draws * psi)[:, None], torch.zeros(200000, 1, 3))[:, 0]
    mc = (torch.logsumexp(ll_d, 0) - np.log(len(draws))).item()
    assert mc == pytest.approx(exact, abs=0.02)


def test_notears_h_is_zero_exactly_on_dags():
    w, *_ = _scm()
    assert notears_h(w).item() == pytest.approx(0.0, abs=1e-12)
    cyc = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    # tr exp(A) for A = [[0,1],[1,0]]: 2 cosh(1)
    assert notears_h(cyc).item() == pytest.approx(2 * np.cosh(1.0) - 2)


def test_lyapunov_matches_scipy_and_sde_moments():
    g = torch.Generator().manual_seed(0)
    m = torch.randn(5, 5, generator=g) * 0.3 - 2 * torch.eye(5)
    q = torch.diag(torch.rand(5, generator=g) + 0.5)
    ref = solve_continuous_lyapunov(m.numpy(), -q.numpy())
    assert np.allclose(lyapunov(m, q).numpy(), ref, atol=1e-10)
    w = torch.triu(torch.randn(3, 3, generator=g), 1)
    mean, cov = sde_moments(w, torch.zeros(3), torch.ones(3), torch.zeros(3), torch.zeros(3), torch.zeros(3))
    mm = w.T - torch.eye(3)
    assert np.allclose((mm @ mean + 1).numpy(), 0, atol=1e-10)
    assert np.allclose((mm @ cov + cov @ mm.T + torch.eye(3)).numpy(), 0, atol=1e-10)


def test_kds_is_near_zero_at_stationarity_and_grows_off_it():
    """Cells from the SDE's stationary Gaussian give KDS ≈ 0 (E_p[Lf] = 0); a wrong drift does not."""
    g = torch.Generator().manual_seed(2)
    w = torch.tensor([[0.0, 0.8, 0.0], [0.0, 0.0, -0.6], [0.0, 0.0, 0.0]])
    m = w.T - torch.eye(3)
    c, sig2 = torch.tensor([0.5, 0.0, -0.3]), torch.ones(3)
    mean, cov = sde_moments(w, torch.zeros(3), c, torch.zeros(3), torch.zeros(3), torch.zeros(3))
    x = mean + torch.randn(3000, 3, generator=g) @ torch.linalg.cholesky(cov).T
    mask = torch.ones(1, 3000, dtype=torch.bool)
    good = kds(x[None], mask, m, c[None], sig2[None], 1.5).item()
    bad = kds(x[None], mask, m, (c + 1.0)[None], sig2[None], 1.5).item()
    wrong_noise = kds(x[None], mask, m, c[None], 3 * sig2[None], 1.5).item()
    assert good < 0.02 * bad and good < 0.02 * wrong_noise


def test_shd_counts_additions_deletions_and_reversals_once():
    t = torch.zeros(4, 4)
    t[0, 1] = t[1, 2] = t[2, 3] = 1.0
    e = torch.zeros(4, 4)
    e[1, 0] = 1.0   # reversal
    e[1, 2] = 0.5   # correct
    e[0, 3] = 0.9   # addition; 2 -> 3 deleted
    assert shd(e, t) == 3
    assert shd(t, t) == 0
    assert shd(e * 0.1, t, threshold=0.2) == 3  # every estimated edge falls below the threshold


def test_auroc_and_r2_match_sklearn():
    rng = np.random.default_rng(0)
    y = rng.random(200) < 0.3
    s = y * 0.8 + rng.random(200)
    s[:10] = 0.5  # ties
    assert auroc(s, y) == pytest.approx(roc_auc_score(y, s))
    a, b = rng.standard_normal((30, 6)) + np.arange(6), rng.standard_normal((40, 6)) + np.arange(6) * 0.9
    assert r2_means(a, b) == pytest.approx(r2_score(a.mean(0), b.mean(0)))


def test_hill_head_is_monotone_in_dose_and_zero_without_dose():
    head = GIMHead(5, 4, 16, 1, hill=True, noise=False)
    gam = torch.randn(1, 5).expand(6, 5)
    dose = torch.tensor([0.0, 0.25, 0.5, 1.0, 2.0, 8.0])
    _, mu, _, _ = head(gam, dose)
    assert torch.allclose(mu[0], torch.zeros(4))
    diffs = (mu[1:] - mu[:-1]) * torch.sign(mu[-1])
    assert (diffs >= -1e-12).all()
    assert hill(1.0, 2.0, 1.0, 3.0) == pytest.approx(1.0)


@pytest.mark.parametrize("prior", ["bernoulli", "categorical"])
def test_keyed_relaxed_targets_are_per_context_and_have_the_concrete_law(prior):
    """Under per-sample streams (``fit(rng="per_sample")``) a context's relaxed targets depend on its key only,
    not on the batch around it; and they keep the Concrete law (Maddison et al. 2017, Prop. 1; Jang et al. 2017):
    a binary-concrete draw exceeds 1/2 with probability σ(l), a Gumbel-softmax draw's argmax is category j with
    probability softmax(l)_j."""
    from scigen.core import streams
    from scigen.singlecell.gim.objective import relaxed_targets

    logits = torch.tensor([[0.8, -1.2, 0.0], [2.0, 0.3, -0.5]])
    with streams.sample_streams(streams.SampleStreams(11, torch.tensor([3, 5]))):
        pair = relaxed_targets(logits, 4, 0.5, prior, keyed=True)
    with streams.sample_streams(streams.SampleStreams(11, torch.tensor([5]))):
        alone = relaxed_targets(logits[1:], 4, 0.5, prior, keyed=True)
    assert pair.shape == (4, 2, 3)
    torch.testing.assert_close(pair[:, 1:], alone, rtol=0, atol=0)
    n = 20_000  # one context per key, S = 1: the draws of n independent streams
    row = logits[0].expand(n, 3)
    with streams.sample_streams(streams.SampleStreams(11, torch.arange(n))):
        x = relaxed_targets(row, 1, 0.5, prior, keyed=True)[0]
    if prior == "bernoulli":
        freq, p = (x > 0.5).double().mean(0), torch.sigmoid(logits[0])
    else:
        freq = torch.bincount(x.argmax(-1), minlength=3).double() / n
        p = torch.softmax(logits[0], -1)
    assert torch.all((freq - p).abs() < 4 * torch.sqrt(p * (1 - p) / n))


def _contexts(k=6, d=3, p=2, seed=0):
    """``k`` contexts of a linear-Gaussian SCM (context 0 the control) with unequal cell counts."""
    from scigen.singlecell.gim.objective import GIMTensors

    w, b, log_sigma, g = _scm(d, seed)
    cells = [torch.randn(int(n), d, generator=g) for n in torch.randint(5, 40, (k,), generator=g)]
    n = torch.tensor([float(len(c)) for c in cells])
    s1 = torch.stack([c.sum(0) for c in cells])
    s2 = torch.stack([c.T @ c for c in cells])
    control = torch.arange(k) == 0
    return GIMTensors(n, s1, s2, torch.randn(k, p, generator=g), torch.rand(k, generator=g) * control.logical_not(),
                      control)


@pytest.mark.parametrize("mode, backend", [("map", "linear_gaussian"), ("map", "stationary_sde")])
def test_dataset_normaliser_is_unbiased_and_a_per_context_mean(mode, backend):
    """``normaliser="dataset"``: averaged over every batch of B of the K contexts the loss is the full-data loss
    ``−Σ_k ℓ_k / N + reg + λ·mean P(target)`` (unbiased; exact by enumeration), and the mean of two batches' losses
    is the loss of their union (what DDP's gradient average needs); the default ``"batch"`` is neither."""
    from itertools import combinations

    from scigen.singlecell.gim.model import GIMNetwork
    from scigen.singlecell.gim.objective import gim_loss

    t = _contexts()
    if backend == "stationary_sde":
        g = torch.Generator().manual_seed(1)
        t.cells = torch.randn(len(t.n), 6, 3, generator=g)
        t.mask = torch.ones(len(t.n), 6, dtype=torch.bool)
        t.n = t.mask.sum(1).double()
    torch.manual_seed(0)
    net = GIMNetwork(3, 2, width=8, depth=1, hill=True, noise=False, n_contexts=len(t.n), use_head=True).double()
    kw = dict(mode=mode, backend=backend, prior="bernoulli", samples=1, tau=0.5, l1=0.01, acyclic=1.0,
              target_l1=0.1, map_prior_scale=0.5)

    def loss(idx, normaliser="dataset"):
        return float(gim_loss(net, t, torch.tensor(idx), normaliser=normaliser, **kw).detach())

    full = loss(list(range(len(t.n))))
    batches = list(combinations(range(len(t.n)), 2))
    assert np.mean([loss(list(s)) for s in batches]) == pytest.approx(full, rel=1e-12, abs=1e-12)
    for s0, s1 in [((1, 2), (3, 4)), ((0, 5), (2, 3))]:  # with and without the control drawn
        assert (loss(s0) + loss(s1)) / 2 == pytest.approx(loss(s0 + s1), rel=1e-12, abs=1e-12)
        pair = (loss(s0, "batch") + loss(s1, "batch")) / 2
        assert abs(pair - loss(s0 + s1, "batch")) > 1e-6
