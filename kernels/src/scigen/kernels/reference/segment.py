"""Reference (pure PyTorch) CSR segment reductions: sum, and max/min with their first arg-extremum.

``src [E, F]`` (trailing feature dims flattened by the caller), ``ptr [S + 1]`` int64 with
``ptr[0] = 0``, ``ptr[S] = E`` non-decreasing: segment ``s`` is ``src[ptr[s]:ptr[s+1]]``.
"""

from __future__ import annotations

import torch


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """fp16/bf16 are accumulated in fp32."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def segment_ids(ptr: torch.Tensor, num_elements: int) -> torch.Tensor:
    """``[E]`` segment index of every element."""
    counts = ptr[1:] - ptr[:-1]
    return torch.repeat_interleave(
        torch.arange(counts.numel(), device=ptr.device), counts, output_size=num_elements
    )


def segment_sum(src: torch.Tensor, ptr: torch.Tensor) -> torch.Tensor:
    """``out[s] = Σ_{e in segment s} src[e]`` (0 for an empty segment), dtype of ``src``."""
    num_segments, e = ptr.numel() - 1, src.shape[0]
    ct = compute_dtype(src.dtype)
    out = torch.zeros((num_segments, *src.shape[1:]), dtype=ct, device=src.device)
    out.index_add_(0, segment_ids(ptr, e), src.to(ct))
    return out.to(src.dtype)


def segment_minmax(src: torch.Tensor, ptr: torch.Tensor, is_min: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """``(out, arg)`` for ``src [E, F]``: the segment max (min if ``is_min``) per feature, 0 for an
    empty segment; ``arg [S, F]`` int64 is the *first* element index attaining it, ``E`` for an
    empty segment (or when the segment's value is NaN)."""
    num_segments, (e, f) = ptr.numel() - 1, src.shape
    ids = segment_ids(ptr, e)[:, None].expand(e, f)
    reduce = "amin" if is_min else "amax"
    out = torch.zeros((num_segments, f), dtype=src.dtype, device=src.device)
    out = out.scatter_reduce(0, ids, src, reduce, include_self=False)  # empty segments keep 0
    hit = src == out.gather(0, ids)
    pos = torch.arange(e, device=src.device)[:, None].expand(e, f)
    cand = torch.where(hit, pos, torch.full_like(pos, e))
    arg = torch.full((num_segments, f), e, dtype=torch.int64, device=src.device)
    arg = arg.scatter_reduce(0, ids, cand, "amin", include_self=True)
    return out, arg


def segment_sum_backward(grad: torch.Tensor, ptr: torch.Tensor, num_elements: int) -> torch.Tensor:
    """``grad_src[e] = grad[segment(e)]``."""
    counts = ptr[1:] - ptr[:-1]
    return torch.repeat_interleave(grad, counts, dim=0, output_size=num_elements)


def segment_minmax_backward(grad: torch.Tensor, arg: torch.Tensor, num_elements: int) -> torch.Tensor:
    """Route ``grad [S, F]`` to the arg-extremum rows of ``src [E, F]``; empty segments route nowhere."""
    buf = grad.new_zeros((num_elements + 1, grad.shape[1]))  # row E collects the empty-segment sentinel
    buf.scatter_add_(0, arg, grad)
    return buf[:num_elements]
