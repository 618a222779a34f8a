"""UniGEM (Feng et al., ICLR 2025, Sec. 4, Alg. 1-2) and EDM (Hoogeboom et al., ICML 2022, Alg. 1-2) on
the engine: the network bound to EDM's discrete schedule (:class:`scigen.core.generative.Diffusion`),
its loss through :func:`scigen.core.losses.denoising_loss` and its samplers through
:func:`scigen.core.samplers.sample`.

**Path.** Discrete time ``k ∈ {0 … T}``, ``t = k/T`` (t = 0 data), EDM's polynomial_2 schedule with
precision offset and clipping (:meth:`scigen.core.paths.DiscreteSchedule.polynomial`) as the engine's
:class:`~scigen.core.paths.DiscreteSchedulePath`: ``z_k = α_k x + σ_k ε`` at every integer step, a C¹
VP path in between (so the continuous solvers run on the schedule the model was trained on).

**Layouts.** Training batches are padded ``[B, N_max, D]`` with the atom mask (``D = 3`` for UniGEM,
``3 + K + 1`` for EDM's ``[x, y, z, one-hot/4, Z/10]``); sampling states are ragged ``[N_atoms, D]`` with
``ptr``. :class:`EGNNEps` adapts :class:`~scigen.molecules.unigem.model.MoleculeDenoiser` to the engine's
``network(x_t, t, **cond) -> eps`` in both layouts. Noise on coordinates is zero-centre-of-mass per
molecule (Hoogeboom et al. 2022, Sec. 3.2); samplers run with ``project=`` :func:`zero_com_projection`.

**Loss** (per molecule, then the batch mean; ``reduction="per_sample"``): ``‖ε − ε̂‖²`` averaged over the
molecule's coordinates (EDM: also its noisy type features) — the engine's denoising loss — plus, for
UniGEM and ``k ≤ t_n`` only, L1 between the atom-type head and ``[one-hot/4, Z/10]`` and L1 between the
property head and ``(y − mean)/MAD``. These two head terms stay here: they regress *extra outputs* of the
same forward pass (not the path's target), which :func:`denoising_loss` does not model; the adapter hands
them over in ``heads=`` so the network runs once. UniGEM draws ``k ~ U{t_n+1 … T}`` for the first half of
the batch and ``k ~ U{0 … t_n}`` for the second half (:func:`draw_steps`); EDM draws ``k ~ U{0 … T}``.

**Sampling.** ``method="ddpm"`` on the integer grid is EDM's ancestral sampler (all T steps by default),
``"ddim"`` its deterministic counterpart; the other engine methods integrate on a uniform grid (50 steps
by default). The run ends with one model call at k = 0 (:func:`finish`): the clean estimate of the
coordinates, UniGEM's atom types from its type head (EDM: the argmax of the type features) and
UniGEM's normalised properties. Given per-molecule :class:`~scigen.core.streams.SampleStreams`, every draw of
a molecule (its size, then its atoms' initial noise and the solver's noise) comes from a child stream of its
key (:func:`size_streams`, :func:`atom_streams`), so a molecule does not depend on its batch (issue 33.3).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from scigen.core import streams
from scigen.core.errors import InvalidInputError
from scigen.core.generative import Diffusion
from scigen.core.paths import DiscreteSchedule
from scigen.molecules.data.batching import (
    atom_rows,
    ptr_from_counts,
    remove_mean,
    to_padded,
    to_ragged,
    zero_com_noise,
)
from scigen.molecules.unigem.model import MoleculeDenoiser, type_features

__all__ = ["DISCRETE_METHODS", "DEFAULT_STEPS", "EGNNEps", "atom_streams", "draw_steps", "finish", "make_process",
           "make_schedule", "predict_properties", "predict_types", "sample_molecules", "size_streams", "training_loss",
           "zero_com_projection"]

#: methods that run on the integer grid ``k/T`` (all T steps unless ``steps``)
DISCRETE_METHODS = ("ddpm", "ddim")
#: steps of the other methods when none are given
DEFAULT_STEPS = 50


def make_schedule(T: int, precision: float) -> DiscreteSchedule:
    """EDM's ``polynomial_2`` schedule with precision offset (and its clipping)."""
    return DiscreteSchedule.polynomial(T, power=2.0, precision=precision)


