"""Noise models ``p(x1 | x0)`` of Inverse Flow (Zhang & Zhou, ICML 2025, §3 and App.; the official code's
``GaussianFlow`` ... ``RayleighFlow``), as objects.

Every model has ``sample(x0, generator=None) -> x1`` (same shape; ``generator`` a ``torch.Generator`` for
reproducible draws, ``None`` = torch's global RNG) and, where the density exists in closed form,
``log_prob(x1, x0)`` (per-sample sums, shape ``[B]``). ``encode``/``decode`` are the link the network works
through (logit/sigmoid for the Jacobi process on ``(0, 1)``, clamping for count models; identity
otherwise). ``spec()`` is a JSON-able dict and :func:`noise_from_spec` rebuilds the model (what a saved
run stores); a :class:`CallableNoise` cannot be rebuilt from a file and must be passed again to train.

:func:`noise_mismatch` names a noise model that cannot describe the data's scale: raw counts
(non-negative integers above 1) under a Gaussian model, whose variance does not grow with the count, or
under ``Poisson(k)`` with ``k ≠ 1`` (variance ``k·x0`` where the counts' own shot noise has ``x0``).
``InverseFlow.fit`` warns with it (:class:`NoiseMismatchWarning`; ``on_noise_mismatch="raise"`` refuses).

======================  =====================================================  ============================
model                   ``x1 | x0``                                            density
======================  =====================================================  ============================
``Gaussian``            ``x0 + σ·ε``                                           ``N(x0, σ²I)``
``CorrelatedGaussian``  ``x0 + (σ·ε) ⊛ g`` (circular FFT convolution over the  ``N(x0, σ² G Gᵀ)`` via FFT
                        last two axes), ``g(r) = cos(r)·N(r; 0, span²)``,
                        ``‖g‖₂ = 1``
``Poisson``             ``k·Poisson(x0 / k)`` (variance ``k·x0``; raw counts:  Poisson pmf of ``x1 / k``
                        ``k = 1``)
``Gamma``               ``x0·G``, ``G ~ Gamma(1/σ², 1/σ²)`` (mean 1, var σ²)   ``Gamma(x1/x0)/x0``
``Jacobi``              Euler–Maruyama of ``dx = ½(a(1−x) − b·x)dt +            none (no closed form)
                        √(x(1−x)) dW`` for time ``t``, in logit space
``Rayleigh``            ``x0·(1 + R)``, ``R ~ Rayleigh(s)``                    ``Rayleigh(x1/x0 − 1)/x0``
``NegativeBinomial``    ``Poisson(λ)``, ``λ ~ Gamma(θ, θ/x0)`` (mean ``x0``,    NB pmf
                        var ``x0 + x0²/θ``)
``CallableNoise``       the user's ``fn(x0, generator)``                       the user's, if given
======================  =====================================================  ============================
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import torch
from torch import Tensor

from scigen.core import streams
from scigen.core.errors import InvalidInputError

__all__ = [
    "NOISE_MODELS", "CallableNoise", "CorrelatedGaussian", "Gamma", "Gaussian", "Jacobi", "NegativeBinomial",
    "NoiseMismatchWarning", "NoiseModel", "Poisson", "Rayleigh", "count_like", "noise_from_spec", "noise_mismatch",
]


def _positive(value: Any, name: str, owner: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{owner}: {name} must be a positive number, got {value!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise InvalidInputError(f"{owner}: {name} must be a positive finite number, got {value!r}")
    return v


def _normal(like: Tensor, generator: torch.Generator | None) -> Tensor:
    """Standard normals of ``like``'s shape: from ``generator``, the active per-sample streams (one row per
    sample: :mod:`scigen.core.streams`), or torch's global generator."""
    return streams.randn(like.shape, generator=generator, device=like.device, dtype=like.dtype)


def _uniform(like: Tensor, generator: torch.Generator | None) -> Tensor:
    return streams.rand(like.shape, generator=generator, device=like.device, dtype=like.dtype)


def _numpy_rng(generator: torch.Generator | None, device) -> np.random.Generator:
    """A numpy generator seeded from the torch one (torch's Gamma sampler takes no generator)."""
    seed = torch.randint(0, 2**62, (1,), generator=generator, device=generator.device if generator else "cpu")
    return np.random.default_rng(int(seed.item()))


