"""AnnData in, AnnData out: reading time-stamped snapshots and writing generated cells.

Conventions (the research note's scverse recommendations, ``shared/research/singlecell.md`` §5):

* the representation is named by ``use_rep``: ``"X"`` (or ``None``) for ``adata.X``, ``"layer:<name>"``
  or a plain layer name for ``adata.layers[name]``, and an ``obsm`` key such as ``"X_pca"``;
* time lives in a numeric ``obs`` column (``time_key``); optional ``condition_keys`` are ``obs``
  columns carried along (and usable to select one condition);
* sparse ``X`` / layers are densified one snapshot at a time, never globally; backed AnnData
  (``anndata.read_h5ad(path, backed="r")``) is read row-block by row-block;
* the user's object is never modified.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError

__all__ = ["Snapshots", "canonical_rep", "check_anndata", "rep_dim", "rep_feature_names", "read_rep", "read_snapshots",
           "resolve_rep", "to_anndata", "write_h5ad"]


def check_anndata(adata: Any, name: str = "adata") -> None:
    """TypeError unless ``adata`` is an ``anndata.AnnData``."""
    import anndata

    if not isinstance(adata, anndata.AnnData):
        raise TypeError(f"{name} must be an anndata.AnnData, got {type(adata).__name__}")
    if adata.n_obs == 0:
        raise InvalidInputError(f"{name} has no cells (n_obs == 0)")


def resolve_rep(adata: Any, use_rep: str | None) -> tuple[str, str | None]:
    """``("X", None)``, ``("layer", name)`` or ``("obsm", key)`` for ``use_rep``; errors name the key."""
    if use_rep is None or use_rep == "X":
        return "X", None
    if not isinstance(use_rep, str):
        raise TypeError(f"use_rep must be None, 'X', 'layer:<name>' or an obsm key, got {type(use_rep).__name__}")
    if use_rep.startswith("layer:"):
        name = use_rep[len("layer:"):]
        if name not in adata.layers:
            raise KeyError(f"use_rep={use_rep!r}: adata.layers has no {name!r} (layers: {list(adata.layers)})")
        return "layer", name
    if use_rep in adata.obsm:
        return "obsm", use_rep
    if use_rep in adata.layers:
        return "layer", use_rep
    raise KeyError(f"use_rep={use_rep!r} is neither an obsm key ({list(adata.obsm)}) nor a layer "
                   f"({list(adata.layers)}); use 'X', 'layer:<name>' or an obsm key")


def canonical_rep(adata: Any, use_rep: str | None) -> str:
    """``"X"``, ``"layer:<name>"`` or the obsm key (a plain layer name becomes ``"layer:<name>"``)."""
    kind, key = resolve_rep(adata, use_rep)
    return "X" if kind == "X" else (f"layer:{key}" if kind == "layer" else key)


def _matrix(adata: Any, use_rep: str | None):
    kind, key = resolve_rep(adata, use_rep)
    if kind == "X":
        if adata.X is None:
            raise InvalidInputError("use_rep='X' but adata.X is None")
        return adata.X
    if kind == "layer":
        return adata.layers[key]
    m = adata.obsm[key]
    return m.to_numpy() if hasattr(m, "to_numpy") else m


def rep_dim(adata: Any, use_rep: str | None) -> int:
    """Number of features of the representation."""
    m = _matrix(adata, use_rep)
    if len(m.shape) != 2:
        raise InvalidInputError(f"use_rep={use_rep!r} must be a 2-D matrix, got shape {tuple(m.shape)}")
    return int(m.shape[1])


def rep_feature_names(adata: Any, use_rep: str | None) -> list[str]:
    """Feature names: ``var_names`` for X / layers, ``"<key>_<i>"`` for an obsm matrix."""
    kind, key = resolve_rep(adata, use_rep)
    if kind == "obsm":
        return [f"{key}_{i}" for i in range(rep_dim(adata, use_rep))]
    return [str(v) for v in adata.var_names]


def read_rep(adata: Any, use_rep: str | None, rows: np.ndarray | None = None) -> np.ndarray:
    """The representation's rows ``rows`` (sorted integer indices; ``None`` = all) as dense float64."""
    m = _matrix(adata, use_rep)
    if rows is not None:
        rows = np.sort(np.asarray(rows, dtype=np.int64))
        m = m[rows]  # h5py / backed sparse datasets need sorted indices
    if hasattr(m, "toarray"):
        m = m.toarray()
    elif hasattr(m, "to_memory"):
        m = m.to_memory()
        m = m.toarray() if hasattr(m, "toarray") else m
    arr = np.asarray(m, dtype=np.float64)
    if arr.ndim != 2:
        raise InvalidInputError(f"use_rep={use_rep!r} must be a 2-D matrix, got shape {arr.shape}")
    return arr


