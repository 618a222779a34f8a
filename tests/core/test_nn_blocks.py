"""Tests of scigen.core.nn: embeddings, FiLM / adaLN-Zero, residual MLP, transformer block."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from scigen.core.nn import (
    AdaLNZero,
    FiLM,
    GaussianFourierProjection,
    ResidualMLP,
    SelfAttention,
    SinusoidalTimeEmbedding,
    TransformerBlock,
    modulate,
)


def test_sinusoidal_embedding_matches_closed_form_and_is_injective():
    emb = SinusoidalTimeEmbedding(8, scale=1000.0, max_period=10_000.0)
    t = torch.tensor([0.0, 0.25, 1.0])
    out = emb(t)
    assert out.shape == (3, 8)
    # closed form: [cos(1000 t w_k), sin(1000 t w_k)], w_k = 10000^(-k/4)
    for i, ti in enumerate(t.tolist()):
        for k in range(4):
            w = 10_000.0 ** (-k / 4)
            assert out[i, k].item() == pytest.approx(math.cos(1000 * ti * w), abs=1e-4)
            assert out[i, 4 + k].item() == pytest.approx(math.sin(1000 * ti * w), abs=1e-4)
    # distinct times -> distinct embeddings (min pairwise distance over a fine grid)
    grid = torch.linspace(0, 1, 201)
    e = SinusoidalTimeEmbedding(64)(grid)
    d = torch.cdist(e, e) + torch.eye(201) * 1e9
    assert d.min() > 0.1
    assert SinusoidalTimeEmbedding(7)(grid).shape == (201, 7)


def test_gaussian_fourier_projection_distinct_and_unit_norm():
    proj = GaussianFourierProjection(32, scale=16.0, seed=0)
    grid = torch.linspace(0, 1, 101)
    e = proj(grid)
    assert e.shape == (101, 32)
    # sin^2 + cos^2 = 1 per frequency -> squared norm = dim / 2
    assert torch.allclose((e**2).sum(-1), torch.full((101,), 16.0), atol=1e-4)
    d = torch.cdist(e, e) + torch.eye(101) * 1e9
    assert d.min() > 0.1
    # W is fixed by the seed and saved as a buffer
    assert torch.equal(proj.W, GaussianFourierProjection(32, scale=16.0, seed=0).W)
    assert "W" in proj.state_dict()


def test_embeddings_reject_bad_time():
    with pytest.raises(ValueError, match="t must have shape"):
        SinusoidalTimeEmbedding(8)(torch.zeros(2, 3))
    with pytest.raises(TypeError, match="t must be a torch.Tensor"):
        GaussianFourierProjection(8)([0.1, 0.2])
    with pytest.raises(ValueError, match="even"):
        GaussianFourierProjection(7)


def test_film_is_identity_at_init_and_matches_formula_after():
    torch.manual_seed(0)
    film = FiLM(5, 6)
    x, c = torch.randn(4, 3, 6), torch.randn(4, 5)
    assert torch.equal(film(x, c), x)
    # channels-first
    film_cf = FiLM(5, 6, dim=1)
    xi = torch.randn(4, 6, 7, 7)
    assert torch.equal(film_cf(xi, c), xi)
    # after a perturbation: x * (1 + gamma) + beta with [gamma, beta] = W silu(c) + b
    torch.nn.init.normal_(film.proj[1].weight)
    torch.nn.init.normal_(film.proj[1].bias)
    gb = F.silu(c) @ film.proj[1].weight.T + film.proj[1].bias
    gamma, beta = gb[:, :6], gb[:, 6:]
    expected = x * (1 + gamma[:, None]) + beta[:, None]
    assert torch.allclose(film(x, c), expected, atol=1e-5)
    with pytest.raises(ValueError, match="FiLM expects"):
        film(torch.randn(4, 3, 5), c)


def test_adaln_zero_chunks_are_zero_and_block_identity_at_init():
    torch.manual_seed(0)
    ada = AdaLNZero(8, 16, n_blocks=2)
    chunks = ada(torch.randn(3, 8))
    assert len(chunks) == 6 and all(ch.shape == (3, 16) and torch.count_nonzero(ch) == 0 for ch in chunks)
    block = TransformerBlock(16, 4, cond_dim=8)
    x = torch.randn(3, 5, 16)
    assert torch.equal(block(x, torch.randn(3, 8)), x)
    with pytest.raises(ValueError, match="cond"):
        block(x)


def test_modulate_broadcasts_on_feature_axis():
    x = torch.ones(2, 3, 4)
    shift, scale = torch.tensor([[1.0, 2, 3, 4], [0, 0, 0, 0]]), torch.full((2, 4), 1.0)
    out = modulate(x, shift, scale)
    assert torch.equal(out[0, 1], torch.tensor([3.0, 4, 5, 6])) and torch.equal(out[1, 2], torch.full((4,), 2.0))


def _manual_attention(attn: SelfAttention, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    B, N, D = x.shape
    H, d = attn.n_heads, D // attn.n_heads
    qkv = x @ attn.qkv.weight.T + attn.qkv.bias
    q, k, v = qkv[..., :D], qkv[..., D : 2 * D], qkv[..., 2 * D :]
    out = torch.zeros(B, N, D, dtype=x.dtype)
    for b in range(B):
        for h in range(H):
            sl = slice(h * d, (h + 1) * d)
            scores = q[b, :, sl] @ k[b, :, sl].T / math.sqrt(d)
            if mask is not None:
                scores = scores.masked_fill(~mask[b][None, :], float("-inf"))
            out[b, :, sl] = torch.softmax(scores, dim=-1) @ v[b, :, sl]
    return out @ attn.proj.weight.T + attn.proj.bias


@pytest.mark.parametrize("use_mask", [False, True])
def test_attention_equals_manual_softmax_qkt(use_mask):
    torch.manual_seed(1)
    attn = SelfAttention(12, 3).double()
    x = torch.randn(2, 6, 12, dtype=torch.float64)
    mask = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], dtype=torch.bool) if use_mask else None
    assert torch.allclose(attn(x, mask), _manual_attention(attn, x, mask), atol=1e-10)


def test_transformer_block_equals_manual_prenorm_computation():
    torch.manual_seed(2)
    block = TransformerBlock(8, 2, mlp_ratio=2).double()
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    h = x + _manual_attention(block.attn, F.layer_norm(x, (8,), block.norm1.weight, block.norm1.bias), None)
    expected = h + block.mlp(F.layer_norm(h, (8,), block.norm2.weight, block.norm2.bias))
    assert torch.allclose(block(x), expected, atol=1e-10)


def test_padding_mask_valid_outputs_ignore_padded_content():
    torch.manual_seed(3)
    block = TransformerBlock(16, 4, cond_dim=6)
    for p in block.ada.parameters():  # leave the zero init so conditioning actually acts
        torch.nn.init.normal_(p, std=0.2)
    x, c = torch.randn(2, 7, 16), torch.randn(2, 6)
    mask = torch.ones(2, 7, dtype=torch.bool)
    mask[0, 4:] = False
    mask[1, 6:] = False
    x2 = x.clone()
    x2[0, 4:] = 100 * torch.randn(3, 16)
    x2[1, 6:] = -50.0
    y1, y2 = block(x, c, mask), block(x2, c, mask)
    assert torch.allclose(y1[mask], y2[mask], atol=1e-5)
    # the padded content did matter without the mask
    assert not torch.allclose(block(x, c)[mask], block(x2, c)[mask], atol=1e-3)
    # an all-padding sample stays finite
    assert torch.isfinite(block(x, c, torch.zeros(2, 7, dtype=torch.bool))).all()
    with pytest.raises(ValueError, match="mask must be a bool tensor"):
        block(x, c, mask.float())


def test_transformer_block_is_permutation_equivariant():
    torch.manual_seed(4)
    block = TransformerBlock(16, 4, cond_dim=6)
    for p in block.ada.parameters():
        torch.nn.init.normal_(p, std=0.2)
    x, c = torch.randn(3, 9, 16), torch.randn(3, 6)
    mask = torch.rand(3, 9) > 0.3
    mask[:, 0] = True
    perm = torch.randperm(9)
    out = block(x, c, mask)
    out_p = block(x[:, perm], c, mask[:, perm])
    assert torch.allclose(out[:, perm], out_p, atol=1e-5)


def test_residual_mlp_shapes_and_time_dependence():
    torch.manual_seed(5)
    net = ResidualMLP(3, 2, width=32, depth=2, cond_dim=4)
    x, t, c = torch.randn(6, 3), torch.rand(6), torch.randn(6, 4)
    assert net(x, t, c).shape == (6, 2)
    # FiLM starts at identity: time has no effect at init
    assert torch.allclose(net(x, torch.zeros(6), c), net(x, torch.ones(6), c))
    with pytest.raises(ValueError, match="x must have last dimension 3"):
        net(torch.randn(6, 4), t)
    with pytest.raises(ValueError, match=r"t must be a scalar or have shape \[B\] = \[6\]"):
        net(x, torch.rand(5))
    with pytest.raises(ValueError, match="cond must have"):
        net(x, t, torch.randn(6, 3))


def test_residual_mlp_embeds_one_shared_time_once():
    """One time for every row (a scalar, or ``t.expand(B)``, stride 0) is embedded once and broadcast: the
    output equals the per-row computation, and the time embedding sees one row instead of B."""
    from scigen.core.nn import ResidualMLP

    torch.manual_seed(0)
    net = ResidualMLP(3, width=32, depth=2, time_dim=16).double()
    for block in net.blocks:  # FiLM starts at zero: give it weights so the time matters
        torch.nn.init.normal_(block.film.proj[1].weight, std=0.3)
    x = torch.randn(50, 3, dtype=torch.float64)
    rows = []
    net.time_embed.register_forward_hook(lambda m, inp, out: rows.append(out.shape[0]))
    per_row = net(x, torch.full((50,), 0.37, dtype=torch.float64))
    shared = net(x, torch.tensor(0.37, dtype=torch.float64).expand(50))
    scalar = net(x, torch.tensor(0.37, dtype=torch.float64))
    assert rows == [50, 1, 1]
    torch.testing.assert_close(shared, per_row, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(scalar, per_row, rtol=1e-12, atol=1e-12)
    other = net(x, torch.full((50,), 0.9, dtype=torch.float64))
    assert not torch.allclose(other, per_row)  # the time is used