def _gamma(shape_param: Tensor | float, like: Tensor, generator: torch.Generator | None) -> Tensor:
    """``Gamma(shape, rate=1)`` draws of ``like``'s shape, reproducible from ``generator``."""
    rng = _numpy_rng(generator, like.device)
    k = shape_param.detach().cpu().double().numpy() if isinstance(shape_param, Tensor) else float(shape_param)
    draws = rng.standard_gamma(np.broadcast_to(k, tuple(like.shape)))
    return torch.as_tensor(draws, dtype=like.dtype, device=like.device)


def _per_sample(x: Tensor) -> Tensor:
    return x.reshape(x.shape[0], -1).sum(1) if x.ndim > 1 else x


class NoiseModel:
    """Base class: a known corruption ``p(x1 | x0)``; see the module docstring."""

    kind: ClassVar[str] = ""
    nonnegative: ClassVar[bool] = False  # x0 (and observations) must be >= 0
    open_unit: ClassVar[bool] = False  # x0 must lie in (0, 1)

    def sample(self, x0: Tensor, generator: torch.Generator | None = None) -> Tensor:
        raise NotImplementedError

    def log_prob(self, x1: Tensor, x0: Tensor) -> Tensor:
        raise NotImplementedError(f"the {self.kind} noise model has no closed-form log-density")

    @property
    def has_log_prob(self) -> bool:
        return type(self).log_prob is not NoiseModel.log_prob

    def params(self) -> dict[str, Any]:
        return {}

    def spec(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.params()}

    def encode(self, x: Tensor) -> Tensor:
        """Data -> the space the network works in (identity by default)."""
        return x

    def decode(self, y: Tensor) -> Tensor:
        """Network space -> data (identity by default)."""
        return y

    def check_data(self, x: Tensor, name: str = "data") -> None:
        """A clear error when ``x`` cannot be an observation of this model (negative counts, outside (0,1))."""
        if self.nonnegative and bool((x < 0).any()):
            raise InvalidInputError(f"{name}: the {self.kind} noise model needs values >= 0, got a minimum of "
                                    f"{float(x.min()):.4g}")
        if self.open_unit and bool(((x <= 0) | (x >= 1)).any()):
            raise InvalidInputError(f"{name}: the {self.kind} noise model needs values in (0, 1), got the range "
                                    f"[{float(x.min()):.4g}, {float(x.max()):.4g}]")

    @property
    def label(self) -> str:
        """The model's name in messages."""
        return self.kind

    def draw(self, x0: Tensor, generator: torch.Generator | None = None) -> Tensor:
        """``sample`` with the contract checked: same shape, finite values (errors name the model)."""
        x1 = self.sample(x0, generator)
        if not isinstance(x1, Tensor):
            raise InvalidInputError(f"noise model {self.label!r}: sample must return a torch.Tensor, "
                                    f"got {type(x1).__name__}")
        if tuple(x1.shape) != tuple(x0.shape):
            raise InvalidInputError(f"noise model {self.label!r}: sample changed the shape from {tuple(x0.shape)} "
                                    f"to {tuple(x1.shape)}; it must return x1 of x0's shape")
        if not bool(torch.isfinite(x1).all()):
            raise InvalidInputError(f"noise model {self.label!r}: sample returned non-finite values")
        return x1.to(x0.dtype)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"


class Gaussian(NoiseModel):
    """``x1 = x0 + σ·ε`` (the paper's Gaussian case; images σ = 25/255, toy σ = 0.2)."""

    kind = "gaussian"

    def __init__(self, sigma: float = 0.1) -> None:
        self.sigma = _positive(sigma, "sigma", "Gaussian")

    def params(self) -> dict[str, Any]:
        return {"sigma": self.sigma}

    def sample(self, x0, generator=None):
        return x0 + self.sigma * _normal(x0, generator)

    def log_prob(self, x1, x0):
        z = (x1 - x0) / self.sigma
        return _per_sample(-0.5 * z**2 - math.log(self.sigma) - 0.5 * math.log(2 * math.pi))


def g2_kernel(h: int, w: int, span: float, *, device=None, dtype=torch.float32) -> Tensor:
    """The official code's correlation kernel ``g(r) = cos(r)·exp(−r²/2span²)/(2π span²)`` on an ``h × w``
    grid with circular distances from pixel ``(0, 0)``, normalised to ``‖g‖₂ = 1``."""
    iy = torch.arange(h, device=device, dtype=torch.float64)
    ix = torch.arange(w, device=device, dtype=torch.float64)
    dy, dx = torch.minimum(iy, h - iy), torch.minimum(ix, w - ix)
    r2 = dy[:, None] ** 2 + dx[None, :] ** 2
    g = torch.cos(torch.sqrt(r2)) * torch.exp(-r2 / (2 * span**2)) / (2 * math.pi * span**2)
    return (g / torch.sqrt((g**2).sum())).to(dtype)


