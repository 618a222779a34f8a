"""The gene-space inverse of GIM predictions made in PCA space (scanpy / pertpy conventions).

``sc.pp.pca`` stores the loadings ``V [n_genes, k]`` in ``adata.varm["PCs"]`` and the coordinates
``Z = (X − μ) V`` in ``obsm["X_pca"]`` (zero-centred; scanpy does not keep ``μ``). The inverse
``X̂ = Z Vᵀ + μ`` is the orthogonal projection of a cell onto the components' span, exact for cells
inside it. ``μ`` is the mean recorded by :func:`scigen.singlecell.preprocess.preprocess`
(``uns["scigen_preprocess"]["mean"]``) when present, otherwise the mean of ``adata.X`` over all its
cells (what ``sc.pp.pca`` subtracted when it was run on this AnnData). Genes without loadings (rows of
zeros, e.g. not highly variable) come back as ``μ``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scigen.core.errors import InvalidInputError

__all__ = ["pca_inverse", "pca_inverse_params"]


def pca_inverse_params(adata: Any, use_rep: str | None) -> dict[str, Any] | None:
    """``{"components", "mean", "genes"}`` for ``use_rep == "X_pca"`` with ``varm["PCs"]``, else ``None``."""
    from scigen.singlecell.preprocess import PREPROCESS_KEY

    if use_rep != "X_pca" or "PCs" not in getattr(adata, "varm", {}):
        return None
    comps = np.asarray(adata.varm["PCs"], dtype=np.float64)
    k = np.asarray(adata.obsm["X_pca"]).shape[1]
    if comps.shape != (adata.n_vars, k):
        raise InvalidInputError(f"varm['PCs'] has shape {comps.shape}; expected ({adata.n_vars}, {k}) to match "
                                f"obsm['X_pca']")
    rec = adata.uns.get(PREPROCESS_KEY, {}) if hasattr(adata, "uns") else {}
    if "mean" in rec:
        mean = np.asarray(rec["mean"], dtype=np.float64)
    else:
        x = adata.X
        mean = np.asarray(x.mean(axis=0), dtype=np.float64).ravel()
    if mean.shape != (adata.n_vars,) or not np.isfinite(mean).all():
        raise InvalidInputError(f"the PCA mean has shape {mean.shape} (or non-finite values); expected "
                                f"({adata.n_vars},)")
    return {"components": comps.tolist(), "mean": mean.tolist(), "genes": [str(g) for g in adata.var_names]}


def pca_inverse(z: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """``Z Vᵀ + μ`` ``[n, n_genes]`` for PCA coordinates ``z [n, k]`` (module docstring)."""
    comps = np.asarray(params["components"], dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    if z.ndim != 2 or z.shape[1] != comps.shape[1]:
        raise InvalidInputError(f"PCA coordinates must have shape [n, {comps.shape[1]}], got {z.shape}")
    return z @ comps.T + np.asarray(params["mean"], dtype=np.float64)
