"""Baselines run beside GIM (ours; the paper's baseline list could not be read).

* :class:`ConditionalGaussian` — the *unstructured* baseline: an MLP ``(γ, log1p c) ↦ μ`` with one shared
  full covariance (Cholesky factor), fitted by the exact Gaussian likelihood of each context from its
  sufficient statistics through the engine's :func:`scigen.core.train.fit`. It has no causal structure;
  its "target score" for a variable is the predicted standardised mean shift ``|μ_j(γ) − μ_j(control)|``
  (a shift-ranking proxy).
* the *per-context* baseline is GIM itself with ``use_head=False, training="map"`` (every training
  context's intervention estimated on its own; an unseen context takes the nearest training context's).
* CPA (``cpa-tools``) is not run: it requires ``scvi-tools<1.0`` and does not install with this
  project's torch pin.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor, nn

from scigen.core.rng import preserves_rng

__all__ = ["ConditionalGaussian"]


class _Net(nn.Module):
    def __init__(self, p: int, d: int, width: int) -> None:
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(p + 1, width), nn.SiLU(), nn.Linear(width, width), nn.SiLU(),
                                 nn.Linear(width, d))
        self.chol_raw = nn.Parameter(torch.zeros(d, d))

    def chol(self) -> Tensor:
        low = torch.tril(self.chol_raw, -1)
        return low + torch.diag(torch.exp(torch.diagonal(self.chol_raw)))


class ConditionalGaussian:
    """The unstructured baseline (module docstring). Works on a trained :class:`GIM`'s standardisation."""

    def __init__(self, width: int = 64) -> None:
        self.width = width

    @preserves_rng  # seeds torch for its network; the caller's random state is left alone
    def fit(self, gim, adata, *, max_steps: int = 600, seed: int = 0) -> ConditionalGaussian:
        """Fit on the training contexts that ``gim`` (a fitted GIM) read from ``adata``."""
        from scigen.core.train import fit as core_fit
        from scigen.singlecell.gim.contexts import read_contexts

        cfg, md = gim.config, gim.metadata
        ctx = read_contexts(adata, perturbation_key=cfg.perturbation_key, dose_key=cfg.dose_key, control=cfg.control,
                            features_key=None if md["onehot"] else cfg.features_key, use_rep=cfg.use_rep,
                            layer=cfg.layer, split_key=cfg.split_key, splits=(cfg.train_split,), min_cells=cfg.min_cells)
        self.gim = gim
        mean, std = np.asarray(md["center"]), np.asarray(md["scale"])
        cells = [(c - mean) / std for c in ctx.cells]
        n = torch.tensor([len(c) for c in cells], dtype=torch.float32)
        s1 = torch.stack([torch.as_tensor(c.sum(0), dtype=torch.float32) for c in cells])
        s2 = torch.stack([torch.as_tensor(c.T @ c, dtype=torch.float32) for c in cells])
        gamma, dose = gim._inputs(ctx.features, ctx.doses)
        gamma, dose = gamma.cpu(), dose.cpu()
        ctrl = torch.tensor([nm == cfg.control for nm in ctx.names])
        d = ctx.dim
        torch.manual_seed(seed)
        net = _Net(gamma.shape[1], d, self.width)

        def loss_fn(module: _Net, idx: Tensor) -> Tensor:
            idx = torch.cat([idx.long(), torch.nonzero(ctrl).reshape(-1)]).unique()
            mu = module.mlp(torch.cat([gamma[idx], torch.log1p(dose[idx])[:, None]], 1))
            mu = torch.where(ctrl[idx][:, None], module.mlp(torch.cat([gamma[idx] * 0, dose[idx][:, None] * 0], 1)), mu)
            lc = module.chol()
            prec = torch.cholesky_inverse(lc)
            nk, m1, m2 = n[idx], s1[idx], s2[idx]
            # Σ_i (x_i − μ)ᵀ P (x_i − μ) = tr(P S2) − 2 μᵀ P s1 + n μᵀ P μ
            quad = (prec * m2).sum((1, 2)) - 2 * ((m1 @ prec) * mu).sum(1) + nk * ((mu @ prec) * mu).sum(1)
            logdet = 2 * torch.log(torch.diagonal(lc)).sum()
            ll = -0.5 * quad - nk * (0.5 * logdet + 0.5 * d * math.log(2 * math.pi))
            return -ll.sum() / nk.sum()

        res = core_fit(net, loss_fn, torch.arange(len(ctx.names)), max_steps=max_steps, batch_size=32, lr=5e-3,
                       seed=seed, logger=None, progress=False)
        self.net = res.module.eval()
        return self

    @torch.no_grad()
    def _means(self, feats, doses) -> Tensor:
        gamma, dose = self.gim._inputs(feats, doses)
        return self.net.mlp(torch.cat([gamma.cpu(), torch.log1p(dose.cpu())[:, None]], 1))

    @torch.no_grad()
    def predict(self, feats, doses, n_cells: int, seed: int = 0) -> np.ndarray:
        """``[K, n_cells, d]`` cells in the data's units."""
        md = self.gim.metadata
        mu = self._means(feats, doses)
        g = torch.Generator().manual_seed(seed)
        z = mu[:, None] + torch.randn(mu.shape[0], n_cells, mu.shape[1], generator=g) @ self.net.chol().T
        return z.double().numpy() * np.asarray(md["scale"]) + np.asarray(md["center"])

    @torch.no_grad()
    def target_scores(self, feats, doses) -> np.ndarray:
        """``|μ(γ, c) − μ(control)|`` per variable (standardised units)."""
        mu = self._means(feats, doses)
        ctrl = self.net.mlp(torch.zeros(1, self.net.mlp[0].in_features))
        return (mu - ctrl).abs().numpy()
