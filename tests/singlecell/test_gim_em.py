"""GIM's MAP/EM (scigen.singlecell.gim.em) against brute force: the E-step's marginal likelihood and
target posterior by enumeration of target patterns and grid quadrature over ψ through the exact SCM
likelihood, and Fisher's identity (the M-step objective's gradient = the marginal likelihood's)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scigen.singlecell.gim.em import em_terms
from scigen.singlecell.gim.scm import gaussian_loglik

pytestmark = pytest.mark.usefixtures("float64_default")  # closed-form checks in float64 (tests/conftest.py)


def _problem(d, seed, n=7):
    g = torch.Generator().manual_seed(seed)
    w = torch.triu(torch.randn(d, d, generator=g) * 0.7, diagonal=1)
    b = torch.randn(d, generator=g) * 0.3
    log_sigma = torch.randn(d, generator=g) * 0.2
    shift = torch.tensor([1.5, -1.0, 0.5][:d])
    x = (b + shift * (torch.arange(d) == 0) + torch.randn(n, d, generator=g) * torch.exp(log_sigma)) @ \
        torch.linalg.inv(torch.eye(d) - w)
    stats = (torch.tensor([float(n)]), x.sum(0)[None], (x.T @ x)[None])
    logits = torch.randn(1, d, generator=g)
    mu = torch.randn(1, d, generator=g)
    log_s = torch.randn(1, d, generator=g) * 0.3
    return w, b, log_sigma, stats, logits, mu, log_s


def _grid_marginal(w, b, log_sigma, stats, pattern, mu, s):
    """log ∫ N(ψ; μ, s²) p(D | I = pattern, ψ) dψ over the targeted ψ (≤ 2), by a dense grid."""
    on = [j for j in range(len(pattern)) if pattern[j]]
    z = torch.zeros(1, len(pattern))
    if not on:
        return gaussian_loglik(w, b, log_sigma, *stats, z, z).item()
    axes = [torch.linspace(mu[j] - 9 * s[j], mu[j] + 9 * s[j], 1201) for j in on]
    mesh = torch.stack(torch.meshgrid(*axes, indexing="ij"), -1).reshape(-1, len(on))
    shift = torch.zeros(len(mesh), 1, len(pattern))
    shift[:, 0, on] = mesh
    ll = gaussian_loglik(w, b, log_sigma, *stats, shift, torch.zeros_like(shift))[:, 0]
    logprior = sum(-0.5 * ((mesh[:, i] - mu[j]) / s[j]) ** 2 - torch.log(s[j]) - 0.5 * np.log(2 * np.pi)
                   for i, j in enumerate(on))
    cell = np.prod([(a[1] - a[0]).item() for a in axes])
    return (torch.logsumexp(ll + logprior, 0) + np.log(cell)).item()


def test_bernoulli_estep_matches_enumeration_and_quadrature():
    d = 2
    w, b, ls, stats, logits, mu, log_s = _problem(d, seed=0)
    q_fn, post = em_terms(w, b, ls, *stats, logits, mu, log_s, torch.zeros(1, d), torch.ones(1, 1), "bernoulli")
    pi = torch.sigmoid(logits[0])
    pats = [(a, c) for a in (0, 1) for c in (0, 1)]
    logs = [sum(np.log(pi[j].item() if p[j] else 1 - pi[j].item()) for j in range(d))
            + _grid_marginal(w, b, ls, stats, p, mu[0], torch.exp(log_s[0])) for p in pats]
    exact = np.logaddexp.reduce(logs)
    assert post["log_marginal"].item() == pytest.approx(exact, abs=1e-4)
    post_on = [np.exp(np.logaddexp.reduce([lg for p, lg in zip(pats, logs, strict=True) if p[j]]) - exact)
               for j in range(d)]
    np.testing.assert_allclose(post["q"][0].numpy(), post_on, atol=1e-4)


def test_categorical_estep_matches_enumeration_and_quadrature():
    d = 3
    w, b, ls, stats, logits, mu, log_s = _problem(d, seed=1)
    _, post = em_terms(w, b, ls, *stats, logits, mu, log_s, torch.zeros(1, d), torch.ones(1, 1), "categorical")
    log_pi = torch.log_softmax(logits[0], -1)
    logs = [log_pi[j].item() + _grid_marginal(w, b, ls, stats, [int(i == j) for i in range(d)], mu[0],
                                              torch.exp(log_s[0])) for j in range(d)]
    exact = np.logaddexp.reduce(logs)
    assert post["log_marginal"].item() == pytest.approx(exact, abs=1e-4)
    np.testing.assert_allclose(post["q"][0].numpy(), np.exp(np.asarray(logs) - exact), atol=1e-4)


@pytest.mark.parametrize("prior", ["bernoulli", "categorical"])
def test_mstep_gradient_is_the_marginal_likelihood_gradient(prior):
    """Fisher's identity: ∇Q(θ | θ_old) at θ = θ_old equals ∇ log p(D | θ), for θ and the prior."""
    d = 3
    params = [p.clone().requires_grad_(True) for p in _problem(d, seed=2)[:3]]
    _, _, _, stats, *rest = _problem(d, seed=2)
    head = [p.clone().requires_grad_(True) for p in rest]
    w, b, ls = params
    ctrl_off = torch.tensor([[1.0]])
    q_fn, post = em_terms(w, b, ls, *stats, *head, torch.zeros(1, d), ctrl_off, prior)
    g_q = torch.autograd.grad(q_fn.sum(), params + head)
    q_fn, post = em_terms(w, b, ls, *stats, *head, torch.zeros(1, d), ctrl_off, prior)
    g_m = torch.autograd.grad(post["log_marginal"].sum(), params + head)
    for a, c in zip(g_q, g_m, strict=True):
        np.testing.assert_allclose(a.numpy(), c.numpy(), rtol=1e-6, atol=1e-8)


