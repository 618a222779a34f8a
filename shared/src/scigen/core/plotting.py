"""Plot helpers shared by every system's demo and report figures."""

from __future__ import annotations

import os
from pathlib import Path

from scigen.core.files import atomic_path


def save_figure(fig, path: str | os.PathLike[str], *, dpi: int = 110, close: bool = True) -> Path:
    """Save a matplotlib figure as PNG atomically (temporary file + rename); close it unless ``close=False``.

    A reader never sees a half-written image, and an interrupted save leaves the old file intact.
    Never changes matplotlib's backend.
    """
    import matplotlib.pyplot as plt

    path = Path(path)
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=dpi, bbox_inches="tight", format="png")
    finally:
        if close:
            plt.close(fig)
    return path
