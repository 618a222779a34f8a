"""Training loss and samplers of UniGEM (Feng et al., ICLR 2025, Sec. 4, Alg. 1-2) and EDM
(Hoogeboom et al., ICML 2022, Alg. 1-2) on ragged molecule batches.

Discrete time ``k ∈ {0 … T}`` (``t = k/T``; t = 0 data), EDM's polynomial_2 schedule with precision
offset (:meth:`scigen.core.paths.DiscreteSchedule.polynomial`): ``z_k = α_k x + σ_k ε`` with ε a
zero-centre-of-mass Gaussian on coordinates.

**Loss** (per molecule, then the batch mean): ``‖ε − ε̂‖²`` averaged over the molecule's
coordinates (EDM: also over its noisy type features), plus for UniGEM and ``k ≤ t_n`` only:
L1 between the atom-type head and ``[one-hot/4, Z/10]`` (mean over atoms and features) and L1
between the property head and ``(y − mean)/MAD`` (mean over properties). UniGEM draws
``k ~ U{t_n+1 … T}`` for the first half of the batch and ``k ~ U{0 … t_n}`` for the second half;
EDM draws ``k ~ U{0 … T}``.

**Sampling**: ancestral steps ``q(z_s | z_t, x̂)`` on any decreasing grid of steps (all T by default;
``σ²_{t|s} = σ_t² − (α_t/α_s)² σ_s²``, mean ``(α_t/α_s) σ_s²/σ_t² z_t + α_s σ²_{t|s}/σ_t² x̂``,
variance ``σ²_{t|s} σ_s²/σ_t²``; the noise is zero-CoM on coordinates), or DDIM (η = 0). At k = 0
the clean estimate is returned (EDM draws once more with std σ_0/α_0 ≈ 3e-3 Å; we return the mean);
UniGEM reads atom types from the type head at k = 0, EDM from the argmax of the type features.

**Engine samplers** (``method`` in :data:`ENGINE_METHODS`, e.g. ``dpmpp_2m``): the same model on the
continuous polynomial_2 path (:class:`scigen.core.paths.VPPolynomial`, the schedule above without
EDM's clipping of ``α_t/α_s`` near t = 1) through :func:`scigen.core.samplers.sample` with
``project=`` the per-molecule zero-CoM projection of the coordinate columns, so every solver runs
inside the subspace the model was trained on (Hoogeboom et al. 2022, Sec. 3.2). The state of a
molecule batch is ragged: rows are atoms, columns ``[x, y, z]`` (UniGEM) or ``[x, y, z, h…]`` (EDM).
The end at t = 0 is the same as for the ancestral sampler (one model call at k = 0).
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core.paths import DiscreteSchedule
from scigen.molecules.data.batching import ptr_from_counts, remove_mean, to_ragged, zero_com_noise
from scigen.molecules.unigem.model import MoleculeDenoiser, type_features

__all__ = ["make_schedule", "training_loss", "sample_molecules", "predict_properties", "predict_types", "OWN_METHODS",
           "ENGINE_METHODS", "SAMPLER_METHODS", "ENGINE_DEFAULT_STEPS"]

OWN_METHODS = ("ancestral", "ddim")
ENGINE_METHODS = ("dpmpp_2m", "unipc", "ddpm", "heun", "euler", "euler_maruyama")
SAMPLER_METHODS = OWN_METHODS + ENGINE_METHODS
ENGINE_DEFAULT_STEPS = 50


def make_schedule(T: int, precision: float) -> DiscreteSchedule:
    return DiscreteSchedule.polynomial(T, power=2.0, precision=precision)


def _coef(schedule: DiscreteSchedule, k: Tensor, device) -> tuple[Tensor, Tensor]:
    return schedule.signal(k.cpu()).float().to(device), schedule.noise(k.cpu()).float().to(device)


def draw_steps(b: int, T: int, t_n: int | None, *, device=None, generator=None) -> Tensor:
    """Integer steps ``[b]``: UniGEM's split (``t_n`` given; first half > t_n, second half ≤ t_n)
    or ``U{0..T}``."""
    if t_n is None:
        return torch.randint(0, T + 1, (b,), generator=generator, device=device)
    half = b // 2
    hi = torch.randint(t_n + 1, T + 1, (half,), generator=generator, device=device)
    lo = torch.randint(0, t_n + 1, (b - half,), generator=generator, device=device)
    return torch.cat([hi, lo])


def training_loss(net: MoleculeDenoiser, batch: dict[str, Tensor], schedule: DiscreteSchedule, *,
                  mode: str, t_n: int, vocab: tuple[int, ...], prop_mean: Tensor | None, prop_mad: Tensor | None,
                  generator: torch.Generator | None = None, return_parts: bool = False):
    """The three-term UniGEM loss (or EDM's eps loss) of a padded batch from :class:`MoleculeSet`."""
    mask = batch["mask"]
    x, ptr = to_ragged(batch["pos"], mask)
    types, _ = to_ragged(batch["types"], mask)
    x = remove_mean(x, ptr)
    b = mask.shape[0]
    counts = ptr[1:] - ptr[:-1]
    k = draw_steps(b, schedule.T, None if mode == "edm" else t_n, device=x.device, generator=generator)
    a, s = _coef(schedule, k, x.device)
    a_n, s_n = torch.repeat_interleave(a, counts)[:, None], torch.repeat_interleave(s, counts)[:, None]
    eps = zero_com_noise(ptr, generator=generator, dtype=x.dtype)
    z = a_n * x + s_n * eps
    low = k <= t_n
    t = k.to(x.dtype) / schedule.T
    feat = type_features(types, vocab)
    from scigen.kernels import segment_sum

    per_atom_n = counts.clamp(min=1).to(x.dtype)
    if mode == "edm":
        eps_h = torch.randn(feat.shape, generator=generator, dtype=x.dtype, device=x.device)
        out = net(z, ptr, t, low, h=a_n * feat + s_n * eps_h)
        sq = torch.cat([(out["eps_x"] - eps) ** 2, (out["eps_h"] - eps_h) ** 2], -1).sum(-1, keepdim=True)
        error = segment_sum(sq, ptr)[:, 0] / (per_atom_n * (3 + feat.shape[1]))
        parts = {"eps": error.mean()}
        loss = error
    else:
        out = net(z, ptr, t, low)
        error = segment_sum(((out["eps_x"] - eps) ** 2).sum(-1, keepdim=True), ptr)[:, 0] / (per_atom_n * 3)
        atom = segment_sum((out["types"] - feat).abs().mean(-1, keepdim=True), ptr)[:, 0] / per_atom_n
        lowf = low.to(x.dtype)
        loss = error + lowf * atom
        parts = {"eps": error.mean(), "types": (lowf * atom).sum() / lowf.sum().clamp(min=1)}
        if "props" in out:
            y = (batch["props"] - prop_mean) / prop_mad
            prop = (out["props"] - y).abs().mean(-1)
            loss = loss + lowf * prop
            parts["props"] = (lowf * prop).sum() / lowf.sum().clamp(min=1)
    total = loss.mean()
    return (total, parts) if return_parts else total


def _grid(T: int, steps: int | None) -> list[int]:
    if steps is None or steps >= T:
        return list(range(T, -1, -1))
    g = torch.linspace(T, 0, steps + 1).round().long().unique_consecutive().tolist()
    return g


@torch.no_grad()
def sample_molecules(net: MoleculeDenoiser, counts: Tensor, schedule: DiscreteSchedule, *, mode: str, t_n: int,
                     vocab: tuple[int, ...], method: str = "ancestral", steps: int | None = None,
                     generator: torch.Generator | None = None, device=None) -> dict[str, Tensor]:
    """Generate molecules of the given atom ``counts [B]``. Returns ragged ``pos [N,3]``, ``types [N]``
    (indices into ``vocab``), ``ptr [B+1]`` and, for UniGEM with properties, normalised ``props [B,P]``."""
    if method not in SAMPLER_METHODS:
        raise ValueError(f"method must be one of {list(SAMPLER_METHODS)}, got {method!r}")
    device = device or next(net.parameters()).device
    ptr = ptr_from_counts(counts).to(device)
    b = counts.numel()
    z = zero_com_noise(ptr, generator=generator, device=device)
    nf = len(vocab) + 1
    zh = torch.randn(int(ptr[-1]), nf, generator=generator, device=device) if mode == "edm" else None

    def run(k: int, z, zh):
        kk = torch.full((b,), k, dtype=torch.long, device=device)
        return net(z, ptr, kk.float() / schedule.T, kk <= t_n, h=zh)

    if method in ENGINE_METHODS:
        z, zh = _engine_sample(net, z, zh, ptr, schedule, t_n=t_n, method=method,
                               steps=steps or ENGINE_DEFAULT_STEPS, generator=generator)
        return _finish(run, schedule, z, zh, ptr, mode=mode, vocab=vocab)
    grid = _grid(schedule.T, steps)

    def x_hat(k: int, zt: Tensor, e: Tensor) -> Tensor:
        a, s = (float(v) for v in _coef(schedule, torch.tensor(k), "cpu"))
        return (zt - s * e) / a

    for k, s_ in zip(grid[:-1], grid[1:], strict=True):
        out = run(k, z, zh)
        at, st = (float(v) for v in _coef(schedule, torch.tensor(k), "cpu"))
        as_, ss = (float(v) for v in _coef(schedule, torch.tensor(s_), "cpu"))
        pairs = [(z, out["eps_x"], True)] + ([(zh, out["eps_h"], False)] if mode == "edm" else [])
        new = []
        for zt, e, com in pairs:
            x0 = (zt - st * e) / at
            if method == "ddim":
                zs = as_ * x0 + ss * e
            else:
                a_ts = at / as_
                var_ts = st ** 2 - a_ts ** 2 * ss ** 2
                mean = a_ts * ss ** 2 / st ** 2 * zt + as_ * var_ts / st ** 2 * x0
                std = (max(var_ts, 0.0) * ss ** 2 / st ** 2) ** 0.5
                noise = (zero_com_noise(ptr, generator=generator, device=device) if com
                         else torch.randn(zt.shape, generator=generator, device=device))
                zs = mean + std * noise
            new.append(remove_mean(zs, ptr) if com else zs)
        z = new[0]
        if mode == "edm":
            zh = new[1]
    return _finish(run, schedule, z, zh, ptr, mode=mode, vocab=vocab)


def _finish(run, schedule: DiscreteSchedule, z: Tensor, zh: Tensor | None, ptr: Tensor, *, mode: str,
            vocab: tuple[int, ...]) -> dict[str, Tensor]:
    """The k = 0 model call: clean coordinates, atom types (and UniGEM's normalised properties)."""
    a0, s0 = (float(v) for v in _coef(schedule, torch.tensor(0), "cpu"))
    out = run(0, z, zh)
    pos = remove_mean((z - s0 * out["eps_x"]) / a0, ptr)
    if mode == "edm":
        h0 = (zh - s0 * out["eps_h"]) / a0
        return {"pos": pos, "types": h0[:, :len(vocab)].argmax(-1), "ptr": ptr}
    res = {"pos": pos, "types": out["types"][:, :len(vocab)].argmax(-1), "ptr": ptr}
    if "props" in out:
        res["props"] = out["props"]
    return res


def zero_com_projection(ptr: Tensor, n_coord: int = 3):
    """The linear, idempotent projection ``P`` of a ragged state ``[N, n_coord + F]``: each molecule's
    coordinate columns are centred, feature columns pass through (for ``sample(project=P)``)."""

    def project(state: Tensor) -> Tensor:
        pos = remove_mean(state[:, :n_coord], ptr)
        return pos if state.shape[1] == n_coord else torch.cat([pos, state[:, n_coord:]], dim=-1)

    return project


def _engine_sample(net: MoleculeDenoiser, z: Tensor, zh: Tensor | None, ptr: Tensor, schedule: DiscreteSchedule, *,
                   t_n: int, method: str, steps: int, generator) -> tuple[Tensor, Tensor | None]:
    """Integrate t = 1 -> 0 with :func:`scigen.core.samplers.sample` on the zero-CoM subspace;
    returns the state at t = 0 split into coordinates and (EDM) type features."""
    from scigen.core.paths import VPPolynomial
    from scigen.core.samplers import sample, time_grid

    path = VPPolynomial(power=2.0, precision=1.0 - schedule.alpha_bar_0)  # polynomial: ᾱ_0 = 1 − precision
    first = ptr[:-1]
    T = schedule.T

    def model_fn(state: Tensor, t: Tensor) -> Tensor:
        tm = t.reshape(-1)[first] if t.numel() > 1 else t.reshape(1).expand(first.numel())
        tm = tm.to(state.dtype)
        low = tm * T <= t_n + 1e-6
        if zh is None:
            return net(state, ptr, tm, low)["eps_x"]
        out = net(state[:, :3], ptr, tm, low, h=state[:, 3:])
        return torch.cat([out["eps_x"], out["eps_h"]], dim=-1)

    x_init = z if zh is None else torch.cat([z, zh], dim=-1)
    times = time_grid(int(steps), "uniform", dtype=x_init.dtype, device=x_init.device)
    state = sample(model_fn, x_init, times, path=path, prediction="eps", method=method, generator=generator,
                   progress=False, project=zero_com_projection(ptr))
    return (state, None) if zh is None else (state[:, :3].contiguous(), state[:, 3:].contiguous())


@torch.no_grad()
def predict_types(net: MoleculeDenoiser, pos: Tensor, mask: Tensor, vocab: tuple[int, ...]) -> Tensor:
    """UniGEM's atom-type head on clean molecules (k = 0, nucleation branch): indices into ``vocab``,
    ragged ``[N]`` in the order of the valid atoms of ``pos [B,N,3]`` / ``mask [B,N]``."""
    x, ptr = to_ragged(pos, mask)
    x = remove_mean(x, ptr)
    b = mask.shape[0]
    out = net(x, ptr, torch.zeros(b, device=x.device), torch.ones(b, dtype=torch.bool, device=x.device))
    return out["types"][:, :len(vocab)].argmax(-1)


@torch.no_grad()
def predict_properties(net: MoleculeDenoiser, pos: Tensor, mask: Tensor, prop_mean: Tensor, prop_mad: Tensor) -> Tensor:
    """Properties of clean molecules (the k = 0 path of the nucleation branch), **de-normalised**
    ``ŷ·MAD + mean`` (fixing the official evaluation, which compares the normalised prediction with the
    raw label). ``pos [B,N,3]``, ``mask [B,N]`` -> ``[B, P]`` in physical units."""
    x, ptr = to_ragged(pos, mask)
    x = remove_mean(x, ptr)
    b = mask.shape[0]
    out = net(x, ptr, torch.zeros(b, device=x.device), torch.ones(b, dtype=torch.bool, device=x.device))
    return out["props"] * prop_mad + prop_mean
