"""Per-sample random streams in the molecule losses (issue 33): a molecule's draws depend on its key only."""

from __future__ import annotations

import torch

from scigen.core.streams import SampleStreams
from scigen.molecules.data.batching import com_norm, ptr_from_counts, zero_com_noise
from scigen.molecules.unigem.process import draw_steps


def test_unigem_phases_split_by_key_parity_and_each_step_is_uniform_on_its_range():
    T, t_n, n = 1000, 10, 20000
    k = draw_steps(n, T, t_n, generator=SampleStreams(0, torch.arange(n)))
    even, odd = k[0::2], k[1::2]
    assert int(even.min()) >= t_n + 1 and int(even.max()) <= T
    assert int(odd.min()) >= 0 and int(odd.max()) <= t_n
    # uniform on {t_n+1..T} and {0..t_n}: means (T + t_n + 1) / 2 and t_n / 2, 5 standard errors
    for v, lo, hi in ((even, t_n + 1, T), (odd, 0, t_n)):
        sd = (((hi - lo + 1) ** 2 - 1) / 12) ** 0.5
        assert abs(v.double().mean().item() - (lo + hi) / 2) < 5 * sd / len(v) ** 0.5
    both = draw_steps(4, T, t_n, generator=SampleStreams(3, torch.arange(4)))
    halves = torch.cat([draw_steps(2, T, t_n, generator=SampleStreams(3, torch.arange(2))),
                        draw_steps(2, T, t_n, generator=SampleStreams(3, torch.arange(2, 4)))])
    assert torch.equal(both, halves)


def test_zero_com_noise_is_keyed_by_molecule_and_centred():
    ptr = ptr_from_counts(torch.tensor([3, 5, 2, 4]))
    whole = zero_com_noise(ptr, generator=SampleStreams(1, torch.arange(4)))
    second = zero_com_noise(ptr_from_counts(torch.tensor([2, 4])), generator=SampleStreams(1, torch.tensor([2, 3])))
    torch.testing.assert_close(whole[8:], second, rtol=0, atol=1e-6)
    assert com_norm(whole, ptr).max() < 1e-6