class EGNNEps(nn.Module):
    """``MoleculeDenoiser`` as the engine's ``network(x_t, t, **cond) -> eps``.

    Padded (training): ``x_t [B, N, D]``, ``t [B]``, ``atom_mask=[B, N]`` bool (not ``mask=``: that one is
    the loss's). Ragged (sampling):
    ``x_t [N_atoms, D]``, ``t [N_atoms]`` (one time per row, as the solvers pass it), ``ptr=[B+1]``.
    Columns ``3:`` are EDM's noisy type features. ``heads=`` (a dict) receives the raw outputs of the
    forward pass (``types``, ``props``, ``ptr``) for the UniGEM head terms. A molecule uses the
    nucleation branch when ``t·T ≤ t_n``.
    """

    def __init__(self, net: MoleculeDenoiser, T: int, t_n: int):
        super().__init__()
        self.net, self.T, self.t_n = net, int(T), int(t_n)

    def forward(self, x_t: Tensor, t: Tensor, *, atom_mask: Tensor | None = None, ptr: Tensor | None = None,
                heads: dict | None = None) -> Tensor:
        mask = atom_mask
        if (mask is None) == (ptr is None):
            raise ValueError("EGNNEps: pass atom_mask= (padded [B, N, D] batch) or ptr= (ragged state), exactly one")
        if mask is not None:
            x, ptr = to_ragged(x_t, mask)
            tm = t
        else:
            x, tm = x_t, t.reshape(-1)[ptr[:-1]]
        tm = tm.to(x.dtype)
        low = tm * self.T <= self.t_n + 1e-6
        h = x[:, 3:] if x.shape[1] > 3 else None
        out = self.net(x[:, :3], ptr, tm, low, h=h)
        if heads is not None:
            heads.update(out, ptr=ptr, low=low)
        eps = out["eps_x"] if h is None else torch.cat([out["eps_x"], out["eps_h"]], dim=-1)
        return eps if mask is None else to_padded(eps, ptr, n_max=mask.shape[1])[0]


def make_process(net: MoleculeDenoiser, schedule: DiscreteSchedule, *, t_n: int, method: str = "ddpm",
                 steps: int = DEFAULT_STEPS) -> Diffusion:
    """The network bound to the discrete path, eps prediction, per-molecule loss reduction."""
    return Diffusion(EGNNEps(net, schedule.T, t_n), schedule.as_path(), "eps", method=method, steps=steps,
                     grid="uniform", reduction="per_sample")


def draw_steps(b: int, T: int, t_n: int | None, *, device=None, generator=None) -> Tensor:
    """Integer steps ``[b]``: UniGEM's split (``t_n`` given; first half > t_n, second half ≤ t_n)
    or ``U{0..T}``. Under per-sample streams the split goes by key (even keys > t_n, odd ≤ t_n), so a molecule's
    phase does not depend on its place in the batch or on the rank holding it."""
    keyed = streams.as_streams(generator)
    if t_n is None:
        return streams.randint(0, T + 1, (b,), generator=generator, device=device)
    if keyed is not None:  # per-sample streams: the phase from the key's parity (even: > t_n), the step from its stream
        hi = (keyed.keys.to(device) % 2 == 0) if device is not None else keyed.keys % 2 == 0
        u = keyed.rand((b,), device=device, dtype=torch.float64)
        up = (t_n + 1 + torch.floor(u * (T - t_n))).clamp(max=T)
        down = torch.floor(u * (t_n + 1)).clamp(max=t_n)
        return torch.where(hi, up, down).to(torch.int64)
    half = b // 2
    hi = torch.randint(t_n + 1, T + 1, (half,), generator=generator, device=device)
    lo = torch.randint(0, t_n + 1, (b - half,), generator=generator, device=device)
    return torch.cat([hi, lo])


