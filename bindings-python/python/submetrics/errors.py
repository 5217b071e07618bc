"""Exceptions raised by submetrics, one per error code of the core.

Every exception carries ``code`` (the core's stable error code),
``record_id`` (the record at fault, when one is) and ``field`` (the field or
query parameter at fault, when one is).
"""

from __future__ import annotations

from typing import Optional


class SubmetricsError(Exception):
    """Base class of every submetrics error."""

    code: str = "error"

    def __init__(self, message: str, record_id: Optional[str] = None, field: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.record_id = record_id
        self.field = field

    def __str__(self) -> str:
        return self.message


class InvalidRecordError(SubmetricsError, ValueError):
    """A record breaks a validation rule; ``field`` names the field."""

    code = "invalid_record"


class NotFoundError(SubmetricsError, KeyError):
    """No record with that id."""

    code = "not_found"


class ConflictError(SubmetricsError):
    """The write would break a reference (deleting a plan invoices use)."""

    code = "conflict"


class UnknownReportError(SubmetricsError, ValueError):
    """No report by that name; the message lists the known ones."""

    code = "unknown_report"


class InvalidQueryError(SubmetricsError, ValueError):
    """A report parameter with an unusable value; ``field`` names it."""

    code = "invalid_query"


class InvalidSettingError(SubmetricsError, ValueError):
    """A ledger setting with an unusable value; ``field`` names it."""

    code = "invalid_setting"


class MissingFxRateError(SubmetricsError, LookupError):
    """No FX rate for a currency on or before a date."""

    code = "missing_fx_rate"


_CLASSES = {
    cls.code: cls
    for cls in (
        InvalidRecordError,
        NotFoundError,
        ConflictError,
        UnknownReportError,
        InvalidQueryError,
        InvalidSettingError,
        MissingFxRateError,
    )
}


def _from_core(code: str, message: str, record_id: Optional[str], field: Optional[str]) -> SubmetricsError:
    """The exception for a core error (called by the native module): the
    class of its code, or :class:`SubmetricsError` carrying the code itself
    when the code is newer than this module."""
    error = _CLASSES.get(code, SubmetricsError)(message, record_id, field)
    if error.code != code:
        error.code = code
    return error


__all__ = [
    "SubmetricsError",
    "InvalidRecordError",
    "NotFoundError",
    "ConflictError",
    "UnknownReportError",
    "InvalidQueryError",
    "InvalidSettingError",
    "MissingFxRateError",
]
