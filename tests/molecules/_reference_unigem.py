"""Reference copy of UniGEM / EDM's own loss and ancestral / DDIM loops as they were before the
engine migration (``packages/molecules/src/scigen/molecules/unigem/diffusion.py`` at commit b6cf7fa,
unchanged apart from this docstring, the removed engine-sampler branch and ``draw_steps``, imported), kept so the
equivalence tests (tests/molecules/test_engine_equivalence.py, test_discrete_engine_equivalence.py)
keep testing the engine against the published algorithm after the domain copy was deleted.

Discrete time ``k ∈ {0 … T}`` (``t = k/T``), EDM's polynomial_2 schedule; loss: per-molecule eps MSE
(+ UniGEM's type / property L1 for ``k ≤ t_n``); sampling: ancestral steps ``q(z_s | z_t, x̂)`` or DDIM
(η = 0), then the k = 0 call.
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core.paths import DiscreteSchedule
from scigen.molecules.data.batching import ptr_from_counts, remove_mean, to_ragged, zero_com_noise
from scigen.molecules.unigem.model import MoleculeDenoiser, type_features
from scigen.molecules.unigem.process import draw_steps  # the time draw, unchanged (not copied twice)

__all__ = ["make_schedule", "training_loss", "sample_molecules", "OWN_METHODS"]

OWN_METHODS = ("ancestral", "ddim")


def make_schedule(T: int, precision: float) -> DiscreteSchedule:
    return DiscreteSchedule.polynomial(T, power=2.0, precision=precision)


def _coef(schedule: DiscreteSchedule, k: Tensor, device) -> tuple[Tensor, Tensor]:
    return schedule.signal(k.cpu()).float().to(device), schedule.noise(k.cpu()).float().to(device)


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
    if method not in OWN_METHODS:
        raise ValueError(f"method must be one of {list(OWN_METHODS)}, got {method!r}")
    device = device or next(net.parameters()).device
    ptr = ptr_from_counts(counts).to(device)
    b = counts.numel()
    z = zero_com_noise(ptr, generator=generator, device=device)
    nf = len(vocab) + 1
    zh = torch.randn(int(ptr[-1]), nf, generator=generator, device=device) if mode == "edm" else None

    def run(k: int, z, zh):
        kk = torch.full((b,), k, dtype=torch.long, device=device)
        return net(z, ptr, kk.float() / schedule.T, kk <= t_n, h=zh)

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
