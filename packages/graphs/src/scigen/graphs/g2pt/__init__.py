"""G2PT (ICML 2025): graph generation as next-token prediction.

Names are imported on first use, so the light ``scigen.graphs.g2pt.cli`` (``--help``) loads no torch.
"""

from scigen.core.lazy import lazy_names

_LAZY = {
    "G2PTConfig": "scigen.graphs.g2pt.config",
    "G2PT": "scigen.graphs.g2pt.system",
    **dict.fromkeys(("Vocab", "decode", "edge_order", "encode", "encode_dataset"), "scigen.graphs.g2pt.tokenizer"),
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_names(__name__, _LAZY)