def training_loss(process: Diffusion, net: nn.Module, batch: dict[str, Tensor], *, mode: str, t_n: int,
                  vocab: tuple[int, ...], prop_mean: Tensor | None, prop_mad: Tensor | None,
                  generator: torch.Generator | None = None, k: Tensor | None = None, return_parts: bool = False):
    """The three-term UniGEM loss (or EDM's eps loss) of a padded batch from :class:`MoleculeSet`
    (``pos [B,N,3]``, ``types [B,N]``, ``mask [B,N]``, ``props [B,P]``). ``k``: fixed integer steps ``[B]``.
    Random draws in this order: ``k``, the zero-CoM coordinate noise (ragged), EDM's feature noise."""
    mask = batch["mask"]
    x, ptr = to_ragged(batch["pos"], mask)
    x = remove_mean(x, ptr)
    b, T = mask.shape[0], process.path.T
    if k is None:
        k = draw_steps(b, T, None if mode == "edm" else t_n, device=x.device, generator=generator)
    noise = zero_com_noise(ptr, generator=generator, dtype=x.dtype)
    types, _ = to_ragged(batch["types"], mask)
    feat = type_features(types, vocab).to(x.dtype)
    if mode == "edm":
        x = torch.cat([x, feat], dim=-1)
        rows = atom_rows(ptr) if streams.as_streams(generator) is not None else None
        noise = torch.cat([noise, streams.randn(feat.shape, generator=generator, dtype=x.dtype, device=x.device,
                                                rows=rows)], -1)
    n_max = mask.shape[1]
    heads: dict = {}
    eps = process.loss(to_padded(x, ptr, n_max)[0], mask=mask[..., None], t=k.to(x.dtype) / T,
                       noise=to_padded(noise, ptr, n_max)[0], network=EGNNEps(net, T, t_n), atom_mask=mask,
                       heads=heads)
    parts = {"eps": eps}
    total = eps
    if mode != "edm":
        from scigen.kernels import segment_sum

        lowf = (k <= t_n).to(x.dtype)
        n_low = lowf.sum().clamp(min=1)
        per_atom_n = (ptr[1:] - ptr[:-1]).clamp(min=1).to(x.dtype)
        atom = segment_sum((heads["types"] - feat).abs().mean(-1, keepdim=True), ptr)[:, 0] / per_atom_n
        total = total + (lowf * atom).mean()
        parts["types"] = (lowf * atom).sum() / n_low
        if "props" in heads:
            y = (batch["props"] - prop_mean) / prop_mad
            prop = (heads["props"] - y).abs().mean(-1)
            total = total + (lowf * prop).mean()
            parts["props"] = (lowf * prop).sum() / n_low
    return (total, parts) if return_parts else total


def zero_com_projection(ptr: Tensor, n_coord: int = 3):
    """The linear, idempotent projection ``P`` of a ragged state ``[N, n_coord + F]``: each molecule's
    coordinate columns are centred, feature columns pass through (for ``sample(project=P)``)."""

    def project(state: Tensor) -> Tensor:
        pos = remove_mean(state[:, :n_coord], ptr)
        return pos if state.shape[1] == n_coord else torch.cat([pos, state[:, n_coord:]], dim=-1)

    return project


def sampling_times(process: Diffusion, method: str, steps: int | None) -> Tensor:
    """The integer grid ``k/T`` (all T steps unless ``steps``) for ddpm/ddim, else a uniform grid 1 → 0."""
    if method in DISCRETE_METHODS:
        return process.path.schedule.time_grid(steps)
    return process.times(steps or DEFAULT_STEPS)


def size_streams(molecules: streams.SampleStreams) -> streams.SampleStreams:
    """The stream of each molecule's size: child 0 of its key (``key · 2^20``; :func:`atom_streams`)."""
    b = len(molecules)
    return molecules.children(torch.arange(b), torch.zeros(b, dtype=torch.int64))


def atom_streams(molecules: streams.SampleStreams, ptr: Tensor) -> streams.SampleStreams:
    """One stream per atom of a ragged batch: atom ``j`` of the molecule with key ``k`` gets ``k · 2^20 + 1 + j``.

    Every sampling draw of a molecule thus comes from a child of its key (child 0: its size,
    :func:`size_streams`; child ``1 + j``: atom ``j``), never from the parent keys themselves, whose values
    overlap the children of low keys (key ``j`` is child ``j`` of key 0)."""
    ptr = ptr.to(molecules.keys.device)
    rows = atom_rows(ptr)
    return molecules.children(rows, torch.arange(len(rows), device=ptr.device) - ptr[rows] + 1)


