"""The built-in toy system (``scigen core toy``): flow matching or diffusion on 2-D / 32-d toys."""

from scigen.core.toy.data import DATASETS, toy_data

#: Entry point ``scigen.systems`` -> ``core`` (strings are imported only when used).
SYSTEMS = {"toy": "scigen.core.toy.system:ToySystem"}

__all__ = ["DATASETS", "SYSTEMS", "toy_data"]
