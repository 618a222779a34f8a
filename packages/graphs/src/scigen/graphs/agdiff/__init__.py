"""AGDiff (ICML 2025): graph-level anomaly detection with diffusion-generated pseudo-anomalies.

Names are imported on first use, so the light ``scigen.graphs.agdiff.cli`` (``--help``) loads no torch.
"""

from scigen.core.lazy import lazy_names

_LAZY = {
    "AGDiffConfig": "scigen.graphs.agdiff.config",
    "AGDiff": "scigen.graphs.agdiff.system",
    **dict.fromkeys(("anomaly_labels", "as_graphs", "label_by_class"), "scigen.graphs.agdiff.graphs"),
    **dict.fromkeys(("detection_scores",), "scigen.graphs.agdiff.metrics"),
    **dict.fromkeys(("synthetic_anomaly_graphs",), "scigen.graphs.agdiff.synthetic"),
    **dict.fromkeys(("cross_validate",), "scigen.graphs.agdiff.protocol"),
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_names(__name__, _LAZY)
