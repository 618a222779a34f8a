"""The baselines run beside Inverse Flow, against brute force and closed forms: k-NN smoothing is the mean
of each cell and its k nearest neighbours; Noise2Self's donut interpolation is the 4-neighbour mean and
never sees the pixel it replaces (J-invariance); its grid mask hides 1/grid² of the pixels; on low-rank
vectors with Gaussian noise it lowers the error to the truth."""

from __future__ import annotations

import numpy as np
import torch

from scigen.singlecell.inverseflow.baselines import _donut, _grid_mask, knn_smooth, noise2self


def test_knn_smooth_is_the_brute_force_neighbour_mean():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3))
    k = 4
    d = ((x[:, None] - x[None]) ** 2).sum(-1)
    nbr = np.argsort(d, axis=1, kind="stable")[:, : k + 1]  # itself (distance 0) and its k nearest
    np.testing.assert_allclose(knn_smooth(x, k=k, n_pcs=30), x[nbr].mean(1), atol=1e-12)


def test_donut_is_the_four_neighbour_mean_and_ignores_the_centre():
    g = torch.Generator().manual_seed(0)
    x = torch.rand(1, 1, 6, 7, generator=g, dtype=torch.float64)
    out = _donut(x)
    i, j = 2, 3
    want = (x[0, 0, i - 1, j] + x[0, 0, i + 1, j] + x[0, 0, i, j - 1] + x[0, 0, i, j + 1]) / 4
    torch.testing.assert_close(out[0, 0, i, j], want)
    y = x.clone()
    y[0, 0, i, j] += 10.0
    torch.testing.assert_close(_donut(y)[0, 0, i, j], out[0, 0, i, j])  # J-invariant at the hidden pixel
    torch.testing.assert_close(_donut(torch.full((1, 1, 5, 5), 0.3)), torch.full((1, 1, 5, 5), 0.3))


def test_grid_mask_hides_one_pixel_per_grid_cell():
    m = _grid_mask(torch.zeros(2, 1, 16, 12), 4)
    assert m.shape == (2, 1, 16, 12) and int(m[0, 0].sum()) == (16 // 4) * (12 // 4)
    rows, cols = torch.nonzero(m[0, 0], as_tuple=True)
    assert set((rows % 4).tolist()) == {int(rows[0]) % 4} and set((cols % 4).tolist()) == {int(cols[0]) % 4}


def test_noise2self_denoises_low_rank_vectors():
    rng = np.random.default_rng(0)
    clean = rng.normal(size=(600, 2)) @ rng.normal(size=(2, 20))  # rank 2: every feature predictable from the rest
    noisy = clean + 0.5 * rng.normal(size=clean.shape)
    out = noise2self(noisy, max_steps=300, batch_size=128, mask_frac=0.1, width=64, depth=2)
    mse, mse_noisy = ((out - clean) ** 2).mean(), ((noisy - clean) ** 2).mean()
    assert mse < 0.5 * mse_noisy, (mse, mse_noisy)
