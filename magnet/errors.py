"""The one error type magnet raises for bad input.

Every message names where the problem is (file and field) and what is allowed, so that the
CLI can print it as is and exit non-zero, and Python callers can catch a ``ValueError``.
"""

from __future__ import annotations


class MagnetError(ValueError):
    """Bad input: a file, a field, a value, and what would have been accepted."""

    def __init__(self, message: str, *, source: str | None = None, field: str | None = None):
        self.source = source
        self.field = field
        where = ": ".join(part for part in (source, field) if part)
        super().__init__(f"{where}: {message}" if where else message)


class InvalidMappingError(MagnetError):
    """A mapping that cannot run on the architecture (overflow, bad fan-out, bad factors)."""
