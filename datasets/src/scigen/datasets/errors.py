"""Exception types raised by :mod:`scigen.datasets`.

Every error carries a message a user can act on: the file or field at fault, what was expected,
and, for missing data, the command to run and the directory to fill.
"""

from __future__ import annotations

__all__ = [
    "DatasetError",
    "CardError",
    "UnknownDatasetError",
    "DataNotAvailableError",
    "ChecksumError",
    "UnsafeArchiveError",
    "ArchiveError",
    "CacheDirError",
    "MissingPackageError",
]


class DatasetError(Exception):
    """Base class of every error raised by scigen.datasets (the CLI turns these into exit code 2)."""


class CardError(DatasetError, ValueError):
    """A dataset card is malformed: names the card file and the offending field."""


class UnknownDatasetError(DatasetError, LookupError):
    """No card has the requested name; the message lists close names."""


class DataNotAvailableError(DatasetError, FileNotFoundError):
    """The data is not in the cache (or we are offline); the message says how to get it."""


class ChecksumError(DatasetError, ValueError):
    """A file's SHA-256 differs from the one its card (or the local record) expects."""


class UnsafeArchiveError(DatasetError, ValueError):
    """An archive member would escape the destination (absolute path, '..', link, device)."""


class MissingPackageError(DatasetError, ImportError):
    """A package that ships bundled data is not installed; the message names the install command."""


class ArchiveError(DatasetError, ValueError):
    """A file that should be an archive is not one, or is damaged; the message names the file."""


class CacheDirError(DatasetError, NotADirectoryError):
    """``SCIGEN_DATA`` (or the cache root) points at something that is not a usable directory."""