class CorrelatedGaussian(NoiseModel):
    """``x1 = x0 + (σ·ε) ⊛ g`` over the last two axes (official ``GaussianG2Flow``: span 2); the marginal
    variance per pixel is ``σ²`` (``‖g‖₂ = 1``), neighbours are correlated by ``g ⋆ g``."""

    kind = "correlated_gaussian"

    def __init__(self, sigma: float = 0.1, span: float = 2.0) -> None:
        self.sigma = _positive(sigma, "sigma", "CorrelatedGaussian")
        self.span = _positive(span, "span", "CorrelatedGaussian")

    def params(self) -> dict[str, Any]:
        return {"sigma": self.sigma, "span": self.span}

    def _kernel_fft(self, x: Tensor) -> Tensor:
        if x.ndim < 2:
            raise InvalidInputError(f"CorrelatedGaussian needs images (>= 2 axes), got shape {tuple(x.shape)}")
        return torch.fft.fft2(g2_kernel(x.shape[-2], x.shape[-1], self.span, device=x.device, dtype=torch.float64))

    def sample(self, x0, generator=None):
        w = self.sigma * _normal(x0, generator).double()
        n = torch.fft.ifft2(torch.fft.fft2(w) * self._kernel_fft(x0)).real
        return x0 + n.to(x0.dtype)

    def log_prob(self, x1, x0):
        """``log N(x1; x0, σ² G Gᵀ)`` with ``G`` the circulant convolution by ``g``: the noise is mapped back
        by dividing its FFT by ``ĝ`` (``log|det G| = Σ log|ĝ_k|``); per sample over the last two axes."""
        gk = self._kernel_fft(x0)
        if bool((gk.abs() < 1e-12).any()):
            raise InvalidInputError("CorrelatedGaussian.log_prob: the kernel's spectrum has zeros at this image "
                                    "size, so the density is degenerate")
        n = (x1 - x0).double()
        w = torch.fft.ifft2(torch.fft.fft2(n) / gk).real
        hw = x0.shape[-1] * x0.shape[-2]
        per = (-0.5 * (w / self.sigma) ** 2).sum((-1, -2)) - hw * (math.log(self.sigma) + 0.5 * math.log(2 * math.pi))
        per = per - torch.log(gk.abs()).sum()
        return _per_sample(per).to(x0.dtype)


class Poisson(NoiseModel):
    """``x1 = k·Poisson(x0 / k)`` (official ``PoissonFlow``, k = 0.01 on [0, 1] images); ``clip`` bounds the
    network's output (the official code clamps to [0, 1]; ``None`` = only ``>= 0``).

    ``k`` is the size of one counted event in the data's units: ``x1`` takes the values ``0, k, 2k, …``,
    its mean is ``x0`` and its variance ``k·x0``. Raw counts (UMIs, photons) are ``k = 1`` (variance =
    the count); the default ``k = 0.01`` is the official code's setting for intensities in [0, 1] (100
    events at full brightness), and on raw counts it would model a noise 100 times weaker than their own
    shot noise (``fit`` warns, :func:`noise_mismatch`)."""

    kind = "poisson"
    nonnegative = True

    def __init__(self, k: float = 0.01, clip: float | None = None) -> None:
        self.k = _positive(k, "k", "Poisson")
        self.clip = None if clip is None else _positive(clip, "clip", "Poisson")

    def params(self) -> dict[str, Any]:
        return {"k": self.k, "clip": self.clip}

    def decode(self, y):
        return y.clamp(min=0.0, max=self.clip)

    def sample(self, x0, generator=None):
        return self.k * torch.poisson((x0 / self.k).clamp(min=0), generator=generator)

    def log_prob(self, x1, x0):
        n, lam = x1 / self.k, (x0 / self.k).clamp(min=1e-30)
        return _per_sample(n * torch.log(lam) - lam - torch.lgamma(n + 1))


class Gamma(NoiseModel):
    """``x1 = x0·G``, ``G ~ Gamma(α = β = 1/σ²)``: multiplicative, mean 1, variance σ² (official ``GammaFlow``)."""

    kind = "gamma"

    def __init__(self, sigma: float = 0.2) -> None:
        self.sigma = _positive(sigma, "sigma", "Gamma")

    def params(self) -> dict[str, Any]:
        return {"sigma": self.sigma}

    def sample(self, x0, generator=None):
        a = 1.0 / self.sigma**2
        return x0 * _gamma(a, x0, generator) / a

    def log_prob(self, x1, x0):
        a = 1.0 / self.sigma**2
        r = x1 / x0
        return _per_sample(a * math.log(a) - math.lgamma(a) + (a - 1) * torch.log(r) - a * r - torch.log(x0.abs()))


