"""3D molecule generation and property prediction (UniGEM, EDM) on RDKit."""

__version__ = "0.1.0"
