"""scigen.kernels: GPU kernels (Triton) with exact pure-PyTorch reference implementations.

Every op is a ``torch.library.custom_op``: on CPU it runs the reference (which is also the test
oracle), on CUDA the Triton kernel. Callers never branch on device.
"""

from scigen.kernels.egnn import egnn_aggregate
from scigen.kernels.mmd import mmd_rbf
from scigen.kernels.overlap import box_overlap_energy, total_overlap_area
from scigen.kernels.segment import segment_max, segment_min, segment_sum
from scigen.kernels.sinkhorn import sinkhorn_log
from scigen.kernels.wirelength import net_hpwl, wa_wirelength

__version__ = "0.1.0"

__all__ = [
    "mmd_rbf",
    "segment_sum",
    "segment_max",
    "segment_min",
    "sinkhorn_log",
    "box_overlap_energy",
    "total_overlap_area",
    "net_hpwl",
    "wa_wirelength",
    "egnn_aggregate",
]
