"""AGDiff's ablations: AGDiff itself with one of its parts replaced, compared like the baselines.

* **Random perturbation** — :func:`random_perturbation`: ``pseudo="random"`` (pseudo-anomalies
  ``decode(z0 + s·N(0, I))``, no diffusion; the ablation the paper argues against).

Kept apart from :mod:`~scigen.graphs.agdiff.baselines` (which the demo imports) so that no module of the
package imports back into the system that imports it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["random_perturbation"]


def random_perturbation(preset: str = "tiny", **overrides: Any):
    """AGDiff with random-perturbation pseudo-anomalies (``pseudo="random"``), otherwise identical."""
    from scigen.graphs.agdiff.system import AGDiff

    return AGDiff(AGDiff.Config.preset(preset, pseudo="random", **overrides))
