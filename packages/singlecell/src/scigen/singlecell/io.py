"""AnnData in, AnnData out: reading time-stamped snapshots and writing generated cells.

Conventions (the research note's scverse recommendations, ``shared/research/singlecell.md`` §5):

* the representation is named as scanpy and scvi-tools name it: ``layer=`` for ``adata.layers[name]``,
  ``use_rep=`` for an ``obsm`` key such as ``"X_pca"`` (or ``"X"``), neither for ``adata.X``;
* time lives in a numeric ``obs`` column (``time_key``); optional ``condition_keys`` are ``obs``
  columns carried along (and usable to select one condition);
* sparse ``X`` / layers are densified one snapshot at a time, never globally; backed AnnData
  (``anndata.read_h5ad(path, backed="r")``) is read row-block by row-block;
* the user's object is never modified.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError
from scigen.core.validation import check_real
from scigen.singlecell.h5ad import read_h5ad_file, write_h5ad

__all__ = ["MissingKeyError", "NotAnnDataError", "Snapshots", "check_anndata", "check_storable_key", "read_h5ad_file", "read_rep", "read_snapshots", "rep_dim",
           "rep_feature_names", "rep_kind", "resolve_rep", "to_anndata", "write_h5ad"]


class MissingKeyError(InvalidInputError, KeyError):
    """An obs column, layer, obsm key or time point that ``adata`` does not have (a ``KeyError`` too, as
    in scanpy); the message lists what is there."""

    def __str__(self) -> str:  # KeyError quotes its message; show it plainly
        return str(self.args[0]) if self.args else ""


class NotAnnDataError(InvalidInputError, TypeError):
    """Something other than an ``anndata.AnnData`` where one is expected (a ``TypeError`` too)."""


def check_anndata(adata: Any, name: str = "adata") -> None:
    """:class:`NotAnnDataError` unless ``adata`` is an ``anndata.AnnData`` with at least one cell."""
    import anndata

    if not isinstance(adata, anndata.AnnData):
        hint = ("; read the file first with scigen.singlecell.io.read_h5ad_file(path) or anndata.read_h5ad(path)"
                if isinstance(adata, (str, Path)) else "")
        raise NotAnnDataError(f"{name} must be an anndata.AnnData, got {type(adata).__name__}{hint}")
    if adata.n_obs == 0:
        raise InvalidInputError(f"{name} has no cells (n_obs == 0)")


def _check_unique_names(adata: Any, kind: str) -> None:
    """Cells (and features, when they name the representation) must be told apart by name."""
    index = adata.obs_names if kind == "obs" else adata.var_names
    if index.is_unique:
        return
    dup = index[index.duplicated()].unique()
    raise InvalidInputError(f"adata.{kind}_names has {len(dup)} duplicated name(s), e.g. {list(map(str, dup[:3]))}; "
                            f"call adata.{kind}_names_make_unique() first (as scanpy advises)")


def rep_kind(use_rep: str | None = None, layer: str | None = None) -> tuple[str, str | None]:
    """``("X", None)``, ``("layer", name)`` or ``("obsm", key)`` from scanpy's ``layer=`` / ``use_rep=``
    (no AnnData needed: what a model trained on that representation writes back)."""
    if layer is not None:
        if not isinstance(layer, str):
            raise InvalidInputError(f"layer must be None or the name of an adata.layers entry, got {layer!r}")
        if use_rep is not None:
            raise InvalidInputError(f"give layer= or use_rep=, not both (layer={layer!r}, use_rep={use_rep!r})")
        return "layer", layer
    if use_rep is None or use_rep == "X":
        return "X", None
    if not isinstance(use_rep, str):
        raise InvalidInputError(f"use_rep must be None, 'X' or an obsm key, got {type(use_rep).__name__}")
    if use_rep.startswith("layer:"):
        raise InvalidInputError(f"use_rep={use_rep!r}: name a layer with layer={use_rep[len('layer:'):]!r} "
                                "(as scanpy and scvi-tools do); use_rep names an obsm key or 'X'")
    return "obsm", use_rep


def resolve_rep(adata: Any, use_rep: str | None = None, layer: str | None = None) -> tuple[str, str | None]:
    """:func:`rep_kind`, checked against ``adata``: errors name the missing layer / obsm key."""
    kind, key = rep_kind(use_rep, layer)
    if kind == "layer" and key not in adata.layers:
        raise MissingKeyError(f"layer={key!r} is not in adata.layers (layers: {list(adata.layers)})")
    if kind == "obsm" and key not in adata.obsm:
        hint = f"; {key!r} is a layer: pass layer={key!r}" if key in adata.layers else ""
        raise MissingKeyError(f"use_rep={key!r} is not an obsm key (obsm: {list(adata.obsm)}){hint}")
    return kind, key


def _describe(use_rep: str | None, layer: str | None) -> str:
    return f"layer={layer!r}" if layer is not None else f"use_rep={use_rep or 'X'!r}"


def _matrix(adata: Any, use_rep: str | None, layer: str | None = None):
    kind, key = resolve_rep(adata, use_rep, layer)
    if kind == "X":
        if adata.X is None:
            raise InvalidInputError("use_rep='X' but adata.X is None")
        return adata.X
    if kind == "layer":
        return adata.layers[key]
    m = adata.obsm[key]
    return m.to_numpy() if hasattr(m, "to_numpy") else m


def rep_dim(adata: Any, use_rep: str | None = None, layer: str | None = None) -> int:
    """Number of features of the representation."""
    m = _matrix(adata, use_rep, layer)
    if len(m.shape) != 2:
        raise InvalidInputError(f"{_describe(use_rep, layer)} must be a 2-D matrix, got shape {tuple(m.shape)}")
    return int(m.shape[1])


def rep_feature_names(adata: Any, use_rep: str | None = None, layer: str | None = None) -> list[str]:
    """Feature names: ``var_names`` for X / layers, ``"<key>_<i>"`` for an obsm matrix."""
    kind, key = resolve_rep(adata, use_rep, layer)
    if kind == "obsm":
        return [f"{key}_{i}" for i in range(rep_dim(adata, use_rep))]
    return [str(v) for v in adata.var_names]


def read_rep(adata: Any, use_rep: str | None = None, rows: np.ndarray | None = None, *,
             layer: str | None = None) -> np.ndarray:
    """The representation's rows ``rows`` (sorted integer indices; ``None`` = all) as dense float64."""
    m = _matrix(adata, use_rep, layer)
    if rows is not None:
        rows = np.sort(np.asarray(rows, dtype=np.int64))
        m = m[rows]  # h5py / backed sparse datasets need sorted indices
    if hasattr(m, "toarray"):
        m = m.toarray()
    elif hasattr(m, "to_memory"):
        m = m.to_memory()
        m = m.toarray() if hasattr(m, "toarray") else m
    check_real(m, _describe(use_rep, layer), hint="the models here are real-valued: store the real and imaginary "
               "parts as separate features")
    arr = np.asarray(m, dtype=np.float64)
    if arr.ndim != 2:
        raise InvalidInputError(f"{_describe(use_rep, layer)} must be a 2-D matrix, got shape {arr.shape}")
    return arr


