"""Arrow data in and out: pyarrow tables and record batches, pandas and
polars DataFrames go into ``upsert_*`` and ``load_fx_rates`` with the
per-record results of dicts; ``movements_arrow``/``report_arrow`` answer
pyarrow tables whose integers stay integers, and the DataFrames build on
them."""

from __future__ import annotations

import datetime
import gc
from typing import Any, Dict, List

import pytest

import submetrics

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")
pc = pytest.importorskip("pyarrow.compute")

PLAN = {"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"}
INVOICES: List[Dict[str, Any]] = [
    {"id": "i1", "customer_id": "A", "type": "subscription", "plan_id": "m",
     "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"},
    {"id": "i2", "customer_id": "B", "type": "subscription", "plan_id": "m",
     "invoice_date": "2024-01-10", "amount": 2000, "currency": "USD"},
    {"id": "i3", "customer_id": "A", "type": "subscription", "plan_id": "m",
     "invoice_date": "2024-02-01", "amount": 5000, "currency": "USD"},
    {"id": "bad", "customer_id": "A", "type": "refund", "plan_id": None,
     "invoice_date": "2024-02-03", "amount": 700, "currency": "USD"},
    {"id": "who", "customer_id": "Z", "type": "subscription", "plan_id": "m",
     "invoice_date": "2024-02-03", "amount": 700, "currency": "USD"},
]
ERRORS = [
    None, None, None,
    "invoice bad: field `amount`: must be 0 or less for a refund, got 700",
    "invoice who: field `customer_id`: customer `Z` does not exist; send the customer first",
]


def ledger() -> submetrics.Ledger:
    l = submetrics.Ledger()
    l.upsert_plans(PLAN)
    l.upsert_customers(pa.table({"id": ["A", "B"], "name": ["Ann", "Bob"]}))
    return l


def results(table: Any) -> List[Any]:
    assert isinstance(table, pa.Table)
    assert table.column_names == ["id", "import_status", "import_error"]
    return table.column("import_error").to_pylist()


def check(l: submetrics.Ledger) -> None:
    moves = l.movements_df("2024-02-15")
    assert list(moves["customer_id"]) == ["A", "B", "A"]
    assert list(moves["mrr_change"]) == [3000, 2000, 2000]
    assert str(moves["mrr_change"].dtype) == "Int64"
    assert l.get_invoice("i3")["invoice_date"] == "2024-02-01"


def test_a_pyarrow_table_is_written_like_dicts() -> None:
    from_dicts = ledger()
    expected = from_dicts.upsert_invoices(INVOICES)
    l = ledger()
    written = l.upsert_invoices(pa.Table.from_pylist(INVOICES))
    assert written.column("id").to_pylist() == ["i1", "i2", "i3", "bad", "who"]
    assert written.column("import_status").to_pylist() == [r["import_status"] for r in expected]
    assert results(written) == [r.get("import_error") for r in expected] == ERRORS
    check(l)
    assert l.movements("2024-02-15") == from_dicts.movements("2024-02-15")


def test_results_come_a_chunk_per_input_batch_sharing_its_ids() -> None:
    table = pa.Table.from_batches([
        pa.RecordBatch.from_pylist(INVOICES[:2]),
        pa.RecordBatch.from_pylist(INVOICES[2:]),
    ])
    results = ledger().upsert_invoices(table)
    assert [len(chunk) for chunk in results.column("id").chunks] == [2, 3]
    given = [chunk.buffers()[2].address for chunk in table.column("id").chunks]
    assert [chunk.buffers()[2].address for chunk in results.column("id").chunks] == given
    assert results.schema.field("import_status").type == pa.dictionary(pa.int8(), pa.string())
    assert results.column("import_status").to_pylist() == ["inserted"] * 3 + ["error"] * 2
    assert results.to_pandas()["import_status"].dtype == "category"
    errors = results.filter(pc.equal(results["import_status"], "error"))
    assert errors.column("id").to_pylist() == ["bad", "who"]


