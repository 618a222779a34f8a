"""The scigen dataset catalog: dataset cards, checksummed download and cache, bundled-data helpers.

Layering: imports only the standard library, numpy, pooch, platformdirs (and typer/rich in the
CLI) — nothing else of scigen. Loaders named in the cards live in the domain packages.

Quick use::

    from scigen.datasets import list_datasets, card, fetch, path, verify
    card("etth1").files[0].url          # case-insensitive lookup
    fetch("ETTh1")                      # networked machine: download into cache_dir()/ETTh1
    path("ETTh1")                       # offline: the directory, or DataNotAvailableError saying how
"""

from scigen.datasets.archive import safe_extract
from scigen.datasets.errors import (
    CardError,
    ChecksumError,
    DataNotAvailableError,
    DatasetError,
    MissingPackageError,
    UnknownDatasetError,
    UnsafeArchiveError,
)
from scigen.datasets.registry import card, catalog, list_datasets, load_card, load_cards
from scigen.datasets.schema import DOMAINS, UNKNOWN, DatasetCard, FileEntry, validate_card
from scigen.datasets.store import (
    FileCheck,
    VerifyReport,
    cache_dir,
    dataset_dir,
    fetch,
    path,
    sha256_file,
    verify,
)

__version__ = "0.1.0"

__all__ = [
    "DOMAINS",
    "UNKNOWN",
    "CardError",
    "ChecksumError",
    "DataNotAvailableError",
    "DatasetCard",
    "DatasetError",
    "FileCheck",
    "FileEntry",
    "MissingPackageError",
    "UnknownDatasetError",
    "UnsafeArchiveError",
    "VerifyReport",
    "cache_dir",
    "card",
    "catalog",
    "dataset_dir",
    "fetch",
    "list_datasets",
    "load_card",
    "load_cards",
    "path",
    "safe_extract",
    "sha256_file",
    "validate_card",
    "verify",
]
