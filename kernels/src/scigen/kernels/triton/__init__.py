"""Triton kernels and their launchers (CUDA; on CPU only under ``TRITON_INTERPRET=1``).

Modules here import :mod:`triton` at import time, so import them lazily (inside the CUDA kernel
registration), never from :mod:`scigen.kernels` itself: triton is optional.
"""