def misaligned(table: Any) -> Any:
    """``table`` read back from an IPC stream that starts one byte into its
    buffer, so its buffers sit off their alignment (as pyarrow leaves data
    it rebuilt from bytes received over a network)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    shifted = pa.py_buffer(b"\0" + sink.getvalue().to_pybytes())[1:]
    moved = pa.ipc.open_stream(shifted).read_all()
    addresses = [b.address for c in moved.columns for k in c.chunks for b in k.buffers() if b is not None]
    assert any(address % 8 for address in addresses)
    return moved


def test_pyarrow_data_off_its_alignment_is_written_like_any_other() -> None:
    l = ledger()
    table = misaligned(pa.Table.from_pylist(INVOICES))
    assert results(l.upsert_invoices(table)) == ERRORS
    check(l)
    batch = misaligned(pa.table({"id": ["C"], "name": ["Cid"]})).to_batches()[0]
    assert results(l.upsert_customers(batch)) == [None]
    assert l.get_customer("C")["name"] == "Cid"
    # A pandas frame of pyarrow-backed columns keeps their buffers where
    # they lie, also through pandas' own Arrow export.
    frame = misaligned(pa.table({"id": ["D"], "name": ["Dee"]})).to_pandas(types_mapper=pd.ArrowDtype)
    assert results(l.upsert_customers(frame)) == [None]
    assert l.get_customer("D")["name"] == "Dee"


def test_tables_are_read_and_answered_with_the_collector_paused() -> None:
    # One chunk per invoice: the alignment check wraps each chunk and buffer
    # in a Python object, which with the collector on (and a low threshold)
    # would set off collections.
    table = pa.concat_tables([pa.Table.from_pylist([invoice]) for invoice in INVOICES[:3]] * 100)
    assert table.column("id").num_chunks == 300
    collections: List[int] = []
    threshold = gc.get_threshold()
    gc.set_threshold(10)
    gc.callbacks.append(lambda phase, info: collections.append(info["generation"]))
    try:
        l = ledger()
        collections.clear()
        written = l.upsert_invoices(table)
        assert collections == []
        # Answers as tables too, with the lowest threshold.
        gc.set_threshold(1)
        movements = l.movements_arrow("2024-02-15")
        assert collections == []
    finally:
        gc.callbacks.pop()
        gc.set_threshold(*threshold)
    assert gc.isenabled()
    assert results(written) == [None] * 300
    assert [m["mrr_change"] for m in l.movements("2024-02-15")] == [3000, 2000, 2000]
    assert movements.column("mrr_change").to_pylist() == [3000, 2000, 2000]


def test_record_batches_typed_dates_and_chunked_tables() -> None:
    batch = pa.record_batch({
        "id": ["i1", "i2", "i3"],
        "customer_id": ["A", "B", "A"],
        "type": pa.array(["subscription"] * 3).dictionary_encode(),
        "plan_id": ["m", "m", "m"],
        "invoice_date": pa.array([datetime.date(2024, 1, 1), datetime.date(2024, 1, 10),
                                  datetime.date(2024, 2, 1)], pa.date32()),
        "amount": pa.array([3000, 2000, 5000], pa.int32()),
        "currency": ["USD"] * 3,
    })
    l = ledger()
    assert results(l.upsert_invoices(batch)) == [None, None, None]
    check(l)
    chunked = pa.Table.from_batches([batch.slice(0, 2), batch.slice(2, 1)])
    l = ledger()
    assert results(l.upsert_invoices(chunked)).count(None) == 3
    check(l)


def test_decimal_amounts_are_numbers() -> None:
    # What SQL engines export: DECIMAL(38, 0) sums, DECIMAL(10, 2) amounts
    # (pandas objects of `decimal.Decimal` arrive as the latter).
    import decimal
    frame = pd.DataFrame(INVOICES)
    frame["amount"] = [decimal.Decimal(f"{a}.00") for a in frame["amount"]]
    l = ledger()
    table = pa.Table.from_pandas(frame)
    assert table.schema.field("amount").type == pa.decimal128(6, 2)
    assert results(l.upsert_invoices(table)) == ERRORS
    check(l)
    sums = pa.Table.from_pylist(INVOICES).set_column(
        5, "amount", pa.array([decimal.Decimal(r["amount"]) for r in INVOICES], pa.decimal128(38, 0)))
    l = ledger()
    assert results(l.upsert_invoices(sums)) == ERRORS
    check(l)
    # A fraction of a cent is refused as a float amount is.
    halves = pa.Table.from_pylist(INVOICES[:1]).set_column(
        5, "amount", pa.array([decimal.Decimal("3000.5")], pa.decimal128(10, 1)))
    assert results(ledger().upsert_invoices(halves)) == [
        "invoice i1: field `amount`: must be an integer, got 3000.5"]


def test_a_pandas_dataframe_round_trip() -> None:
    frame = pd.DataFrame(INVOICES)
    frame["invoice_date"] = pd.to_datetime(frame["invoice_date"]).dt.date
    l = ledger()
    assert results(l.upsert_invoices(frame)) == ERRORS
    check(l)
    table = l.report_df("mrr-table", "2024-02-15", date="20240101-20240229")
    assert list(table.columns) == ["2024-01-01", "2024-02-01"]
    assert list(table.loc["total_mrr"]) == [5000, 7000]
    # Every period column holds money, counts and rates: float64 each.
    assert list(table.dtypes) == ["float64", "float64"]
    series = l.report_arrow("mrr", "2024-02-15", date="20240101-20240229")
    assert series.schema.field("total_mrr").type == pa.int64()
    assert series.column("date").to_pylist() == ["2024-01-01", "2024-02-01"]
    assert series.column("total_mrr").to_pylist() == [5000, 7000]
    assert series.column("total_customers").to_pylist() == [2, 2]
    moves = l.movements_arrow("2024-02-15")
    assert moves.schema.field("mrr_change").type == pa.int64()
    assert moves.to_pylist() == [
        {k: v for k, v in m.items()} for m in l.movements("2024-02-15")
    ]


def test_custom_variable_columns_of_a_csv_read_by_pandas_fill_the_object() -> None:
    import pathlib
    path = pathlib.Path(__file__).parents[2] / "testdata" / "local" / "customers.csv"
    l = submetrics.Ledger()
    assert results(l.upsert_customers(pd.read_csv(path))) == [None, None, None]
    assert l.get_customer("A")["custom_variables"] == {"industry": "Retail"}
    assert l.get_customer("B")["custom_variables"] == {"industry": "SaaS"}
    assert l.get_customer("C")["custom_variables"] == {}


def test_movements_as_dicts_hold_the_rows_of_the_arrow_table_in_the_json_order() -> None:
    l = submetrics.Ledger(base_currency="USD")
    l.load_fx_rates([{"date": "2024-01-01", "currency": "EUR", "rate": "0.5"}])
    l.upsert_plans([
        {"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"},
        {"id": "e", "name": "Euro", "interval": "month", "currency": "EUR"},
        {"id": "x", "name": "Extra", "interval": "month", "currency": "USD"},
    ])
    l.upsert_customers([{"id": "A", "name": "A"}, {"id": "B", "name": "B"}])
    base = {"type": "subscription", "invoice_date": "2024-01-01"}
    l.upsert_invoices([
        {**base, "id": "a1", "customer_id": "A", "plan_id": "m", "amount": 3000, "currency": "USD", "subscription_id": "s1"},
        {**base, "id": "a2", "customer_id": "A", "plan_id": "x", "amount": 500, "currency": "USD", "subscription_id": "s2"},
        {**base, "id": "b1", "customer_id": "B", "plan_id": "e", "amount": 1000, "currency": "EUR"},
        {**base, "id": "a3", "customer_id": "A", "plan_id": "m", "amount": 4000, "currency": "USD",
         "subscription_id": "s1", "invoice_date": "2024-02-01"},
    ])
    rows = l.movements("2024-02-15")
    assert rows == l.movements_arrow("2024-02-15").to_pylist()
    assert [list(row) for row in rows] == [[
        "date", "customer_id", "type", "subtype", "mrr_change", "mrr_change_base_currency",
        "customer_count_change", "quantity_change", "currency", "plans_before", "plans_after",
    ]] * 4
    assert rows == [
        {"date": "2024-01-01", "customer_id": "A", "type": "new", "subtype": "new", "mrr_change": 3500,
         "mrr_change_base_currency": 3500, "customer_count_change": 1, "quantity_change": 2, "currency": "USD",
         "plans_before": [], "plans_after": ["m", "x"]},
        {"date": "2024-01-01", "customer_id": "B", "type": "new", "subtype": "new", "mrr_change": 1000,
         "mrr_change_base_currency": 2000, "customer_count_change": 1, "quantity_change": 1, "currency": "EUR",
         "plans_before": [], "plans_after": ["e"]},
        {"date": "2024-02-01", "customer_id": "A", "type": "expansion", "subtype": "upgrade", "mrr_change": 500,
         "mrr_change_base_currency": 500, "customer_count_change": 0, "quantity_change": -1, "currency": "USD",
         "plans_before": ["m", "x"], "plans_after": ["m"]},
        {"date": "2024-02-01", "customer_id": "B", "type": "churn", "subtype": "lapse", "mrr_change": -1000,
         "mrr_change_base_currency": -2000, "customer_count_change": -1, "quantity_change": -1, "currency": "EUR",
         "plans_before": ["e"], "plans_after": []},
    ]
    # Each row has lists of its own.
    rows[0]["plans_after"].append("y")
    assert rows[2]["plans_before"] == ["m", "x"]


def test_a_named_pandas_index_is_a_column_and_an_unnamed_one_is_left_out() -> None:
    frame = pd.DataFrame(INVOICES)
    # `set_index("id")` used to leave every invoice without its id.
    indexed = ledger()
    assert results(indexed.upsert_invoices(frame.set_index("id"))) == ERRORS
    check(indexed)
    # An unnamed index other than the default (what a filter leaves) is no
    # field of the records.
    renumbered = ledger()
    assert results(renumbered.upsert_invoices(frame.set_axis(range(10, 15)))) == ERRORS
    check(renumbered)


def test_a_pandas_index_named_like_a_column_is_refused_naming_it() -> None:
    # pyarrow would rename the index `__index_level_0__`, a column no record
    # reads: the ids of the index would be lost unseen.
    frame = pd.DataFrame(INVOICES)
    both = frame.set_index(pd.Index([f"x{i}" for i in range(len(frame))], name="id"))
    message = ("invoice ?: field `id`: is the name of both the DataFrame's index and one of its "
               "columns; give it once (drop or rename one, or `reset_index(drop=True)` to leave "
               "the index out)")
    l = ledger()
    with pytest.raises(submetrics.InvalidRecordError) as refused:
        l.upsert_invoices(both)
    assert (refused.value.code, refused.value.field, str(refused.value)) == (
        "invalid_record", "id", message)
    assert l.list_invoices()["count"] == 0
    # A level of a MultiIndex too, and FX rates alike.
    levels = pd.DataFrame({"name": ["A"], "id": ["a"]}).set_index(
        pd.MultiIndex.from_tuples([("k", "a")], names=["key", "name"]))
    with pytest.raises(submetrics.InvalidRecordError) as level:
        l.upsert_customers(levels)
    assert str(level.value).startswith("customer ?: field `name`: is the name of both")
    rates = pd.DataFrame({"date": ["2024-01-01"], "currency": ["EUR"], "rate": [0.9]})
    with pytest.raises(submetrics.InvalidRecordError) as fx:
        l.load_fx_rates(rates.set_index(pd.Index(["GBP"], name="currency")))
    assert str(fx.value).startswith("fx_rate ?: field `currency`: is the name of both")
    # The index given once (without the column, or reset) is read.
    assert results(l.upsert_invoices(both.reset_index(drop=True))) == ERRORS
    check(l)


def test_movements_come_a_chunk_per_65536_rows_in_date_then_customer_order() -> None:
    n = 65_537
    l = submetrics.Ledger()
    l.upsert_plans([{"id": "m", "name": "M", "interval": "month", "currency": "USD"}])
    ids = [f"c{i:05d}" for i in range(n)]
    l.upsert_customers(pa.table({"id": ids, "name": ids}))
    # The last customer's invoice is the earliest: its movement comes first.
    dates = ["2024-01-02"] * (n - 1) + ["2024-01-01"]
    l.upsert_invoices(pa.table({
        "id": [f"i{i:05d}" for i in range(n)], "customer_id": ids,
        "type": ["subscription"] * n, "plan_id": ["m"] * n,
        "invoice_date": dates, "amount": [1000] * n, "currency": ["USD"] * n,
    }))
    moves = l.movements_arrow("2024-01-15")
    assert [len(b) for b in moves.to_batches()] == [65_536, 1]
    customers = moves.column("customer_id")
    assert [customers[0].as_py(), customers[1].as_py(), customers[n - 1].as_py()] == [
        "c65536", "c00000", "c65535"]
    assert moves.column("date")[0].as_py() == "2024-01-01"
    assert pc.sum(moves.column("mrr_change")).as_py() == 1000 * n


def test_movements_have_one_schema_even_when_there_are_none() -> None:
    l = ledger()
    l.upsert_invoices(INVOICES)
    text, integer = pa.string(), pa.int64()
    plans = pa.list_(pa.field("item", pa.string()))
    expected = [
        ("date", text), ("customer_id", text), ("type", text), ("subtype", text),
        ("mrr_change", integer), ("mrr_change_base_currency", integer),
        ("customer_count_change", integer), ("quantity_change", integer),
        ("currency", text), ("plans_before", plans), ("plans_after", plans),
    ]
    for as_of, rows in (("2024-02-15", 3), ("2023-12-31", 0)):
        moves = l.movements_arrow(as_of)
        assert moves.num_rows == rows
        assert [(f.name, f.type) for f in moves.schema] == expected
    assert l.movements_arrow("2024-02-15").column("plans_after").to_pylist() == [["m"], ["m"], ["m"]]


def test_a_report_answer_is_typed_by_its_schema_given_its_name() -> None:
    l = ledger()
    l.upsert_invoices(INVOICES)
    answer = l.report("mrr", "2024-01-31", date="20240101-20240131")
    typed = submetrics._native.report_table(answer, "mrr")
    assert typed.schema == l.report_arrow("mrr", "2024-01-31", date="20240101-20240131").schema
    # One period with no start customers: its rates are null, and the
    # schema still types them.
    assert typed.column("quick_ratio").to_pylist() == [None]
    assert typed.schema.field("quick_ratio").type == pa.float64()
    assert typed.schema.field("total_mrr").type == pa.int64()
    assert typed.column("total_mrr").to_pylist() == [5000]
    assert submetrics._native.report_table(answer).schema.field("quick_ratio").type == pa.null()


def test_a_polars_dataframe() -> None:
    pl = pytest.importorskip("polars")
    l = ledger()
    assert results(l.upsert_invoices(pl.DataFrame(INVOICES))) == ERRORS
    check(l)
    back = pl.from_arrow(l.report_arrow("mrr", "2024-02-15", date="20240101-20240229"))
    assert back["total_mrr"].to_list() == [5000, 7000]
    assert back["total_mrr"].dtype == pl.Int64
    # A lazy frame holds no data until collected: refused, saying what may be given.
    with pytest.raises(TypeError) as refused:
        l.upsert_invoices(pl.DataFrame(INVOICES).lazy())
    assert str(refused.value) == (
        "expected records: a mapping, a sequence of mappings, or Arrow data (a pyarrow Table "
        "or RecordBatch, a pandas or polars DataFrame, any object with __arrow_c_stream__); "
        "got LazyFrame, which holds no data until collected: pass its `.collect()`")
    # A column of None only (polars types it Null) is a field not given.
    nobody = pl.DataFrame({"id": ["c1"], "name": ["C"], "email": [None]})
    assert nobody.schema["email"] == pl.Null
    assert results(l.upsert_customers(nobody)) == [None]
    assert l.get_customer("c1")["email"] is None


def test_fx_rates_and_unreadable_columns() -> None:
    l = submetrics.Ledger(base_currency="USD")
    rates = pa.table({"date": pa.array([datetime.date(2024, 1, 1)], pa.date32()),
                      "currency": ["EUR"], "rate": [0.9]})
    assert l.load_fx_rates(rates) == 1
    # A positive rate the engine cannot keep says why, not that it is not positive.
    with pytest.raises(submetrics.InvalidRecordError) as tiny:
        l.load_fx_rates([{"date": "2024-01-01", "currency": "EUR", "rate": 1e-300}])
    assert (tiny.value.field, str(tiny.value)) == ("rate", (
        "fx_rate row 1: field `rate`: 1e-300 is below 1e-28, the smallest rate the engine keeps "
        "(rates have at most 28 decimal places)"))
    # A table of two batches is one table: a bad row in the second loads
    # nothing of the first, and is numbered in the whole table.
    two = pa.Table.from_batches([
        pa.record_batch({"date": ["2024-02-01"], "currency": ["GBP"], "rate": [0.5]}),
        pa.record_batch({"date": ["bad"], "currency": ["GBP"], "rate": [0.8]})])
    with pytest.raises(submetrics.InvalidRecordError) as error:
        l.load_fx_rates(two)
    assert str(error.value).startswith("fx_rate row 2: field `date`: ")
    gbp_invoice = {"id": "g1", "customer_id": "g", "type": "one-time", "amount": 100,
                   "currency": "GBP", "invoice_date": "2024-02-02"}
    l.upsert_customers([{"id": "g", "name": "G"}])
    assert l.upsert_invoices([gbp_invoice])[0]["import_status"] == "inserted"
    with pytest.raises(submetrics.MissingFxRateError):
        l.report("transactions", as_of="2024-03-01", date="20240201-20240229")
    with pytest.raises(submetrics.InvalidRecordError) as error:
        l.upsert_customers(pa.table({"id": ["a"], "name": pa.array([b"x"], pa.binary())}))
    assert str(error.value).startswith("customer ?: field `name`: column type Binary cannot be read")
    assert l.list_customers()["count"] == 1
