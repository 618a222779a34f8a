"""The one config name for a staged system's budget: ``stage_shares``.

Every system that trains in stages (:meth:`System.train_stages <scigen.core.system.System.train_stages>`)
names the share of ``max_steps`` each of its share stages gets in one config field,
``stage_shares: dict[str, float]`` (stage name -> share in ``[0, 1)``; the system's rest stage takes the
steps the others leave). :func:`renamed_share` keeps a system's old per-system name (``pretrain_share``,
``flow_share``, ``forecaster_share``) loading for one release with a ``DeprecationWarning``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, ClassVar

import pydantic

from scigen.core.system.config import SystemConfig

__all__ = ["StagedConfig", "check_stage_shares", "deprecated_share", "old_share_value", "renamed_share",
           "stage_shares_field"]


def stage_shares_field(default: dict[str, float]):
    """A pydantic field ``stage_shares`` with ``default`` (a fresh copy per config)."""
    return pydantic.Field(default_factory=lambda: dict(default))


def check_stage_shares(value: dict[str, float], stages: Sequence[str]) -> dict[str, float]:
    """``value`` if it names only ``stages`` with shares in ``[0, 1)`` summing below 1; ``ValueError``
    (shown by the config as a one-line field error) otherwise."""
    unknown = sorted(set(value) - set(stages))
    if unknown:
        raise ValueError(f"unknown stage(s) {unknown}; stages with a share: {list(stages)}")
    bad = {k: v for k, v in value.items() if not 0.0 <= float(v) < 1.0}
    if bad:
        raise ValueError(f"shares must be in [0, 1), got {bad}")
    if sum(float(v) for v in value.values()) >= 1.0:
        raise ValueError(f"shares must sum below 1 (the rest stage needs steps), got {value}")
    return {k: float(v) for k, v in value.items()}


def renamed_share(data: Any, old: str, stage: str, owner: str) -> Any:
    """For a ``mode="before"`` model validator: map the deprecated field ``old`` of the config ``owner`` to
    ``stage_shares[stage]`` (warning once per use with the new name)."""
    if isinstance(data, dict) and old in data:
        data = dict(data)
        value = data.pop(old)
        warnings.warn(f"{owner}.{old} is deprecated; use stage_shares={{{stage!r}: {value!r}}} (the one name of "
                      "every staged system's budget)", DeprecationWarning, stacklevel=4)
        data["stage_shares"] = {**dict(data.get("stage_shares") or {}), stage: value}
    return data


def old_share_value(config: Any, old: str, stage: str) -> float:
    """The value behind a deprecated share attribute (``config.pretrain_share``), with a warning."""
    warnings.warn(f"{type(config).__name__}.{old} is deprecated; read stage_shares[{stage!r}]",
                  DeprecationWarning, stacklevel=3)
    return config.stage_shares[stage]


class StagedConfig(SystemConfig):
    """The config base of a system that trains in stages: ``stage_shares`` (a subclass redeclares it with its
    default, ``stage_shares_field({...})``) is checked against ``SHARE_STAGES``; ``RENAMED_SHARE = (old name,
    stage)`` keeps the system's old per-system field loading with a ``DeprecationWarning`` (add
    ``old = deprecated_share(old, stage)`` for reading it)."""

    SHARE_STAGES: ClassVar[tuple[str, ...]] = ()
    RENAMED_SHARE: ClassVar[tuple[str, str] | None] = None
    stage_shares: dict[str, float] = stage_shares_field({})

    @pydantic.field_validator("stage_shares")
    @classmethod
    def _check_stage_shares(cls, value: dict[str, float]) -> dict[str, float]:
        return check_stage_shares(value, cls.SHARE_STAGES)

    @pydantic.model_validator(mode="before")
    @classmethod
    def _renamed_share(cls, data: Any) -> Any:
        return data if cls.RENAMED_SHARE is None else renamed_share(data, *cls.RENAMED_SHARE, cls.__name__)


def deprecated_share(old: str, stage: str) -> property:
    """A read-only attribute ``old`` of a :class:`StagedConfig`: ``stage_shares[stage]``, with a warning."""
    return property(lambda self: old_share_value(self, old, stage), doc=f"Deprecated; use ``stage_shares[{stage!r}]``.")
