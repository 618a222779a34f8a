"""Data shipped inside PyPI wheels: MOSES (``molsets``), QM9 with DFT geometries (``qm9pack``),
and scanpy's bundled ``pbmc68k_reduced`` / ``krumsiek11``.

The wheels are located with :func:`importlib.util.find_spec` and their files are read directly:
``import moses`` fails on current RDKit (``rdkit.six`` is gone) and ``import qm9pack`` fails on
current setuptools (``pkg_resources``), so neither package is ever imported here.

pandas is *not* a dependency of scigen-datasets: the readers return plain Python / numpy
structures (``list[str]`` of SMILES; ``dict[str, numpy.ndarray]`` of columns). Domain packages that
want a DataFrame can wrap the dict with ``pandas.DataFrame(table)``.

A missing package raises :class:`~scigen.datasets.errors.MissingPackageError` naming the install
command.
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
import itertools
import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from scigen.datasets.errors import MissingPackageError

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "package_dir",
    "MOSES_SPLITS",
    "moses_csv_path",
    "moses_smiles",
    "QM9PACK_PARTS",
    "qm9pack_dir",
    "qm9pack_files",
    "qm9pack_table",
    "parse_qm9pack_list",
    "SCANPY_DATASETS",
    "scanpy_dataset",
]

MOSES_INSTALL = "pip install --no-deps molsets"
QM9PACK_INSTALL = "pip install qm9pack"
SCANPY_INSTALL = "pip install scanpy"

MOSES_SPLITS = ("train", "test", "test_scaffolds")
QM9PACK_PARTS = ("qm9_part1.csv", "qm9_part2.csv", "qm9_part3.csv")
QM9PACK_POLARIZABILITY = "qm9_polarizability.csv"
SCANPY_DATASETS = ("pbmc68k_reduced", "krumsiek11")

# csv fields in qm9pack hold whole JSON-like arrays (frequencies of large molecules run long).
csv.field_size_limit(max(csv.field_size_limit(), 1 << 24))


def package_dir(import_name: str, install: str) -> Path:
    """The installed directory of package ``import_name`` without importing it.

    Raises :class:`MissingPackageError` whose message is the exact ``install`` command.
    """
    try:
        spec = importlib.util.find_spec(import_name)
    except (ImportError, ValueError):  # a broken parent package or a bad name
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise MissingPackageError(
            f"the package providing '{import_name}' is not installed; install it with: {install}")
    return Path(locations[0])


# --------------------------------------------------------------------------------------------- MOSES


def moses_csv_path(split: str = "train") -> Path:
    """Path of MOSES ``<split>.csv.gz`` inside the ``molsets`` wheel (``moses/dataset/data``)."""
    if split not in MOSES_SPLITS:
        raise ValueError(f"split: expected one of {', '.join(MOSES_SPLITS)}, got {split!r}")
    path = package_dir("moses", f"{MOSES_INSTALL}  (--no-deps: molsets pins pomegranate==0.12, "
                       "which does not build)") / "dataset" / "data" / f"{split}.csv.gz"
    if not path.is_file():
        raise MissingPackageError(
            f"{path} is missing: the installed molsets has no MOSES {split!r} split; reinstall with: "
            f"{MOSES_INSTALL} --force-reinstall")
    return path


def moses_smiles(split: str = "train", *, limit: int | None = None) -> list[str]:
    """SMILES strings of a MOSES split (Polykovskiy et al. 2020, *Front Pharmacol* 11:565644).

    ``split``: ``"train"`` (1,584,663 molecules), ``"test"`` (176,074) or ``"test_scaffolds"``
    (176,225). ``limit`` reads only the first ``limit`` rows. Returns a list of str, in file order.
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit: expected an integer >= 0 or None, got {limit!r}")
    path = moses_csv_path(split)
    with gzip.open(path, "rt", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        if "SMILES" not in header:
            raise ValueError(f"{path}: expected a 'SMILES' column, found {header}")
        col = header.index("SMILES")
        rows = reader if limit is None else itertools.islice(reader, limit)
        return [row[col] for row in rows]


# ------------------------------------------------------------------------------------------- qm9pack


def qm9pack_dir() -> Path:
    """The ``qm9pack/data`` folder: ``qm9_part{1,2,3}.csv`` and ``qm9_polarizability.csv``."""
    d = package_dir("qm9pack", QM9PACK_INSTALL) / "data"
    if not d.is_dir():
        raise MissingPackageError(f"{d} is missing: the installed qm9pack has no data folder; reinstall with: "
                                  f"{QM9PACK_INSTALL} --force-reinstall")
    return d


def qm9pack_files() -> dict[str, Path]:
    """``{"parts": [three CSV paths], "polarizability": path}``; raises if a file is missing."""
    d = qm9pack_dir()
    parts = [d / p for p in QM9PACK_PARTS]
    pol = d / QM9PACK_POLARIZABILITY
    for p in [*parts, pol]:
        if not p.is_file():
            raise MissingPackageError(f"{p} is missing from qm9pack; reinstall with: {QM9PACK_INSTALL} --force-reinstall")
    return {"parts": parts, "polarizability": pol}


def parse_qm9pack_list(text: str) -> list:
    """Parse one qm9pack list cell (``"['C','H']"``, ``"[[x,y,z],...]"``, ``"[4,1,0,0,0]"``) to Python lists.

    ``np.asarray(parse_qm9pack_list(row["XYZ_Ang"]))`` is the (n_atoms, 3) DFT geometry in Ångström.
    """
    try:
        return json.loads(text.replace("'", '"'))
    except (json.JSONDecodeError, AttributeError) as exc:
        raise ValueError(f"text: expected a qm9pack list cell like \"['C','H']\" or \"[[0.1,0.2,0.3]]\", "
                         f"got {str(text)[:60]!r}") from exc


def _to_column(values: list[str]) -> np.ndarray:
    import numpy as np  # imported here: `scigen list` reads the catalog without numpy

    try:
        return np.array([float(v) if v != "" else math.nan for v in values], dtype=np.float64)
    except ValueError:
        return np.array(values, dtype=object)


def qm9pack_table(*, columns: Sequence[str] | None = None, limit: int | None = None,
                  polarizability: bool = False) -> dict[str, np.ndarray]:
    """QM9 (Ramakrishnan et al. 2014, *Sci Data* 1:140022) as shipped by ``qm9pack``.

    Reads ``qm9_part1..3.csv`` in order (130,831 molecules: QM9 minus the 3,054 that failed the
    geometry-consistency check). Returns ``{column: numpy array}``: numeric columns as float64
    (HOMO/LUMO/gap and energies in Hartree, dipole in Debye, polarizability in bohr³, Cv in
    cal/(mol K)); text columns (``XYZ_file``, ``SMILES``, ``InChi``, ``Elements``, ``XYZ_Ang``,
    ``Mulliken_pop``, ...) as object arrays of str — parse list cells with :func:`parse_qm9pack_list`.

    ``columns`` keeps only those columns (``XYZ_file`` is always kept as the key). ``limit`` stops
    after that many molecules. ``polarizability=True`` joins the tensor components ``A_xx, A_xy,
    A_yy, A_xz, A_yz, A_zz`` from ``qm9_polarizability.csv`` on ``XYZ_file`` (NaN where absent).
    """
    import numpy as np

    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit: expected an integer >= 0 or None, got {limit!r}")
    files = qm9pack_files()
    header: list[str] | None = None
    rows: list[list[str]] = []
    for part in files["parts"]:
        if limit is not None and len(rows) >= limit:
            break
        with open(part, newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            h = next(reader)
            if header is None:
                header = h
            elif h != header:
                raise ValueError(f"{part}: header differs from {files['parts'][0].name}: {h}")
            take: Iterable[list[str]] = reader if limit is None else itertools.islice(reader, limit - len(rows))
            rows.extend(take)
    assert header is not None
    keep = list(header) if columns is None else ["XYZ_file", *[c for c in columns if c != "XYZ_file"]]
    unknown = [c for c in keep if c not in header]
    if unknown:
        raise ValueError(f"columns: unknown column(s) {unknown}; qm9pack has {header}")
    index = {c: header.index(c) for c in keep}
    table = {c: _to_column([r[index[c]] for r in rows]) for c in keep}
    if polarizability:
        with open(files["polarizability"], newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            ph = next(reader)
            key = ph.index("XYZ_file")
            comps = [c for c in ph if c != "XYZ_file"]
            wanted = set(table["XYZ_file"].tolist())
            found = {r[key]: r for r in reader if r[key] in wanted}
        for c in comps:
            j = ph.index(c)
            table[c] = np.array([float(found[k][j]) if k in found else math.nan for k in table["XYZ_file"]])
    return table


# -------------------------------------------------------------------------------------------- scanpy


def scanpy_dataset(name: str):
    """One of scanpy's bundled, offline datasets as an ``anndata.AnnData``.

    ``"pbmc68k_reduced"``: 700 cells x 765 genes of 10x PBMC (Zheng et al. 2017), ``.X`` scaled,
    ``.raw.X`` log-normalised. ``"krumsiek11"``: 640 x 11 simulated myeloid progenitor time course
    (Krumsiek et al. 2011). scanpy is imported lazily; missing -> ``pip install scanpy``.
    """
    if name not in SCANPY_DATASETS:
        raise ValueError(f"name: expected one of {', '.join(SCANPY_DATASETS)}, got {name!r}")
    package_dir("scanpy", SCANPY_INSTALL)
    try:
        import scanpy as sc
    except ImportError as exc:
        raise MissingPackageError(f"scanpy is installed but fails to import ({exc}); reinstall with: "
                                  f"{SCANPY_INSTALL}") from exc
    return getattr(sc.datasets, name)()
