"""Loader for the Kaggle "Open Problems – Multimodal Single-Cell Integration" data (downloaded by the user).

The catalog card ``KaggleMultiome`` (``scigen data info KaggleMultiome``) says how to obtain the
archive. MMSFM uses donor 13176 at days 2, 3, 4, 7 (irregular times), CITE-seq inputs or Multiome
targets. Reading the ``.h5`` tables needs ``pandas.read_hdf`` with PyTables (``pip install tables``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scigen.core.errors import InvalidInputError

__all__ = ["load_kaggle_multiome"]

_FILES = {"cite": "train_cite_inputs.h5", "multiome": "train_multi_targets.h5"}


def load_kaggle_multiome(root: str | Path, *, modality: str = "cite", donor: int | None = 13176,
                         days: tuple[int, ...] | None = (2, 3, 4, 7), max_cells_per_day: int | None = None,
                         seed: int = 0):
    """AnnData (cells x features) with ``obs["day"]``, ``obs["donor"]``, ``obs["cell_type"]`` from ``root``.

    ``root`` is the extracted competition folder holding ``metadata.csv`` and the ``.h5`` tables.
    Errors name the missing file and point to the catalog card.
    """
    import anndata
    import pandas as pd

    if modality not in _FILES:
        raise InvalidInputError(f"modality must be one of {list(_FILES)}, got {modality!r}")
    root = Path(root)
    meta_path, table_path = root / "metadata.csv", root / _FILES[modality]
    for p in (meta_path, table_path):
        if not p.is_file():
            raise FileNotFoundError(f"{p} not found; download the data as described by "
                                    "`scigen data info KaggleMultiome` and pass the extracted folder")
    meta = pd.read_csv(meta_path).set_index("cell_id")
    table = pd.read_hdf(table_path)
    meta = meta.loc[meta.index.intersection(table.index)]
    if donor is not None:
        meta = meta[meta["donor"] == donor]
    if days is not None:
        meta = meta[meta["day"].isin(days)]
    if max_cells_per_day is not None:
        rng = np.random.default_rng(seed)
        keep = [g.index[rng.permutation(len(g))[:max_cells_per_day]] for _, g in meta.groupby("day")]
        meta = meta.loc[np.concatenate(keep)]
    if len(meta) == 0:
        raise InvalidInputError(f"no cells left after selecting donor={donor}, days={days}")
    X = table.loc[meta.index].to_numpy(dtype=np.float32)
    obs = meta.rename(columns={"cell_type": "cell_type"}).copy()
    obs["day"] = obs["day"].astype(float)
    return anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=[str(c) for c in table.columns]))
