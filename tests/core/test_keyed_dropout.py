"""Keyed dropout (scigen.core.nn.dropout): nn.Dropout outside per-sample streams, a mask keyed by sample inside."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from scigen.core.errors import InvalidInputError
from scigen.core.nn import ResidualMLP, SelfAttention
from scigen.core.nn.dropout import KeyedDropout, keyed_dropout
from scigen.core.streams import SampleStreams, sample_streams


def test_outside_streams_it_is_torch_dropout_draw_for_draw():
    x = torch.randn(6, 5)
    torch.manual_seed(3)
    want = F.dropout(x, 0.3, True)
    torch.manual_seed(3)
    got = KeyedDropout(0.3)(x)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    torch.testing.assert_close(KeyedDropout(0.3).eval()(x), x, rtol=0, atol=0)


def test_inside_streams_kept_entries_are_scaled_by_one_over_keep_and_the_keep_rate_is_one_minus_p():
    p, x = 0.25, torch.ones(4000, 50)
    with sample_streams(SampleStreams(0, torch.arange(4000))):
        y = keyed_dropout(x, p)
    kept = y != 0
    torch.testing.assert_close(y[kept], torch.full_like(y[kept], 1 / (1 - p)))
    n, rate = kept.numel(), kept.float().mean().item()
    assert abs(rate - (1 - p)) < 4 * ((p * (1 - p)) / n) ** 0.5  # binomial: 4 standard deviations


def _whole_and_halves(fn, x: torch.Tensor, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``fn(x)`` under streams keyed 0..3, and ``fn`` on rows 0-1 and 2-3 under their own keys, concatenated."""
    with sample_streams(SampleStreams(seed, torch.arange(4))):
        whole = fn(x)
    halves = []
    for keys in (torch.arange(2), torch.arange(2, 4)):
        with sample_streams(SampleStreams(seed, keys)):
            halves.append(fn(x[keys]))
    return whole, torch.cat(halves)


def test_a_samples_mask_depends_on_its_key_only_not_on_the_batch_it_shares():
    whole, halves = _whole_and_halves(lambda v: keyed_dropout(v, 0.5), torch.randn(4, 3, 7), 5)
    torch.testing.assert_close(halves, whole, rtol=0, atol=0)


def test_a_sample_major_fold_takes_each_samples_rows_from_its_key():
    x = torch.randn(3, 4, 6)  # [B, C, L] folded to [B*C, L], channel-independent style
    with sample_streams(SampleStreams(1, torch.tensor([7, 8, 9]))):
        folded = keyed_dropout(x.reshape(12, 6), 0.4).reshape(3, 4, 6)
    with sample_streams(SampleStreams(1, torch.tensor([8]))):
        alone = keyed_dropout(x[1:2].reshape(4, 6), 0.4).reshape(1, 4, 6)
    torch.testing.assert_close(folded[1:2], alone, rtol=0, atol=0)
    with sample_streams(SampleStreams(1, torch.arange(3))), pytest.raises(InvalidInputError, match="leading rows"):
        keyed_dropout(torch.randn(4, 6), 0.4)


def test_attention_dropout_is_keyed_and_unbiased_and_equals_sdpa_without_dropout():
    torch.manual_seed(0)
    attn = SelfAttention(8, 2, dropout=0.3)
    x = torch.randn(4, 5, 8)
    whole, halves = _whole_and_halves(attn, x, 2)
    torch.testing.assert_close(halves, whole, rtol=1e-6, atol=1e-6)
    # inverted dropout keeps the expectation: the mean over many keyed masks approaches the dropout-free output
    attn.eval()
    exact = attn(x[:1])
    attn.train()
    n = 4000
    with sample_streams(SampleStreams(9, torch.arange(n))):
        mc = attn(x[:1].expand(n, -1, -1)).mean(0, keepdim=True)
    torch.testing.assert_close(mc, exact, rtol=0, atol=0.05)


def test_engine_blocks_train_the_same_on_split_batches_under_streams():
    torch.manual_seed(0)
    net = ResidualMLP(3, 3, width=16, depth=2, dropout=0.5)
    x = torch.randn(4, 3)

    def grads(keys_list):
        net.zero_grad()
        for keys in keys_list:
            with sample_streams(SampleStreams(0, keys)):
                net(x[keys], torch.full((len(keys),), 0.5)).pow(2).sum().backward()
        return [p.grad.clone() for p in net.parameters()]

    for a, b in zip(grads([torch.arange(4)]), grads([torch.arange(2), torch.arange(2, 4)]), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("batch_first", [True, False])
def test_the_written_out_attention_equals_torchs_multihead_attention(batch_first):
    from scigen.core.nn.dropout import KeyedMultiheadAttention

    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(8, 2, dropout=0.0, batch_first=batch_first).eval()
    keyed = KeyedMultiheadAttention(8, 2, dropout=0.0, batch_first=batch_first).eval()
    keyed.load_state_dict(mha.state_dict())
    x = torch.randn(3, 5, 8) if batch_first else torch.randn(5, 3, 8)
    pad = torch.tensor([[False] * 5, [False, False, False, True, True], [False] * 4 + [True]])
    causal = torch.ones(5, 5, dtype=torch.bool).triu(1)
    additive = torch.randn(3 * 2, 5, 5)
    for kw in ({}, {"key_padding_mask": pad}, {"attn_mask": causal}, {"attn_mask": additive},
               {"attn_mask": causal, "key_padding_mask": pad}):
        want, want_w = mha(x, x, x, **kw)
        got, got_w = keyed.explicit(x, x, x, **kw)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(got_w, want_w, rtol=1e-5, atol=1e-6)


def test_keyed_layers_keep_torchs_numbers_outside_streams_and_key_the_masks_inside():
    from scigen.core.nn.dropout import KeyedMultiheadAttention, keyed_layers

    torch.manual_seed(0)
    plain = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.3, batch_first=True)
    keyed = keyed_layers(torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.3, batch_first=True))
    keyed.load_state_dict(plain.state_dict())
    assert isinstance(keyed.self_attn, KeyedMultiheadAttention) and isinstance(keyed.dropout1, KeyedDropout)
    x = torch.randn(4, 5, 8)
    torch.manual_seed(7)
    want = plain(x)
    torch.manual_seed(7)
    torch.testing.assert_close(keyed(x), want, rtol=0, atol=0)  # same draws from torch's generator
    whole, halves = _whole_and_halves(keyed, x, 1)
    torch.testing.assert_close(halves, whole, rtol=1e-5, atol=1e-6)
    assert not torch.allclose(whole, want)  # inside streams the masks are the keyed ones, not torch's
