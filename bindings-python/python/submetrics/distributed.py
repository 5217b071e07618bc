"""Reports and movements of a history too large for one machine, computed
by Spark or Dask over data frames partitioned by customer.

Customers are independent: every customer's invoices and its customer
record go to one partition (rows are bucketed by their customer id), while
the plans, plan groups, FX rates and ledger settings go to every partition.
Each partition builds a :class:`submetrics.Ledger` of its customers and
computes a report partial (:meth:`Ledger.report_partial`) or its movements;
the partials merge (:func:`submetrics.merge_partials`) and finish
(:func:`submetrics.finish_partial`) into exactly what :meth:`Ledger.report`
answers on one ledger holding everything.

Frames name their columns as records name their fields (aliases included,
such as ``customer_external_id`` or ``interval``); columns no record field
is named by are left out. Invoices and customers are Spark (or Dask) data
frames; plans, plan groups and FX rates are small: a Spark or Dask frame, a
pandas DataFrame, a pyarrow Table or a list of dicts, read on the driver and
shipped to the workers with the computation. A record the ledger rejects
(an invoice of an unknown customer or plan, an amount of the wrong sign)
raises its :class:`~submetrics.InvalidRecordError` rather than being left
out, as no one would see the per-record results of a distributed run. When
an id appears in several rows, which row wins is not defined (the rows are
shuffled); give each record once.

The number of partitions is the caller's (``partitions=``; default: the
invoice frame's): each holds a ledger of its customers in memory, about 150
bytes per invoice, so a partition should hold at most a few million
invoices.
"""

from __future__ import annotations

import datetime
import typing
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

import submetrics
from submetrics import _api, errors

__all__ = ["spark_report", "spark_reports", "spark_movements", "dask_report", "dask_reports", "dask_movements"]


def _field_names(record: Any, aliases: Sequence[str]) -> FrozenSet[str]:
    return frozenset(record.__annotations__) | frozenset(aliases)


#: The columns each frame may have: the record's fields (as the interface
#: description names them) and the aliases the core reads.
_COLUMNS: Dict[str, FrozenSet[str]] = {
    "invoices": _field_names(
        _api.InvoiceInput,
        ("external_id", "customer_external_id", "customer", "date", "amount_in_cents",
         "service_period_start", "service_period_end", "subscription_external_id", "number",
         "paid_date", "tax", "discount", "line_items", "data_source_id"),
    ),
    "customers": _field_names(_api.CustomerInput, ("external_id", "created", "metadata", "data_source_id")),
    "plans": _field_names(_api.PlanInput, ("external_id", "interval", "interval_count", "data_source_id")),
    "plan_groups": _field_names(_api.PlanGroupInput, ("id",)),
    "fx_rates": _field_names(_api.FxRate, ()),
}

#: The columns a frame must have, each as its accepted names in the order
#: the core reads them (the first present non-null one counts).
_REQUIRED: Dict[str, Tuple[Tuple[str, ...], ...]] = {
    "invoices": (("id", "external_id"), ("customer_id", "customer_external_id", "customer"), ("type",),
                 ("invoice_date", "date"), ("amount", "amount_in_cents"), ("currency",)),
    "customers": (("id", "external_id"), ("name",)),
    "plans": (("id", "external_id"), ("name",), ("currency",), ("billing_freq", "interval")),
    "plan_groups": (("name",),),
    "fx_rates": (("date",), ("currency",), ("rate",)),
}

#: The column that says which customer a row belongs to.
_CUSTOMER_KEY = {
    "invoices": ("customer_id", "customer_external_id", "customer"),
    "customers": ("id", "external_id"),
}


def _movement_schema() -> Any:
    """The columns of :meth:`Ledger.movements_arrow` (which has this one
    schema whatever the rows), every column nullable as Spark and Dask
    declare them."""
    import pyarrow

    types = {str: pyarrow.string(), int: pyarrow.int64(), List[str]: pyarrow.list_(pyarrow.string())}
    return pyarrow.schema([(name, types[kind]) for name, kind in typing.get_type_hints(_api.Movement).items()])


