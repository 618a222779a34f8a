"""UniGEM (ICLR 2025) and the EDM baseline (ICML 2022).

Names are imported on first use, so the light ``scigen.molecules.unigem.cli`` (``--help``) loads no torch.
"""

from scigen.core.lazy import lazy_names

_LAZY = {**dict.fromkeys(("EDMConfig", "UniGEMConfig"), "scigen.molecules.unigem.config"),
         **dict.fromkeys(("EDM", "UniGEM"), "scigen.molecules.unigem.system")}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_names(__name__, _LAZY)
