"""SBGD (ICML 2025): graph diffusion in a block-graph space.

Names are imported on first use, so ``scigen list`` / ``--help`` load no torch.
"""

from scigen.core.lazy import lazy_names

_LAZY = {
    "SBGDConfig": "scigen.graphs.sbgd.config",
    "SBGD": "scigen.graphs.sbgd.system",
    **dict.fromkeys(("partition", "PARTITIONERS"), "scigen.graphs.sbgd.partitioning"),
    **dict.fromkeys(("Decomposition", "decompose", "reassemble", "check_cover"), "scigen.graphs.sbgd.blocks"),
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_names(__name__, _LAZY)