class Jacobi(NoiseModel):
    """The Jacobi diffusion ``dx = ½(a(1−x) − b·x)dt + √(x(1−x)) dW`` run for time ``t`` from ``x0 ∈ (0, 1)``
    (official ``JacobiFlow``: a = b = 1, t = 0.2, step 5e-4). Integrated by Euler–Maruyama on
    ``y = logit(x)``, whose Itô SDE is ``dy = [(a−1)(1−x) − (b−1)x] / (2x(1−x)) dt + dW / √(x(1−x))``, so every
    state stays in (0, 1); ``y`` is clipped to ``±logit(1 − eps)`` (the official clip ``eps = 1e-5``).
    The network works in logit space (``encode`` = logit, ``decode`` = sigmoid)."""

    kind = "jacobi"
    open_unit = True

    def __init__(self, a: float = 1.0, b: float = 1.0, t: float = 0.2, step: float = 5e-4, eps: float = 1e-5) -> None:
        self.a = _positive(a, "a", "Jacobi")
        self.b = _positive(b, "b", "Jacobi")
        self.t = _positive(t, "t", "Jacobi")
        self.step = _positive(step, "step", "Jacobi")
        self.eps = _positive(eps, "eps", "Jacobi")
        if self.eps >= 0.5:
            raise InvalidInputError(f"Jacobi: eps must be below 0.5, got {eps}")

    def params(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "t": self.t, "step": self.step, "eps": self.eps}

    def encode(self, x):
        return torch.logit(x, eps=self.eps)

    def decode(self, y):
        return torch.sigmoid(y)

    def sample(self, x0, generator=None):
        n = max(1, math.ceil(self.t / self.step))
        dt = self.t / n
        bound = math.log((1 - self.eps) / self.eps)
        y = torch.logit(x0, eps=self.eps).double()
        for _ in range(n):
            x = torch.sigmoid(y)
            v = x * (1 - x)
            drift = ((self.a - 1) * (1 - x) - (self.b - 1) * x) / (2 * v)
            y = (y + drift * dt + math.sqrt(dt) * _normal(y, generator) / torch.sqrt(v)).clamp(-bound, bound)
        return torch.sigmoid(y).to(x0.dtype)


class Rayleigh(NoiseModel):
    """``x1 = x0·(1 + R)``, ``R ~ Rayleigh(s)`` (official ``RayleighFlow``), drawn as ``s·√(−2 ln U)``."""

    kind = "rayleigh"

    def __init__(self, scale: float = 0.1) -> None:
        self.scale = _positive(scale, "scale", "Rayleigh")

    def params(self) -> dict[str, Any]:
        return {"scale": self.scale}

    def sample(self, x0, generator=None):
        u = _uniform(x0, generator).clamp(min=torch.finfo(x0.dtype).tiny)
        return x0 * (1 + self.scale * torch.sqrt(-2 * torch.log(u)))

    def log_prob(self, x1, x0):
        r = x1 / x0 - 1
        s2 = self.scale**2
        return _per_sample(torch.log(r) - math.log(s2) - r**2 / (2 * s2) - torch.log(x0.abs()))


class NegativeBinomial(NoiseModel):
    """Counts ``x1 ~ NB(mean x0, inverse dispersion θ)`` (variance ``x0 + x0²/θ``), drawn as the
    Gamma–Poisson mixture ``λ ~ Gamma(θ, rate θ/x0)``, ``x1 ~ Poisson(λ)`` (the scRNA-seq count model)."""

    kind = "negative_binomial"
    nonnegative = True

    def __init__(self, theta: float = 10.0) -> None:
        self.theta = _positive(theta, "theta", "NegativeBinomial")

    def params(self) -> dict[str, Any]:
        return {"theta": self.theta}

    def decode(self, y):
        return y.clamp(min=0.0)

    def sample(self, x0, generator=None):
        lam = _gamma(self.theta, x0, generator) * x0.clamp(min=0) / self.theta
        return torch.poisson(lam, generator=generator)

    def log_prob(self, x1, x0):
        th, mu = self.theta, x0.clamp(min=1e-30)
        out = (torch.lgamma(x1 + th) - math.lgamma(th) - torch.lgamma(x1 + 1)
               + th * (math.log(th) - torch.log(th + mu)) + x1 * (torch.log(mu) - torch.log(th + mu)))
        return _per_sample(out)