def test_control_contexts_have_no_targets():
    d = 2
    w, b, ls, stats, logits, mu, log_s = _problem(d, seed=3)
    q_fn, post = em_terms(w, b, ls, *stats, logits, mu, log_s, torch.zeros(1, d), torch.zeros(1, 1), "bernoulli")
    z = torch.zeros(1, d)
    assert post["q"].abs().max() == 0
    assert q_fn.item() == pytest.approx(gaussian_loglik(w, b, ls, *stats, z, z).item())
    assert post["log_marginal"].item() == pytest.approx(q_fn.item())


def test_warmup_head_fit_is_the_expected_log_prior_by_monte_carlo():
    """head_fit = E_{I ~ Bern(q), ψ ~ N(m, v)} [log p(I) + I log N(ψ; μ, s²)] (Bernoulli prior)."""
    from scigen.singlecell.gim.em import head_fit

    g = torch.Generator().manual_seed(4)
    logits, mu, log_s = (torch.randn(1, 3, generator=g) for _ in range(3))
    post = {"q": torch.tensor([[0.2, 0.7, 0.5]]), "m": torch.randn(1, 3, generator=g), "v": torch.tensor([[0.3, 1.0, 2.0]])}
    got = head_fit(logits, mu, log_s, post, torch.ones(1, 1), "bernoulli").item()
    n = 400000
    i = (torch.rand(n, 3, generator=g) < post["q"]).double()
    psi = post["m"] + post["v"].sqrt() * torch.randn(n, 3, generator=g)
    s = torch.exp(log_s)
    logn = -0.5 * ((psi - mu) / s) ** 2 - torch.log(s) - 0.5 * np.log(2 * np.pi)
    mc = (i * (torch.nn.functional.logsigmoid(logits) + logn) + (1 - i) * torch.nn.functional.logsigmoid(-logits))
    assert got == pytest.approx(mc.sum(-1).mean().item(), abs=0.02)
