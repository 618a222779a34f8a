"""Perturbation contexts from AnnData (ours; pertpy / scanpy conventions): one context per
``(obs[perturbation_key], obs[dose_key])`` pair, the control cells pooled into one observational context.

Perturbation features ``γ`` come from ``obsm[features_key]`` (one row per cell, constant within a
perturbation), from a table (a DataFrame indexed by perturbation, numeric columns), or, with neither,
from a one-hot code of the training perturbations (then only known perturbations at new doses can be
predicted). Every problem is an :class:`~scigen.core.errors.InvalidInputError` naming the key and value.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from scigen.core.errors import InvalidInputError
from scigen.singlecell.io import MissingKeyError, check_anndata, read_rep, rep_feature_names

__all__ = ["Contexts", "check_doses", "condition_table", "read_contexts"]


@dataclasses.dataclass
class Contexts:
    """Cells grouped by context. ``cells[k]`` is ``[n_k, d]`` float64 (empty list when read with
    ``read=False``); ``rows[k]`` their row positions in the AnnData; context 0 is the control when
    ``has_control``. ``features [K, p]`` (zeros for the control), ``doses [K]``, ``names [K]``."""

    names: list[str]
    doses: np.ndarray
    features: np.ndarray
    cells: list[np.ndarray]
    has_control: bool
    var_names: list[str]
    feature_names: list[str]
    split: list[str]
    rows: list[np.ndarray] = dataclasses.field(default_factory=list)

    @property
    def dim(self) -> int:
        return self.cells[0].shape[1] if self.cells else len(self.var_names)

    def labels(self) -> list[str]:
        return [f"{n}@{d:g}" for n, d in zip(self.names, self.doses, strict=False)]


def _obs_column(adata: Any, key: str, what: str):
    if not isinstance(key, str):
        raise InvalidInputError(f"{what} must be a str naming an obs column, got {key!r}")
    if key not in adata.obs:
        raise MissingKeyError(f"{what}={key!r} is not an obs column of the AnnData (obs columns: "
                              f"{list(map(str, adata.obs.columns))})")
    return adata.obs[key]


def check_doses(values, key: str, names=None) -> np.ndarray:
    """Doses as float64 ``>= 0``; a string, NaN, infinite or negative dose is an error naming the value."""
    import pandas as pd

    col = pd.Series(np.asarray(values, dtype=object) if not hasattr(values, "astype") else values)
    if hasattr(col, "cat"):
        col = col.astype(object)
    num = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(num) | (num < 0))
    if bad.size:
        i = bad[0]
        where = f" (cell/row {names[i]!r})" if names is not None else ""
        raise InvalidInputError(f"{key}: dose values must be finite numbers >= 0; found {col.iloc[i]!r}{where} "
                                f"({bad.size} bad value(s))")
    return num


def _feature_rows(adata, pert: np.ndarray, features: Any, features_key: str | None, perts: list[str]):
    """``(feature matrix [len(perts), p], feature names)``; ``None`` when neither source is given."""
    import pandas as pd

    if features is not None:
        if not isinstance(features, pd.DataFrame):
            raise InvalidInputError(f"features must be a pandas DataFrame indexed by perturbation, got "
                                    f"{type(features).__name__}")
        index = [str(i) for i in features.index]
        missing = [p for p in perts if p not in index]
        if missing:
            raise InvalidInputError(f"features table has no row for perturbation(s) {missing[:5]}; its index "
                                    f"holds {index[:8]}")
        try:
            tab = features.astype(float)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"features table must be numeric: {exc}") from None
        pos = {p: i for i, p in enumerate(index)}
        mat = tab.to_numpy()[[pos[p] for p in perts]]
        if not np.isfinite(mat).all():
            raise InvalidInputError("features table has NaN/inf values")
        return mat, [str(c) for c in features.columns]
    if features_key is None:
        return None, []
    if features_key not in adata.obsm:
        raise MissingKeyError(f"features_key={features_key!r} is not an obsm key of the AnnData (obsm: "
                              f"{list(adata.obsm.keys())}); pass features=<DataFrame> or features_key=None "
                              f"for one-hot perturbation features")
    m = adata.obsm[features_key]
    m = np.asarray(m.to_numpy() if hasattr(m, "to_numpy") else m, dtype=float)
    if m.ndim != 2 or not np.isfinite(m).all():
        raise InvalidInputError(f"obsm[{features_key!r}] must be a finite 2-D matrix, got shape {m.shape}")
    rows = []
    for p in perts:
        block = m[pert == p]
        if np.ptp(block, axis=0).max(initial=0.0) > 1e-6 * (1 + np.abs(block).max()):
            raise InvalidInputError(f"obsm[{features_key!r}] differs between cells of perturbation {p!r}; "
                                    f"features must be constant per perturbation")
        rows.append(block[0])
    return np.stack(rows), [f"{features_key}_{i}" for i in range(m.shape[1])]


#: labels that usually name the unperturbed cells of a screen (compared lower-case)
_VEHICLES = ("control", "ctrl", "dmso", "vehicle", "non-targeting", "nontargeting", "nt", "untreated", "mock", "pbs")


def read_contexts(adata: Any, *, perturbation_key: str, dose_key: str, control: str,
                  features: Any = None, features_key: str | None = None, use_rep: str | None = None,
                  layer: str | None = None, split_key: str | None = None, splits: tuple[str, ...] | None = None,
                  min_cells: int = 2, require_control: bool = True, read: bool = True) -> Contexts:
    """Group ``adata``'s cells into contexts (module docstring). ``splits`` keeps cells whose
    ``obs[split_key]`` is one of them (ignored when the column is absent). ``read=False`` groups without
    reading the matrix (``cells`` empty; a backed AnnData's statistics are streamed, :mod:`scigen.singlecell.gim.stream`)."""
    check_anndata(adata)
    col = _obs_column(adata, perturbation_key, "perturbation_key")
    missing = col.isna().to_numpy()
    if missing.any():  # astype(str) would make them a perturbation called "nan"
        raise InvalidInputError(
            f"obs[{perturbation_key!r}] is missing (NaN) for {int(missing.sum())} of {adata.n_obs} cells (first: "
            f"{list(adata.obs_names[missing][:3])}); label them (the vehicle / control cells usually: "
            f"adata.obs[{perturbation_key!r}] = adata.obs[{perturbation_key!r}].astype(object).fillna({control!r})) "
            "or drop them")
    pert = col.astype(str).to_numpy()
    dose = check_doses(_obs_column(adata, dose_key, "dose_key"), f"obs[{dose_key!r}]", list(adata.obs_names))
    keep = np.ones(adata.n_obs, dtype=bool)
    split = (adata.obs[split_key].astype(str).to_numpy() if split_key is not None and split_key in adata.obs
             else np.full(adata.n_obs, ""))
    if splits is not None and split_key is not None and split_key in adata.obs:
        keep &= np.isin(split, list(splits))
    is_ctrl = pert == str(control)
    if require_control and not (keep & is_ctrl).any():
        values = sorted(set(pert.tolist()))
        usual = [v for v in values if v.lower() in _VEHICLES]
        hint = (f"; the control label is the config field `control`: GIM(control={usual[0]!r}) "
                f"(or GIM.Config.preset(..., control={usual[0]!r}))" if usual else
                "; set the control label with GIM(control=<the vehicle / non-targeting label>)")
        raise InvalidInputError(f"no control cells: obs[{perturbation_key!r}] has no value {control!r} "
                                f"(values: {values[:8]}){hint}")
    dose = np.where(is_ctrl, 0.0, dose)
    x_all = read_rep(adata, use_rep, layer=layer) if read else None
    if read and not np.isfinite(x_all).all():
        raise InvalidInputError(f"the representation ({use_rep or layer or 'X'}) has NaN/inf values")
    keys = []
    if (keep & is_ctrl).any():
        keys.append((str(control), 0.0))
    treated = keep & ~is_ctrl
    for p, c in sorted(set(zip(pert[treated].tolist(), dose[treated].tolist(), strict=False))):
        keys.append((p, float(c)))
    if not keys:
        raise InvalidInputError(f"no cells selected (split_key={split_key!r}, splits={splits})")
    cells, splt, row_sets = [], [], []
    for p, c in keys:
        rows = np.flatnonzero(keep & (pert == p) & (is_ctrl if p == str(control) else dose == c))
        if len(rows) < min_cells:
            raise InvalidInputError(f"context {perturbation_key}={p!r}, {dose_key}={c:g} has {len(rows)} cell(s); "
                                    f"at least {min_cells} are needed")
        if read:
            cells.append(x_all[rows])
        row_sets.append(rows)
        splt.append(str(split[rows[0]]))
    perts = sorted({p for p, _ in keys if p != str(control)})
    mat, fnames = _feature_rows(adata, pert, features, features_key, perts)
    if mat is None:  # one-hot code of the perturbations
        mat, fnames = np.eye(len(perts)), [f"onehot_{p}" for p in perts]
    pos = {p: i for i, p in enumerate(perts)}
    feats = np.stack([mat[pos[p]] if p in pos else np.zeros(mat.shape[1]) for p, _ in keys]) if perts else \
        np.zeros((len(keys), mat.shape[1]))
    return Contexts([p for p, _ in keys], np.asarray([c for _, c in keys]), feats, cells,
                    bool((keep & is_ctrl).any()), rep_feature_names(adata, use_rep, layer), fnames, splt, row_sets)


def condition_table(conditions: Any, *, dose_key: str, feature_names: list[str], onehot: list[str] | None):
    """``(names, doses [K], features [K, p])`` of conditions to predict.

    ``conditions`` is a DataFrame indexed by perturbation with a ``dose_key`` column and the training's
    feature columns (with one-hot features: the index must name training perturbations).
    """
    import pandas as pd

    if not isinstance(conditions, pd.DataFrame):
        raise InvalidInputError(f"conditions must be a pandas DataFrame indexed by perturbation with a "
                                f"{dose_key!r} column, got {type(conditions).__name__}")
    if len(conditions) == 0:
        raise InvalidInputError("conditions is empty: give at least one perturbation row")
    if dose_key not in conditions.columns:
        raise MissingKeyError(f"conditions has no dose column {dose_key!r} (columns: {list(conditions.columns)})")
    names = [str(i) for i in conditions.index]
    doses = check_doses(conditions[dose_key], f"conditions[{dose_key!r}]", names)
    if onehot is not None:
        unknown = [n for n in names if n not in onehot]
        if unknown:
            raise InvalidInputError(f"perturbation(s) {unknown[:5]} were not seen in training; a model with "
                                    f"one-hot features predicts only {onehot[:8]}")
        return names, doses, np.stack([np.eye(len(onehot))[onehot.index(n)] for n in names])
    cols = [c for c in conditions.columns if c != dose_key]
    if len(cols) != len(feature_names):
        raise InvalidInputError(f"conditions has {len(cols)} feature column(s); the model was trained on "
                                f"{len(feature_names)} features ({feature_names[:4]}...)")
    try:
        feats = conditions[cols].to_numpy(dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"conditions' feature columns must be numeric: {exc}") from None
    if not np.isfinite(feats).all():
        raise InvalidInputError("conditions' feature columns have NaN/inf values")
    return names, doses, feats
