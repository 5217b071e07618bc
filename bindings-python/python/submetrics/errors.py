"""Exceptions raised by submetrics, one per error code of the core.

Every exception carries ``code`` (the core's stable error code),
``record_id`` (the record at fault, when one is) and ``field`` (the field or
query parameter at fault, when one is). Errors of a service reached through
:class:`submetrics.Client` are the same classes, found by the code the
service answers, plus a few only a service has (keys, roles, body size),
and carry the HTTP ``status`` too (``None`` for an embedded ledger).
"""

from __future__ import annotations

import json
from typing import Optional


class SubmetricsError(Exception):
    """Base class of every submetrics error."""

    code: str = "error"

    def __init__(
        self,
        message: str,
        record_id: Optional[str] = None,
        field: Optional[str] = None,
        *,
        code: Optional[str] = None,
        status: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.record_id = record_id
        self.field = field
        self.status = status
        if code is not None and code != type(self).code:
            self.code = code

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


class OutOfRangeError(SubmetricsError, OverflowError):
    """An amount the data leads to (a conversion at an extreme rate, a
    report total, an ARR) lies outside what 64-bit cents hold; the message
    names the report and the figure."""

    code = "out_of_range"


class InvalidPartialError(SubmetricsError, ValueError):
    """Report partials that cannot be merged or finished: bytes that are not
    a partial of this format version, partials of different requests, or a
    report that cannot be computed in parts."""

    code = "invalid_partial"


class BadRequestError(SubmetricsError, ValueError):
    """A request the service cannot read (malformed JSON, a body of the wrong shape)."""

    code = "bad_request"


class AuthenticationError(SubmetricsError):
    """The service knows no such key (missing, unknown or revoked)."""

    code = "unauthorized"


class PermissionDeniedError(SubmetricsError):
    """The key's role may not do this (a readonly key writing, ...)."""

    code = "forbidden"


class PayloadTooLargeError(SubmetricsError, ValueError):
    """A body or a record count over the service's limit."""

    code = "payload_too_large"


class MethodNotAllowedError(SubmetricsError):
    """The path does not take this HTTP method."""

    code = "method_not_allowed"


class InvalidArgumentError(SubmetricsError, ValueError):
    """A :class:`submetrics.Client` call the client cannot make (an unknown
    operation, a path parameter the operation does not have or lacks, a
    timeout that is not positive), raised before anything is sent."""

    code = "invalid_argument"


class ServiceError(SubmetricsError):
    """The service failed on its own (storage), never because of the input."""

    code = "internal"


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
        OutOfRangeError,
        InvalidPartialError,
        BadRequestError,
        AuthenticationError,
        PermissionDeniedError,
        PayloadTooLargeError,
        MethodNotAllowedError,
        InvalidArgumentError,
        ServiceError,
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


def _from_service(status: int, body: bytes) -> SubmetricsError:
    """The exception for an error answer of the service: the class of its
    ``code``; an answer that is not the service's JSON error (a proxy's
    page) is a :class:`SubmetricsError` with code ``http_<status>``."""
    try:
        fields = json.loads(body)
    except ValueError:
        fields = None
    if not isinstance(fields, dict) or not isinstance(fields.get("code"), str):
        text = body.decode("utf-8", "replace").strip()[:200]
        return SubmetricsError(f"the service answered {status}: {text}", code=f"http_{status}", status=status)
    code = fields["code"]
    return _CLASSES.get(code, SubmetricsError)(
        str(fields.get("error", "")), fields.get("id"), fields.get("field"), code=code, status=status
    )


__all__ = [
    "SubmetricsError",
    "InvalidRecordError",
    "NotFoundError",
    "ConflictError",
    "UnknownReportError",
    "InvalidQueryError",
    "InvalidSettingError",
    "MissingFxRateError",
    "OutOfRangeError",
    "BadRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "PayloadTooLargeError",
    "MethodNotAllowedError",
    "InvalidArgumentError",
    "ServiceError",
]
