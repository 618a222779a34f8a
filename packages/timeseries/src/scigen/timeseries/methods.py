"""Sampler names the package's diffusion forecasters accept (shared by NsDiff and D3U)."""

from __future__ import annotations

__all__ = ["check_method"]


def check_method(method: object) -> str:
    """An engine sampler name (every one but ``consistency``, which needs a consistency model); else ``InvalidInputError``."""
    from scigen.core.errors import InvalidInputError
    from scigen.core.samplers import METHODS

    valid = [m for m in METHODS if m != "consistency"]
    if method not in valid:
        raise InvalidInputError(f"unknown sampler method {method!r}; valid: {', '.join(valid)}")
    return str(method)