def _kept_columns(frame: str, columns: Sequence[str]) -> List[str]:
    """The columns of ``frame`` the ledger reads, in their order; raises
    :class:`~submetrics.InvalidRecordError` naming the frame and the first
    required column it lacks."""
    for names in _REQUIRED[frame]:
        if not any(name in columns for name in names):
            others = "".join(f", `{n}`" for n in names[1:])
            also = f" (or{others[1:]})" if others else ""
            raise errors.InvalidRecordError(
                f"{frame}: missing column `{names[0]}`{also}", None, names[0]
            )
    return [c for c in columns if c in _COLUMNS[frame]]


def _present(frame: str, columns: Sequence[str]) -> List[str]:
    """The customer-key columns of ``frame`` it has, in reading order."""
    return [c for c in _CUSTOMER_KEY[frame] if c in columns]


def _as_of(as_of: Any) -> Any:
    """``as_of`` fixed once on the driver, so that every worker reads at the
    same instant (``None`` is now)."""
    return datetime.datetime.now(datetime.timezone.utc) if as_of is None else as_of


class _Shared:
    """What every partition gets: the settings, plans, plan groups and FX
    rates, read on the driver (and checked there by building a ledger of
    them), plus the instant and the report or movement query."""

    def __init__(self, settings: Optional[Mapping[str, Any]], plans: Any, plan_groups: Any, fx_rates: Any,
                 as_of: Any, collect: Callable[[Any], Any]) -> None:
        self.settings = dict(settings or {})
        self.plans = _small(plans, "plans", collect)
        self.plan_groups = _small(plan_groups, "plan_groups", collect)
        self.fx_rates = _small(fx_rates, "fx_rates", collect)
        self.as_of = _as_of(as_of)
        self.ledger()

    def ledger(self) -> "submetrics.Ledger":
        """A ledger holding the settings, FX rates, plans and plan groups;
        a rejected plan or plan group raises its error."""
        ledger = submetrics.Ledger(**self.settings)
        if self.fx_rates is not None:
            ledger.load_fx_rates(self.fx_rates)
        if self.plans is not None:
            _check(ledger.upsert_plans(self.plans))
        if self.plan_groups is not None:
            _check(ledger.upsert_plan_groups(self.plan_groups))
        return ledger


def _small(value: Any, frame: str, collect: Callable[[Any], Any]) -> Any:
    """A small frame read on the driver: a Spark or Dask frame is collected
    (``collect``), a pandas DataFrame or pyarrow Table keeps the columns the
    ledger reads, a list of dicts stays as it is."""
    if value is None:
        return None
    value = collect(value)
    columns = getattr(value, "column_names", None)
    if columns is None and hasattr(value, "columns") and hasattr(value, "iloc"):
        columns = [str(c) for c in value.columns]
    if columns is None:
        return value
    kept = _kept_columns(frame, columns)
    return value.select(kept) if hasattr(value, "column_names") else value[kept]


def _check(results: Any) -> None:
    """Raises the first rejection of an upsert's results (a pyarrow Table
    or a list of dicts) as :class:`~submetrics.InvalidRecordError`."""
    if hasattr(results, "filter"):
        import pyarrow.compute

        results = results.filter(pyarrow.compute.equal(results.column("import_status"), "error")).to_pylist()
    rejected = [r for r in results if r.get("import_status") == "error"]
    if rejected:
        first = rejected[0]
        more = f" (and {len(rejected) - 1} more rejected)" if len(rejected) > 1 else ""
        raise errors.InvalidRecordError(f"{first['import_error']}{more}", first["id"])


def _partition_ledger(shared: _Shared, customers: Any, invoices: Any) -> "submetrics.Ledger":
    """The ledger of one partition: the shared records, then its customers,
    then their invoices; a rejected record raises its error."""
    ledger = shared.ledger()
    if customers is not None and len(customers) > 0:
        _check(ledger.upsert_customers(customers))
    if invoices is not None and len(invoices) > 0:
        _check(ledger.upsert_invoices(invoices))
    return ledger


def _movements(ledger: "submetrics.Ledger", as_of: Any, filters: Dict[str, Any]) -> Any:
    """A ledger's movements as a pyarrow Table of the movement columns; a
    ``customer`` filter naming a customer of another partition gives none."""
    schema = _movement_schema()
    try:
        table = ledger.movements_arrow(as_of, **filters)
    except errors.NotFoundError:
        return schema.empty_table()
    if table.num_rows == 0:
        return schema.empty_table()
    return table.select(schema.names).cast(schema)


Query = Tuple[str, Dict[str, Any]]


