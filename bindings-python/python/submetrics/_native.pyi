"""Type stubs of the native module."""

from datetime import date, datetime
from typing import Any, Dict, Iterable, List, Mapping, Optional, Protocol, Sequence, Union, overload

from typing_extensions import disjoint_base

__all__ = ["Ledger", "finish_partial", "merge_partials", "records_json", "report_names", "report_table", "value_json"]

_Record = Dict[str, Any]
# Any mapping is one record; any sequence of mappings is several (the
# runtime accepts dicts, lists, tuples and collections.abc types alike).
_Records = Union[Mapping[str, Any], Sequence[Mapping[str, Any]]]
_Instant = Union[datetime, date, str, None]

class _ArrowData(Protocol):
    """Arrow data through the Arrow PyCapsule interface: a pyarrow Table or
    RecordBatch, a pandas or polars DataFrame."""

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...

# What a write of Arrow data answers: a pyarrow Table of the per-record
# results (columns id, import_status, import_error).
_ArrowResults = Any

@disjoint_base
class Ledger:
    """A ledger of customers, plans, plan groups, invoices and data sources,
    with the movements, reports and customer views derived from them.

    Amounts are integer cents. _Records go in as dicts (or any mapping), one
    or a sequence at a time; reads take an ``as_of`` (datetime, date, ISO
    text; default now). A ledger may be shared by threads: reads run at the
    same time, writes one at a time, and both release the GIL.
    """

    def __new__(
        cls,
        *,
        base_currency: Optional[str] = None,
        timezone: Optional[str] = None,
        first_day_of_week: Optional[int] = None,
        churn_grace_days: Optional[int] = None,
        refund_handling: Optional[str] = None,
        fx_pivot: Optional[str] = None,
    ) -> "Ledger":
        """A new, empty ledger with its settings, as keywords read as
        ``update_settings`` reads them (defaults: USD, UTC, weeks from
        Monday, 7 days of churn grace, refunds reduce MRR); raises
        InvalidSettingError naming a setting it does not know or cannot
        use."""
    @property
    def settings(self) -> Dict[str, Any]:
        """The ledger settings as a dict."""
    def update_settings(self, **changes: Any) -> Dict[str, Any]:
        """Changes settings (any of the constructor's keywords); every
        customer is recomputed. Returns the new settings."""
    def import_stripe(
        self,
        objects: _Records,
        *,
        uncollectible: Optional[str] = None,
        data_source: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Imports Stripe API objects (customers, prices, subscriptions,
        invoices, credit notes, refunds, charges; list responses and events
        too) and returns ``customers``, ``plans``, ``invoices`` (counts
        stored), ``removed``, ``skipped`` and ``rejected`` (each with
        ``object``, ``id``, ``field``, ``reason``)."""
    def load_fx_rates(self, rows: Union[_Records, _ArrowData]) -> int:
        """Loads FX rate rows ``{date, currency, rate}`` (dicts or Arrow
        data); returns how many. Either every row is loaded or none is."""
    @overload
    def upsert_customers(self, records: _Records) -> List[_Record]:
        """Upserts one customer or several; returns one result dict per
        record (``id``, ``import_status``, ``import_error``). Arrow data (a table, record batch or DataFrame, one
        record per row) answers a pyarrow Table of the results, a chunk per input batch (``import_status``
        dictionary-encoded)."""
    @overload
    def upsert_customers(self, records: _ArrowData) -> _ArrowResults: ...
    @overload
    def upsert_plans(self, records: _Records) -> List[_Record]:
        """Upserts one plan or several; returns one result dict per record. Arrow data (a table, record batch or DataFrame, one
        record per row) answers a pyarrow Table of the results."""
    @overload
    def upsert_plans(self, records: _ArrowData) -> _ArrowResults: ...
    @overload
    def upsert_plan_groups(self, records: _Records) -> List[_Record]:
        """Upserts one plan group or several (an id is assigned when absent). Arrow data (a table, record batch or DataFrame, one
        record per row) answers a pyarrow Table of the results."""
    @overload
    def upsert_plan_groups(self, records: _ArrowData) -> _ArrowResults: ...
    @overload
    def upsert_invoices(self, records: _Records) -> List[_Record]:
        """Upserts one invoice or several; returns one result dict per record. Arrow data (a table, record batch or DataFrame, one
        record per row) answers a pyarrow Table of the results."""
    @overload
    def upsert_invoices(self, records: _ArrowData) -> _ArrowResults: ...
    @overload
    def upsert_data_sources(self, records: _Records) -> List[_Record]:
        """Upserts one data source or several. Arrow data (a table, record batch or DataFrame, one
        record per row) answers a pyarrow Table of the results."""
    @overload
    def upsert_data_sources(self, records: _ArrowData) -> _ArrowResults: ...
    def get_customer(self, id: str) -> _Record:
        """A customer record; raises NotFoundError."""
    def get_plan(self, id: str) -> _Record:
        """A plan record; raises NotFoundError."""
    def get_plan_group(self, id: str) -> _Record:
        """A plan group record; raises NotFoundError."""
    def get_invoice(self, id: str) -> _Record:
        """An invoice record; raises NotFoundError."""
    def get_data_source(self, id: str) -> _Record:
        """A data source record; raises NotFoundError."""
    def list_customers(self, limit: Optional[int] = None, offset: Optional[int] = None) -> Dict[str, Any]:
        """``{count, list}`` of customers in insertion order; ``limit``
        defaults to the core's page size (100)."""
    def list_plans(self, limit: Optional[int] = None, offset: Optional[int] = None, source: Optional[str] = None) -> Dict[str, Any]:
        """``{count, list}`` of plans, of one data source when ``source`` is
        given (an empty ``source`` is an ``InvalidQueryError``)."""
    def list_plan_groups(self, limit: Optional[int] = None, offset: Optional[int] = None) -> Dict[str, Any]:
        """``{count, list}`` of plan groups."""
    def list_invoices(self, limit: Optional[int] = None, offset: Optional[int] = None, customer: Optional[str] = None) -> Dict[str, Any]:
        """``{count, list}`` of invoices, of one customer when ``customer``
        is given (``NotFoundError`` when there is no such customer, an
        ``InvalidQueryError`` when ``customer`` is empty)."""
    def list_data_sources(self, limit: Optional[int] = None, offset: Optional[int] = None) -> Dict[str, Any]:
        """``{count, list}`` of data sources."""
    def delete_customer(self, id: str) -> None:
        """Deletes a customer and its invoices; raises NotFoundError."""
    def delete_plan(self, id: str) -> None:
        """Deletes a plan; raises ConflictError while invoices use it."""
    def delete_plan_group(self, id: str) -> None:
        """Deletes a plan group (its plans stay)."""
    def delete_invoice(self, id: str) -> None:
        """Deletes an invoice."""
    def delete_data_source(self, id: str) -> None:
        """Deletes a data source."""
    def update_customer(self, id: str, patch: Mapping[str, Any]) -> _Record:
        """Changes the given fields of a customer (custom_variables merge)."""
    def update_plan(self, id: str, patch: Mapping[str, Any]) -> _Record:
        """Changes the given fields of a plan; its customers are recomputed."""
    def update_data_source(self, id: str, patch: Mapping[str, Any]) -> _Record:
        """Changes the name and/or type of a data source (each a non-empty string)."""
    def update_plan_group(self, id: str, name: str, plans: Sequence[str]) -> _Record:
        """Replaces a plan group's name and plans; returns the group."""
    def replace_invoice(self, id: str, record: Mapping[str, Any]) -> None:
        """Replaces (or creates) the invoice ``id`` with ``record``, whose id, when given, is ``id``."""
    def movements(
        self,
        as_of: _Instant = None,
        customer: Optional[str] = None,
        start: _Instant = None,
        end: _Instant = None,
        kinds: Optional[Sequence[str]] = None,
    ) -> List[_Record]:
        """Movements at ``as_of`` (default now), oldest first; filters:
        customer, start and end day (inclusive; a datetime means its day in
        the ledger's time zone), kinds (new, expansion, contraction, churn,
        reactivation)."""
    def movements_arrow(
        self,
        as_of: _Instant = None,
        customer: Optional[str] = None,
        start: _Instant = None,
        end: _Instant = None,
        kinds: Optional[Sequence[str]] = None,
    ) -> Any:
        """:meth:`movements` as a ``pyarrow.Table``, one row per movement in
        chunks of up to 65,536 rows; amounts and counts are ``int64``
        columns."""
    def report_arrow(
        self, name: str, as_of: _Instant = None, params: Optional[Mapping[str, Any]] = None, **kwargs: Any
    ) -> Any:
        """:meth:`report` as a ``pyarrow.Table``: a table report one row per
        metric (``metric``, then a column per period), a series or list
        report one row per entry, any other one row. Integers stay
        ``int64``."""
    def report(
        self, name: str, as_of: _Instant = None, params: Optional[Mapping[str, Any]] = None, **kwargs: Any
    ) -> Any:
        """Runs a report by its interface name with its HTTP query parameters
        (a mapping and/or keywords; ``selected_date`` means
        ``selected-date``; a datetime value means its day in the ledger's
        time zone); raises UnknownReportError, and InvalidQueryError for an
        unusable value or a parameter the report does not take (naming it,
        with a "did you mean" for a near miss)."""
    def report_partial(
        self, name: str, as_of: _Instant = None, params: Optional[Mapping[str, Any]] = None, **kwargs: Any
    ) -> bytes:
        """:meth:`report` over this ledger's customers as a partial (bytes),
        to merge with partials of the same request over disjoint customers
        (:func:`merge_partials`) and finish (:func:`finish_partial`). Raises
        what :meth:`report` raises, and InvalidPartialError for a report
        that cannot be computed in parts."""
    def customers(
        self, as_of: _Instant = None, params: Optional[Mapping[str, Any]] = None, **kwargs: Any
    ) -> Dict[str, Any]:
        """The analytics customer list (the parameters of GET /customers)."""
    def customer(
        self, id: str, as_of: _Instant = None, params: Optional[Mapping[str, Any]] = None, **kwargs: Any
    ) -> Dict[str, Any]:
        """The analytics detail of one customer; raises NotFoundError."""

def report_names() -> List[str]:
    """The names of every report."""
def merge_partials(partials: Iterable[bytes]) -> bytes:
    """The partials (of one report, parameters, ``as_of`` and settings, over
    disjoint customers) merged into one; raises InvalidPartialError for
    bytes that are not a partial, partials of different requests, or none."""
def finish_partial(partial: bytes) -> Dict[str, Any]:
    """The report of a merged partial: the dict :meth:`Ledger.report`
    answers over every customer the partials cover."""
def report_table(result: Dict[str, Any], name: Optional[str] = None) -> Any:
    """A report's answer (a dict, from ``Ledger.report`` or the service) as a
    ``pyarrow.Table``; with the report's ``name``, typed by its schema as
    ``Ledger.report_arrow`` answers it, else by the values."""
def records_json(records: Any) -> bytes:
    """Records (one mapping or a sequence of them) as the JSON text of an
    array, read as ``Ledger.upsert_*`` read them; raises the same
    ``TypeError`` naming the record and field. The service client's bodies."""
def value_json(obj: Any, what: str) -> bytes:
    """A patch or a replacing record as JSON text, read as the ledger reads
    it; a ``TypeError`` names ``what`` and the field."""
