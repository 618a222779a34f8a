"""Declarative training stages: which sub-modules train, on which loss, for how many steps.

A :class:`Stage` names its trainable sub-modules by dotted name (``"vgae"``, ``"denoiser.eps_head"``);
every other parameter of the network is frozen for that stage (``requires_grad=False``, optionally
``eval()`` mode) and :class:`FreezeCheck` verifies that none of them receives a gradient. Freezing
pre-trained sub-networks stage by stage is how multi-stage papers train (D3U, Li et al. ICLR 2025: the
point forecaster, then the residual diffusion around it frozen; AGDiff, Cai et al. ICML 2025: the VGAE, then
the latent diffusion and detector; anemoi-training's ``training.submodules_to_freeze`` is the same idea).

One budget rule (:func:`split_budget`) for every system: a stage has a fixed ``steps``, a ``share`` of
``max_steps`` (``round(share * max_steps)``, Python's half-to-even rounding, clamped to leave every other
stage its ``min_steps``), or neither — then it is the one *rest* stage and gets what the others leave,
so the counts sum to ``max_steps`` exactly.

The stage loop itself (checkpoint sub-folders, skipping finished stages on resume, per-stage history)
is :meth:`scigen.core.system.System.train_stages`; this module holds the parts that need no system.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import torch
from lightning.pytorch.callbacks import Callback
from torch import nn

from scigen.core.errors import FrozenParameterError, InvalidInputError

__all__ = ["FreezeCheck", "Stage", "check_trainable", "freeze_except", "frozen_snapshot", "split_budget",
           "assert_unchanged"]


@dataclasses.dataclass(frozen=True)
class Stage:
    """One stage of a staged fit.

    Attributes:
        name: the stage's name; also its checkpoint sub-folder (``checkpoint_dir/<name>``) and its label
            in :attr:`~scigen.core.system.TrainingHistory.stages`.
        trainable: dotted names of the network's sub-modules trained in this stage (at least one); all
            other parameters are frozen and checked to stay bit-identical.
        loss: ``loss(network, batch) -> scalar``, or the name of a method of the system with that
            signature; ``None`` = the system's ``training_loss``.
        steps: a fixed number of steps (0 = skip the stage), or
        share: a share of the budget ``max_steps`` (``round(share * max_steps)``); with neither the stage
            is the *rest* stage (at most one per plan) and gets the steps the others leave, including
            steps an earlier stage did not use because it stopped early.
        min_steps: the fewest steps the budget rule may give this stage (0 lets a share round to 0, which
            skips the stage).
        validate: use ``val_data`` in this stage (validation losses and early stopping); without
            validation data (or with ``validate=False``) early stopping is off for the stage.
        options: per-stage overrides of ``config.train`` (``lr``, ``early_stopping``, ``val_every``,
            ``batch_size``, ...), applied on top of the call's options.
        frozen_eval: put the frozen sub-modules in ``eval()`` mode during the stage (dropout off,
            normalisation statistics fixed); ``False`` leaves them in training mode like the rest.
        before: called with no arguments right before the stage trains (or resumes), not when it is
            skipped (its effect is then part of the saved stage weights).
    """

    name: str
    trainable: tuple[str, ...]
    loss: Callable[[nn.Module, Any], torch.Tensor] | str | None = None
    steps: int | None = None
    share: float | None = None
    min_steps: int = 1
    validate: bool = True
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    frozen_eval: bool = False
    before: Callable[[], None] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or "/" in self.name or self.name.startswith("."):
            raise InvalidInputError(f"stage name must be a non-empty folder name, got {self.name!r}")
        trainable = (self.trainable,) if isinstance(self.trainable, str) else tuple(self.trainable)
        if not trainable or not all(isinstance(t, str) and t for t in trainable):
            raise InvalidInputError(f"stage {self.name!r}: trainable must name at least one sub-module, "
                                    f"got {self.trainable!r}")
        object.__setattr__(self, "trainable", trainable)
        if self.steps is not None and self.share is not None:
            raise InvalidInputError(f"stage {self.name!r}: give steps or share, not both")
        if self.steps is not None and (isinstance(self.steps, bool) or not isinstance(self.steps, int)
                                       or self.steps < 0):
            raise InvalidInputError(f"stage {self.name!r}: steps must be an int >= 0, got {self.steps!r}")
        if self.share is not None and not 0.0 <= float(self.share) <= 1.0:
            raise InvalidInputError(f"stage {self.name!r}: share must be in [0, 1], got {self.share!r}")
        owned = sorted({"max_steps", "checkpoint_dir", "resume", "val_data", "loss_fn"} & set(self.options))
        if owned:
            raise InvalidInputError(f"stage {self.name!r}: options may not set {owned} (the stage loop sets them)")
        if isinstance(self.min_steps, bool) or not isinstance(self.min_steps, int) or self.min_steps < 0:
            raise InvalidInputError(f"stage {self.name!r}: min_steps must be an int >= 0, got {self.min_steps!r}")

    @property
    def is_rest(self) -> bool:
        """True for the stage that takes the steps the others leave."""
        return self.steps is None and self.share is None


def split_budget(stages: Sequence[Stage], max_steps: int) -> list[int]:
    """Planned steps per stage for a budget of ``max_steps`` (module docstring: one rule for all systems).

    Fixed ``steps`` are taken as given; a ``share`` becomes ``round(share * max_steps)`` clamped to
    ``[min_steps, max_steps − Σ other stages' min_steps]``; the rest stage (if any) gets ``max_steps``
    minus the others. Raises :class:`InvalidInputError` for duplicate names, two rest stages, or a budget
    that cannot give every stage its ``min_steps`` (or, without a rest stage, does not add up).
    """
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise InvalidInputError(f"max_steps must be a positive int, got {max_steps!r}")
    names = [s.name for s in stages]
    if not stages:
        raise InvalidInputError("a staged fit needs at least one stage")
    if len(set(names)) != len(names):
        raise InvalidInputError(f"stage names must be unique, got {names}")
    rest = [s.name for s in stages if s.is_rest]
    if len(rest) > 1:
        raise InvalidInputError(f"at most one stage may take the rest of the budget (no steps, no share); got {rest}")
    mins = [0 if s.steps == 0 else s.min_steps for s in stages]
    need = sum(mins)
    if need > max_steps:
        detail = " + ".join(f"{s.name} >= {m}" for s, m in zip(stages, mins, strict=True))
        raise InvalidInputError(f"max_steps must be >= {need} for the stages ({detail}), got {max_steps}")
    plan: list[int | None] = []
    for s, m in zip(stages, mins, strict=True):
        if s.steps is not None:
            plan.append(int(s.steps))
        elif s.share is not None:
            plan.append(max(m, min(max_steps - (need - m), round(float(s.share) * max_steps))))
        else:
            plan.append(None)
    fixed = sum(p for p in plan if p is not None)
    if rest:
        i = names.index(rest[0])
        plan[i] = max_steps - fixed
        if plan[i] < mins[i]:
            raise InvalidInputError(f"max_steps={max_steps}: the other stages take {fixed} steps, leaving "
                                    f"{plan[i]} for stage {rest[0]!r} (needs >= {mins[i]})")
    elif fixed != max_steps and any(s.share is not None for s in stages):
        raise InvalidInputError(f"the stages' steps {dict(zip(names, plan, strict=True))} add up to {fixed}, "
                                f"not max_steps={max_steps}; leave one stage without steps or share to take the rest")
    return [int(p) for p in plan]


def _module_names(network: nn.Module) -> list[str]:
    return [n for n, _ in network.named_modules() if n]


def check_trainable(network: nn.Module, stage: Stage) -> None:
    """Raise :class:`InvalidInputError` naming any entry of ``stage.trainable`` that is not a sub-module of
    ``network`` (listing the valid top-level names and the dotted names nearest to it)."""
    valid = _module_names(network)
    for name in stage.trainable:
        if name not in valid:
            top = [n for n in valid if "." not in n]
            near = [n for n in valid if n.startswith(name.split(".")[0] + ".")][:8]
            raise InvalidInputError(
                f"stage {stage.name!r}: trainable {name!r} is not a sub-module of {type(network).__name__}; "
                f"valid names: {top}" + (f" (and dotted ones such as {near})" if near else ""))


def frozen_parameters(network: nn.Module, trainable: Sequence[str]) -> dict[str, nn.Parameter]:
    """The parameters of ``network`` outside every sub-module named in ``trainable``, by dotted name."""
    keep = tuple(trainable)
    return {n: p for n, p in network.named_parameters()
            if not any(n == t or n.startswith(t + ".") for t in keep)}


@contextmanager
def freeze_except(network: nn.Module, trainable: Sequence[str]) -> Iterator[dict[str, nn.Parameter]]:
    """Within the block only the sub-modules named in ``trainable`` have ``requires_grad=True``; on exit
    every parameter is trainable again. Yields the frozen parameters by name."""
    frozen = frozen_parameters(network, trainable)
    try:
        network.requires_grad_(True)
        for p in frozen.values():
            p.requires_grad_(False)
        yield frozen
    finally:
        network.requires_grad_(True)


def frozen_snapshot(network: nn.Module, trainable: Sequence[str]) -> dict[str, torch.Tensor]:
    """Copies of the parameters a stage with ``trainable`` freezes (for :func:`assert_unchanged`)."""
    return {n: p.detach().clone() for n, p in frozen_parameters(network, trainable).items()}


def _bytes(t: torch.Tensor) -> torch.Tensor:
    return t.detach().cpu().contiguous().reshape(-1).view(torch.uint8)


def assert_unchanged(network: nn.Module, snapshot: dict[str, torch.Tensor], stage: str) -> None:
    """Raise :class:`FrozenParameterError` when a parameter in ``snapshot`` is not bit-identical in
    ``network`` (compared as raw bytes, so ``-0.0`` vs ``0.0`` and NaN payloads count as changes)."""
    params = dict(network.named_parameters())
    changed = [n for n, v in snapshot.items() if n not in params or not torch.equal(_bytes(params[n]), _bytes(v))]
    if changed:
        raise FrozenParameterError(f"stage {stage!r} changed frozen parameters {changed[:5]}"
                                   f"{'...' if len(changed) > 5 else ''} (they must stay as the stage found them)")


class FreezeCheck(Callback):
    """Checks, before every optimizer step, that no frozen parameter holds a gradient; with ``eval_frozen``
    it also keeps the frozen sub-modules in ``eval()`` mode (Lightning puts the whole module in training
    mode when training starts)."""

    def __init__(self, stage: str, frozen_names: Sequence[str], frozen_modules: Sequence[str] = (),
                 eval_frozen: bool = False) -> None:
        self.stage = stage
        self.frozen_names = tuple(frozen_names)
        self.frozen_modules = tuple(frozen_modules)
        self.eval_frozen = bool(eval_frozen)
        self._frozen: list[tuple[str, torch.nn.Parameter]] = []
        self._eval: list[nn.Module] = []

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        for module in self._eval:
            if module.training:  # put back in training mode (Lightning at the start, a validation pass after it):
                module.eval()    # eval() walks every sub-module, so only when needed (issue 36.1)

    def on_train_start(self, trainer, pl_module) -> None:
        params = dict(pl_module.module.named_parameters())  # looked up once, not at every step
        self._frozen = [(n, params[n]) for n in self.frozen_names]
        self._eval = [pl_module.module.get_submodule(name) for name in self.frozen_modules] if self.eval_frozen else []

    def on_before_optimizer_step(self, trainer, pl_module, optimizer) -> None:
        bad = [n for n, p in self._frozen if p.grad is not None]
        if bad:
            raise FrozenParameterError(f"stage {self.stage!r}: frozen parameters {bad[:5]} received a gradient")


def frozen_module_names(network: nn.Module, trainable: Sequence[str]) -> list[str]:
    """The largest sub-modules holding no trainable sub-module (what ``frozen_eval`` puts in eval mode)."""
    keep = tuple(trainable)
    out: list[str] = []

    def visit(prefix: str, module: nn.Module) -> None:
        for name, child in module.named_children():
            full = f"{prefix}{name}"
            if any(full == t or full.startswith(t + ".") for t in keep):
                continue  # trainable (or inside a trainable one)
            if any(t.startswith(full + ".") for t in keep):
                visit(full + ".", child)  # holds a trainable sub-module deeper down
            else:
                out.append(full)

    visit("", network)
    return out


def stage_options(stage: Stage, base: Mapping[str, Any]) -> dict[str, Any]:
    """The call's ``base`` options with the stage's own ``options`` on top."""
    return {**dict(base), **dict(stage.options)}