def _queries(reports: Iterable[Any]) -> List[Query]:
    """The reports asked for, each a name or a ``(name, params)`` pair whose
    params are a mapping (or ``None``); anything else is a ``TypeError``
    naming the item."""
    if isinstance(reports, str):
        raise TypeError("reports: a list of report names or (name, params) pairs, got a string")
    queries: List[Query] = []
    for i, report in enumerate(reports):
        if isinstance(report, str):
            queries.append((report, {}))
            continue
        pair = tuple(report) if isinstance(report, (tuple, list)) else None
        if pair is None or len(pair) != 2 or not isinstance(pair[0], str) \
                or not (pair[1] is None or isinstance(pair[1], Mapping)):
            raise TypeError(f"reports[{i}]: a report name or a (name, params) pair with params a mapping, "
                            f"got {report!r}")
        queries.append((pair[0], dict(pair[1] or {})))
    return queries


def _check_reports(shared: _Shared, queries: List[Query]) -> List[Optional[bytes]]:
    """The partial of no customer for each report, computed on the driver
    before any work is sent out, so that an unknown report or parameter
    raises there. A parameter naming a customer cannot be checked without
    the customers (``None``)."""
    ledger = shared.ledger()
    empty: List[Optional[bytes]] = []
    for name, params in queries:
        try:
            empty.append(ledger.report_partial(name, shared.as_of, params))
        except errors.NotFoundError:
            empty.append(None)
    return empty


def _partials(shared: _Shared, queries: List[Query], customers: Any, invoices: Any) -> List[bytes]:
    """The partials of one partition, one per report."""
    ledger = _partition_ledger(shared, customers, invoices)
    return [ledger.report_partial(name, shared.as_of, params) for name, params in queries]


class _Merger:
    """Merges each report's partials a chunk at a time as they arrive."""

    def __init__(self, empty: List[Optional[bytes]], chunk: int = 64) -> None:
        self.merged = list(empty)
        self.pending: List[List[bytes]] = [[] for _ in empty]
        self.chunk = chunk

    def add(self, query: int, partial: bytes) -> None:
        self.pending[query].append(partial)
        if len(self.pending[query]) >= self.chunk:
            self._flush(query)

    def _flush(self, query: int) -> None:
        if self.pending[query]:
            merged = self.merged[query]
            self.merged[query] = submetrics.merge_partials(([merged] if merged is not None else []) + self.pending[query])
            self.pending[query] = []

    def finish(self) -> List[Dict[str, Any]]:
        results = []
        for query, _ in enumerate(self.merged):
            self._flush(query)
            merged = self.merged[query]
            if merged is None:
                raise errors.NotFoundError("no partition computed the report (the frames are empty)")
            results.append(submetrics.finish_partial(merged))
        return results


# --- Spark -------------------------------------------------------------------


def _spark_collect(value: Any) -> Any:
    """A Spark DataFrame as a pyarrow Table (through ``mapInArrow``, which
    Spark 3.5 and 4 both have, as Arrow IPC bytes); anything else as it is."""
    if not hasattr(value, "mapInArrow"):
        return value
    import pyarrow

    def to_ipc(batches: Iterator[Any]) -> Iterator[Any]:
        read = list(batches)
        if not read:
            return
        sink = pyarrow.BufferOutputStream()
        with pyarrow.ipc.new_stream(sink, read[0].schema) as writer:
            for batch in read:
                writer.write_batch(batch)
        yield pyarrow.RecordBatch.from_pydict({"ipc": [sink.getvalue().to_pybytes()]})

    tables = [
        pyarrow.ipc.open_stream(row["ipc"]).read_all()
        for row in value.mapInArrow(to_ipc, "ipc binary").collect()
    ]
    if not tables:
        return _spark_empty_table(value)
    return pyarrow.concat_tables(tables)


def _spark_empty_table(frame: Any) -> Any:
    """The rows of an empty Spark frame: a pyarrow Table of its columns."""
    import pyarrow

    return pyarrow.table({name: pyarrow.array([], pyarrow.null()) for name in frame.columns})


def _spark_partitions(invoices: Any, partitions: Optional[int]) -> int:
    if partitions is not None:
        if not isinstance(partitions, int) or isinstance(partitions, bool) or partitions < 1:
            raise errors.InvalidQueryError(f"partitions: must be a positive integer, got {partitions!r}",
                                           None, "partitions")
        return partitions
    try:
        return int(invoices.rdd.getNumPartitions())
    except Exception:  # Spark Connect has no RDDs: the session's shuffle width
        return int(invoices.sparkSession.conf.get("spark.sql.shuffle.partitions"))


