"""The client of a deployed submetrics service: :class:`Client` (blocking,
standard library only; :class:`~submetrics.AsyncClient` is its asyncio
face, in ``async_client``).

It has the method names and return shapes of :class:`submetrics.Ledger`
wherever the two overlap, and reads records and patches as the ledger does
(by the same native reader: dates, numpy scalars and Decimals alike, and
the same ``TypeError`` naming the record and field for a value no record
can hold), so a notebook moves from an embedded ledger to a service by
changing the line that makes it::

    ledger = submetrics.Ledger(base_currency="USD")
    ledger = submetrics.Client("https://analytics.example.com", api_key="sm_...")

plus the calls only a service has (account, keys, data-source imports,
settings). Every operation is looked up by its id in the table generated
from the service's OpenAPI description (``_api.OPERATIONS``). Errors are the
same :class:`~submetrics.SubmetricsError` subclasses the ledger raises, with
the service's ``code``, ``record_id`` and ``field``, plus ``status`` (the
HTTP status). Requests that answer 429 or 503 are retried, waiting what
``Retry-After`` asks (at most ``max_retry_wait`` seconds) or else a growing
pause.
"""

from __future__ import annotations

import datetime as _dt
import email.utils
import gzip
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from . import _api, _native, _params
from ._paging import Paging
from ._query_text import _page_bound, _query_at, _text
from ._tables import _Records, _arrow_streams, _arrow_table, _is_table, _records
from ._api import (
    Account,
    AnalyticsCustomerDetail,
    ApiKey,
    Billing,
    CrmSettings,
    CustomerDetail,
    DataSource,
    ImportResult,
    Invoice,
    Movement,
    NewApiKey,
    NotificationSettings,
    PaymentPlatformSettings,
    Plan,
    PlanGroup,
    Profile,
    TeamMember,
)
from .errors import InvalidArgumentError, SubmetricsError, _from_service

__all__ = ["Client", "DEFAULT_URL"]

#: The address used when none is given, as the command-line client does.
DEFAULT_URL = "http://localhost:8080"
#: The config file in the home directory the command-line client reads too.
CONFIG_FILE = ".submetrics.json"
#: Status codes answered again after a pause.
RETRY_STATUSES = (429, 503)
#: The media type of an Arrow IPC stream, as the service answers reports.
ARROW_STREAM = "application/vnd.apache.arrow.stream"
#: Rows per request when the client sends a table (``upsert_*``,
#: ``import_records``): within the service's 100,000 records and 64 MiB a
#: request for rows of up to 1 KiB.
ROWS_PER_ARROW_REQUEST = 50_000
#: The settings of a ledger, as ``Ledger.settings`` lists them.
SETTINGS = ("base_currency", "timezone", "first_day_of_week", "churn_grace_days", "refund_handling")

_Instant = Union[_dt.datetime, _dt.date, str, None]


def _config() -> Dict[str, Any]:
    """The fields of ``~/.submetrics.json``: an object of ``api_key`` and
    ``api_url``, both text (absent: empty). Anything else is an error naming
    the file and the field, as the command-line client's: a misspelt
    ``url`` would leave the client on the default address."""
    home = os.environ.get("HOME")
    if not home:
        return {}
    path = Path(home) / CONFIG_FILE
    try:
        text = path.read_text()
    except OSError:
        return {}
    try:
        fields = json.loads(text)
    except ValueError as error:
        raise SubmetricsError(f"{path} is not valid JSON: {error}") from error
    if not isinstance(fields, dict):
        raise SubmetricsError(f"{path}: must be a JSON object of api_key and api_url")
    for name, value in fields.items():
        if name not in ("api_key", "api_url"):
            raise SubmetricsError(f"{path}: unknown field `{name}`; the fields are api_key and api_url")
        if not isinstance(value, str):
            raise SubmetricsError(f"{path}: field `{name}` must be text, not {json.dumps(value)}")
    return fields


