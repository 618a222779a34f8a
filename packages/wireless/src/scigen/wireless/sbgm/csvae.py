"""CSVAE: a VAE whose decoder outputs the prior variances of the sparse coefficients (Böck et al., ICML 2025, Sec. 3.2).

``z ~ N(0, I_L)``, ``s | z ~ CN(0, diag γ_θ(z))``, ``y | s ~ CN(Φ s, ζ I)``. Because ``s | z`` is Gaussian,
``log p(y | z) = log CN(y; 0, Φ diag γ_θ(z) Φᴴ + ζ I)`` is exact, and the objective per observation is

    ELBO(y) = E_{q(z|y)}[log CN(y; 0, C_θ(z))] − KL(q_φ(z|y) ‖ N(0, I))

with one reparameterised draw of ``z`` (the paper's estimator). The encoder is an MLP on
``[Re y, Im y, log ζ]`` (``log ζ`` is our addition: observations carry their own SNR) with linearly
changing widths, ReLU, and mean / log-variance heads. The decoder is the paper's "deep-decoder" shape:
``Linear(L → c₀·S/8)``, then three blocks of 1×1 convolution + ReLU + ×2 linear upsampling, then a 1×1
convolution to one channel: ``log γ [S]``, clamped at ``≥ log_gamma_min`` (paper: −10). On a 2-D grid
(``grid_2d = (G₁, G₂)``, e.g. delay × Doppler of an OFDM frame) it is the paper's 2-D variant: the same
blocks with 2-D 1×1 convolutions and ×2 bilinear upsampling from ``(G₁/8, G₂/8)`` to ``(G₁, G₂)``,
flattened in C order (the dictionary's atom order). It is trained by
the engine's :func:`scigen.core.train.fit` through :meth:`System.train_network` on rows
``[Re y, Im y, ζ]`` (:func:`pack_rows`).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from scigen.core import streams
from scigen.wireless.gaussian import diag_prior_posterior

__all__ = ["CSVAENet", "csvae_elbo", "make_csvae_loss", "pack_rows", "unpack_rows"]


def pack_rows(y: Tensor, zeta: Tensor) -> Tensor:
    """``[B, 2M + 1]`` float32 rows ``[Re y, Im y, ζ]`` (what ``fit`` iterates)."""
    return torch.cat([y.real, y.imag, zeta[:, None]], dim=1).float()


def unpack_rows(rows: Tensor) -> tuple[Tensor, Tensor]:
    """Inverse of :func:`pack_rows` in complex128 / float64."""
    M = (rows.shape[1] - 1) // 2
    r = rows.double()
    return torch.complex(r[:, :M], r[:, M : 2 * M]), r[:, 2 * M]


class CSVAENet(nn.Module):
    """Encoder ``q(z|y)`` and decoder ``log γ(z)``; buffers ``pilot_re, pilot_im [M, N]`` hold the
    training pilot matrix (the encoder's input size is ``2M + 1``)."""

    def __init__(self, n_pilots: int, n_elements: int, n_atoms: int, *, latent_dim: int = 16,
                 encoder_widths: tuple[int, ...] = (128, 64), decoder_channels: tuple[int, ...] = (8, 16, 32, 32),
                 log_gamma_min: float = -10.0, grid_2d: tuple[int, int] | None = None) -> None:
        super().__init__()
        if grid_2d is not None:
            g1, g2 = (int(g) for g in grid_2d)
            if g1 * g2 != n_atoms or g1 % 8 or g2 % 8:
                raise ValueError(f"the 2-D CSVAE decoder upsamples (G1/8, G2/8) three times: grid {grid_2d} must have "
                                 f"both sides divisible by 8 and G1*G2 = S = {n_atoms}")
            self.grid_2d: tuple[int, int] | None = (g1, g2)
        elif n_atoms % 8:
            raise ValueError(f"the CSVAE decoder upsamples S/8 three times: S = {n_atoms} must be divisible by 8")
        else:
            self.grid_2d = None
        self.n_atoms, self.latent_dim, self.log_gamma_min = n_atoms, latent_dim, float(log_gamma_min)
        layers: list[nn.Module] = []
        w_in = 2 * n_pilots + 1
        for w in encoder_widths:
            layers += [nn.Linear(w_in, w), nn.ReLU()]
            w_in = w
        self.encoder = nn.Sequential(*layers)
        self.enc_mu = nn.Linear(w_in, latent_dim)
        self.enc_logvar = nn.Linear(w_in, latent_dim)
        c = decoder_channels
        self.dec_in = nn.Linear(latent_dim, c[0] * (n_atoms // 64 if self.grid_2d else n_atoms // 8))
        conv, mode = (nn.Conv1d, "linear") if self.grid_2d is None else (nn.Conv2d, "bilinear")
        blocks: list[nn.Module] = []
        for a, b in zip(c[:-1], c[1:], strict=True):
            blocks += [conv(a, b, 1), nn.ReLU(), nn.Upsample(scale_factor=2, mode=mode, align_corners=False)]
        self.dec_blocks = nn.Sequential(*blocks)
        self.dec_out = conv(c[-1], 1, 1)
        self.register_buffer("pilot_re", torch.zeros(n_pilots, n_elements, dtype=torch.float64))
        self.register_buffer("pilot_im", torch.zeros(n_pilots, n_elements, dtype=torch.float64))
        self._channels0 = c[0]

    @property
    def pilots(self) -> Tensor:
        return torch.complex(self.pilot_re, self.pilot_im)

    def encode(self, y: Tensor, zeta: Tensor) -> tuple[Tensor, Tensor]:
        """``(μ_φ(y), log σ²_φ(y))`` ``[B, L]``."""
        x = torch.cat([y.real, y.imag, torch.log(zeta)[:, None]], dim=1).to(self.enc_mu.weight.dtype)
        hdn = self.encoder(x)
        return self.enc_mu(hdn), self.enc_logvar(hdn).clamp(-12.0, 8.0)

    def log_gamma(self, z: Tensor) -> Tensor:
        """``log γ_θ(z) [B, S]`` clamped below at ``log_gamma_min``."""
        low = (self.n_atoms // 8,) if self.grid_2d is None else (self.grid_2d[0] // 8, self.grid_2d[1] // 8)
        x = self.dec_in(z).reshape(z.shape[0], self._channels0, *low)
        x = self.dec_out(self.dec_blocks(torch.relu(x)))[:, 0].reshape(z.shape[0], self.n_atoms)
        return x.clamp_min(self.log_gamma_min)


def csvae_elbo(net: CSVAENet, y: Tensor, zeta: Tensor, phi: Tensor, *, generator: torch.Generator | None = None,
               z: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """``(elbo, log_lik, kl)`` per observation ``[B]`` (module docstring); ``z`` overrides the draw."""
    mu, logvar = net.encode(y, zeta)
    if z is None:
        eps = streams.randn(mu.shape, generator=generator, device=mu.device, dtype=mu.dtype)
        z = mu + torch.exp(0.5 * logvar) * eps
    gamma = torch.exp(net.log_gamma(z)).double()
    log_lik = diag_prior_posterior(y, phi, gamma, zeta, per_sample=True, moments=False).log_lik[:, 0]
    kl = 0.5 * (mu.double() ** 2 + logvar.double().exp() - 1.0 - logvar.double()).sum(1)
    return log_lik - kl, log_lik, kl


def make_csvae_loss(dictionary: Tensor):
    """``loss_fn(net, rows)`` for the engine's ``fit``: ``−mean ELBO / M`` (nats per pilot) with
    ``Φ = A D`` from the net's pilot buffers and the fixed dictionary ``D [N, S]``."""

    def loss_fn(net: CSVAENet, rows: Tensor) -> Tensor:
        y, zeta = unpack_rows(rows)
        phi = net.pilots @ dictionary.to(rows.device)
        elbo, _, _ = csvae_elbo(net, y, zeta, phi)
        return (-elbo.mean() / y.shape[1]).float()

    return loss_fn


def log_gamma_prior_draw(net: CSVAENet, n: int, generator) -> Tensor:
    """``γ_θ(z) [n, S]`` for ``z ~ N(0, I)`` (``generator``: a ``torch.Generator`` or per-sample
    :class:`~scigen.core.streams.SampleStreams`)."""
    w = net.enc_mu.weight
    z = streams.randn((n, net.latent_dim), generator=generator, device=w.device, dtype=w.dtype)
    return torch.exp(net.log_gamma(z)).double()

