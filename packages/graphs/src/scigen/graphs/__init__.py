"""Graph generation (G2PT, SBGD, AGDiff) on networkx and PyG."""

__version__ = "0.1.0"