def _numeric_times(adata: Any, time_key: str) -> np.ndarray:
    if not isinstance(time_key, str):
        raise InvalidInputError(f"time_key must be a str naming an obs column, got {type(time_key).__name__}")
    if time_key not in adata.obs:
        raise MissingKeyError(f"time_key={time_key!r} is not an obs column (obs columns: {list(adata.obs.columns)})")
    col = adata.obs[time_key]
    if hasattr(col, "cat"):
        col = col.astype(str)
    try:
        t = np.asarray(col, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        bad = next((v for v in col if not _is_number(v)), None)
        hint = ""
        if isinstance(bad, str) and re.search(r"\d", bad):  # labels such as "day2" / "D2.5": say how to convert them
            hint = (f"; labels like {bad!r} carry the time in their digits: adata.obs[{time_key!r}] = "
                    rf"adata.obs[{time_key!r}].astype(str).str.extract(r'(\d+(?:\.\d+)?)')[0].astype(float)")
        raise InvalidInputError(f"obs[{time_key!r}] must be numeric, found the value {bad!r}{hint}") from exc
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
        data: one ``[n_i, d]`` float tensor per time (empty when read with ``read=False``).
        obs_names: the cells' ``obs_names`` per time (empty with ``read=False``).
        features: feature names of the representation; ``use_rep``, ``layer``, ``time_key`` as given.
        rows: the cells' row positions in ``adata`` per time (sorted).
    """

    times: list[float]
    data: list[Tensor]
    obs_names: list[list[str]]
    features: list[str]
    use_rep: str | None
    layer: str | None
    time_key: str
    rows: list[np.ndarray] = dataclasses.field(default_factory=list)

    @property
    def dim(self) -> int:
        return self.data[0].shape[1] if self.data else len(self.features)

    @property
    def sizes(self) -> list[int]:
        """Cells per time."""
        return [len(r) for r in self.rows] if self.rows else [len(x) for x in self.data]

    def index_of(self, t: float) -> int:
        """Position of the observed time ``t``; KeyError listing the observed times otherwise."""
        for i, s in enumerate(self.times):
            if np.isclose(s, float(t), rtol=1e-9, atol=1e-12):
                return i
        raise MissingKeyError(f"time {t!r} is not an observed time point; observed: {self.times}")


def read_snapshots(
    adata: Any,
    time_key: str,
    use_rep: str | None = None,
    *,
    layer: str | None = None,
    condition: dict[str, Any] | None = None,
    min_cells: int = 1,
    dtype: torch.dtype = torch.float32,
    read: bool = True,
) -> Snapshots:
    """Group ``adata``'s cells by ``obs[time_key]`` and read the representation (``X``, ``layers[layer]``
    or ``obsm[use_rep]``) for each group (no copy of ``adata``).

    Args:
        condition: ``{obs_key: value}`` keeps only matching cells (e.g. ``{"donor": "13176"}``).
        min_cells: every time point needs at least this many cells (e.g. the batch size); the error
            names the time point.
        read: ``False`` groups the cells without reading the matrix (``data`` empty, ``rows`` set): for a
            backed AnnData whose rows are read per batch (:mod:`scigen.singlecell.backed`).

    Raises:
        KeyError for a missing obs key / layer / obsm key; InvalidInputError for non-numeric / NaN
        times, fewer than two time points, too few cells at a time point, or NaN/inf features.
    """
    check_anndata(adata)
    _check_unique_names(adata, "obs")
    times = _numeric_times(adata, time_key)
    keep = np.ones(adata.n_obs, dtype=bool)
    for key, value in (condition or {}).items():
        if key not in adata.obs:
            raise MissingKeyError(f"condition key {key!r} is not an obs column (obs columns: {list(adata.obs.columns)})")
        keep &= np.asarray(adata.obs[key] == value)
        if not keep.any():
            raise InvalidInputError(f"no cell has obs[{key!r}] == {value!r}")
    if resolve_rep(adata, use_rep, layer)[0] != "obsm":  # var_names name the modelled features
        _check_unique_names(adata, "var")
    uniq = np.unique(times[keep])
    if len(uniq) < 2:
        raise InvalidInputError(
            f"obs[{time_key!r}] has {len(uniq)} distinct time point(s) ({uniq.tolist()}); MMSFM needs at least 2"
        )
    names = np.asarray(adata.obs_names)
    data, obs_names, row_sets = [], [], []
    for t in uniq:
        rows = np.flatnonzero(keep & (times == t))
        if len(rows) < min_cells:
            raise InvalidInputError(
                f"time point {time_key}={t:g} has {len(rows)} cell(s), fewer than the {min_cells} needed "
                f"(the batch size); lower batch_size or merge time points"
            )
        row_sets.append(rows)
        if not read:  # nothing per cell beyond the row positions (cell names are Python strings)
            continue
        obs_names.append(names[rows].tolist())
        x = read_rep(adata, use_rep, rows, layer=layer)
        if not np.isfinite(x).all():
            raise InvalidInputError(f"{_describe(use_rep, layer)} has NaN/inf values at time point {time_key}={t:g}")
        data.append(torch.as_tensor(x, dtype=dtype))
    use_rep = None if use_rep == "X" else use_rep
    return Snapshots([float(t) for t in uniq], data, obs_names, rep_feature_names(adata, use_rep, layer),
                     use_rep, layer, time_key, row_sets)


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=lambda o: o.item() if hasattr(o, "item") else str(o)))


def to_anndata(
    values: np.ndarray | Tensor,
    *,
    obs: dict[str, Sequence],
    use_rep: str | None,
    features: Sequence[str],
    layer: str | None = None,
    provenance: dict[str, Any],
    uns_key: str,
    gene_values: np.ndarray | None = None,
    gene_names: Sequence[str] | None = None,
):
    """Build an AnnData of generated cells.

    ``values [n, d]`` fill the representation: ``X`` (with ``var_names = features``), ``layers[layer]``
    (then ``X`` holds it too), or ``obsm[use_rep]``; for an obsm representation ``X`` holds
    ``gene_values`` (e.g. the PCA inverse) when given, else it is an ``n x 0`` matrix. ``provenance``
    (JSON-able) goes to ``uns[uns_key]``.
    """
    import anndata
    import pandas as pd

    v = values.detach().cpu().numpy() if isinstance(values, Tensor) else np.asarray(values)
    v = v.astype(np.float32)
    n = v.shape[0]
    obs_df = pd.DataFrame({k: list(c) for k, c in obs.items()}, index=[f"gen_{i}" for i in range(n)])
    kind, key = rep_kind(use_rep, layer)
    if kind in ("X", "layer"):
        var = pd.DataFrame(index=[str(f) for f in features])
        ad = anndata.AnnData(X=v, obs=obs_df, var=var)
        if kind == "layer":
            ad.layers[key] = v.copy()
    else:
        if gene_values is not None:
            var = pd.DataFrame(index=[str(g) for g in gene_names])
            ad = anndata.AnnData(X=np.asarray(gene_values, dtype=np.float32), obs=obs_df, var=var)
        else:
            ad = anndata.AnnData(X=np.zeros((n, 0), dtype=np.float32), obs=obs_df)
        ad.obsm[key] = v
    ad.uns[uns_key] = _jsonable(provenance)
    return ad


def check_storable_key(key: object, what: str = "key_added") -> str:
    """A key that AnnData can write to ``.h5ad`` and read back: a non-empty str without ``/`` (HDF5's path
    separator; ``layers["a/b"]`` is written as a nested group and does not come back as one layer)."""
    if not isinstance(key, str) or not key:
        raise InvalidInputError(f"{what} must be a non-empty str, got {key!r}")
    if "/" in key:
        raise InvalidInputError(f"{what}={key!r} contains '/', which .h5ad files cannot store in a key; use e.g. "
                                f"{key.replace('/', '_')!r}")
    return key