def _resolve_key(api_key: Optional[str]) -> Optional[str]:
    """The key: given, else ``SUBMETRICS_API_KEY``, else ``api_key`` in the config file."""
    if api_key:
        return api_key
    from_env = os.environ.get("SUBMETRICS_API_KEY", "").strip()
    if from_env:
        return from_env
    key = _config().get("api_key")
    return key if isinstance(key, str) and key else None


def _resolve_url(base_url: Optional[str]) -> str:
    """The address: given, else ``SUBMETRICS_API_URL``, else ``api_url`` in the config file, else :data:`DEFAULT_URL`."""
    if base_url:
        return base_url
    from_env = os.environ.get("SUBMETRICS_API_URL", "").strip()
    if from_env:
        return from_env
    url = _config().get("api_url")
    return url if isinstance(url, str) and url else DEFAULT_URL


def _decoded(body: bytes, headers: Any) -> bytes:
    """An answer's body as sent before compression (the client asks for
    gzip: a large report travels several times smaller)."""
    if (headers.get("Content-Encoding") or "").strip().lower() == "gzip":
        return gzip.decompress(body)
    return body


def _retry_after(header: Optional[str]) -> Optional[float]:
    """Seconds a ``Retry-After`` header asks for (delta seconds or an HTTP date)."""
    if not header:
        return None
    header = header.strip()
    try:
        return max(0.0, float(header))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return max(0.0, (when - _dt.datetime.now(_dt.timezone.utc)).total_seconds())


def _seconds(name: str, value: Any, *, positive: bool) -> float:
    """A client option that is a number of seconds: above 0 when
    ``positive``, else from 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise InvalidArgumentError(f"{name}: must be a number of seconds, got {value!r}", None, name)
    if value < 0 or (positive and value == 0):
        bound = "above 0" if positive else "from 0"
        raise InvalidArgumentError(f"{name}: must be {bound}, got {value!r}", None, name)
    return value


def _whole(name: str, value: Any) -> int:
    """A client option that is a whole number from 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidArgumentError(f"{name}: must be a whole number from 0, got {value!r}", None, name)
    return value


def _path(operation: str, path_params: Optional[Mapping[str, Any]]) -> str:
    """The path of ``operation`` with its parameters filled in (each
    escaped); an unknown operation, a parameter its path lacks or one of its
    path's parameters not given is an :class:`InvalidArgumentError`."""
    if operation not in _api.OPERATIONS:
        raise InvalidArgumentError(
            f"no operation {operation}: an operation is an operationId of the API description", None, "operation"
        )
    template = _api.OPERATIONS[operation][1]
    wanted = re.findall(r"\{([^}]+)\}", template)
    given = dict(path_params or {})
    for name in given:
        if name not in wanted:
            has = f"its path parameters are {', '.join(wanted)}" if wanted else "it has no path parameters"
            raise InvalidArgumentError(
                f"{operation} has no path parameter `{name}` ({template}); {has}", None, name
            )
    path = template
    for name in wanted:
        if given.get(name) is None:
            raise InvalidArgumentError(f"{operation} needs the path parameter `{name}` ({template})", None, name)
        path = path.replace("{" + name + "}", urllib.parse.quote(str(given[name]), safe=""))
    return path


