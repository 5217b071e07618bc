"""Arrow data handed to the extension, laid out as its import requires."""

from __future__ import annotations

from typing import Any

#: The alignment the Arrow format asks of every buffer, and the most any
#: column type the ledger reads needs (64-bit integers, timestamps).
ALIGNMENT = 8


def aligned(data: Any) -> Any:
    """``data`` (a pyarrow Table or RecordBatch) with every buffer on an
    8-byte boundary. pyarrow keeps the buffers of data rebuilt from bytes
    received over a network (a Dask shuffle, say) where those bytes lie, at
    any address; the extension's Arrow import refuses such buffers. Those
    are copied once through an Arrow IPC stream, whose reader lays every
    buffer out aligned, into a Table; aligned data is returned as it is."""
    import pyarrow

    chunks = (chunk for column in data.columns for chunk in getattr(column, "chunks", [column]))
    if all(buffer is None or buffer.address % ALIGNMENT == 0 for chunk in chunks for buffer in chunk.buffers()):
        return data
    sink = pyarrow.BufferOutputStream()
    with pyarrow.ipc.new_stream(sink, data.schema) as writer:
        writer.write(data)
    return pyarrow.ipc.open_stream(sink.getvalue()).read_all()


def polars_without_null_columns(frame: Any) -> Any:
    """A polars DataFrame with its columns of type ``Null`` (every cell
    missing, as polars types a column of ``None``) cast to strings, every
    cell still missing: an absent field, as in any other column. polars
    exports a ``Null`` column with a buffer the Arrow import refuses."""
    import polars

    nulls = [name for name, dtype in frame.schema.items() if dtype == polars.Null]
    if not nulls:
        return frame
    return frame.with_columns(polars.col(nulls).cast(polars.String))