def _spark_by_customer(invoices: Any, customers: Any, partitions: Optional[int]) -> Any:
    """One frame of both: a row per invoice (column ``invoice``, a struct of
    the invoice columns) and per customer (``customer``), hash-partitioned
    by customer id into ``partitions`` partitions."""
    from pyspark.sql import functions as F

    count = _spark_partitions(invoices, partitions)
    frames = {"invoices": invoices, "customers": customers}
    kept = {frame: _kept_columns(frame, df.columns) for frame, df in frames.items()}
    packed = {
        frame: F.struct(*[F.col(f"`{c}`") for c in kept[frame]]) for frame in frames
    }
    types = {frame: frames[frame].select(packed[frame].alias("s")).schema["s"].dataType for frame in frames}

    def key(frame: str) -> Any:
        return F.coalesce(*[F.col(f"`{c}`").cast("string") for c in _present(frame, frames[frame].columns)])

    rows = invoices.select(
        key("invoices").alias("_customer"),
        packed["invoices"].alias("invoice"),
        F.lit(None).cast(types["customers"]).alias("customer"),
    ).unionByName(customers.select(
        key("customers").alias("_customer"),
        F.lit(None).cast(types["invoices"]).alias("invoice"),
        packed["customers"].alias("customer"),
    ))
    return rows.repartition(count, "_customer")


def _unpack(batches: Iterable[Any]) -> Tuple[Any, Any]:
    """The customers and invoices of a partition's packed batches, as
    pyarrow Tables (``None`` when it has none)."""
    import pyarrow

    found: Dict[str, List[Any]] = {"customer": [], "invoice": []}
    for batch in batches:
        for column in found:
            values = batch.column(column)
            present = values.filter(values.is_valid())
            if len(present) > 0:
                found[column].append(pyarrow.RecordBatch.from_struct_array(present))
    customers, invoices = (pyarrow.Table.from_batches(found[c]) if found[c] else None for c in ("customer", "invoice"))
    return customers, invoices


_SPARK_PARTIALS = "query int, partial binary, code string, message string, record_id string, field string"


def _spark_partials_schema() -> Any:
    import pyarrow

    return pyarrow.schema([("query", pyarrow.int32()), ("partial", pyarrow.binary()),
                           ("code", pyarrow.string()), ("message", pyarrow.string()),
                           ("record_id", pyarrow.string()), ("field", pyarrow.string())])


def spark_reports(invoices: Any, customers: Any, plans: Any, reports: Iterable[Any], *, as_of: Any,
                  settings: Optional[Mapping[str, Any]] = None, plan_groups: Any = None, fx_rates: Any = None,
                  partitions: Optional[int] = None) -> List[Dict[str, Any]]:
    """Several reports in one pass over the data (one shuffle, one ledger
    per partition): ``reports`` are names or ``(name, params)`` pairs; the
    answers come in their order. See :func:`spark_report`."""
    import pyarrow

    queries = _queries(reports)
    rows = _spark_by_customer(invoices, customers, partitions)
    shared = _Shared(settings, plans, plan_groups, fx_rates, as_of, _spark_collect)
    merger = _Merger(_check_reports(shared, queries))

    def partials(batches: Iterator[Any]) -> Iterator[Any]:
        try:
            customers_table, invoices_table = _unpack(batches)
            rows = [{"query": i, "partial": p} for i, p in enumerate(_partials(shared, queries, customers_table,
                                                                             invoices_table))]
        except errors.SubmetricsError as error:
            rows = [{"query": -1, "code": error.code, "message": error.message, "record_id": error.record_id,
                     "field": error.field}]
        yield pyarrow.RecordBatch.from_pylist(rows, schema=_spark_partials_schema())

    for row in rows.mapInArrow(partials, _SPARK_PARTIALS).collect():
        if row["code"] is not None:
            raise errors._from_core(row["code"], row["message"], row["record_id"], row["field"])
        merger.add(row["query"], bytes(row["partial"]))
    return merger.finish()


