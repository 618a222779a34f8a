"""Zero-shot macro placement with a guided diffusion model, on Bookshelf netlists."""

__version__ = "0.1.0"
