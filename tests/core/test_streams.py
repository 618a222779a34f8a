"""Per-sample random streams (scigen.core.streams): the published SplitMix64, the distributions they draw, and
the property they exist for (a sample's draws do not depend on its batch)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from scigen.core import streams
from scigen.core.errors import InvalidInputError
from scigen.core.losses import denoising_loss, sample_times
from scigen.core.paths import LinearPath
from scigen.core.streams import SampleStreams, sample_streams, splitmix64

M64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def _mix(z: int) -> int:  # SplitMix64's finaliser, written from Steele, Lea & Flood (2014)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def test_splitmix64_matches_the_published_sequence():
    # the first outputs for seed 1234567 (the reference sequence of Vigna's splitmix64.c as tabulated on
    # Rosetta Code, "Pseudo-random numbers/Splitmix64")
    assert splitmix64(1234567, 5) == [6457827717110365317, 3203168211198807973, 9817491932198370423,
                                      4593380528125082431, 16408922859458223821]


def test_tensor_bits_equal_splitmix64_of_the_key_and_draw_states():
    seed, keys = 42, [0, 7, 2**40 + 3]
    s = SampleStreams(seed, keys)
    words = s._bits((3, 5), None, "cpu")[..., 0]
    words2 = s._bits((3, 2), None, "cpu")[..., 0]
    for r, k in enumerate(keys):
        key_state = _mix((_mix((seed * GAMMA) & M64) + k * GAMMA) & M64)
        for draw, w, n in ((1, words, 5), (2, words2, 2)):
            state = _mix((key_state + draw * GAMMA) & M64)
            assert [v & M64 for v in w[r].tolist()] == splitmix64(state, n)


def test_normals_and_uniforms_follow_their_distributions():
    s = SampleStreams(3, torch.arange(4000))
    z = s.randn((4000, 5), dtype=torch.float64).flatten().numpy()
    u = s.rand((4000, 5), dtype=torch.float64).flatten().numpy()
    assert stats.kstest(z, "norm").pvalue > 1e-3
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    k = s.randint(0, 6, (4000, 3)).flatten().numpy()
    assert k.min() == 0 and k.max() == 5
    assert stats.chisquare(np.bincount(k, minlength=6)).pvalue > 1e-3
    # neighbouring keys are uncorrelated (|r| within 4 standard errors of 0)
    zz = SampleStreams(3, torch.arange(2)).randn((2, 20000), dtype=torch.float64)
    assert abs(float(torch.corrcoef(zz)[0, 1])) < 4 / np.sqrt(20000)


def test_a_rows_draws_do_not_depend_on_the_batch_it_is_in():
    full = SampleStreams(11, torch.arange(8))
    a = full.randn((8, 3, 2))
    b = full.rand((8,))
    for i in (0, 5, 7):
        alone = SampleStreams(11, [i])
        torch.testing.assert_close(alone.randn((1, 3, 2)), a[i:i + 1], rtol=0, atol=0)
        torch.testing.assert_close(alone.rand((1,)), b[i:i + 1], rtol=0, atol=0)
    rev = SampleStreams(11, torch.arange(8).flip(0))
    torch.testing.assert_close(rev.randn((8, 3, 2)), a.flip(0), rtol=0, atol=0)
    # different seeds, or a later draw, give different numbers
    assert not torch.equal(SampleStreams(12, torch.arange(8)).randn((8, 3, 2)), a)
    assert not torch.equal(full.randn((8, 3, 2)), a)


def test_rows_name_the_sample_of_each_row_of_a_ragged_draw():
    # nodes of a batch of graphs: graph g's nodes take consecutive positions of graph g's stream
    rows = torch.tensor([0, 0, 0, 1, 1, 2])
    s = SampleStreams(5, [10, 20, 30])
    z = s.randn((6, 4), rows=rows)
    shuffled = torch.tensor([1, 2, 0, 1, 0, 0])  # the same nodes in another order: rows keep their node order per graph
    z2 = SampleStreams(5, [10, 20, 30]).randn((6, 4), rows=shuffled)
    for g in range(3):
        torch.testing.assert_close(z2[shuffled == g], z[rows == g], rtol=0, atol=0)
    alone = SampleStreams(5, [20]).randn((2, 4), rows=torch.tensor([0, 0]))
    torch.testing.assert_close(alone, z[3:5], rtol=0, atol=0)


def test_bad_shapes_and_keys_are_refused():
    s = SampleStreams(0, torch.arange(4))
    with pytest.raises(InvalidInputError, match="has 3 rows but there are 4 samples"):
        s.randn((3, 2))
    with pytest.raises(InvalidInputError, match="keys must be a 1-D integer"):
        SampleStreams(0, torch.zeros(3))
    with pytest.raises(InvalidInputError, match="rows must index the 4 samples"):
        s.randn((2, 2), rows=torch.tensor([0, 4]))
    with pytest.raises(TypeError, match="generator must be"):
        streams.randn((2,), generator=np.random.default_rng(0))


def test_engine_draws_take_the_active_streams_and_batch_coupled_time_samplers_refuse():
    x0 = torch.randn(6, 3)
    seen = []

    def net(x, t):  # records the noisy inputs and times the loss drew
        seen.append((x.clone(), t.clone()))
        return torch.zeros_like(x)

    with sample_streams(SampleStreams(1, torch.arange(6))):
        denoising_loss(net, x0, LinearPath(), "velocity")
    with sample_streams(SampleStreams(1, torch.arange(2, 4))):
        denoising_loss(net, x0[2:4], LinearPath(), "velocity")
    (x_full, t_full), (x_part, t_part) = seen
    torch.testing.assert_close(t_part, t_full[2:4], rtol=0, atol=0)
    torch.testing.assert_close(x_part, x_full[2:4], rtol=0, atol=0)
    # outside a block: torch's global generator, as before
    torch.manual_seed(0)
    a = sample_times("uniform", 4)
    torch.manual_seed(0)
    torch.testing.assert_close(a, torch.rand(4))
    with sample_streams(SampleStreams(1, torch.arange(4))), pytest.raises(ValueError, match="couples the rows"):
        sample_times("stratified", 4)


def test_a_sample_is_the_same_alone_or_in_a_batch_with_a_stochastic_sampler():
    from scigen.core.paths import VPLinear
    from scigen.core.samplers import sample, time_grid

    path = VPLinear()
    model = torch.nn.Linear(3, 2)

    def eps(x, t):
        return model(torch.cat([x, t[:, None]], 1))

    def draw(keys):
        g = SampleStreams(9, keys)
        x1 = streams.randn((len(keys), 2), generator=g)
        return sample(eps, x1, time_grid(6), path=path, prediction="eps", method="ddpm", generator=g, progress=False)

    batch = draw(torch.arange(5))
    for i in (1, 4):
        torch.testing.assert_close(draw(torch.tensor([i])), batch[i:i + 1], rtol=1e-6, atol=1e-6)


def test_antithetic_times_pair_samples_by_key_under_streams():
    with sample_streams(SampleStreams(2, torch.arange(6))):
        t = sample_times("antithetic", 6)
    torch.testing.assert_close(t[1::2], 1 - t[0::2], rtol=0, atol=1e-7)  # keys 2m and 2m + 1: u and 1 - u
    with sample_streams(SampleStreams(2, torch.tensor([3, 0]))):
        t2 = sample_times("antithetic", 2)
    torch.testing.assert_close(t2, t[[3, 0]], rtol=0, atol=0)  # the same values in another batch
    with sample_streams(SampleStreams(2, torch.arange(4000))):
        big = sample_times("antithetic", 4000).double().numpy()
    assert stats.kstest(big[0::2], "uniform").pvalue > 1e-3  # each marginal uniform


def test_child_streams_are_keyed_by_the_parents_key_and_the_childs_place_only():
    whole = SampleStreams(4, torch.tensor([10, 11, 12])).children(torch.tensor([0, 0, 1, 2, 2]),
                                                                  torch.tensor([0, 1, 0, 0, 1]))
    assert whole.keys.tolist() == [10 << 20, (10 << 20) + 1, 11 << 20, 12 << 20, (12 << 20) + 1]
    alone = SampleStreams(4, torch.tensor([12])).children(torch.tensor([0, 0]), torch.tensor([0, 1]))
    torch.testing.assert_close(whole.randn((5, 3))[3:], alone.randn((2, 3)), rtol=0, atol=0)
    with pytest.raises(InvalidInputError, match=r"\[0, 2\^10\)"):
        SampleStreams(0, torch.arange(2)).children(torch.tensor([0]), torch.tensor([1024]), bits=10)
