"""Configuration objects of systems: pydantic models with the paper's defaults.

:func:`make_config` turns ``None``, a dict or a config instance plus keyword overrides into a
validated config, and reports every bad field in one message that names the config class, the field
and the offending value (unknown keys are rejected, not silently ignored).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import pydantic

from scigen.core.errors import InvalidInputError, UnknownNameError

C = TypeVar("C", bound=pydantic.BaseModel)


class SystemConfig(pydantic.BaseModel):
    """Base class of every system's config: unknown fields are errors, assignment is validated.

    A system's config lists named recipes in ``PRESETS`` (``"tiny"``: about a minute on one CPU core;
    ``"small"``; ``"paper"``: the published configuration), built with :meth:`preset`.
    """

    model_config = pydantic.ConfigDict(extra="forbid", validate_assignment=True, frozen=False)

    #: preset name -> field overrides (nested sections such as ``train`` as dicts, merged field by field)
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}
    #: fields removed from this config -> why: a saved config (or caller) that still sets one is accepted,
    #: the value dropped with a ``DeprecationWarning`` (so runs saved before the removal still load)
    REMOVED: ClassVar[dict[str, str]] = {}

    @classmethod
    def preset(cls: type[C], name: str, **overrides: Any) -> C:
        """The config of the named recipe (``"tiny" | "small" | "paper"``), with ``overrides`` on top."""
        if name not in cls.PRESETS:
            valid = ", ".join(sorted(cls.PRESETS)) or "none defined"
            raise UnknownNameError(f"{cls.__name__} has no preset {name!r}; valid presets: {valid}")
        data = _merge(cls.PRESETS[name], overrides)
        return make_config(cls, data)

    @classmethod
    def presets(cls) -> list[str]:
        """The names of the presets this config defines."""
        return sorted(cls.PRESETS)

    # ------------------------------------------------------------------ sampling presets (issue 36)
    #: the fields that only sampling reads (never training): the only fields a sampling preset may set
    SAMPLING_FIELDS: ClassVar[tuple[str, ...]] = ()
    #: named sampling presets beside ``"paper"``: name -> values of ``SAMPLING_FIELDS`` (``"fast"``: the cheapest
    #: measured setting within seed noise of the paper's sampler; absent = the paper's sampler), or a function
    #: ``config -> values`` where the choice depends on a training field (the toy's objective)
    SAMPLERS: ClassVar[dict[str, dict[str, Any] | Callable[[Any], dict[str, Any]]]] = {}
    #: why each sampling preset is what it is (the measurement, or why ``"fast"`` is the paper's sampler)
    SAMPLER_NOTES: ClassVar[dict[str, str]] = {}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """A config's sampling presets may set only its ``SAMPLING_FIELDS``, which must be fields: checked
        when the class is defined, so a preset can never change training."""
        super().__pydantic_init_subclass__(**kwargs)
        unknown = sorted(set(cls.SAMPLING_FIELDS) - set(cls.model_fields))
        if unknown:
            raise TypeError(f"{cls.__name__}.SAMPLING_FIELDS names {unknown}, which are not fields")
        if "paper" in cls.SAMPLERS:
            raise TypeError(f"{cls.__name__}.SAMPLERS must not define 'paper': it is the paper preset's sampler")
        for name, settings in cls.SAMPLERS.items():
            if not callable(settings):
                cls._check_sampling_keys(name, settings)

    @classmethod
    def _check_sampling_keys(cls, name: str, settings: dict[str, Any]) -> None:
        extra = sorted(set(settings) - set(cls.SAMPLING_FIELDS))
        if extra:
            raise TypeError(f"{cls.__name__}.SAMPLERS[{name!r}] sets {extra}, which are not sampling fields "
                            f"(SAMPLING_FIELDS: {list(cls.SAMPLING_FIELDS)}); a sampling preset never changes training")

    @classmethod
    def samplers(cls) -> list[str]:
        """The sampling presets of this config: ``"paper"``, ``"fast"`` and any the config adds."""
        return ["paper", "fast", *sorted(set(cls.SAMPLERS) - {"fast"})]

    @classmethod
    def sampler_settings(cls, name: str, config: Any = None) -> dict[str, Any]:
        """The values of ``SAMPLING_FIELDS`` that the sampling preset ``name`` sets on ``config`` (default: the
        paper preset; ``{}`` for a system whose sampling has no setting apart from training). ``"paper"``:
        those of ``preset("paper")`` (the defaults where there is no paper preset); ``"fast"``:
        ``SAMPLERS["fast"]``, else the paper's."""
        if not isinstance(name, str) or name not in cls.samplers():
            raise UnknownNameError(f"{cls.__name__} has no sampling preset {name!r}; valid sampling presets: "
                                   f"{', '.join(cls.samplers())}")
        paper = cls.preset("paper") if "paper" in cls.PRESETS else make_config(cls)
        if name not in cls.SAMPLERS:
            return {f: getattr(paper, f) for f in cls.SAMPLING_FIELDS}
        settings = cls.SAMPLERS[name]
        if callable(settings):
            settings = settings(paper if config is None else config)
            cls._check_sampling_keys(name, settings)
        return dict(settings)

    def sampling(self: C, name: str) -> C:
        """A copy of this config with the sampling preset ``name`` (``"paper"`` or ``"fast"``, see
        :meth:`samplers`): only ``SAMPLING_FIELDS`` change, so training is the same::

            model = System(System.Config.preset("paper").sampling("fast"))
            model.config = model.config.sampling("fast")     # a trained or loaded model
        """
        return make_config(type(self), self, **type(self).sampler_settings(name, self))


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
    for key, value in overrides.items():
        if isinstance(value, pydantic.BaseModel):
            value = value.model_dump()
        if isinstance(value, dict) and isinstance(data.get(key), (dict, pydantic.BaseModel)):
            current = data[key].model_dump() if isinstance(data[key], pydantic.BaseModel) else data[key]
            value = _merge(current, value)
        data[key] = value
    data = _without_removed(cls, data)
    data = _with_section_defaults(cls, data)
    try:
        return cls.model_validate(data)
    except pydantic.ValidationError as exc:
        raise InvalidInputError(format_validation_error(cls, exc)) from None


def _without_removed(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` less the fields ``cls.REMOVED`` names, each dropped with a ``DeprecationWarning``."""
    removed = getattr(cls, "REMOVED", {})
    for key in [k for k in data if k in removed]:
        warnings.warn(f"{cls.__name__}.{key} was removed and is ignored (value {data[key]!r}): {removed[key]}",
                      DeprecationWarning, stacklevel=4)
        data = {k: v for k, v in data.items() if k != key}
    return data


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``base`` updated by ``top``; nested dicts (config sections) are merged key by key."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    for k, v in top.items():
        if isinstance(v, pydantic.BaseModel):
            v = v.model_dump()
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _with_section_defaults(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """A partial dict for a section field (a sub-config such as ``train``) is merged over that field's
    default, so ``System(train={"lr": 1e-3})`` keeps the system's other training defaults."""
    fields = getattr(cls, "model_fields", {})
    out = dict(data)
    for key, value in data.items():
        info = fields.get(key)
        if info is None or not isinstance(value, dict):
            continue
        default = info.get_default(call_default_factory=True)
        if isinstance(default, pydantic.BaseModel):
            out[key] = _merge(default.model_dump(), value)
    return out
