"""UniGEM (ICLR 2025) and the EDM baseline (ICML 2022)."""

from scigen.molecules.unigem.config import EDMConfig, UniGEMConfig
from scigen.molecules.unigem.system import EDM, UniGEM

__all__ = ["UniGEM", "EDM", "UniGEMConfig", "EDMConfig"]