def _numeric_times(adata: Any, time_key: str) -> np.ndarray:
    if not isinstance(time_key, str):
        raise TypeError(f"time_key must be a str naming an obs column, got {type(time_key).__name__}")
    if time_key not in adata.obs:
        raise KeyError(f"time_key={time_key!r} is not an obs column (obs columns: {list(adata.obs.columns)})")
    col = adata.obs[time_key]
    if hasattr(col, "cat"):
        col = col.astype(str)
    try:
        t = np.asarray(col, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        bad = next((v for v in col if not _is_number(v)), None)
        raise InvalidInputError(f"obs[{time_key!r}] must be numeric, found the value {bad!r}") from exc
    if np.isnan(t).any():
        raise InvalidInputError(f"obs[{time_key!r}] has {int(np.isnan(t).sum())} NaN time value(s); drop those cells")
    if np.isinf(t).any():
        raise InvalidInputError(f"obs[{time_key!r}] has infinite time values")
    return t


def _is_number(v: Any) -> bool:
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False


@dataclasses.dataclass
class Snapshots:
    """Cells grouped by observation time (sorted ascending).

    Attributes:
        times: the distinct observed times (original units), ascending.
        data: one ``[n_i, d]`` float tensor per time.
        obs_names: the cells' ``obs_names`` per time.
        features: feature names of the representation; ``use_rep``, ``time_key`` as given.
    """

    times: list[float]
    data: list[Tensor]
    obs_names: list[list[str]]
    features: list[str]
    use_rep: str
    time_key: str

    @property
    def dim(self) -> int:
        return self.data[0].shape[1]

    def index_of(self, t: float) -> int:
        """Position of the observed time ``t``; KeyError listing the observed times otherwise."""
        for i, s in enumerate(self.times):
            if np.isclose(s, float(t), rtol=1e-9, atol=1e-12):
                return i
        raise KeyError(f"time {t!r} is not an observed time point; observed: {self.times}")


def read_snapshots(
    adata: Any,
    time_key: str,
    use_rep: str | None = "X",
    *,
    condition: dict[str, Any] | None = None,
    min_cells: int = 1,
    dtype: torch.dtype = torch.float32,
) -> Snapshots:
    """Group ``adata``'s cells by ``obs[time_key]`` and read ``use_rep`` for each group (no copy of ``adata``).

    Args:
        condition: ``{obs_key: value}`` keeps only matching cells (e.g. ``{"donor": "13176"}``).
        min_cells: every time point needs at least this many cells (e.g. the batch size); the error
            names the time point.

    Raises:
        KeyError for a missing obs key / layer / obsm key; InvalidInputError for non-numeric / NaN
        times, fewer than two time points, too few cells at a time point, or NaN/inf features.
    """
    check_anndata(adata)
    times = _numeric_times(adata, time_key)
    keep = np.ones(adata.n_obs, dtype=bool)
    for key, value in (condition or {}).items():
        if key not in adata.obs:
            raise KeyError(f"condition key {key!r} is not an obs column (obs columns: {list(adata.obs.columns)})")
        keep &= np.asarray(adata.obs[key] == value)
        if not keep.any():
            raise InvalidInputError(f"no cell has obs[{key!r}] == {value!r}")
    resolve_rep(adata, use_rep)
    uniq = np.unique(times[keep])
    if len(uniq) < 2:
        raise InvalidInputError(
            f"obs[{time_key!r}] has {len(uniq)} distinct time point(s) ({uniq.tolist()}); MMSFM needs at least 2"
        )
    names = np.asarray(adata.obs_names)
    data, obs_names = [], []
    for t in uniq:
        rows = np.flatnonzero(keep & (times == t))
        if len(rows) < min_cells:
            raise InvalidInputError(
                f"time point {time_key}={t:g} has {len(rows)} cell(s), fewer than the {min_cells} needed "
                f"(the batch size); lower batch_size or merge time points"
            )
        x = read_rep(adata, use_rep, rows)
        if not np.isfinite(x).all():
            raise InvalidInputError(f"use_rep={use_rep!r} has NaN/inf values at time point {time_key}={t:g}")
        data.append(torch.as_tensor(x, dtype=dtype))
        obs_names.append(names[rows].tolist())
    return Snapshots([float(t) for t in uniq], data, obs_names, rep_feature_names(adata, use_rep),
                     canonical_rep(adata, use_rep), time_key)


def write_h5ad(adata: Any, path) -> None:
    """``adata.write_h5ad(path)`` through a temporary file and a rename; pandas' string arrays allowed."""
    import anndata

    from scigen.core.files import atomic_path

    opts = {"allow_write_nullable_strings": True} if hasattr(anndata.settings, "allow_write_nullable_strings") else {}
    with anndata.settings.override(**opts) if opts else _null(), atomic_path(path) as tmp:
        adata.write_h5ad(tmp)


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=lambda o: o.item() if hasattr(o, "item") else str(o)))


