"""NsDiff's default chain validates its inputs once per call, not at every solver step (issue 36.3)."""

from __future__ import annotations

import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.core.paths import LocationScalePath
from scigen.timeseries import NsDiff
from scigen.timeseries.data import synthetic_nonstationary
from scigen.timeseries.nsdiff.sampling import _denoiser_sigma_chain


@pytest.fixture(scope="module")
def fitted():
    df = synthetic_nonstationary(300, 2, seed=0)
    m = NsDiff(NsDiff.Config.preset("tiny"), train={"progress": False}).fit(df, max_steps=3)
    X, _ = m.evaluation_windows(df, max_windows=4)
    with torch.no_grad():
        f, g = m.network.mean_var(X)
    return m, f, g


def test_the_default_chain_checks_its_variances_once_and_gives_the_same_draws(fitted, monkeypatch):
    m, f, g = fitted
    err = m.network.eps_error.detach().double()
    calls = []
    real = LocationScalePath._check_vars

    def spy(self, x, var, var2):
        calls.append(1)
        return real(self, x, var, var2)

    monkeypatch.setattr(LocationScalePath, "_check_vars", spy)
    run = lambda every: _denoiser_sigma_chain(m.network, m.path, f, g, err, torch.Generator().manual_seed(5),  # noqa: E731
                                              None, None, check_every_step=every)
    with torch.no_grad():
        once = run(False)
        n_once = len(calls)
        calls.clear()
        every = run(True)
    steps = m.config.diffusion_steps
    assert n_once == 0 and len(calls) >= 2 * steps  # the former code scanned the variances 3 times a step
    torch.testing.assert_close(once, every, rtol=0, atol=0)


def test_a_bad_variance_is_refused_once_before_the_loop(fitted):
    m, f, g = fitted
    err = m.network.eps_error.detach().double()
    bad = g.clone()
    bad[0, 0, 0] = float("nan")
    with pytest.raises(InvalidInputError, match="g\\(X\\) must be finite and positive"):
        _denoiser_sigma_chain(m.network, m.path, f, bad, err, None)
