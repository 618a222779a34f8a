"""sci-Plex3 for GIM (ours): the catalog loader's AnnData (:func:`scigen.singlecell.data.load_sciplex3`)
normalised (counts per cell to 10⁴, ``log1p``), reduced to ``n_comps`` principal components
(``obsm["X_pca"]``, scanpy), with ``obs["gim_compound"]`` (``"control"`` for vehicle cells) and the GIM
settings that read it: one context per (compound, dose in nM), one-hot compound features (held-out
doses of known compounds, the paper's real-data evaluation), doses held out through ``obs["split"]``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from scigen.core.errors import InvalidInputError

__all__ = ["GIM_SCIPLEX_SETTINGS", "prepare_sciplex"]

GIM_SCIPLEX_SETTINGS = {"perturbation_key": "gim_compound", "dose_key": "dose_nM", "control": "control",
                        "features_key": None, "use_rep": "X_pca", "split_key": "split"}


def prepare_sciplex(adata: Any, *, n_comps: int = 10, holdout_doses_nM: Sequence[float] = (),
                    copy: bool = True):
    """The loader's sci-Plex3 AnnData ready for ``GIM(**GIM_SCIPLEX_SETTINGS)``; cells treated at
    ``holdout_doses_nM`` get ``obs["split"] = "heldout_dose"``, the rest ``"train"``."""
    import scanpy as sc

    for col in ("compound", "dose_nM", "control"):
        if col not in adata.obs:
            raise InvalidInputError(f"obs[{col!r}] missing: pass the AnnData returned by load_sciplex3")
    ad = adata.copy() if copy else adata
    sc.pp.normalize_total(ad, target_sum=1e4)
    sc.pp.log1p(ad)
    n = min(int(n_comps), ad.n_vars - 1, ad.n_obs - 1)
    if n < 1:
        raise InvalidInputError(f"too few genes/cells ({ad.n_vars} x {ad.n_obs}) for a PCA")
    sc.pp.pca(ad, n_comps=n)
    ctrl = ad.obs["control"].to_numpy(dtype=bool)
    ad.obs["gim_compound"] = np.where(ctrl, "control", ad.obs["compound"].astype(str).to_numpy())
    held = ~ctrl & np.isin(ad.obs["dose_nM"].to_numpy(dtype=float), np.asarray(holdout_doses_nM, dtype=float))
    ad.obs["split"] = np.where(held, "heldout_dose", "train")
    return ad
