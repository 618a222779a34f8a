"""The scigen dataset catalog: dataset cards, checksummed download and cache, bundled-data helpers.

Layering: imports only the standard library, numpy, pooch, platformdirs (and typer/rich in the
CLI) — nothing else of scigen. Loaders named in the cards live in the domain packages.

On a networked machine ``fetch("ETTh1")`` downloads into ``cache_dir()/ETTh1`` and verifies the checksums;
``verify("ETTh1")`` checks them again later.

Example::

    from scigen.datasets import DataNotAvailableError, card, list_datasets, path

    names = [c.name for c in list_datasets()]   # every card in the catalog
    url = card("etth1").files[0].url            # case-insensitive lookup
    try:
        where = path("ETTh1")                   # the cached directory ...
    except DataNotAvailableError as exc:        # ... or, offline, an error saying what to run and where to put it
        print(exc)
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
