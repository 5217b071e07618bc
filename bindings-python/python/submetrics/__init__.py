"""submetrics: subscription analytics from invoice history.

Push customers, plans and invoices into a :class:`Ledger`; read movements,
reports (``ledger.report("mrr", ...)``) and customer views. Amounts are
integer cents. A ledger may be read from several threads at once; the
computations release the GIL. :class:`Client` and :class:`AsyncClient` do
the same against a deployed submetrics service, with the same method names.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from . import _native
from ._native import finish_partial, merge_partials, report_names
from ._paging import Paging
from .errors import (
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InvalidArgumentError,
    InvalidPartialError,
    InvalidQueryError,
    InvalidRecordError,
    InvalidSettingError,
    MethodNotAllowedError,
    MissingFxRateError,
    OutOfRangeError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    ServiceError,
    SubmetricsError,
    UnknownReportError,
)

_PANDAS_HINT = "pandas is needed for DataFrames: pip install submetrics[pandas]"


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as error:
        raise ImportError(_PANDAS_HINT) from error
    return pandas


def _frame(table: Any) -> Any:
    """An Arrow table as a pandas DataFrame, integer columns as pandas'
    nullable ``Int64`` (cents and counts stay integers where a period has
    no value)."""
    pandas = _pandas()
    import pyarrow

    return table.to_pandas(types_mapper={pyarrow.int64(): pandas.Int64Dtype()}.get)


def _report_frame(table: Any) -> Any:
    """The DataFrame of a report's Arrow table (see :meth:`Ledger.report_df`)."""
    _pandas()
    if table.num_columns > 0 and table.column_names[0] == "metric":
        return _frame(table).set_index("metric")
    if table.num_rows == 1:
        # One record: nested objects become dotted columns.
        while any(str(field.type).startswith("struct") for field in table.schema):
            table = table.flatten()
        # Plain fields first, then the dotted ones (as pandas.json_normalize).
        names = table.column_names
        table = table.select([n for n in names if "." not in n] + [n for n in names if "." in n])
    return _frame(table)


class Ledger(_native.Ledger, Paging):
    """A ledger of customers, plans, plan groups, invoices and data sources,
    with the movements, reports and customer views derived from them.

    Amounts are integer cents. Records go in as dicts (or any mapping), one
    or a sequence at a time; reads take an ``as_of`` (datetime, date, ISO
    text; default now). A ledger may be shared by threads: reads run at the
    same time, writes one at a time, and both release the GIL.
    """

    def movements_df(self, as_of: Any = None, **filters: Any) -> Any:
        """The rows of :meth:`movements` as a pandas DataFrame, one row per
        movement. Raises ImportError naming the ``pandas`` extra when pandas
        is not installed."""
        _pandas()
        return _frame(self.movements_arrow(as_of, **filters))

    def report_df(
        self, name: str, as_of: Any = None, params: Optional[Mapping[str, Any]] = None, **kwargs: Any
    ) -> Any:
        """A report as a pandas DataFrame: a ``*-table`` report has one row
        per metric (index ``metric``) and one column per period; a series
        report one row per period; a list report one row per item; any other
        report one row, nested keys joined by dots (``summary.mrr_current``).
        Raises ImportError naming the ``pandas`` extra when pandas is not
        installed."""
        _pandas()
        return _report_frame(self.report_arrow(name, as_of, params, **kwargs))


def movements_df(ledger: _native.Ledger, as_of: Any = None, **filters: Any) -> Any:
    """The movements of :meth:`Ledger.movements` as a pandas DataFrame
    (the same as ``ledger.movements_df(...)``)."""
    _pandas()
    return _frame(ledger.movements_arrow(as_of, **filters))


def report_df(
    ledger: _native.Ledger, name: str, as_of: Any = None, params: Optional[Mapping[str, Any]] = None, **kwargs: Any
) -> Any:
    """A report as a pandas DataFrame (the same as ``ledger.report_df(...)``)."""
    _pandas()
    return _report_frame(ledger.report_arrow(name, as_of, params, **kwargs))


from .client import Client  # noqa: E402  (uses the helpers above)
from .async_client import AsyncClient  # noqa: E402

__all__ = [
    "Ledger",
    "Client",
    "AsyncClient",
    "report_names",
    "merge_partials",
    "finish_partial",
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
    "OutOfRangeError",
    "InvalidPartialError",
    "BadRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "PayloadTooLargeError",
    "MethodNotAllowedError",
    "InvalidArgumentError",
    "ServiceError",
]