def spark_report(invoices: Any, customers: Any, plans: Any, name: str, *, as_of: Any,
                 settings: Optional[Mapping[str, Any]] = None, plan_groups: Any = None, fx_rates: Any = None,
                 partitions: Optional[int] = None, **params: Any) -> Dict[str, Any]:
    """Report ``name`` over Spark DataFrames of invoices and customers
    (partitioned by customer into ``partitions``, default the invoice
    frame's), exactly as :meth:`Ledger.report` answers it on one ledger
    holding every record.

    ``plans``, ``plan_groups`` and ``fx_rates`` are small frames (Spark,
    pandas, pyarrow or a list of dicts) sent to every partition;
    ``settings`` are the :class:`Ledger` constructor's keywords; ``as_of``
    is any instant :meth:`Ledger.report` takes (``None``: now, fixed on the
    driver); ``params`` are the report's parameters (pass one whose name is
    not an identifier as ``**{"selected-date": ...}``). An unknown report or
    parameter raises on the driver before any Spark job; a rejected record
    raises its :class:`~submetrics.InvalidRecordError`."""
    return spark_reports(invoices, customers, plans, [(name, params)], as_of=as_of, settings=settings,
                         plan_groups=plan_groups, fx_rates=fx_rates, partitions=partitions)[0]


def spark_movements(invoices: Any, customers: Any, plans: Any, *, as_of: Any,
                    settings: Optional[Mapping[str, Any]] = None, plan_groups: Any = None, fx_rates: Any = None,
                    partitions: Optional[int] = None, **filters: Any) -> Any:
    """The movements of :meth:`Ledger.movements_arrow` as a Spark DataFrame
    (one row per movement, the same columns), computed per partition of
    customers; rows of different partitions come in no particular order.
    ``filters`` are :meth:`Ledger.movements`' (``customer``, ``start``,
    ``end``, ``kinds``); an unknown one raises on the driver. The frame is
    lazy: a rejected record fails the Spark job that reads it, with the
    record's error."""
    from pyspark.sql.pandas.types import from_arrow_schema

    rows = _spark_by_customer(invoices, customers, partitions)
    shared = _Shared(settings, plans, plan_groups, fx_rates, as_of, _spark_collect)
    _movements(shared.ledger(), shared.as_of, filters)

    def movements(batches: Iterator[Any]) -> Iterator[Any]:
        customers_table, invoices_table = _unpack(batches)
        ledger = _partition_ledger(shared, customers_table, invoices_table)
        yield from _movements(ledger, shared.as_of, filters).to_batches()

    return rows.mapInArrow(movements, from_arrow_schema(_movement_schema()))


# --- Dask --------------------------------------------------------------------


def _dask_collect(value: Any) -> Any:
    """A Dask DataFrame computed into pandas; anything else as it is."""
    if hasattr(value, "map_partitions") and hasattr(value, "compute"):
        return value.compute()
    return value


def _bucket(frame: Any, keys: List[str], count: int) -> Any:
    """The bucket (0 to ``count - 1``) of each row of a pandas partition: a
    hash of its customer id (the first non-null of ``keys``, as text)."""
    import numpy
    import pandas

    key = frame[keys[0]].astype("string")
    for other in keys[1:]:
        key = key.fillna(frame[other].astype("string"))
    hashed = pandas.util.hash_array(key.fillna("").to_numpy(dtype=object), categorize=False)
    return pandas.Series((hashed % numpy.uint64(count)).astype("int64"), index=frame.index, name="_bucket")


def _dask_by_customer(frame_name: str, frame: Any, count: int) -> Any:
    """``frame`` (its ledger columns) in ``count`` partitions, partition i
    holding the rows whose customer id hashes to bucket i."""
    kept = frame[_kept_columns(frame_name, list(frame.columns))]
    keys = _present(frame_name, list(frame.columns))
    buckets = kept.map_partitions(_bucket, keys, count, meta=("_bucket", "int64"))
    return kept.assign(_bucket=buckets).set_index("_bucket", divisions=list(range(count + 1)))


def _dask_partitions(invoices: Any, partitions: Optional[int]) -> int:
    if partitions is None:
        return int(invoices.npartitions)
    if not isinstance(partitions, int) or isinstance(partitions, bool) or partitions < 1:
        raise errors.InvalidQueryError(f"partitions: must be a positive integer, got {partitions!r}",
                                       None, "partitions")
    return partitions


def _dask_movements(invoices: Any, customers: Any, shared: _Shared, filters: Dict[str, Any]) -> Any:
    ledger = _partition_ledger(shared, customers, invoices)
    return submetrics._frame(_movements(ledger, shared.as_of, filters))


