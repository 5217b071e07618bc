"""The Python layer's own promises: threads never deadlock on the ledger
lock, records in any mapping or sequence, DataFrames, error codes, time
zones, both record shapes, and the README example."""

from __future__ import annotations

import builtins
import collections
import datetime
import gc
import re
import subprocess
import sys
import threading
import types
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import submetrics
from submetrics import _native

from test_api import ledger

ROOT = Path(__file__).resolve().parents[2]
PLAN = {"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"}


def invoice(id: str, customer: str, date: str, amount: int) -> Dict[str, Any]:
    return {"id": id, "customer_id": customer, "type": "subscription", "invoice_date": date,
            "amount": amount, "currency": "USD", "plan_id": "m"}


def hammer() -> str:
    """4 reader threads run reports, movements, gets, lists and settings
    while 2 threads upsert; returns the final numbers. Run in a subprocess by
    the test: a deadlock (a thread holding the GIL while it waits for the
    ledger lock) would stall even the main thread, so only a timeout from
    outside can fail it."""
    l = submetrics.Ledger(base_currency="USD")
    l.upsert_plans(PLAN)
    l.upsert_customers({"id": "seed", "name": "Seed"})
    l.upsert_invoices(invoice("seed-1", "seed", "2024-01-01", 1000))
    per_writer, writers_done = 40, threading.Event()
    seen: List[int] = []
    errors: List[BaseException] = []

    def write(w: int) -> None:
        try:
            for i in range(per_writer):
                cid = f"w{w}-{i}"
                l.upsert_customers({"id": cid, "name": cid})
                l.upsert_invoices(invoice(f"{cid}-1", cid, "2024-01-10", 1000))
        except BaseException as error:  # noqa: BLE001 - collected for the assertion
            errors.append(error)

    def read() -> None:
        try:
            while not writers_done.is_set():
                seen.append(l.report("summary", as_of="2024-01-20")["summary"]["mrr_current"])
                l.movements("2024-01-20", kinds=["new"])
                l.get_plan("m")
                l.list_customers(limit=5)
                assert l.settings["base_currency"] == "USD"
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    readers = [threading.Thread(target=read) for _ in range(4)]
    writers = [threading.Thread(target=write, args=(w,)) for w in range(2)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    writers_done.set()
    for t in readers:
        t.join()
    assert errors == [], errors
    assert seen and all(v % 1000 == 0 and 1000 <= v <= 81000 for v in seen)
    final = l.report("summary", as_of="2024-01-20")["summary"]
    moves = l.movements("2024-01-20", kinds=["new"])
    return f"{final['mrr_current']} {final['subscribers_current']} {l.list_customers()['count']} {len(moves)}"


def test_writers_and_readers_in_threads_finish_with_exact_values() -> None:
    code = "import test_bindings; print(test_bindings.hammer())"
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parent, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "81000 81 81 81"


def test_the_class_and_every_method_have_docstrings() -> None:
    assert (_native.Ledger.__doc__ or "").startswith("A ledger of customers")
    assert (submetrics.Ledger.__doc__ or "").startswith("A ledger of customers")
    names = [n for n in dir(_native.Ledger) if not n.startswith("_")]
    assert len(names) == 36
    missing = [n for n in names if not getattr(_native.Ledger, n).__doc__]
    assert missing == []


def test_records_are_any_mapping_or_sequence() -> None:
    l = submetrics.Ledger()
    l.upsert_plans(types.MappingProxyType(PLAN))
    l.upsert_customers(({"id": "A", "name": "Acme"}, collections.OrderedDict(id="B", name="Beta")))

    class Rows(collections.abc.Sequence):  # type: ignore[type-arg]
        def __init__(self, *rows: Dict[str, Any]) -> None:
            self.rows = rows

        def __getitem__(self, i: Any) -> Any:
            return self.rows[i]

        def __len__(self) -> int:
            return len(self.rows)

    result = l.upsert_invoices(Rows(invoice("a1", "A", "2024-01-01", 3000), invoice("b1", "B", "2024-01-02", 2000)))
    assert [r["import_status"] for r in result] == ["inserted", "inserted"]
    assert l.update_customer("A", types.MappingProxyType({"country": "de"}))["country"] == "DE"
    assert l.report("summary", "2024-01-05", types.MappingProxyType({}))["summary"]["mrr_current"] == 5000
    with pytest.raises(TypeError):
        l.upsert_customers(b"not records")
    with pytest.raises(TypeError):
        l.upsert_customers("not records")


def test_ledger_dataframe_methods_and_exact_values() -> None:
    pytest.importorskip("pandas")
    l = ledger()
    assert isinstance(l, submetrics.Ledger)
    moves = l.movements_df("2024-02-15")
    assert list(moves["customer_id"]) == ["A", "B", "A"]
    assert list(moves["mrr_change"]) == [3000, 2000, 2000]
    assert moves.equals(submetrics.movements_df(l, "2024-02-15"))
    table = l.report_df("mrr-table", "2024-02-15", date="20240101-20240229")
    assert list(table.columns) == ["2024-01-01", "2024-02-01"]
    assert table.index.name == "metric"
    assert list(table.loc["total_mrr"]) == [5000, 7000]
    assert list(table.loc["expansion"]) == [0, 2000]
    assert table.equals(submetrics.report_df(l, "mrr-table", "2024-02-15", date="20240101-20240229"))
    series = l.report_df("mrr", "2024-02-15", {"date": "20240101-20240229"})
    assert list(series["date"]) == ["2024-01-01", "2024-02-01"]
    assert list(series["total_mrr"]) == [5000, 7000]
    one = l.report_df("summary", "2024-02-15")
    assert list(one.columns) == ["currency", "summary.mrr_current", "summary.arr_current",
                                 "summary.subscribers_current", "summary.arpa_current"]
    assert one.iloc[0].tolist() == ["USD", 7000, 84000, 2, 3500]


def test_dataframes_without_pandas_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_pandas(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setitem(sys.modules, "pandas", None)
    monkeypatch.setattr(builtins, "__import__", no_pandas)
    l = ledger()
    hint = "pandas is needed for DataFrames: pip install submetrics[pandas]"
    for call in (lambda: l.movements_df("2024-02-15"), lambda: l.report_df("mrr", "2024-02-15"),
                 lambda: submetrics.movements_df(l), lambda: submetrics.report_df(l, "mrr")):
        with pytest.raises(ImportError) as error:
            call()
        assert str(error.value) == hint


def test_an_error_code_newer_than_the_module_keeps_its_code() -> None:
    error = submetrics.errors._from_core("rate_limited", "too many", "X", "f")
    assert type(error) is submetrics.SubmetricsError
    assert (error.code, error.record_id, error.field, str(error)) == ("rate_limited", "X", "f", "too many")
    known = submetrics.errors._from_core("conflict", "plan m: in use", "m", None)
    assert type(known) is submetrics.ConflictError and known.code == "conflict"


def test_answers_leave_the_garbage_collector_as_they_found_it() -> None:
    l = ledger()
    expected = [m["mrr_change"] for m in l.movements("2024-03-01")]
    assert expected == [3000, 2000, 2000, -2000]
    assert gc.isenabled()
    gc.disable()
    try:
        assert [m["mrr_change"] for m in l.movements("2024-03-01")] == expected
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert l.report("summary", as_of="2024-02-02")["summary"]["mrr_current"] == 7000
    assert gc.isenabled()


def test_aware_datetimes_in_other_time_zones() -> None:
    l = ledger()
    tokyo = datetime.timezone(datetime.timedelta(hours=9))
    new_york = datetime.timezone(datetime.timedelta(hours=-5))
    # 2024-02-01 08:00 in Tokyo is Jan 31 23:00 UTC: before the upgrade on Feb 1.
    before = l.report("summary", as_of=datetime.datetime(2024, 2, 1, 8, 0, tzinfo=tokyo))
    assert before["summary"]["mrr_current"] == 5000
    # 2024-01-31 20:00 in New York is Feb 1 01:00 UTC: after it.
    after = l.report("summary", as_of=datetime.datetime(2024, 1, 31, 20, 0, tzinfo=new_york))
    assert after["summary"]["mrr_current"] == 7000
    assert len(l.movements(datetime.datetime(2024, 2, 1, 8, 0, tzinfo=tokyo))) == 2
    assert len(l.movements(datetime.datetime(2024, 1, 31, 20, 0, tzinfo=new_york))) == 3


def test_datetime_parameters_mean_their_day_in_the_ledger_time_zone() -> None:
    l = submetrics.Ledger(timezone="Asia/Tokyo")
    l.upsert_plans(PLAN)
    l.upsert_customers({"id": "A", "name": "Acme"})
    l.upsert_invoices([invoice("a1", "A", "2024-01-01", 3000), invoice("a2", "A", "2024-02-01", 5000)])
    # Jan 31 20:00 UTC is Feb 1 in Tokyo.
    late = datetime.datetime(2024, 1, 31, 20, 0, tzinfo=datetime.timezone.utc)
    moves = l.movements("2024-03-01", start=late)
    assert [(m["date"], m["type"]) for m in moves] == [("2024-02-01", "expansion")]
    assert l.movements("2024-03-01", end=late) == l.movements("2024-03-01")
    by_instant = l.report("movement-table", "2024-03-01", date="20240101-20240229", selected_date=late)
    by_day = l.report("movement-table", "2024-03-01", date="20240101-20240229", selected_date=datetime.date(2024, 2, 1))
    assert by_instant == by_day
    assert by_day["result"]["count"] == 1
    with pytest.raises(submetrics.InvalidQueryError) as bad:
        l.movements("2024-03-01", end="soon")
    assert (bad.value.code, bad.value.field) == ("invalid_query", "end")


def test_a_parameter_given_both_in_params_and_as_a_keyword_is_refused() -> None:
    l = ledger()
    # The keyword used to win unseen.
    for run in (
        lambda: l.report("mrr", "2024-03-01", {"interval": "month"}, interval="week"),
        lambda: l.report_arrow("mrr", "2024-03-01", {"interval": "month"}, interval="week"),
        lambda: l.report_partial("mrr", "2024-03-01", {"interval": "month"}, interval="week"),
    ):
        with pytest.raises(submetrics.InvalidQueryError) as bad:
            run()
        assert str(bad.value) == "parameter `interval`: is given both in params and as a keyword; give it once"
        assert bad.value.field == "interval"
    with pytest.raises(submetrics.InvalidQueryError) as dashed:
        l.report("movement-table", "2024-03-01", {"selected-date": "2024-02-01"}, selected_date="2024-01-01")
    assert dashed.value.field == "selected-date"
    same = l.report("mrr", "2024-03-01", {"interval": "month"}, date="20240101-20240229")
    assert same == l.report("mrr", "2024-03-01", interval="month", date="20240101-20240229")


def test_missing_fx_rate_error_attributes() -> None:
    l = ledger()
    l.upsert_plans({"id": "e", "name": "Euro", "interval": "month", "currency": "EUR"})
    l.upsert_invoices({"id": "e1", "customer_id": "B", "type": "subscription", "invoice_date": "2024-01-20",
                       "amount": 900, "currency": "EUR", "plan_id": "e"})
    with pytest.raises(submetrics.MissingFxRateError) as fx:
        l.report("summary", as_of="2024-01-25")
    error = fx.value
    assert (error.code, error.record_id, error.field) == ("missing_fx_rate", None, None)
    assert str(error) == "no exchange rate for EUR on or before 2024-01-20"
    assert isinstance(error, LookupError)


def test_import_shape_of_customers_and_invoices() -> None:
    l = submetrics.Ledger()
    l.upsert_plans(PLAN)
    result = l.upsert_customers({"id": "A", "name": "Acme", "created": "2023-12-01", "metadata": {"tier": "gold"}})
    assert result == [{"id": "A", "import_status": "inserted"}]
    customer = l.get_customer("A")
    assert (customer["created_date"], customer["custom_variables"]) == ("2023-12-01", {"tier": "gold"})
    l.upsert_invoices({"id": "i1", "customer_external_id": "A", "type": "subscription", "date": "2024-01-05",
                       "amount_in_cents": 4200, "currency": "usd", "plan_id": "m"})
    stored = l.get_invoice("i1")
    assert (stored["customer_id"], stored["invoice_date"], stored["amount"], stored["currency"]) == ("A", "2024-01-05", 4200, "USD")
    assert l.report("summary", "2024-01-10")["summary"]["mrr_current"] == 4200


def readme_python() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the Python section has one python block"
    return str(blocks[0])


def test_readme_python_example_runs_as_written() -> None:
    code = readme_python()
    assert "..." not in code
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = re.search(r"#\s*(\[.*?\])", code)
    assert expected is not None
    assert done.stdout.strip() == expected.group(1)


def test_a_page_size_that_pages_through_nothing_is_refused() -> None:
    l = submetrics.Ledger()
    l.upsert_customers([{"id": "a", "name": "A"}, {"id": "b", "name": "B"}])
    assert [c["id"] for c in l.iter_customers(page_size=1)] == ["a", "b"]
    for size in (0, -1, True, 1.5):
        with pytest.raises(submetrics.InvalidQueryError) as refused:
            list(l.iter_customers(page_size=size))
        assert (refused.value.field, str(refused.value)) == (
            "page_size", f"page_size: must be a whole number of at least 1, got {size!r}")
