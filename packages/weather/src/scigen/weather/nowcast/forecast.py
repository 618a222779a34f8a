"""Drawing forecasts in model units: the stage-1 mean and the rectified-flow members (the engine's sampler)."""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core import streams
from scigen.core.errors import InvalidInputError
from scigen.core.validation import check_count, max_count_for_memory

__all__ = ["advection_input", "draw_members", "inflate", "inflate_members", "match_intensities", "predict_mean"]


def advection_input(model, ctx: Tensor) -> Tensor | None:
    """``[B, L, H, W]``: the extrapolated context in model units when ``config.advection_input`` (ours, see
    :mod:`scigen.weather.nowcast.advection`), else ``None``."""
    if not model.config.advection_input:
        return None
    from scigen.weather.nowcast.advection import advection_channels

    return advection_channels(model.transform, ctx, model.config.horizon, model.config.advection_motion)


def inflate(members: Tensor, factors) -> Tensor:
    """``[n, B, L, H, W]`` members with each deviation from the ensemble mean multiplied by the lead's factor
    ``k_l`` (``factors``: ``L`` numbers, ``NowcastConfig.inflation``; ours, see :mod:`.config`): the mean is
    kept, the spread is multiplied by ``k_l``. Identity for factors of 1 or a single member."""
    k = torch.as_tensor(factors, dtype=members.dtype, device=members.device)
    if members.dim() != 5 or k.dim() != 1 or k.numel() != members.shape[2]:
        raise InvalidInputError(f"inflate needs members [n, B, L, H, W] and L factors, got members "
                                f"{tuple(members.shape)} and {k.numel()} factors")
    if not bool(torch.isfinite(k).all() & (k > 0).all()):
        raise InvalidInputError(f"spread inflation factors must be finite and > 0, got {k.tolist()}")
    if members.shape[0] < 2 or bool((k == 1).all()):
        return members
    ens = members.mean(0, keepdim=True)
    return ens + k.view(1, 1, -1, 1, 1) * (members - ens)


def inflate_members(model, z: Tensor, factors) -> Tensor:
    """Model-unit members ``z [n, B, L, H, W]`` inflated by ``factors`` (one per lead) in the data's own units
    (mm/h, VIL or dBZ: the ensemble mean there is kept, the spread multiplied by ``k_l``), negative rain and
    VIL set to 0 by the forward transform (the only change to the mean), back in model units (ours, see
    :mod:`.config`)."""
    if z.shape[0] < 2 or all(float(k) == 1.0 for k in factors):
        return inflate(z, factors)  # identity, with the argument checks
    x = torch.from_numpy(model.transform.inverse(z.detach().cpu().numpy()))
    out = model.transform.forward(inflate(x, factors).numpy())
    return torch.as_tensor(out, dtype=z.dtype, device=z.device)


def match_intensities(members: Tensor, reference: Tensor) -> Tensor:
    """Probability matching: every field of ``members [n, B, L, H, W]`` takes the values of ``reference [B, H,
    W]`` (the last observed frame of its context, in the data's units) in its own rank order, so each member
    has exactly the observed intensity distribution (wet fraction, peak rates) and keeps its spatial
    structure. This is the empirical-CDF matching of STEPS (Seed 2003, J. Appl. Meteor. 42; pysteps'
    ``probmatching.nonparam_match_empirical_cdf``, Pulkkinen et al. 2019, GMD 12) and of ensemble rain
    post-processing (Ebert 2001, Mon. Wea. Rev. 129); ours for this paper (``probability_matching``)."""
    if members.dim() != 5 or reference.dim() != 3 or members.shape[1] != reference.shape[0] \
            or members.shape[-2:] != reference.shape[-2:]:
        raise InvalidInputError(f"match_intensities needs members [n, B, L, H, W] and a reference [B, H, W], got "
                                f"{tuple(members.shape)} and {tuple(reference.shape)}")
    n, B, L, H, W = members.shape
    flat = members.reshape(n, B, L, H * W)
    target = torch.sort(reference.reshape(B, H * W), dim=-1).values.to(flat.dtype)
    order = torch.argsort(flat, dim=-1, stable=True)
    out = torch.empty_like(flat)
    out.scatter_(-1, order, target[None, :, None, :].expand(n, B, L, H * W))
    return out.reshape(members.shape)


@torch.no_grad()
def predict_mean(model, ctx: Tensor, chunk: int = 64, adv: Tensor | None = None) -> Tensor:
    """Stage 1: ``ctx [B, C, H, W] -> mean [B, L, H, W]`` (model units); ``adv`` (the extrapolated context
    with ``advection_input``) is computed from ``ctx`` when not given."""
    model.network.eval()
    if adv is None:
        adv = advection_input(model, ctx)
    return torch.cat([model.network.estimator(ctx[i : i + chunk], None if adv is None else adv[i : i + chunk])
                      for i in range(0, ctx.shape[0], chunk)])


