"""Toy distributions for the built-in ``core/toy`` system and for the engine's benchmarks.

All are seeded and exact to their definitions:

* ``eight_gaussians`` — 8 isotropic Gaussians (std 0.5 / scale) on a circle of radius ``scale`` (the
  FFJORD / torchcfm benchmark, scaled so the data have unit-order variance).
* ``moons`` — two interleaving half circles with Gaussian jitter (scikit-learn's definition).
* ``checkerboard`` — uniform on the black squares of a 4 x 4 board on [-2, 2]^2.
* ``gaussian_mixture_32d`` — an 8-component mixture in 32 dimensions with means drawn once from a
  fixed seed (so every call uses the same mixture) and isotropic std 0.3.
"""

from __future__ import annotations

import math

import torch

from scigen.core.errors import InvalidInputError

DATASETS = ("eight_gaussians", "moons", "checkerboard", "gaussian_mixture_32d")


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


def eight_gaussians(n: int, seed: int = 0, scale: float = 2.0, std: float = 0.25) -> torch.Tensor:
    """``n`` points of the eight-Gaussians mixture (equal weights), shape ``[n, 2]``."""
    g = _generator(seed)
    k = torch.randint(0, 8, (n,), generator=g)
    angle = k.to(torch.float32) * (2 * math.pi / 8)
    centers = scale * torch.stack([torch.cos(angle), torch.sin(angle)], dim=1)
    return centers + std * torch.randn(n, 2, generator=g)


def moons(n: int, seed: int = 0, noise: float = 0.1) -> torch.Tensor:
    """``n`` points of two interleaving moons (sklearn's layout), centred, shape ``[n, 2]``."""
    g = _generator(seed)
    upper = torch.rand(n, generator=g) < 0.5
    theta = math.pi * torch.rand(n, generator=g)
    x = torch.where(upper, torch.cos(theta), 1 - torch.cos(theta))
    y = torch.where(upper, torch.sin(theta), 0.5 - torch.sin(theta))
    pts = torch.stack([x, y], dim=1) + noise * torch.randn(n, 2, generator=g)
    return (pts - torch.tensor([0.5, 0.25])) * 1.5


def checkerboard(n: int, seed: int = 0) -> torch.Tensor:
    """``n`` points uniform on the 8 black cells of a 4 x 4 board on [-2, 2]^2, shape ``[n, 2]``."""
    g = _generator(seed)
    cell = torch.randint(0, 8, (n,), generator=g)
    row = cell // 2
    col = 2 * (cell % 2) + (row % 2)
    offset = torch.rand(n, 2, generator=g)
    return torch.stack([col + offset[:, 0], row + offset[:, 1]], dim=1) - 2.0


def gaussian_mixture_32d(n: int, seed: int = 0, components: int = 8, dim: int = 32,
                         std: float = 0.3) -> torch.Tensor:
    """``n`` points of a fixed 8-component isotropic mixture in 32-d, shape ``[n, 32]``."""
    means = torch.randn(components, dim, generator=_generator(12345)) * (1.0 / math.sqrt(dim)) * 3
    g = _generator(seed)
    k = torch.randint(0, components, (n,), generator=g)
    return means[k] + std * torch.randn(n, dim, generator=g)


def toy_data(name: str, n: int, seed: int = 0) -> torch.Tensor:
    """Draw ``n`` points of the toy distribution ``name`` (one of :data:`DATASETS`)."""
    table = {"eight_gaussians": eight_gaussians, "moons": moons, "checkerboard": checkerboard,
             "gaussian_mixture_32d": gaussian_mixture_32d}
    if name not in table:
        raise InvalidInputError(f"unknown toy dataset {name!r}; valid: {', '.join(DATASETS)}")
    if int(n) <= 0:
        raise InvalidInputError(f"n must be positive, got {n}")
    return table[name](int(n), seed=seed)
