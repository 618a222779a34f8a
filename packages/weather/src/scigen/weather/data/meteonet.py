"""MeteoNet rain-radar loader (METEO FRANCE; Larvor et al. 2020), behind the ``MeteoNet`` dataset card.

The rainfall product is a tree of ``.npz`` files, one per 10-11 days, each with ``data``
``[N, y, x]`` (rain accumulated over the 5-minute step, in hundredths of a millimetre; ``-1`` =
missing), ``dates`` (one ``datetime`` per map, stored as Python objects, so these arrays are unpickled:
read only files from MeteoNet) and ``miss_dates``; ``radar_coords_<ZONE>.npz`` holds ``lats`` / ``lons``
(0.01° grid, EPSG:4326). Rain rate in mm/h is ``data / 100 · 60 / 5``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from scigen.core.errors import InvalidInputError

__all__ = ["load_meteonet"]


def load_meteonet(root: str | os.PathLike | None = None, *, zone: str = "NW", start=None, end=None,
                  bbox: tuple[int, int, int, int] | None = None, missing: str = "nan", step_minutes: int = 5):
    """MeteoNet rainfall maps under ``root`` (default: the cached dataset's ``radar`` folder) as a field in mm/h.

    ``zone``: the files whose name holds ``zone`` (``"NW"`` or ``"SE"``); ``start`` / ``end``: a time window;
    ``bbox = (y0, y1, x0, x1)``: a pixel crop; ``missing``: ``"nan"`` keeps missing pixels as NaN (which
    training refuses, naming the first one) or ``"zero"`` sets them to 0 mm/h."""
    from scigen.weather.data.fields import make_field

    if missing not in ("nan", "zero"):
        raise InvalidInputError(f"missing must be 'nan' or 'zero', got {missing!r}")
    if root is None:
        from scigen.datasets import path as dataset_path

        root = Path(dataset_path("MeteoNet")) / "radar"
    root = Path(root)
    files = sorted(f for f in root.rglob("*.npz") if zone in f.name and "coords" not in f.name and "quality" not in f.name)
    if not files:
        raise InvalidInputError(f"{root}: no MeteoNet rainfall .npz files for zone {zone!r}")
    maps, times = [], []
    for f in files:
        with np.load(f, allow_pickle=False) as z:
            if "data" not in z.files or "dates" not in z.files:
                raise InvalidInputError(f"{f}: a MeteoNet radar file holds 'data' and 'dates', got {z.files}")
            data = np.asarray(z["data"])
        with np.load(f, allow_pickle=True) as z:
            dates = pd.DatetimeIndex(pd.to_datetime(list(z["dates"])))
        if data.ndim != 3 or data.shape[0] != len(dates):
            raise InvalidInputError(f"{f}: 'data' has shape {data.shape} for {len(dates)} dates")
        keep = np.ones(len(dates), bool)
        if start is not None:
            keep &= dates >= pd.Timestamp(start)
        if end is not None:
            keep &= dates <= pd.Timestamp(end)
        if bbox is not None:
            y0, y1, x0, x1 = bbox
            data = data[:, y0:y1, x0:x1]
        maps.append(data[keep])
        times.append(dates[keep])
    values = np.concatenate(maps).astype(np.float32)
    t = times[0].append(times[1:]) if len(times) > 1 else times[0]
    if len(t) == 0:
        raise InvalidInputError(f"{root}: no MeteoNet maps between {start} and {end}")
    rate = np.where(values < 0, np.nan if missing == "nan" else 0.0, values / 100.0 * 60.0 / step_minutes)
    order = np.argsort(t.asi8, kind="stable")
    coords = sorted(root.rglob(f"radar_coords_{zone}.npz"))
    attrs = {"source": f"MeteoNet {zone} rainfall", "missing_pixels": int(np.isnan(rate).sum())}
    da = make_field(rate[order], t[order], units="mm/h", name="precipitation", attrs=attrs)
    if coords:
        with np.load(coords[0], allow_pickle=False) as z:
            lats, lons = np.asarray(z["lats"]), np.asarray(z["lons"])
        if bbox is not None:
            lats, lons = lats[bbox[0]:bbox[1], bbox[2]:bbox[3]], lons[bbox[0]:bbox[1], bbox[2]:bbox[3]]
        if lats.shape == rate.shape[1:]:
            da = da.assign_coords(lat=(("y", "x"), lats), lon=(("y", "x"), lons))
    return da