class CallableNoise(NoiseModel):
    """A user-defined model: ``fn(x0, generator) -> x1`` (same shape), optionally ``log_prob_fn(x1, x0)``.

    It is not serialisable: a saved run records ``name`` and denoises without it, but training again needs
    the object passed as ``noise=``."""

    kind = "callable"

    def __init__(self, fn: Callable[[Tensor, torch.Generator | None], Tensor], name: str = "user",
                 log_prob_fn: Callable[[Tensor, Tensor], Tensor] | None = None, *, nonnegative: bool = False) -> None:
        if not callable(fn):
            raise InvalidInputError(f"CallableNoise: fn must be callable, got {type(fn).__name__}")
        self.fn, self.name, self.log_prob_fn = fn, str(name), log_prob_fn
        self.nonnegative = bool(nonnegative)  # type: ignore[misc]

    def params(self) -> dict[str, Any]:
        return {"name": self.name}

    @property
    def label(self) -> str:
        return f"callable {self.name}"

    def sample(self, x0, generator=None):
        return self.fn(x0, generator)

    def log_prob(self, x1, x0):
        if self.log_prob_fn is None:
            raise NotImplementedError(f"the callable noise model {self.name!r} was given no log_prob_fn")
        return self.log_prob_fn(x1, x0)

    @property
    def has_log_prob(self) -> bool:
        return self.log_prob_fn is not None


class NoiseMismatchWarning(UserWarning):
    """The noise model cannot describe the data's scale (:func:`noise_mismatch`)."""


def count_like(x: Tensor) -> bool:
    """True when ``x`` looks like raw counts: every value a non-negative integer and some value above 1."""
    if x.numel() == 0 or not bool((x >= 0).all()):
        return False
    return bool(x.max() > 1) and bool((x == torch.round(x)).all())


def noise_mismatch(noise: NoiseModel, x: Tensor, name: str = "data", *, images: bool = False) -> str:
    """Why ``noise`` cannot describe the scale of ``x`` (module docstring), or ``""`` when it can."""
    if not count_like(x):
        return ""
    top = float(x.max())
    what = (f"{name} holds non-negative integers up to {top:.6g} (raw counts" +
            (", or 8-bit intensities)" if images else ")"))
    if isinstance(noise, (Gaussian, CorrelatedGaussian)):
        fix = ("for counts pass noise=Poisson(k=1) (variance = the count) or NegativeBinomial(theta) "
               "(CLI: --noise poisson --noise-param k=1)")
        if images:
            fix += "; for 8-bit images divide by 255 and give sigma in [0, 1] units"
        return (f"{what}, but the noise model is {noise!r}: a Gaussian's variance sigma^2 = {noise.sigma**2:.4g} "
                f"does not grow with the count as shot noise does; {fix}")
    if isinstance(noise, Poisson) and noise.k != 1.0:
        return (f"{what}, but the noise model is {noise!r}: k·Poisson(x0/k) has variance k·x0 = {noise.k:g}·x0, "
                f"{noise.k:g} times the counts' own Poisson variance x0; raw counts are Poisson(k=1) "
                "(k = 0.01 is the official code's setting for intensities in [0, 1])")
    return ""


NOISE_MODELS: dict[str, type[NoiseModel]] = {
    m.kind: m for m in (Gaussian, CorrelatedGaussian, Poisson, Gamma, Jacobi, Rayleigh, NegativeBinomial)
}


def noise_from_spec(spec: NoiseModel | dict[str, Any] | str) -> NoiseModel:
    """A noise model from ``{"kind": ..., **params}`` (or a kind name with default parameters)."""
    if isinstance(spec, NoiseModel):
        return spec
    if isinstance(spec, str):
        spec = {"kind": spec}
    if not isinstance(spec, dict) or "kind" not in spec:
        raise InvalidInputError(f"noise must be a NoiseModel, a kind name or a dict with 'kind', got {spec!r}")
    params = {k: v for k, v in spec.items() if k != "kind"}
    kind = spec["kind"]
    if kind == "callable":
        raise InvalidInputError(f"noise {params.get('name', 'user')!r} is a user-defined callable: pass the "
                                "CallableNoise object itself as noise= (it cannot be rebuilt from a saved run)")
    if kind not in NOISE_MODELS:
        raise InvalidInputError(f"noise kind {kind!r} is unknown; valid: {', '.join(NOISE_MODELS)}, callable")
    try:
        return NOISE_MODELS[kind](**params)
    except TypeError as exc:
        raise InvalidInputError(f"noise {kind!r}: bad parameters {params} ({exc})") from None
