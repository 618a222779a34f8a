"""Renamed public names keep working for one release (docs/engine-api.md, "The user vocabulary").

``renamed_kwarg`` resolves an old keyword argument against its new name with a ``DeprecationWarning``
naming the new one; ``warn_renamed`` is the warning alone (a renamed method, a renamed value).
"""

from __future__ import annotations

import warnings
from typing import Any

from scigen.core.errors import InvalidInputError

__all__ = ["renamed_kwarg", "warn_renamed"]


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """``DeprecationWarning``: ``old`` works for one more release; ``new`` is the name to use."""
    warnings.warn(f"{old} is deprecated and will be removed in the next release; use {new}", DeprecationWarning,
                  stacklevel=stacklevel)


def renamed_kwarg(new_value: Any, old_value: Any, *, old: str, new: str, where: str, unset: Any = None,
                  stacklevel: int = 4) -> Any:
    """The value of keyword ``new``: ``new_value``, or ``old_value`` (with a ``DeprecationWarning`` naming
    ``new``) when only the old keyword ``old`` was given. Both given: ``InvalidInputError``. ``unset`` is
    the default both keywords have when not passed."""
    if old_value is unset:
        return new_value
    if new_value is not unset:
        raise InvalidInputError(f"{where}: give {new}= only ({old}= is its deprecated old name), not both")
    warn_renamed(f"{where}({old}=...)", f"{new}=", stacklevel=stacklevel)
    return old_value
