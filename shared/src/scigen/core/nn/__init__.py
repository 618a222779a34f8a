"""Generic network blocks for the engine and the domain packages.

Time inputs follow the engine convention ``t ∈ [0, 1]`` (``t = 0`` data, ``t = 1`` noise).
Domain-specific networks live in the domain packages; only reusable blocks live here.
"""

from scigen.core.nn.attention import SelfAttention
from scigen.core.nn.embeddings import GaussianFourierProjection, SinusoidalTimeEmbedding
from scigen.core.nn.mlp import ResidualBlock, ResidualMLP
from scigen.core.nn.modulation import AdaLNZero, FiLM, modulate
from scigen.core.nn.transformer import TransformerBlock
from scigen.core.nn.unet import UNet

__all__ = [
    "AdaLNZero", "FiLM", "GaussianFourierProjection", "ResidualBlock", "ResidualMLP", "SelfAttention",
    "SinusoidalTimeEmbedding", "TransformerBlock", "UNet", "modulate",
]