def _dask_partials(invoices: Any, customers: Any, shared: _Shared, queries: List[Query]) -> Any:
    import pandas

    return pandas.DataFrame({"partial": _partials(shared, queries, customers, invoices)})


def _partials_of(frame: Any) -> List[bytes]:
    """A partition's partials, one per report, out of its frame."""
    return list(frame["partial"])


def _merge_each(parts: List[List[bytes]]) -> List[bytes]:
    """Each report's partials of several partitions merged into one."""
    return [submetrics.merge_partials(list(partials)) for partials in zip(*parts)]


def dask_reports(invoices: Any, customers: Any, plans: Any, reports: Iterable[Any], *, as_of: Any,
                 settings: Optional[Mapping[str, Any]] = None, plan_groups: Any = None, fx_rates: Any = None,
                 partitions: Optional[int] = None, split_every: int = 8) -> List[Dict[str, Any]]:
    """Several reports in one pass over the data, as :func:`spark_reports`
    over Dask DataFrames. See :func:`dask_report`."""
    import dask.dataframe as dd
    import pandas
    from dask.base import compute
    from dask.delayed import delayed

    if not isinstance(split_every, int) or isinstance(split_every, bool) or split_every < 2:
        raise errors.InvalidQueryError(f"split_every: must be an integer of 2 or more, got {split_every!r}",
                                       None, "split_every")
    queries = _queries(reports)
    count = _dask_partitions(invoices, partitions)
    by_customer = (_dask_by_customer("invoices", invoices, count), _dask_by_customer("customers", customers, count))
    shared = _Shared(settings, plans, plan_groups, fx_rates, as_of, _dask_collect)
    merger = _Merger(_check_reports(shared, queries))
    parts = dd.map_partitions(
        _dask_partials, *by_customer, shared, queries,
        meta=pandas.DataFrame({"partial": pandas.Series([], dtype=object)}), enforce_metadata=False,
    )
    level = [delayed(_partials_of)(part) for part in parts.to_delayed()]
    while len(level) > 1:
        level = [delayed(_merge_each)(level[i:i + split_every]) for i in range(0, len(level), split_every)]
    for partials in compute(*level):
        for query, partial in enumerate(partials):
            merger.add(query, partial)
    return merger.finish()


def dask_report(invoices: Any, customers: Any, plans: Any, name: str, *, as_of: Any,
                settings: Optional[Mapping[str, Any]] = None, plan_groups: Any = None, fx_rates: Any = None,
                partitions: Optional[int] = None, split_every: int = 8, **params: Any) -> Dict[str, Any]:
    """Report ``name`` over Dask DataFrames of invoices and customers, as
    :func:`spark_report` over Spark ones: exactly what :meth:`Ledger.report`
    answers on one ledger holding every record. Each partition's partial is
    computed on a worker and the partials merge there in a tree,
    ``split_every`` at a time; it runs on the current scheduler (a
    ``distributed`` client when one is active). A rejected record raises
    its error."""
    return dask_reports(invoices, customers, plans, [(name, params)], as_of=as_of, settings=settings,
                        plan_groups=plan_groups, fx_rates=fx_rates, partitions=partitions,
                        split_every=split_every)[0]


def dask_movements(invoices: Any, customers: Any, plans: Any, *, as_of: Any,
                   settings: Optional[Mapping[str, Any]] = None, plan_groups: Any = None, fx_rates: Any = None,
                   partitions: Optional[int] = None, **filters: Any) -> Any:
    """The movements of :meth:`Ledger.movements_df` as a lazy Dask
    DataFrame (the columns of :meth:`Ledger.movements_arrow`, integers as
    pandas' ``Int64``), one partition per partition of customers; rows are
    in :meth:`Ledger.movements`' order within a partition. ``filters`` as
    :func:`spark_movements`; an unknown one raises here."""
    import dask.dataframe as dd

    count = _dask_partitions(invoices, partitions)
    by_customer = (_dask_by_customer("invoices", invoices, count), _dask_by_customer("customers", customers, count))
    shared = _Shared(settings, plans, plan_groups, fx_rates, as_of, _dask_collect)
    _movements(shared.ledger(), shared.as_of, filters)
    meta = submetrics._frame(_movement_schema().empty_table())
    return dd.map_partitions(
        _dask_movements, *by_customer, shared, filters, meta=meta,
        enforce_metadata=False,
    )
