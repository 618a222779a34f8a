"""sci-Plex3 (Srivatsan et al., *Science* 367:45-51, 2020): A549, K562 and MCF7 cells exposed to 188
compounds at 4 doses (10, 100, 1,000, 10,000 nM) plus vehicle controls, as an AnnData ``.h5ad``.

Two published AnnData layouts are read (catalog card ``sciPlex3``):

* scPerturb (Peidli et al. 2024; ``SrivatsanTrapnell2020_sciplex3.h5ad``, also what
  ``pertpy.data.srivatsan_2020_sciplex3()`` downloads): ``obs["perturbation"]`` (``"control"`` for
  vehicle), ``obs["dose_value"]`` with ``obs["dose_unit"]`` (nM), ``obs["cell_line"]``;
* the CPA / chemCPA preprocessing (Lotfollahi et al. 2023): ``obs["product_name"]`` (``"Vehicle"``),
  ``obs["dose"]`` (nM), ``obs["cell_type"]``.

Whatever the layout, the returned AnnData has ``obs["compound"]`` (str), ``obs["dose_nM"]`` (float, 0 for
controls), ``obs["cell_line"]`` (str) and ``obs["control"]`` (bool), besides the original columns.
The file is opened backed (``backed="r"``) so only the selected cells' counts are read into memory.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from scigen.core.errors import InvalidInputError
from scigen.singlecell.h5ad import open_h5ad

__all__ = ["SCIPLEX3_FILE", "load_sciplex3"]

SCIPLEX3_FILE = "SrivatsanTrapnell2020_sciplex3.h5ad"
_LAYOUTS = (  # (compound, dose, dose unit or None, cell line)
    ("perturbation", "dose_value", "dose_unit", "cell_line"),
    ("product_name", "dose", None, "cell_type"),
)
_CONTROLS = {"control", "vehicle", "dmso"}
_TO_NM = {"nm": 1.0, "um": 1e3, "µm": 1e3, "mm": 1e6, "m": 1e9}


def _columns(obs, path: Path) -> tuple:
    for layout in _LAYOUTS:
        if all(c in obs.columns for c in layout if c is not None):
            return layout
    need = " or ".join("/".join(c for c in lay if c) for lay in _LAYOUTS)
    raise InvalidInputError(f"{path}: not a sci-Plex3 AnnData: obs needs the columns {need}; it has "
                            f"{sorted(map(str, obs.columns))[:20]}")


def _dose_nm(obs, dose_col: str, unit_col: str | None, path: Path) -> np.ndarray:
    import pandas as pd

    dose = pd.to_numeric(obs[dose_col], errors="coerce").to_numpy(dtype=float)
    if unit_col is not None:
        units = obs[unit_col].astype(str).str.strip().str.lower()
        factor = units.map(_TO_NM)
        unknown = sorted(set(units[factor.isna() & ~np.isnan(dose)]) - {"nan", "none", ""})
        if unknown:
            raise InvalidInputError(f"{path}: obs[{unit_col!r}] has unit(s) {unknown}; expected one of {list(_TO_NM)}")
        dose = dose * factor.fillna(1.0).to_numpy(dtype=float)
    return dose


def _pick(values: np.ndarray, wanted: Sequence | None, what: str, path: Path) -> np.ndarray:
    if wanted is None:
        return np.ones(values.shape[0], dtype=bool)
    wanted = [wanted] if isinstance(wanted, str) else list(wanted)
    missing = [w for w in wanted if w not in set(values.tolist())]
    if missing:
        have = sorted(set(values.tolist()))
        raise InvalidInputError(f"{what}: {missing} not in {path.name}; it has {have[:12]}"
                                + (f" ... ({len(have)} in all)" if len(have) > 12 else ""))
    return np.isin(values, wanted)


def load_sciplex3(path: str | os.PathLike | None = None, *, cell_lines: Sequence[str] | str | None = None,
                  compounds: Sequence[str] | str | None = None, doses_nM: Sequence[float] | None = None,
                  controls: bool = True, max_cells: int | None = None, seed: int = 0):
    """sci-Plex3 cells as an ``anndata.AnnData`` (counts as stored), optionally a subset.

    Args:
        path: the ``.h5ad``; ``None`` = ``SrivatsanTrapnell2020_sciplex3.h5ad`` in the catalog's cache
            (``scigen.datasets.path("sciPlex3")`` says where to place it when it is missing).
        cell_lines, compounds: keep only these (names as in the file; unknown names are an error).
        doses_nM: keep treated cells at these doses (nM); ``controls`` keeps the vehicle cells as well.
        max_cells: a uniform random subset of at most this many of the selected cells (``seed``).
    """
    if path is None:
        from scigen.datasets import path as dataset_path

        path = dataset_path("sciPlex3") / SCIPLEX3_FILE
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"{path}: no such file (sci-Plex3 .h5ad; see `scigen data info sciPlex3`)")
    if max_cells is not None and (isinstance(max_cells, bool) or not isinstance(max_cells, int) or max_cells < 1):
        raise InvalidInputError(f"max_cells: expected a positive int or None, got {max_cells!r}")
    ad = open_h5ad(path, backed="r")  # foreign, truncated or non-AnnData files: one error naming the file
    try:
        comp_col, dose_col, unit_col, line_col = _columns(ad.obs, path)
        compound = ad.obs[comp_col].astype(str).to_numpy()
        line = ad.obs[line_col].astype(str).to_numpy()
        dose = _dose_nm(ad.obs, dose_col, unit_col, path)
        control = np.isin(np.char.lower(compound.astype(str)), list(_CONTROLS))
        dose = np.where(control, 0.0, dose)
        bad = np.flatnonzero(~control & ~(np.isfinite(dose) & (dose > 0)))
        if bad.size:
            raise InvalidInputError(f"{path}: obs[{dose_col!r}] of treated cell {ad.obs_names[bad[0]]!r} is "
                                    f"{str(ad.obs[dose_col].iloc[bad[0]])!r}; expected a positive dose")
        keep = _pick(line, cell_lines, "cell_lines", path) & (control & controls | ~control)
        keep &= _pick(compound, compounds, "compounds", path) | (control & controls)
        if doses_nM is not None:
            keep &= control | np.isin(dose, np.asarray(doses_nM, dtype=float))
        rows = np.flatnonzero(keep)
        if rows.size == 0:
            raise InvalidInputError(f"{path}: no cell matches cell_lines={cell_lines}, compounds={compounds}, "
                                    f"doses_nM={doses_nM}, controls={controls}")
        if max_cells is not None and rows.size > max_cells:
            rows = np.sort(np.random.default_rng(seed).choice(rows, size=max_cells, replace=False))
        out = ad[rows].to_memory()
    finally:
        ad.file.close()
    out.obs["compound"] = compound[rows]
    out.obs["dose_nM"] = dose[rows]
    out.obs["cell_line"] = line[rows]
    out.obs["control"] = control[rows]
    return out
