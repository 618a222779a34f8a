"""GIM's fixed per-context prior (``per_context_prior``): the E-step prior of the per-context baseline
(``use_head=False``) and of the EM warm-up, in closed form."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

from scigen.singlecell.gim.config import GIMConfig
from scigen.singlecell.gim.objective import em_prior


@pytest.mark.parametrize("prior", [(0.1, 3.0), (0.4, 0.5)])
def test_per_context_prior_sets_the_target_probability_and_shift_scale(prior):
    cfg = GIMConfig(use_head=False, training="map", per_context_prior=prior)
    head_called = []
    net = SimpleNamespace(use_head=False, head=lambda *a: head_called.append(a))
    t = SimpleNamespace(s1=torch.zeros(6, 4, dtype=torch.float64), gamma=None, dose=None)
    logits, mu, log_s, logscale = em_prior(net, t, torch.tensor([0, 2, 5]), tuple(cfg.per_context_prior))
    p0, scale = prior
    assert not head_called and logits.shape == (3, 4)
    torch.testing.assert_close(torch.sigmoid(logits), torch.full((3, 4), p0, dtype=torch.float64))
    torch.testing.assert_close(log_s.exp(), torch.full((3, 4), scale, dtype=torch.float64))
    assert bool((mu == 0).all()) and bool((logscale == 0).all())
    # with the head on, only the EM warm-up (fixed=True) uses the fixed prior
    net.use_head = True
    warm = em_prior(net, t, torch.tensor([1]), tuple(cfg.per_context_prior), fixed=True)
    assert float(warm[0][0, 0]) == pytest.approx(math.log(p0 / (1 - p0))) and not head_called
