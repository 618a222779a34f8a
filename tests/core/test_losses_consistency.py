"""Consistency-training pieces (iCT, Song & Dhariwal 2023) against their closed forms."""

import math

import pytest
import torch

from scigen.core.losses import (
    consistency_scalings,
    consistency_training_loss,
    ict_num_scales,
    ict_step_probabilities,
    ict_step_weights,
    karras_sigmas,
    pseudo_huber,
)
from scigen.core.paths import VEPath

pytestmark = pytest.mark.usefixtures("float64_default")


def test_pseudo_huber_zero_and_asymptotics():
    x = torch.randn(3, 4, 5)
    assert torch.equal(pseudo_huber(x, x), torch.zeros(3))
    c = 0.00054 * math.sqrt(20)
    delta = torch.zeros(3, 4, 5)
    delta[:, 0, 0] = torch.tensor([1e-6, 10.0, 1000.0])
    d = pseudo_huber(x + delta, x)
    assert math.isclose(float(d[0]), 1e-12 / (2 * c), rel_tol=1e-4)  # quadratic near 0: r^2 / (2c)
    assert math.isclose(float(d[1]), 10.0 - c, rel_tol=1e-6)  # linear far away: r - c
    assert math.isclose(float(d[2]), 1000.0 - c, rel_tol=1e-9)
    mask = torch.zeros(3, 4, 5, dtype=torch.bool)
    mask[:, 0, :2] = True  # d = 2 valid entries per sample -> c = 0.00054 sqrt(2)
    c2 = 0.00054 * math.sqrt(2)
    assert math.isclose(
        float(pseudo_huber(x + delta, x, mask=mask)[1]), math.sqrt(100 + c2**2) - c2, rel_tol=1e-12
    )


def test_scalings_boundary_condition_and_closed_form():
    smin, sd = 0.002, 0.5
    c_skip, c_out, c_in = consistency_scalings(torch.tensor(smin), sd, smin)
    assert float(c_skip) == 1.0 and float(c_out) == 0.0
    sig = torch.tensor([0.1, 1.0, 80.0])
    c_skip, c_out, c_in = consistency_scalings(sig, sd, smin)
    torch.testing.assert_close(c_skip, sd**2 / ((sig - smin) ** 2 + sd**2))
    torch.testing.assert_close(c_out, sd * (sig - smin) / torch.sqrt(sd**2 + sig**2))
    torch.testing.assert_close(c_in, 1 / torch.sqrt(sig**2 + sd**2))
    # f(x, sigma_min) = x exactly, whatever the network outputs
    x, net = torch.randn(4, 3), torch.randn(4, 3) * 100
    c_skip, c_out, _ = consistency_scalings(torch.full((4, 1), smin), sd, smin)
    assert torch.equal(c_skip * x + c_out * net, x)


def test_karras_sigmas_and_ve_path_agree():
    s = karras_sigmas(18)
    assert math.isclose(float(s[0]), 0.002, rel_tol=1e-12) and math.isclose(float(s[-1]), 80.0, rel_tol=1e-12)
    assert bool((s[1:] > s[:-1]).all())
    torch.testing.assert_close(VEPath(0.002, 80.0, "karras", 7.0).sigma(torch.linspace(0, 1, 18)), s)


def test_ict_curriculum_probabilities_and_weights():
    K = 400_000  # iCT: s0 = 10, s1 = 1280 -> K' = floor(K / 8) = 50_000
    assert ict_num_scales(0, K) == 11 and ict_num_scales(49_999, K) == 11
    assert ict_num_scales(50_000, K) == 21 and ict_num_scales(K, K) == 1281
    s = karras_sigmas(11)
    p = ict_step_probabilities(s)
    erf = [math.erf((math.log(float(v)) + 1.1) / (math.sqrt(2) * 2.0)) for v in s]
    ref = torch.tensor([erf[i + 1] - erf[i] for i in range(10)])
    torch.testing.assert_close(p, ref / ref.sum())
    torch.testing.assert_close(ict_step_weights(s), 1 / (s[1:] - s[:-1]))