@torch.no_grad()
def sample_molecules(process: Diffusion, counts: Tensor, *, mode: str, vocab: tuple[int, ...],
                     method: str = "ddpm", steps: int | None = None, generator=None,
                     progress: bool | None = False) -> dict[str, Tensor]:
    """Generate molecules of the given atom ``counts [B]`` with the engine's ``method``. Returns ragged
    ``pos [N,3]``, ``types [N]`` (indices into ``vocab``), ``ptr [B+1]`` and, for UniGEM with properties,
    normalised ``props [B,P]``. Draws: zero-CoM coordinates, then (EDM) the features, then the solver's.

    ``generator``: a ``torch.Generator`` (or ``None``: torch's global one), or a
    :class:`~scigen.core.streams.SampleStreams` keyed by molecule (``B`` keys): then each atom draws from its
    own child stream (:func:`atom_streams`), so molecule ``i`` depends only on its key and its size, whatever
    else shares the batch."""
    device = process.device
    ptr = ptr_from_counts(counts).to(device)
    if isinstance(generator, streams.SampleStreams):
        if len(generator) != len(counts):
            raise InvalidInputError(f"sample_molecules: {len(generator)} molecule streams for {len(counts)} molecules")
        generator = atom_streams(generator, ptr)
        x_init = remove_mean(generator.randn((int(ptr[-1]), 3), device=device), ptr)
    else:
        x_init = zero_com_noise(ptr, generator=generator, device=device)
    if mode == "edm":
        feat = streams.randn((int(ptr[-1]), len(vocab) + 1), generator=generator, device=device)
        x_init = torch.cat([x_init, feat], dim=-1)
    state = process.sample(x_init, times=sampling_times(process, method, steps), method=method, generator=generator,
                           project=zero_com_projection(ptr), progress=progress, ptr=ptr)
    return finish(process, state, ptr, mode=mode, vocab=vocab)


def finish(process: Diffusion, state: Tensor, ptr: Tensor, *, mode: str, vocab: tuple[int, ...]) -> dict[str, Tensor]:
    """The k = 0 model call: clean coordinates, atom types (and UniGEM's normalised properties)."""
    schedule = process.path.schedule
    a0, s0 = float(schedule.signal(0)), float(schedule.noise(0))
    heads: dict = {}
    eps = process.network(state, torch.zeros(state.shape[0], dtype=state.dtype, device=state.device), ptr=ptr,
                          heads=heads)
    x0 = (state - s0 * eps) / a0
    pos = remove_mean(x0[:, :3], ptr)
    if mode == "edm":
        return {"pos": pos, "types": x0[:, 3:3 + len(vocab)].argmax(-1), "ptr": ptr}
    res = {"pos": pos, "types": heads["types"][:, :len(vocab)].argmax(-1), "ptr": ptr}
    if "props" in heads:
        res["props"] = heads["props"]
    return res


def _clean_call(net: MoleculeDenoiser, pos: Tensor, mask: Tensor) -> dict[str, Tensor]:
    """UniGEM's heads on clean molecules (k = 0, nucleation branch)."""
    x, ptr = to_ragged(pos, mask)
    x = remove_mean(x, ptr)
    b = mask.shape[0]
    return net(x, ptr, torch.zeros(b, device=x.device), torch.ones(b, dtype=torch.bool, device=x.device))


@torch.no_grad()
def predict_types(net: MoleculeDenoiser, pos: Tensor, mask: Tensor, vocab: tuple[int, ...]) -> Tensor:
    """UniGEM's atom types of clean molecules from the type head at k = 0 (indices into ``vocab``),
    ragged ``[N]`` in the order of the valid atoms of ``pos [B,N,3]`` / ``mask [B,N]``."""
    return _clean_call(net, pos, mask)["types"][:, :len(vocab)].argmax(-1)


@torch.no_grad()
def predict_properties(net: MoleculeDenoiser, pos: Tensor, mask: Tensor, prop_mean: Tensor, prop_mad: Tensor) -> Tensor:
    """Properties of clean molecules (the k = 0 path of the nucleation branch), **de-normalised**
    ``ŷ·MAD + mean`` (fixing the official evaluation, which compares the normalised prediction with the
    raw label). ``pos [B,N,3]``, ``mask [B,N]`` -> ``[B, P]`` in physical units."""
    return _clean_call(net, pos, mask)["props"] * prop_mad + prop_mean
