"""The built-in toy system (``scigen core toy``): flow matching or diffusion on 2-D / 32-d toys.

``DATASETS`` and ``toy_data`` are imported on first use, so reading :data:`SYSTEMS` (what
``scigen list`` does) does not load torch.
"""

from __future__ import annotations

#: Entry point ``scigen.systems`` -> ``core`` (strings are imported only when used).
SYSTEMS = {"toy": "scigen.core.toy.system:ToySystem"}

__all__ = ["DATASETS", "SYSTEMS", "toy_data"]


def __getattr__(name: str):
    if name in ("DATASETS", "toy_data"):
        from scigen.core.toy import data

        return getattr(data, name)
    raise AttributeError(f"module 'scigen.core.toy' has no attribute {name!r}")
