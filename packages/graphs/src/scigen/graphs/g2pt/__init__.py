"""G2PT (ICML 2025): graph generation as next-token prediction."""

from scigen.graphs.g2pt.config import G2PTConfig
from scigen.graphs.g2pt.system import G2PT
from scigen.graphs.g2pt.tokenizer import Vocab, decode, edge_order, encode, encode_dataset

__all__ = ["G2PT", "G2PTConfig", "Vocab", "decode", "edge_order", "encode", "encode_dataset"]
