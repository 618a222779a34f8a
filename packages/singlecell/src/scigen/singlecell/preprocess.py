"""A standard scanpy preprocessing chain with an inverse from PCA back to gene space.

:func:`preprocess` runs ``normalize_total -> log1p -> highly_variable_genes (subset) -> pca`` on a
**copy** (Wolf et al. 2018, scanpy) and records what the inverse needs in ``uns["scigen_preprocess"]``
and ``varm["PCs"]``. :func:`pca_to_genes` maps PCA coordinates ``Z`` back to log-normalised HVG
expression, ``X_log ≈ Z Vᵀ + mean`` (exact on the PCA subspace: it is the orthogonal projection
of the data onto the span of the components); ``to="normalized"`` also undoes ``log1p``
(``expm1``). Counts before ``normalize_total`` are not recoverable (the size factors are per cell).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scigen.core.errors import InvalidInputError
from scigen.singlecell.io import check_anndata

__all__ = ["PREPROCESS_KEY", "has_pca_inverse", "pca_to_genes", "preprocess"]

PREPROCESS_KEY = "scigen_preprocess"


def preprocess(adata: Any, *, n_top_genes: int | None = 1000, n_comps: int = 50, target_sum: float | None = 1e4,
               layer: str | None = None, log: bool = True, seed: int = 0):
    """Return a preprocessed copy of ``adata`` with ``obsm["X_pca"]`` and the inverse's parameters.

    Args:
        n_top_genes: keep this many highly variable genes (``flavor="seurat"`` on the log data);
            ``None`` keeps all genes.
        n_comps: PCA components (capped at ``min(n_obs, n_genes) - 1``).
        target_sum: ``normalize_total`` target; ``None`` skips normalisation (e.g. already normalised).
        layer: start from this layer instead of ``X`` (raw counts expected unless ``target_sum=None``).
        log: apply ``log1p``.
    """
    import scanpy as sc
    import scipy.sparse as sp

    check_anndata(adata)
    if layer is not None and layer not in adata.layers:
        raise KeyError(f"layer={layer!r} is not in adata.layers ({list(adata.layers)})")
    ad = adata.to_memory() if adata.isbacked else adata.copy()
    if layer is not None:
        ad.X = ad.layers[layer].copy()
    X = ad.X
    values = X.data if sp.issparse(X) else np.asarray(X)
    if np.any(~np.isfinite(values)):
        raise InvalidInputError("the expression matrix has NaN/inf values")
    if (target_sum is not None or log) and np.any(values < 0):
        raise InvalidInputError("the expression matrix has negative values; normalize_total/log1p expect counts "
                                "(pass target_sum=None, log=False for already transformed data)")
    ad.X = ad.X.astype(np.float64)
    if target_sum is not None:
        sc.pp.normalize_total(ad, target_sum=target_sum)
    if log:
        sc.pp.log1p(ad)
    if n_top_genes is not None and n_top_genes < ad.n_vars:
        sc.pp.highly_variable_genes(ad, n_top_genes=n_top_genes, subset=True)
    n_comps = int(min(n_comps, min(ad.n_obs, ad.n_vars) - 1))
    if n_comps < 1:
        raise InvalidInputError(f"too few cells/genes for PCA ({ad.n_obs} x {ad.n_vars})")
    mean = np.asarray(ad.X.mean(axis=0)).ravel()
    sc.pp.pca(ad, n_comps=n_comps, zero_center=True, random_state=seed, svd_solver="arpack" if n_comps < min(
        ad.shape) - 1 else "full")
    ad.uns[PREPROCESS_KEY] = {
        "steps": [s for s, on in (("normalize_total", target_sum is not None), ("log1p", log),
                                  ("highly_variable_genes", n_top_genes is not None), ("pca", True)) if on],
        "target_sum": target_sum, "log1p": bool(log), "n_top_genes": n_top_genes, "n_comps": n_comps,
        "mean": mean.tolist(),
    }
    return ad


def has_pca_inverse(adata: Any) -> bool:
    """Whether ``adata`` carries what :func:`pca_to_genes` needs (``varm["PCs"]`` and the recorded mean)."""
    return PREPROCESS_KEY in adata.uns and "PCs" in adata.varm


def pca_to_genes(Z: np.ndarray, adata_pp: Any, *, to: str = "log1p") -> np.ndarray:
    """Map PCA coordinates ``Z [n, n_comps]`` back to the genes of ``adata_pp`` (``[n, n_vars]``).

    ``to="log1p"``: ``Z Vᵀ + mean`` (log-normalised expression); ``to="normalized"``: its ``expm1``
    (clipped at 0), only when ``log1p`` was applied.
    """
    if not has_pca_inverse(adata_pp):
        raise InvalidInputError("adata_pp was not made by scigen.singlecell.preprocess (no PCs / mean recorded)")
    if to not in ("log1p", "normalized"):
        raise InvalidInputError(f"to must be 'log1p' or 'normalized', got {to!r}")
    V = np.asarray(adata_pp.varm["PCs"], dtype=np.float64)
    Z = np.asarray(Z, dtype=np.float64)
    if Z.ndim != 2 or Z.shape[1] != V.shape[1]:
        raise InvalidInputError(f"Z must have shape [n, {V.shape[1]}] (the PCA components), got {Z.shape}")
    X = Z @ V.T + np.asarray(adata_pp.uns[PREPROCESS_KEY]["mean"])
    if to == "normalized":
        if not adata_pp.uns[PREPROCESS_KEY]["log1p"]:
            raise InvalidInputError("to='normalized' needs data that went through log1p")
        X = np.clip(np.expm1(X), 0, None)
    return X
