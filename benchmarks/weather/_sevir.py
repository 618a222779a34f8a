"""SEVIR VIL windows for the nowcast benchmark, from the cached dataset (``scigen data info SEVIR``).

Each VIL event (49 frames, 5 min, 384 x 384 km at 1 km) is loaded on its own with
:func:`scigen.weather.data.load_sevir` in kg/m², block-averaged ``coarsen x coarsen`` (default 12: a 32 x 32
grid of 12 km pixels, the synthetic set's size) and put on its own day (``base + k days``, the 5-min
steps kept): SEVIR events overlap in time at different places, and a field ``(time, y, x)`` needs
increasing times; windows never cross two events (``gap`` between them). The first ``1 − test_share`` of
the events (catalog order) train, the rest test. Thresholds are SEVIR's VIL levels 16, 74, 133, 160
(bytes; Veillette et al. 2020, Table 3) decoded to kg/m².
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: SEVIR's CSI thresholds (VIL bytes; Veillette et al. 2020)
VIL_BYTE_THRESHOLDS = (16, 74, 133, 160)


def sevir_thresholds() -> tuple[float, ...]:
    from scigen.weather.data.units import vil_digital_to_kgm2

    return tuple(float(vil_digital_to_kgm2(p)) for p in VIL_BYTE_THRESHOLDS)


def sevir_fields(n_events: int, *, coarsen: int = 12, test_share: float = 0.25, root=None):
    """``(train, test)`` fields in kg/m² of the first ``n_events`` VIL events of the cached SEVIR
    (``root``: another folder in the release layout). Raises the catalog's ``DataNotAvailableError``
    (with the download instructions) when SEVIR is not cached."""
    import xarray as xr

    from scigen.core.errors import InvalidInputError
    from scigen.weather.data import load_sevir

    if root is None:
        from scigen.datasets import path

        root = path("SEVIR")  # DataNotAvailableError naming the files to place, when not cached
    cat = pd.read_csv(f"{root}/CATALOG.csv", low_memory=False)
    ids = list(dict.fromkeys(cat.loc[cat["img_type"] == "vil", "id"].astype(str)))[:n_events]
    if len(ids) < 2:
        raise InvalidInputError(f"{root}/CATALOG.csv: {len(ids)} VIL event(s); the benchmark needs at least 2")
    base = pd.Timestamp("2000-01-01")
    events = []
    for k, eid in enumerate(ids):
        f = load_sevir(root, event_ids=[eid], units="kg/m2")
        if f.sizes["y"] % coarsen or f.sizes["x"] % coarsen:
            raise InvalidInputError(f"SEVIR event {eid}: grid {f.sizes['y']}x{f.sizes['x']} is not divisible by "
                                    f"coarsen={coarsen}")
        f = f.drop_vars("event").coarsen(y=coarsen, x=coarsen).mean()
        t = pd.DatetimeIndex(f["time"].values)
        f = f.assign_coords(time=base + pd.Timedelta(days=k) + (t - t[0]))
        events.append(f.astype(np.float32))
    n_test = max(1, int(round(test_share * len(events))))
    cut = len(events) - n_test
    attrs = {"units": "kg/m2", "source": "SEVIR", "coarsen": coarsen}
    train = xr.concat(events[:cut], dim="time").assign_attrs(attrs)
    test = xr.concat(events[cut:], dim="time").assign_attrs(attrs)
    return train, test
