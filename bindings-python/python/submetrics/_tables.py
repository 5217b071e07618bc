"""What the client sends as records: one record or a list of them as a
JSON body, or a table (a pyarrow Table or RecordBatch, a pandas or polars
DataFrame) as Arrow IPC streams."""

from __future__ import annotations

from typing import Any, Iterator, List, Mapping, Sequence, Union

_Records = Union[Mapping[str, Any], Sequence[Mapping[str, Any]]]


def _records(records: _Records) -> List[Mapping[str, Any]]:
    """One record or several, as the list a JSON body carries. A table is
    refused: the service reads tables (as Arrow streams) for customers,
    plans and invoices only (see :func:`_arrow_table`)."""
    if isinstance(records, Mapping):
        return [records]
    if _is_table(records):
        raise TypeError(
            f"a {type(records).__name__} is sent by upsert_customers, upsert_plans, upsert_invoices "
            "and import_records only; here give a dict or a list of dicts"
        )
    return list(records)


def _is_table(records: Any) -> bool:
    """Whether ``records`` is a table the ledger reads as Arrow data: a
    pandas DataFrame, or anything with the Arrow PyCapsule interface
    (a pyarrow Table or RecordBatch, a polars DataFrame)."""
    return _is_pandas_frame(records) or hasattr(records, "__arrow_c_stream__") or hasattr(records, "__arrow_c_array__")


def _is_pandas_frame(records: Any) -> bool:
    kind = type(records)
    return kind.__module__.startswith("pandas") and kind.__name__ == "DataFrame"


def _arrow_table(records: Any) -> Any:
    """A table as a pyarrow Table, read as ``Ledger.upsert_*`` reads it: a
    pandas DataFrame's named index (as ``set_index("id")`` leaves the ids)
    is a column of its name, a default one is left out."""
    try:
        import pyarrow
    except ImportError:
        raise ImportError("sending a table needs pyarrow: pip install submetrics[arrow]") from None
    if _is_pandas_frame(records):
        named_index = any(name is not None for name in records.index.names)
        return pyarrow.Table.from_pandas(records, preserve_index=named_index)
    return pyarrow.table(records)


def _arrow_streams(table: Any, rows: int) -> Iterator[bytes]:
    """``table`` as Arrow IPC streams of at most ``rows`` rows each; an
    empty table is one stream of its schema alone."""
    import pyarrow

    for start in range(0, max(table.num_rows, 1), rows):
        sink = pyarrow.BufferOutputStream()
        with pyarrow.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table.slice(start, rows))
        yield sink.getvalue().to_pybytes()
