"""Configuration objects of systems: pydantic models with the paper's defaults.

:func:`make_config` turns ``None``, a dict or a config instance plus keyword overrides into a
validated config, and reports every bad field in one message that names the config class, the field
and the offending value (unknown keys are rejected, not silently ignored).
"""

from __future__ import annotations

from typing import Any, TypeVar

import pydantic

from scigen.core.errors import InvalidInputError

C = TypeVar("C", bound=pydantic.BaseModel)


class SystemConfig(pydantic.BaseModel):
    """Base class of every system's config: unknown fields are errors, assignment is validated."""

    model_config = pydantic.ConfigDict(extra="forbid", validate_assignment=True, frozen=False)


def format_validation_error(cls: type, exc: pydantic.ValidationError) -> str:
    """One line per bad field: ``ToyConfig.hidden: Input should be greater than 0 (got -3)``."""
    lines = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err.get("loc", ())) or "<root>"
        msg = err.get("msg", "invalid")
        if err.get("type") == "extra_forbidden":
            valid = ", ".join(sorted(cls.model_fields)) if hasattr(cls, "model_fields") else ""
            msg = f"unknown field (valid fields: {valid})"
        value = err.get("input")
        shown = "" if err.get("type") == "missing" else f" (got {value!r})"
        lines.append(f"{cls.__name__}.{field}: {msg}{shown}")
    return "invalid configuration:\n  " + "\n  ".join(lines)


def make_config(cls: type[C], config: C | dict[str, Any] | None = None, **overrides: Any) -> C:
    """Build a validated ``cls`` from ``config`` (instance, mapping or None) and ``overrides``."""
    if config is None:
        data: dict[str, Any] = {}
    elif isinstance(config, cls):
        data = config.model_dump()
    elif isinstance(config, pydantic.BaseModel):
        raise InvalidInputError(f"expected a {cls.__name__} (or a dict), got a {type(config).__name__}")
    elif isinstance(config, dict):
        data = dict(config)
    else:
        raise InvalidInputError(f"expected a {cls.__name__}, a dict or None, got {type(config).__name__}")
    data.update(overrides)
    try:
        return cls.model_validate(data)
    except pydantic.ValidationError as exc:
        raise InvalidInputError(format_validation_error(cls, exc)) from None
