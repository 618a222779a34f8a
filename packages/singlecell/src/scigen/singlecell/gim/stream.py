"""GIM's training statistics from a backed AnnData in one streaming pass (data larger than memory).

GIM trains on per-context sufficient statistics of the standardised cells — the count ``n_k``, the sum
``s1_k = Σ z`` and the scatter ``s2_k = Σ z zᵀ`` with ``z = (x − μ) / σ``
(:class:`~scigen.singlecell.gim.objective.GIMTensors`) — and ``μ``, ``σ`` are the control cells' mean and standard deviation (ddof 0). One pass over the
file's row blocks accumulates, per context, the count, the mean ``m_k`` and the centred co-moment
``C_k = Σ (x − m_k)(x − m_k)ᵀ``, merging blocks with Chan, Golub & LeVeque's (1979) pairwise update
(``C = C_a + C_b + δ δᵀ n_a n_b / n``), which keeps float64 accuracy without the cancellation of
``Σ x xᵀ − n m mᵀ``. Then ``μ = m_control``, ``σ² = diag(C_control) / n_control`` (or the pooled values of
all contexts without a control) and

    s1_k = n_k (m_k − μ) / σ,    s2_k = D⁻¹ (C_k + n_k (m_k − μ)(m_k − μ)ᵀ) D⁻¹,  D = diag(σ),

the same numbers (to float64 rounding) as standardising every cell in memory. Memory: ``K`` matrices
``d × d`` (what the model holds anyway), never the cells.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ContextMoments", "context_moments", "standardised_sums"]


class ContextMoments:
    """Count, mean and centred co-moment matrix of one context's cells, merged block by block."""

    def __init__(self, dim: int) -> None:
        self.n, self.mean, self.comoment = 0, np.zeros(dim), np.zeros((dim, dim))

    def add(self, x: np.ndarray) -> None:
        nb = x.shape[0]
        if nb == 0:
            return
        mb = x.mean(0)
        xc = x - mb
        self.merge(nb, mb, xc.T @ xc)

    def merge(self, nb: int, mb: np.ndarray, cb: np.ndarray) -> None:
        tot = self.n + nb
        delta = mb - self.mean
        self.comoment = self.comoment + cb + np.outer(delta, delta) * (self.n * nb / tot)
        self.mean = self.mean + delta * (nb / tot)
        self.n = tot

    @property
    def var(self) -> np.ndarray:
        """Per-feature variance, ddof 0."""
        return np.diag(self.comoment) / self.n


def context_moments(reader, rows: list[np.ndarray], block_bytes: int | None = None) -> list[ContextMoments]:
    """One :class:`ContextMoments` per context, from one pass over the file's blocks of the contexts' rows."""
    label = np.concatenate([np.full(len(r), k) for k, r in enumerate(rows)])
    every = np.concatenate(rows)
    order = np.argsort(every, kind="stable")
    every, label = every[order], label[order]
    out = [ContextMoments(reader.dim) for _ in rows]
    start = 0
    for block_rows, x in reader.blocks(every, block_bytes):
        lab = label[start:start + len(block_rows)]
        start += len(block_rows)
        for k in np.unique(lab):
            out[int(k)].add(x[lab == k])
    return out


def pooled(moments: list[ContextMoments]) -> ContextMoments:
    """The moments of all contexts' cells together."""
    total = ContextMoments(len(moments[0].mean))
    for m in moments:
        if m.n:
            total.merge(m.n, m.mean, m.comoment)
    return total


def standardised_sums(moments: list[ContextMoments], mean: np.ndarray, std: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(n [K], s1 [K, d], s2 [K, d, d])`` of the standardised cells (module docstring), float64."""
    n = np.array([m.n for m in moments], dtype=np.float64)
    s1, s2 = [], []
    for m in moments:
        delta = m.mean - mean
        s1.append(m.n * delta / std)
        s2.append((m.comoment + m.n * np.outer(delta, delta)) / np.outer(std, std))
    return n, np.stack(s1), np.stack(s2)
