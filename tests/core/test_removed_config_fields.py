"""A field removed from a system's config (``SystemConfig.REMOVED``): old configs still load, with a warning."""

from __future__ import annotations

import warnings
from typing import ClassVar

import pytest

from scigen.core.errors import InvalidInputError
from scigen.core.system.config import SystemConfig, make_config


class _Cfg(SystemConfig):
    width: int = 4
    REMOVED: ClassVar[dict[str, str]] = {"old_switch": "swept, no effect"}


def test_a_removed_field_is_dropped_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match=r"_Cfg\.old_switch was removed .*swept, no effect"):
        cfg = make_config(_Cfg, {"width": 7, "old_switch": 2.0})
    assert cfg.width == 7 and not hasattr(cfg, "old_switch")


def test_other_unknown_fields_are_still_refused():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InvalidInputError, match="unknown field"):
            make_config(_Cfg, {"wdith": 7})
