"""Single-cell generative models (MMSFM, Inverse Flow, GIM) on AnnData."""

__version__ = "0.1.0"
