"""submetrics: subscription analytics from invoice history.

Push customers, plans and invoices into a :class:`Ledger`; read movements,
reports (``ledger.report("mrr", ...)``) and customer views. Amounts are
integer cents. A ledger may be read from several threads at once; the
computations release the GIL.
"""

from __future__ import annotations

from typing import Any, Optional

from ._native import Ledger, report_names
from .errors import (
    ConflictError,
    InvalidQueryError,
    InvalidRecordError,
    InvalidSettingError,
    MissingFxRateError,
    NotFoundError,
    SubmetricsError,
    UnknownReportError,
)

_PANDAS_HINT = "pandas is needed for DataFrames: pip install submetrics[pandas]"


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as error:  # pragma: no cover - exercised without pandas only
        raise ImportError(_PANDAS_HINT) from error
    return pandas


def movements_df(ledger: Ledger, as_of: Any = None, **filters: Any) -> Any:
    """The movements of :meth:`Ledger.movements` as a pandas DataFrame."""
    return _pandas().DataFrame(ledger.movements(as_of, **filters))


def report_df(ledger: Ledger, name: str, as_of: Any = None, params: Optional[dict] = None, **kwargs: Any) -> Any:
    """A report's rows as a pandas DataFrame: the period list of series
    reports, the row list of list reports, the rows of table reports."""
    result = ledger.report(name, as_of, params, **kwargs)
    rows: Any = result
    if isinstance(result, dict):
        inner = result.get("result", result)
        if isinstance(inner, dict) and "list" in inner:
            rows = inner["list"]
        elif isinstance(inner, list):
            rows = inner
        elif "rows" in result:
            rows = result["rows"]
        else:
            rows = [inner]
    return _pandas().DataFrame(rows)


__all__ = [
    "Ledger",
    "report_names",
    "movements_df",
    "report_df",
    "SubmetricsError",
    "InvalidRecordError",
    "NotFoundError",
    "ConflictError",
    "UnknownReportError",
    "InvalidQueryError",
    "InvalidSettingError",
    "MissingFxRateError",
]
