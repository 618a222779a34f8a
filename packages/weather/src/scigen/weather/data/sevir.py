"""SEVIR VIL loader (Veillette, Samsi & Mattioli, NeurIPS 2020), behind the ``SEVIR`` dataset card.

The release is ``CATALOG.csv`` (one row per event and image type: ``id``, ``file_name``, ``file_index``,
``img_type``, ``time_utc``, ``minute_offsets`` = ``"-120:-115:...:120"``, ...) and HDF5 files whose
dataset ``vil`` is ``uint8 [N, 384, 384, 49]`` (event, y, x, frame) with ``id`` naming each event. VIL is
stored as a byte; ``units="kg/m2"`` decodes it (:func:`~scigen.weather.data.units.vil_digital_to_kgm2`).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from scigen.core.errors import InvalidInputError

__all__ = ["load_sevir"]

PIXEL_KM = 1.0  # SEVIR VIL: 384 x 384 km at 1 km


def load_sevir(root: str | os.PathLike | None = None, *, event_ids: list[str] | None = None,
               limit: int | None = None, units: str = "VIL digital", catalog: str = "CATALOG.csv"):
    """The VIL events of SEVIR under ``root`` (default: the cached dataset, ``scigen.datasets.path``) as one
    field DataArray, events concatenated along ``time`` (an ``event`` coordinate holds each frame's id).

    ``event_ids`` selects events (catalog ``id``), ``limit`` keeps the first ``limit``; ``units`` is
    ``"VIL digital"`` (the stored byte) or ``"kg/m2"``."""
    import h5py

    from scigen.weather.data.fields import make_field
    from scigen.weather.data.units import check_units, vil_digital_to_kgm2

    if root is None:
        from scigen.datasets import path as dataset_path

        root = dataset_path("SEVIR")
    root = Path(root)
    units = check_units(units)
    if units not in ("VIL digital", "kg/m2"):
        raise InvalidInputError(f"units: SEVIR VIL loads as 'VIL digital' or 'kg/m2', got {units!r}")
    cat_path = root / catalog
    if not cat_path.is_file():
        raise InvalidInputError(f"{cat_path}: SEVIR's CATALOG.csv is missing (see `scigen data info SEVIR`)")
    cat = pd.read_csv(cat_path, low_memory=False)
    need = {"id", "file_name", "file_index", "img_type", "time_utc", "minute_offsets"}
    if missing := sorted(need - set(cat.columns)):
        raise InvalidInputError(f"{cat_path}: columns {missing} are missing (a SEVIR catalog has {sorted(need)})")
    cat = cat[cat["img_type"] == "vil"]
    if event_ids is not None:
        unknown = sorted(set(map(str, event_ids)) - set(cat["id"].astype(str)))
        if unknown:
            raise InvalidInputError(f"{cat_path}: no VIL event with id {unknown[:5]}")
        cat = cat[cat["id"].astype(str).isin(list(map(str, event_ids)))]
    if limit is not None:
        cat = cat.iloc[: int(limit)]
    if cat.empty:
        raise InvalidInputError(f"{cat_path}: no VIL events selected")
    frames, times, ids = [], [], []
    for row in cat.itertuples(index=False):
        f = root / row.file_name
        if not f.is_file():
            f = root / "vil" / Path(row.file_name).relative_to(Path(row.file_name).parts[0])
        if not f.is_file():
            raise InvalidInputError(f"{root / row.file_name}: the HDF5 file of event {row.id} is missing")
        with h5py.File(f, "r") as h5:
            if "vil" not in h5:
                raise InvalidInputError(f"{f}: no 'vil' dataset (has {list(h5)})")
            vil = np.asarray(h5["vil"][int(row.file_index)])  # [y, x, frame]
        offsets = [int(m) for m in str(row.minute_offsets).split(":")]
        if vil.ndim != 3 or vil.shape[-1] != len(offsets):
            raise InvalidInputError(f"{f}: event {row.id} has VIL shape {vil.shape}; {len(offsets)} frames "
                                    "are listed in minute_offsets")
        t0 = pd.Timestamp(row.time_utc).tz_localize(None) if pd.Timestamp(row.time_utc).tzinfo else pd.Timestamp(row.time_utc)
        frames.append(np.moveaxis(vil, -1, 0))
        times.extend(t0 + pd.Timedelta(minutes=m) for m in offsets)
        ids.extend([str(row.id)] * len(offsets))
    values = np.concatenate(frames).astype(np.float32)
    order = np.argsort(pd.DatetimeIndex(times).asi8, kind="stable")
    if units == "kg/m2":
        values = vil_digital_to_kgm2(values).astype(np.float32)
    size_y, size_x = values.shape[1:]
    da = make_field(values[order], pd.DatetimeIndex(times)[order], units=units, y=np.arange(size_y) * PIXEL_KM,
                    x=np.arange(size_x) * PIXEL_KM, name="vil", attrs={"source": "SEVIR"})
    return da.assign_coords(event=("time", np.asarray(ids, dtype=object)[order].astype(str)))
