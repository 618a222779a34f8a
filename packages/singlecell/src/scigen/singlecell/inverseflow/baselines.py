"""Baselines run beside Inverse Flow: Noise2Self (Batson & Royer, ICML 2019) and k-NN smoothing.

* :func:`noise2self` — self-supervised denoising by J-invariance: a random subset J of the entries is
  hidden, the network sees the input with J replaced (images: the mean of the 4 neighbours, the paper's
  "donut" interpolation; vectors: 0 after per-feature centring) and is scored by the masked MSE on J only
  (the paper's Eq. 3 with a grid partition, §4). Images use a grid of spacing ``grid`` with a random phase
  per batch (the official ``Masker``'s scheme), vectors a random fraction ``mask_frac`` of the features.
  Denoising applies the trained network to the unmasked input (the paper's default for speed). Networks
  are the engine's U-Net / residual MLP (fed ``t = 0``); training is the engine's ``fit``.
* :func:`knn_smooth` — each cell replaced by the mean of itself and its ``k`` nearest neighbours in the
  PCA of the noisy data (k-NN smoothing, Wagner, Yan & Yanai 2018, one round; scikit-learn's neighbours).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from scigen.core.losses import masked_mean
from scigen.core.nn import ResidualMLP, UNet
from scigen.core.rng import preserves_rng
from scigen.singlecell.inverseflow.data import random_crops

__all__ = ["knn_smooth", "noise2self"]


class _Plain(nn.Module):
    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x, torch.zeros(x.shape[0], device=x.device, dtype=x.dtype))


def _donut(x: Tensor) -> Tensor:
    k = torch.tensor([[0.0, 0.25, 0.0], [0.25, 0.0, 0.25], [0.0, 0.25, 0.0]], dtype=x.dtype, device=x.device)
    c = x.shape[1]
    return F.conv2d(F.pad(x, (1, 1, 1, 1), mode="reflect"), k.expand(c, 1, 3, 3).contiguous(), groups=c)


def _grid_mask(x: Tensor, grid: int) -> Tensor:
    H, W = x.shape[-2:]
    i, j = (int(v) for v in torch.randint(0, grid, (2,)))
    m = torch.zeros(H, W, dtype=torch.bool, device=x.device)
    m[i::grid, j::grid] = True
    return m.expand(x.shape)


@preserves_rng  # seeds torch for its network; the caller's random state is left alone
def noise2self(data: np.ndarray, *, max_steps: int = 500, batch_size: int = 32, lr: float = 1e-3, grid: int = 4,
               mask_frac: float = 0.1, patch: int = 32, n_patches: int = 1024, base_channels: int = 16,
               channel_mults: tuple[int, ...] = (1, 2, 2), width: int = 128, depth: int = 3, seed: int = 0) -> np.ndarray:
    """Train Noise2Self on noisy ``data`` (images ``[N, H, W]`` or vectors ``[n, d]``) and return it denoised."""
    from scigen.core.train import fit

    arr = np.asarray(data, dtype=np.float32)
    torch.manual_seed(seed)
    if arr.ndim == 3:
        x = torch.as_tensor(arr[:, None])
        factor = 2 ** (len(channel_mults) - 1)
        net = _Plain(UNet(1, base_channels=base_channels, channel_mults=channel_mults, attention=False,
                          groups=min(8, base_channels)))
        N, _, H, W = x.shape
        crops = random_crops(x, patch, n_patches, factor=factor, seed=seed)

        def loss(module, batch):
            m = _grid_mask(batch, grid)
            inp = torch.where(m, _donut(batch), batch)
            return masked_mean((module(inp) - batch) ** 2, m)

        res = fit(net, loss, crops, max_steps=max_steps, batch_size=batch_size, lr=lr, seed=seed, progress=False,
                  logger=None)
        net = res.module.eval()
        ph, pw = (-H) % factor, (-W) % factor
        with torch.no_grad():
            out = [net(F.pad(img[None], (0, pw, 0, ph), mode="reflect"))[..., :H, :W] for img in x]
        return torch.cat(out)[:, 0].numpy()
    if arr.ndim != 2:
        raise ValueError(f"noise2self takes images [N, H, W] or vectors [n, d], got shape {arr.shape}")
    mu, sd = arr.mean(0), arr.std(0) + 1e-8
    z = torch.as_tensor((arr - mu) / sd)
    net = _Plain(ResidualMLP(z.shape[1], width=width, depth=depth))
    k = max(1, int(round(mask_frac * z.shape[1])))

    def loss(module, batch):
        scores = torch.rand(batch.shape, device=batch.device)
        m = scores <= scores.kthvalue(k, dim=1, keepdim=True).values  # k hidden features per cell
        return masked_mean((module(torch.where(m, torch.zeros_like(batch), batch)) - batch) ** 2, m)

    res = fit(net, loss, z, max_steps=max_steps, batch_size=batch_size, lr=lr, seed=seed, progress=False, logger=None)
    with torch.no_grad():
        out = res.module.eval()(z).numpy()
    return out * sd + mu


def knn_smooth(data: np.ndarray, *, k: int = 15, n_pcs: int = 30, seed: int = 0) -> np.ndarray:
    """Mean of each cell and its ``k`` nearest neighbours (Euclidean, in the top ``n_pcs`` PCs of ``data``)."""
    from sklearn.decomposition import PCA
    from sklearn.neighbors import NearestNeighbors

    arr = np.asarray(data, dtype=np.float64)
    n_pcs = min(n_pcs, arr.shape[1], arr.shape[0] - 1)
    emb = PCA(n_pcs, random_state=seed).fit_transform(arr) if arr.shape[1] > n_pcs else arr
    _, nbr = NearestNeighbors(n_neighbors=min(k + 1, len(arr))).fit(emb).kneighbors(emb)
    return arr[nbr].mean(1)