class Client(Paging):
    """A deployed submetrics service, with the methods of :class:`submetrics.Ledger`.

    ``base_url`` defaults to ``SUBMETRICS_API_URL``, then ``api_url`` in
    ``~/.submetrics.json``, then ``http://localhost:8080``; ``api_key`` to
    ``SUBMETRICS_API_KEY``, then ``api_key`` in that file. ``timeout`` is
    per request in seconds; ``max_retries`` how often a 429 or 503 is
    retried. A client holds no connection between calls and may be shared
    by threads.

    A parameter given as ``None`` means its default, as in the ledger, and
    is left out of the request, but a name the call does not take (a
    report's own: as ``GET /reports`` lists them, read once per client when
    first needed) is sent with a placeholder value, so the service refuses
    it as it refuses any unknown name.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        max_retry_wait: float = 30.0,
    ) -> None:
        self.base_url = _resolve_url(base_url).rstrip("/")
        self.api_key = _resolve_key(api_key)
        self.timeout = _seconds("timeout", timeout, positive=True)
        self.max_retries = _whole("max_retries", max_retries)
        self.max_retry_wait = _seconds("max_retry_wait", max_retry_wait, positive=False)
        self._report_params: Optional[Dict[str, List[str]]] = None

    def __repr__(self) -> str:
        return f"Client({self.base_url!r})"

    # ------------------------------------------------------------ transport

    def call(
        self,
        operation: str,
        path_params: Optional[Mapping[str, str]] = None,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
    ) -> Any:
        """Runs one operation of the description by its ``operationId``
        (``"listPlans"``, ``"getReport"``, ...) and returns the decoded JSON
        answer, or the text of an operation that answers another type (the
        HTML of ``"getApiReference"``); raises a :class:`SubmetricsError`
        subclass for an error answer. A ``None`` in ``query`` is left out,
        once its name is found to be one the operation takes."""
        media = _api.ANSWER_TYPES.get(operation)
        text = self._send(operation, path_params, query, body, media or "application/json")
        if media is not None:
            return text.decode()
        return json.loads(text) if text else None

    def _send(
        self,
        operation: str,
        path_params: Optional[Mapping[str, str]],
        query: Optional[Mapping[str, Any]],
        body: Any,
        accept: str,
        content_type: str = "application/json",
    ) -> bytes:
        """Runs one operation asking for ``accept`` and returns the answer's
        bytes (decompressed), retrying as the class documentation says;
        raises a :class:`SubmetricsError` subclass for an error answer.
        ``body`` is sent as JSON, or as it is under ``content_type`` when it
        is bytes."""
        url = self.base_url + _path(operation, path_params)
        method = _api.OPERATIONS[operation][0]
        query = query or {}
        unset = any(value is None for value in query.values())
        refused = _params.refused(operation, path_params or {}, query, self._reports) if unset else []
        pairs = {k: _params.UNSET if v is None else _text(k, v) for k, v in query.items() if v is not None or k in refused}
        if pairs:
            url += "?" + urllib.parse.urlencode(pairs)
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        headers = {"Accept": accept, "Accept-Encoding": "gzip", "User-Agent": "submetrics-python"}
        if data is not None:
            headers["Content-Type"] = content_type
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        attempt = 0
        while True:
            request = urllib.request.Request(url, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return _decoded(response.read(), response.headers)
            except urllib.error.HTTPError as error:
                text = _decoded(error.read(), error.headers)
                if error.code in RETRY_STATUSES and attempt < self.max_retries:
                    wait = _retry_after(error.headers.get("Retry-After"))
                    time.sleep(min(self.max_retry_wait, wait if wait is not None else 0.5 * 2**attempt))
                    attempt += 1
                    continue
                raise _from_service(error.code, text) from None
            except urllib.error.URLError as error:
                raise SubmetricsError(f"the service at {self.base_url} could not be reached: {error.reason}", code="unreachable") from None
            except TimeoutError:
                raise SubmetricsError(f"the service at {self.base_url} did not answer within {self.timeout} s", code="timeout") from None

    def _reports(self) -> Dict[str, List[str]]:
        """Each report's parameter names, from the service's catalogue
        (``GET /reports``), read once per client."""
        if self._report_params is None:
            catalogue = self.call("listReports")["reports"]
            self._report_params = {r["name"]: [p["name"] for p in r["parameters"]] for r in catalogue}
        return self._report_params

    # ------------------------------------------------------------ records

    def upsert_customers(self, records: Union[_Records, Any]) -> Any:
        """Upserts one customer or several; one result per record (``id``,
        ``import_status``, ``import_error``), as the ledger returns. A table
        is sent as Arrow streams and answers a pyarrow Table of the results
        (see :meth:`_upsert`)."""
        return self._upsert("upsertCustomers", records, lambda answer: answer["result"]["list"])

    def upsert_plans(self, records: Union[_Records, Any]) -> Any:
        """Upserts one plan or several; one result per record (a table of
        them for a table, as :meth:`upsert_customers`)."""
        return self._upsert("upsertPlans", records, lambda answer: answer["result"])

    def upsert_invoices(self, records: Union[_Records, Any]) -> Any:
        """Upserts one invoice or several; one result per record (a table of
        them for a table, as :meth:`upsert_customers`)."""
        return self._upsert("upsertInvoices", records, lambda answer: answer["result"])

    def _upsert(self, operation: str, records: Any, results_of: Callable[[Any], List[ImportResult]]) -> Any:
        """Runs an upsert operation on dicts, answering their results; or on
        a table (a pyarrow Table or RecordBatch, a pandas or polars
        DataFrame, read as ``Ledger.upsert_*`` reads them), sent as Arrow IPC
        streams of at most :data:`ROWS_PER_ARROW_REQUEST` rows, each request
        its own write (when one fails, the rows before it are stored),
        answering a pyarrow Table of the results as the ledger does
        (``import_status`` dictionary-encoded). Tables need pyarrow."""
        if not _is_table(records):
            return results_of(self.call(operation, body=_native.records_json(_records(records))))
        return self._send_table(operation, None, records)

    def _send_table(self, operation: str, path: Optional[Mapping[str, str]], table: Any) -> Any:
        """Sends a table to ``operation`` a stream at a time, asking for the
        results as Arrow (``format=arrow``); the pyarrow Table of the
        results of every request, in order."""
        import pyarrow

        answers = [
            pyarrow.ipc.open_stream(self._send(operation, path, {"format": "arrow"}, stream, ARROW_STREAM, content_type=ARROW_STREAM)).read_all()
            for stream in _arrow_streams(_arrow_table(table), ROWS_PER_ARROW_REQUEST)
        ]
        return pyarrow.concat_tables(answers)

    def upsert_data_sources(self, records: _Records) -> List[ImportResult]:
        """Upserts one data source or several; one result per record."""
        return self.call("upsertDataSources", body=_native.records_json(_records(records)))["result"]

    def upsert_plan_groups(self, records: _Records) -> List[ImportResult]:
        """Creates one plan group or several, one request each; the service
        assigns each its id (``pg_1``, ...), which the result carries. A
        group the service refuses is a result with ``import_status`` error."""
        results: List[ImportResult] = []
        for record in json.loads(_native.records_json(_records(records))):
            try:
                answer = self.call("createPlanGroup", body=record)
            except SubmetricsError as error:
                if error.status != 400:
                    raise
                results.append({"id": str(record.get("id") or ""), "import_status": "error", "import_error": str(error)})
                continue
            results.append({"id": answer["id"], "import_status": "inserted"})
        return results

    def get_customer(self, id: str) -> CustomerDetail:
        """A customer record with its ``current_mrr``; raises NotFoundError."""
        return self.call("getCustomer", {"id": id})

    def get_plan(self, id: str) -> Plan:
        """A plan record; raises NotFoundError."""
        return self.call("getPlan", {"id": id})

    def get_plan_group(self, id: str) -> PlanGroup:
        """A plan group with its plans; raises NotFoundError."""
        return self.call("getPlanGroup", {"id": id})

    def get_invoice(self, id: str) -> Invoice:
        """An invoice record; raises NotFoundError."""
        return self.call("getInvoice", {"id": id})

    def get_data_source(self, id: str) -> DataSource:
        """A data source record; raises NotFoundError."""
        return self.call("getDataSource", {"id": id})

    def _list(self, operation: str, limit: Optional[int], offset: Optional[int], **query: Any) -> Dict[str, Any]:
        bounds = {"limit": _page_bound("limit", limit), "offset": _page_bound("offset", offset) or None}
        # A list's filter is an id, as the ledger's ``list_*`` take it.
        for name, value in query.items():
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name}: must be a str, got {type(value).__name__}")
        return self.call(operation, query={**bounds, **query})["result"]

    def list_customers(self, limit: Optional[int] = None, offset: int = 0) -> Dict[str, Any]:
        """``{count, list}`` of customers; ``limit`` defaults to the service's page size (100)."""
        return self._list("listCustomers", limit, offset)

    def list_plans(self, limit: Optional[int] = None, offset: int = 0, source: Optional[str] = None) -> Dict[str, Any]:
        """``{count, list}`` of plans, optionally of one data source."""
        return self._list("listPlans", limit, offset, source=source)

    def list_plan_groups(self, limit: Optional[int] = None, offset: int = 0) -> Dict[str, Any]:
        """``{count, list}`` of plan groups."""
        return self._list("listPlanGroups", limit, offset)

    def list_invoices(self, limit: Optional[int] = None, offset: int = 0, customer: Optional[str] = None) -> Dict[str, Any]:
        """``{count, list}`` of invoices, optionally of one customer."""
        return self._list("listInvoices", limit, offset, customer=customer)

    def list_data_sources(self, limit: Optional[int] = None, offset: int = 0) -> Dict[str, Any]:
        """``{count, list}`` of data sources."""
        return self._list("listDataSources", limit, offset)

    def list_fx_rates(self, limit: Optional[int] = None, offset: int = 0) -> Dict[str, Any]:
        """``{count, list}`` of FX rate rows ``{date, currency, rate}``."""
        return self._list("listFxRates", limit, offset)

    def delete_customer(self, id: str) -> None:
        """Deletes a customer and its invoices; raises NotFoundError."""
        self.call("deleteCustomer", {"id": id})

    def delete_plan(self, id: str) -> None:
        """Deletes a plan; raises ConflictError while invoices use it."""
        self.call("deletePlan", {"id": id})

    def delete_plan_group(self, id: str) -> None:
        """Deletes a plan group (its plans stay)."""
        self.call("deletePlanGroup", {"id": id})

    def delete_invoice(self, id: str) -> None:
        """Deletes an invoice."""
        self.call("deleteInvoice", {"id": id})

    def delete_data_source(self, id: str) -> None:
        """Deletes a data source."""
        self.call("deleteDataSource", {"id": id})

    def update_customer(self, id: str, patch: Mapping[str, Any]) -> CustomerDetail:
        """Changes the given fields of a customer (custom_variables merge); returns the record."""
        return self.call("updateCustomer", {"id": id}, body=_native.value_json(patch, f"the patch of customer {id}"))["result"]

    def update_plan(self, id: str, patch: Mapping[str, Any]) -> Plan:
        """Changes the given fields of a plan; returns the record as read
        back after the change (a second request)."""
        self.call("updatePlan", {"id": id}, body=_native.value_json(patch, f"the patch of plan {id}"))
        return self.get_plan(id)

    def replace_invoice(self, id: str, record: Mapping[str, Any]) -> None:
        """Replaces the invoice ``id`` with ``record``."""
        self.call("replaceInvoice", {"id": id}, body=_native.value_json(record, f"invoice {id}"))

    def update_plan_group(self, id: str, name: str, plans: Sequence[str]) -> PlanGroup:
        """Replaces a plan group's name and plans; returns the group as read
        back after the change (a second request)."""
        name_json = _native.value_json(name, f"the name of plan group {id}")
        plans_json = _native.value_json(plans, f"the plans of plan group {id}")
        self.call("updatePlanGroup", {"id": id}, body=b'{"name":' + name_json + b',"plans":' + plans_json + b"}")
        return self.get_plan_group(id)

    def update_data_source(self, id: str, patch: Mapping[str, Any]) -> DataSource:
        """Changes a data source's name and/or type; returns it."""
        return self.call("updateDataSource", {"id": id}, body=_native.value_json(patch, f"the patch of data source {id}"))

    def import_records(self, source: str, collection: str, records: Union[_Records, Any]) -> Any:
        """Imports customers, plans, plan_groups or invoices into the data
        source ``source``, tagging each record with it; one result per
        record. A table is sent as Arrow streams and answers a pyarrow
        Table of the results, as :meth:`upsert_customers` says."""
        path = {"source": source, "collection": collection}
        if not _is_table(records):
            return self.call("importRecords", path, body=_native.records_json(_records(records)))["result"]
        return self._send_table("importRecords", path, records)

    def load_fx_rates(self, rows: _Records) -> int:
        """Loads FX rate rows ``{date, currency, rate}``; returns how many."""
        return self.call("loadFxRates", body=_native.records_json(_records(rows)))["loaded"]

    # ------------------------------------------------------------ settings

    @property
    def settings(self) -> Dict[str, Any]:
        """The ledger settings of the account, as ``Ledger.settings`` lists
        them but for ``fx_pivot``, which the service keeps to itself."""
        account = self.account()
        return {name: account[name] for name in SETTINGS}  # type: ignore[literal-required]

    def update_settings(self, **changes: Any) -> Dict[str, Any]:
        """Changes settings (``base_currency``, ``timezone``,
        ``first_day_of_week``, ``churn_grace_days``, ``refund_handling``);
        every customer is recomputed. Returns the new settings."""
        account = self.update_account(**changes)
        return {name: account[name] for name in SETTINGS}  # type: ignore[literal-required]

    # ------------------------------------------------------------ analytics

    def movements(
        self,
        as_of: _Instant = None,
        customer: Optional[str] = None,
        start: _Instant = None,
        end: _Instant = None,
        kinds: Optional[Sequence[str]] = None,
    ) -> List[Movement]:
        """Movements at ``as_of`` (default now), oldest first, filtered as ``Ledger.movements``."""
        query = {"as_of": as_of, "customer": customer, "start": start, "end": end, "kinds": kinds}
        return self.call("listMovements", query=query)["result"]

    def movements_arrow(
        self,
        as_of: _Instant = None,
        customer: Optional[str] = None,
        start: _Instant = None,
        end: _Instant = None,
        kinds: Optional[Sequence[str]] = None,
    ) -> Any:
        """:meth:`movements` as the pyarrow Table ``Ledger.movements_arrow``
        answers: the service sends the movement columns as an Arrow IPC
        stream (``format=arrow``). Needs pyarrow (``pip install
        submetrics[arrow]``)."""
        import pyarrow

        query = {"as_of": as_of, "customer": customer, "start": start, "end": end, "kinds": kinds, "format": "arrow"}
        stream = self._send("listMovements", None, query, None, ARROW_STREAM)
        return pyarrow.ipc.open_stream(stream).read_all()

    def report(self, name: str, as_of: _Instant = None, params: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> Any:
        """Runs a report by name with its query parameters (a mapping and/or
        keywords; ``selected_date`` means ``selected-date``; ``None`` means
        the default of a name the report takes); raises UnknownReportError,
        InvalidQueryError."""
        query = _query_at(params, kwargs, as_of)
        return self.call("getReport", {"name": name}, query=query)

    def customers(self, as_of: _Instant = None, params: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> Dict[str, Any]:
        """The analytics customer list (``{result: {count, list}}``); its
        parameters as :meth:`report` reads them."""
        query = _query_at(params, kwargs, as_of)
        return self.call("listAnalyticsCustomers", query=query)

    def customer(self, id: str, as_of: _Instant = None, params: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> AnalyticsCustomerDetail:
        """The analytics detail of one customer (parameters as :meth:`report`
        reads them); raises NotFoundError."""
        query = _query_at(params, kwargs, as_of)
        return self.call("getAnalyticsCustomer", {"id": id}, query=query)

    def resync_customer(self, id: str) -> str:
        """Recomputes one customer from its invoices; returns the service's message."""
        return self.call("resyncCustomer", {"id": id})["message"]

    def movements_df(self, as_of: _Instant = None, **filters: Any) -> Any:
        """The rows of :meth:`movements` as a pandas DataFrame, shaped as
        ``Ledger.movements_df``, from :meth:`movements_arrow`."""
        from . import _frame, _pandas

        _pandas()
        return _frame(self.movements_arrow(as_of, **filters))

    def report_arrow(self, name: str, as_of: _Instant = None, params: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> Any:
        """A report as a pyarrow Table, as ``Ledger.report_arrow`` answers it:
        the service sends the report's record batch as an Arrow IPC stream
        (``format=arrow``), columns typed by the report's schema. Needs
        pyarrow (``pip install submetrics[arrow]``)."""
        import pyarrow

        query = _query_at(params, kwargs, as_of, format="arrow")
        stream = self._send("getReport", {"name": name}, query, None, ARROW_STREAM)
        return pyarrow.ipc.open_stream(stream).read_all()

    def report_df(self, name: str, as_of: _Instant = None, params: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> Any:
        """A report as a pandas DataFrame, shaped as ``Ledger.report_df``,
        from :meth:`report_arrow`."""
        from . import _pandas, _report_frame

        _pandas()
        return _report_frame(self.report_arrow(name, as_of, params, **kwargs))

    # ------------------------------------------------------------ service only

    def health(self) -> Dict[str, Any]:
        """``{status: "ok"}`` when the service is up (no key needed)."""
        return self.call("getHealth")

    def account(self) -> Account:
        """The account: name, settings and data sources (admin key)."""
        return self.call("getAccount")

    def update_account(self, **changes: Any) -> Account:
        """Changes the account name and/or settings; returns the account."""
        return self.call("updateAccount", body=changes)

    def profile(self) -> Profile:
        """The caller's profile."""
        return self.call("getProfile")

    def update_profile(self, **changes: Any) -> Profile:
        """Changes first_name, last_name and/or locale."""
        return self.call("updateProfile", body=changes)

    def billing(self) -> Billing:
        """Plan, limits and usage."""
        return self.call("getBilling")

    def team(self) -> List[TeamMember]:
        """The account's members (one per key)."""
        return self.call("listTeamMembers")["result"]["list"]

    def api_keys(self) -> List[ApiKey]:
        """The account's API keys (never the keys themselves)."""
        return self.call("listApiKeys")["result"]["list"]

    def create_api_key(self, name: Optional[str] = None, role: Optional[str] = None) -> NewApiKey:
        """Creates a key (role readonly unless given); its ``key`` is shown only here."""
        body = {k: v for k, v in (("name", name), ("role", role)) if v is not None}
        return self.call("createApiKey", body=body)

    def revoke_api_key(self, id: str) -> None:
        """Revokes a key by its id (``key_...``)."""
        self.call("revokeApiKey", {"id": id})

    def notification_settings(self) -> NotificationSettings:
        """The notification settings."""
        return self.call("getNotificationSettings")

    def update_notification_settings(self, patch: Mapping[str, Any]) -> NotificationSettings:
        """Changes parts of the notification settings (sections merge)."""
        return self.call("updateNotificationSettings", body=dict(patch))

    def payment_platform_settings(self) -> PaymentPlatformSettings:
        """The payment-platform connection (read only)."""
        return self.call("getPaymentPlatformSettings")

    def crm_settings(self) -> CrmSettings:
        """The CRM connection (read only)."""
        return self.call("getCrmSettings")