def to_anndata(
    values: np.ndarray | Tensor,
    *,
    obs: dict[str, Sequence],
    use_rep: str | None,
    features: Sequence[str],
    provenance: dict[str, Any],
    uns_key: str,
    gene_values: np.ndarray | None = None,
    gene_names: Sequence[str] | None = None,
):
    """Build an AnnData of generated cells.

    ``values [n, d]`` fill the representation: ``X`` (with ``var_names = features``), a layer of the
    same name (then ``X`` holds it too), or ``obsm[use_rep]``; for an obsm representation ``X`` holds
    ``gene_values`` (e.g. the PCA inverse) when given, else it is an ``n x 0`` matrix. ``provenance``
    (JSON-able) goes to ``uns[uns_key]``.
    """
    import anndata
    import pandas as pd

    v = values.detach().cpu().numpy() if isinstance(values, Tensor) else np.asarray(values)
    v = v.astype(np.float32)
    n = v.shape[0]
    obs_df = pd.DataFrame({k: list(c) for k, c in obs.items()}, index=[f"gen_{i}" for i in range(n)])
    kind = "X" if use_rep in (None, "X") else ("layer" if use_rep.startswith("layer:") else "obsm")
    if kind in ("X", "layer"):
        var = pd.DataFrame(index=[str(f) for f in features])
        ad = anndata.AnnData(X=v, obs=obs_df, var=var)
        if kind == "layer":
            ad.layers[use_rep[len("layer:"):]] = v.copy()
    else:
        if gene_values is not None:
            var = pd.DataFrame(index=[str(g) for g in gene_names])
            ad = anndata.AnnData(X=np.asarray(gene_values, dtype=np.float32), obs=obs_df, var=var)
        else:
            ad = anndata.AnnData(X=np.zeros((n, 0), dtype=np.float32), obs=obs_df)
        ad.obsm[use_rep] = v
    ad.uns[uns_key] = _jsonable(provenance)
    return ad