@torch.no_grad()
def _integrator(model, ctx: Tensor, mean: Tensor, adv: Tensor | None, method: str | None, steps: int | None,
                chunk: int = 64):
    """``integrate(m, gen, rows)``: ``m`` raw members ``[m, B, L, H, W]``, the flow from ``x1 = mean + sigma_l·eps``
    (``eps`` from ``gen``; ``rows``: the member of each of the ``m·B`` rows, for keyed streams)."""
    from scigen.weather.nowcast.config import check_method
    from scigen.weather.nowcast.training import flow_process, source_noise

    c = model.config
    method = check_method(c.method if method is None else method)
    steps = c.steps if steps is None else check_count(steps, "steps")
    flow = flow_process(model.network.flow, c)
    B = ctx.shape[0]

    def integrate(m: int, gen, rows: Tensor | None) -> Tensor:
        ctx_r = ctx[None].expand(m, *ctx.shape).reshape(m * B, *ctx.shape[1:])
        mean_r = mean[None].expand(m, *mean.shape).reshape(m * B, *mean.shape[1:])
        adv_r = None if adv is None else adv[None].expand(m, *adv.shape).reshape(m * B, *adv.shape[1:])
        eps = streams.randn(mean_r.shape, generator=gen, device=mean_r.device, dtype=mean_r.dtype, rows=rows)
        x1 = mean_r + source_noise(c, mean_r) * eps
        out = [flow.sample(x1[i : i + chunk], steps=steps, method=method, progress=False,
                           context=ctx_r[i : i + chunk], mean=mean_r[i : i + chunk],
                           adv=None if adv_r is None else adv_r[i : i + chunk]) for i in range(0, m * B, chunk)]
        return torch.cat(out).reshape(m, B, *mean.shape[1:])

    return integrate


def _keyed(integrate, B: int, device, model, seed: int | None):
    """``draw(keys)``: the raw members with these indices, member ``i``'s noise (its ``B`` fields) keyed by
    ``(seed, i)``."""
    from scigen.core.streams import SampleStreams

    seed = model.sample_seed(seed)

    def draw(keys: Tensor) -> Tensor:  # one row per member: its B fields, keyed by the member's index
        m = len(keys)
        rows = torch.arange(m, device=device).repeat_interleave(B)  # member of each [m·B] row
        return integrate(m, SampleStreams(seed, keys.to(device)), rows)

    return draw


def member_draw(model, ctx: Tensor, seed: int | None, method: str | None, steps: int | None):
    """``draw(keys)``: the keyed flow members ``[m, B, L, H, W]`` (model units) with these indices, as
    :func:`draw_members` draws them before inflation and probability matching (which couple the members)."""
    adv = advection_input(model, ctx)
    mean = predict_mean(model, ctx, adv=adv)
    return _keyed(_integrator(model, ctx, mean, adv, method, steps), ctx.shape[0], mean.device, model, seed)


def draw_members(model, ctx: Tensor, n_samples: int | None, seed: int | None, method: str | None,
                 steps: int | None, stage: str = "flow", chunk: int = 64, *, keyed: bool = False,
                 devices: int = 1) -> Tensor:
    """``[n, B, L, H, W]`` in model units: ``n`` flow members per context (``stage="flow"``: integrate the
    engine's FlowMatching from ``x1 = mean + sigma_l·eps`` at ``t = 1`` to ``t = 0``; ``sigma_l = sigma_s`` at every
    lead; members inflated by ``config.inflation()``, ours, identity by default: :func:`inflate_members`; with
    ``probability_matching``, ours, each member then takes the last observed frame's intensity distribution:
    :func:`match_intensities`), or the stage-1 mean (``stage="mean"``, ``n = 1``). Reproducible by ``seed``
    (:meth:`System.generator`).

    ``keyed``: member ``i`` draws its source noise ``eps`` (its fields for all ``B`` contexts) from its own stream
    keyed by ``(seed, i)`` (:class:`~scigen.core.streams.SampleStreams`); the flow integration is deterministic, so
    the raw member depends on ``(seed, i)`` only, and ``devices=N`` integrates the members on ``N`` processes
    (:func:`~scigen.core.system.sharded.sample_in_shards`) before inflation and probability matching run on the
    gathered ensemble (inflation couples the members through the ensemble mean). ``keyed=False`` (``evaluate``):
    one seeded generator for all members, as before."""
    from scigen.core.system.sharded import sample_in_shards

    c = model.config
    if stage not in ("flow", "mean"):
        raise InvalidInputError(f"stage must be 'flow' or 'mean', got {stage!r}")
    if devices != 1 and not keyed:
        raise InvalidInputError("draw_members: devices > 1 needs keyed=True (members keyed by index)")
    adv = advection_input(model, ctx)
    mean = predict_mean(model, ctx, adv=adv)
    if stage == "mean":
        return mean[None]
    # about six float32 copies of every member field are alive while sampling (source, state, velocity, output)
    n = check_count(c.n_members if n_samples is None else n_samples, "n_samples",
                    maximum=max_count_for_memory(24 * ctx.shape[0] * c.horizon * ctx.shape[-2] * ctx.shape[-1]),
                    why=f"members of {c.horizon} frames of {ctx.shape[-2]}x{ctx.shape[-1]} would not fit in memory")
    integrate = _integrator(model, ctx, mean, adv, method, steps, chunk)
    if keyed:
        raw = sample_in_shards(_keyed(integrate, ctx.shape[0], mean.device, model, seed), n, devices=devices)
    else:
        raw = integrate(n, model.generator(seed), None)
    z = inflate_members(model, raw, c.inflation())
    if not c.probability_matching:
        return z
    tf = model.transform
    x = match_intensities(torch.from_numpy(tf.inverse(z.cpu().numpy())), torch.from_numpy(tf.inverse(ctx[:, -1].cpu().numpy())))
    return torch.as_tensor(tf.forward(x.numpy()), dtype=z.dtype, device=z.device)