def test_consistency_loss_closed_form_for_identity_and_exact_function():
    s = karras_sigmas(6)
    g = torch.Generator().manual_seed(0)
    x0, z = torch.randn(5, 3, generator=g), torch.randn(5, 3, generator=g)
    idx = torch.tensor([0, 1, 2, 3, 4])
    calls = []

    def identity(x, sigma):
        calls.append(torch.is_grad_enabled())
        return x

    loss = consistency_training_loss(identity, x0, s, indices=idx, noise=z)
    ds = s[1:] - s[:-1]
    c = 0.00054 * math.sqrt(3)
    dist = torch.sqrt(ds**2 * (z**2).sum(1) + c**2) - c  # student - teacher = (s_{i+1} - s_i) z
    torch.testing.assert_close(loss, (dist / ds).mean())
    assert calls == [True, False]  # the teacher runs under no_grad (stop-gradient)
    point = torch.full((5, 3), 0.7)  # point-mass data: f(x, sigma) = 0.7 is the exact consistency function
    assert (
        float(consistency_training_loss(lambda x, sg: torch.full_like(x, 0.7), point, s, generator=g)) == 0.0
    )


def test_bad_inputs():
    with pytest.raises(ValueError, match="sigmas"):
        ict_step_weights(torch.tensor([1.0, 0.5]))
    with pytest.raises(ValueError, match="n must be"):
        karras_sigmas(1)
    with pytest.raises(ValueError, match="indices"):
        consistency_training_loss(
            lambda x, s: x, torch.zeros(2, 2), karras_sigmas(4), indices=torch.tensor([0, 3])
        )
    with pytest.raises(ValueError, match="x"):
        pseudo_huber(torch.zeros(2, 2), torch.zeros(2, 3))
    with pytest.raises(ValueError, match="step"):
        ict_num_scales(-1, 10)


def test_pseudo_huber_elementwise_is_the_entry_mean_of_the_scalar_formula():
    # Inverse Flow's code (Zhang & Zhou 2025): mean_j sqrt((x_j - y_j)^2 + c^2) - c, c = 0.00054 sqrt(d)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(3, 4, 5, generator=g, dtype=torch.float64), torch.randn(3, 4, 5, generator=g, dtype=torch.float64)
    c = 0.00054 * math.sqrt(20)
    want = [sum(math.sqrt((a - b) ** 2 + c**2) - c for a, b in zip(xi.flatten().tolist(), yi.flatten().tolist(), strict=False)) / 20
            for xi, yi in zip(x, y, strict=False)]
    got = pseudo_huber(x, y, elementwise=True)
    assert torch.allclose(got, torch.tensor(want, dtype=torch.float64), atol=1e-12)
    mask = torch.zeros(3, 4, 5, dtype=torch.bool)
    mask[:, :2] = True  # 10 valid entries per sample: c = 0.00054 sqrt(10)
    c10 = 0.00054 * math.sqrt(10)
    want_m = [sum(math.sqrt((a - b) ** 2 + c10**2) - c10 for a, b in zip(xi[:2].flatten().tolist(),
              yi[:2].flatten().tolist(), strict=False)) / 10 for xi, yi in zip(x, y, strict=False)]
    assert torch.allclose(pseudo_huber(x, y, mask=mask, elementwise=True), torch.tensor(want_m, dtype=torch.float64))


def test_consistency_training_loss_elementwise_weights_each_pair_by_its_step():
    sig = torch.tensor([0.1, 0.2, 0.5], dtype=torch.float64)
    x0 = torch.zeros(2, 3, dtype=torch.float64)
    z = torch.ones(2, 3, dtype=torch.float64)
    idx = torch.tensor([0, 1])
    # f(x, s) = x: student x0 + s_hi z, teacher x0 + s_lo z; every entry differs by s_hi - s_lo
    loss = consistency_training_loss(lambda x, s: x, x0, sig, indices=idx, noise=z, elementwise=True)
    c = 0.00054 * math.sqrt(3)
    per = [(math.sqrt(0.1**2 + c**2) - c) / 0.1, (math.sqrt(0.3**2 + c**2) - c) / 0.3]
    assert loss.item() == pytest.approx(sum(per) / 2, rel=1e-12)
