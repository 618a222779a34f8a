"""Plot helpers shared by every system's demo and report figures."""

from __future__ import annotations

import os
from pathlib import Path


def save_figure(fig, path: str | os.PathLike[str], *, dpi: int = 110) -> Path:
    """Save a matplotlib figure as PNG atomically (temporary file + rename) and close it.

    A reader never sees a half-written image, and an interrupted save leaves the old file intact.
    """
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp.png")
    try:
        fig.savefig(tmp, dpi=dpi, bbox_inches="tight", format="png")
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if tmp.exists():
            tmp.unlink()
    return path
