"""numpy's scalars and Decimals, as a DataFrame's rows and database drivers
hand them out, are read as the plain values they stand for: in records,
patches and report parameters alike, exactly or not at all."""

from __future__ import annotations

import decimal
from typing import Any, Dict, List

import numpy
import pandas
import pytest

import submetrics

AS_OF = "2024-04-01T00:00:00Z"
INVOICE = {"customer_id": "a", "type": "subscription", "plan_id": "m",
           "invoice_date": "2024-03-01", "amount": 3000, "currency": "USD"}


def ledger() -> submetrics.Ledger:
    ledger = submetrics.Ledger(base_currency="USD")
    ledger.upsert_plans({"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"})
    ledger.upsert_customers({"id": "a", "name": "A"})
    return ledger


def stored(records: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    target = ledger()
    results = target.upsert_invoices(records)
    assert [r["import_status"] for r in results] == ["inserted"] * len(records)
    return [target.get_invoice(r["id"]) for r in results]


def test_numpy_scalars_and_decimals_store_what_plain_values_store() -> None:
    by_hand = stored([
        {**INVOICE, "id": "i1", "amount": 3000, "quantity": 2},
        {**INVOICE, "id": "7", "invoice_date": "2024-03-02"},
        {**INVOICE, "id": "i3", "invoice_date": "2024-03-02T10:00:00.123456789", "amount": 4500},
    ])
    from_libraries = stored([
        {**INVOICE, "id": "i1", "amount": numpy.int64(3000), "quantity": numpy.int32(2)},
        {**INVOICE, "id": numpy.int64(7), "invoice_date": numpy.datetime64("2024-03-02")},
        {**INVOICE, "id": numpy.str_("i3"), "invoice_date": numpy.datetime64("2024-03-02T10:00:00.123456789"),
         "amount": decimal.Decimal("4500.00")},
    ])
    assert from_libraries == by_hand
    assert [i["amount"] for i in from_libraries] == [3000, 3000, 4500]
    # A DataFrame's cells read one by one are numpy scalars.
    frame = pandas.DataFrame({"amount": numpy.array([3000], dtype="int64")})
    cell = frame.at[0, "amount"]
    assert isinstance(cell, numpy.int64)
    assert stored([{**INVOICE, "id": "r1", "amount": cell}]) == stored([{**INVOICE, "id": "r1"}])


def test_a_decimal_is_exact_or_refused() -> None:
    target = ledger()
    results = target.upsert_invoices([
        {**INVOICE, "id": "half", "amount": decimal.Decimal("3000.5")},
        {**INVOICE, "id": "bool", "amount": numpy.bool_(True)},
        {**INVOICE, "id": "nat", "invoice_date": numpy.datetime64("NaT")},
    ])
    assert [r["import_error"] for r in results] == [
        "invoice half: field `amount`: must be an integer, got 3000.5",
        "invoice bool: field `amount`: must be an integer, got true",
        'invoice nat: field `invoice_date`: must be an ISO 8601 date or timestamp string in the years 1900 '
        'to 2200, got "NaT"',
    ]
    for amount, message in [
        (decimal.Decimal("3000.123456789012345678"),
         "Decimal 3000.123456789012345678 has more digits than a float holds exactly; give it as a string"),
        (decimal.Decimal("1E+30"), "integer 1000000000000000000000000000000 does not fit in 64 bits"),
        (decimal.Decimal("NaN"), "nan is not a finite number"),
    ]:
        with pytest.raises(TypeError) as error:
            target.upsert_invoices([{**INVOICE, "id": "x", "amount": amount}])
        assert str(error.value) == f"records[0]: field `amount`: {message}"
    assert target.list_invoices()["count"] == 0


def test_a_decimal_rate_converts_as_its_text_does() -> None:
    def mrr(rate: Any) -> int:
        target = submetrics.Ledger(base_currency="USD")
        target.load_fx_rates([{"date": "2024-01-01", "currency": "EUR", "rate": rate}])
        target.upsert_plans({"id": "e", "name": "Euro", "interval": "month", "currency": "EUR"})
        target.upsert_customers({"id": "a", "name": "A"})
        target.upsert_invoices({**INVOICE, "id": "e1", "plan_id": "e", "currency": "EUR", "amount": 8500})
        return target.report("summary", as_of=AS_OF)["summary"]["mrr_current"]

    assert mrr(decimal.Decimal("0.85")) == mrr("0.85") == 10000


def test_numpy_scalars_as_patches_and_parameters() -> None:
    target = ledger()
    target.upsert_invoices({**INVOICE, "id": "i1"})
    target.update_customer("a", {"custom_variables": {"seats": numpy.int64(5), "score": decimal.Decimal("0.5")}})
    assert target.get_customer("a")["custom_variables"] == {"seats": "5", "score": "0.5"}
    by_hand = target.report("mrr", as_of=AS_OF, date="20240101-20240331", interval="month")
    assert target.report("mrr", as_of=AS_OF, date=numpy.str_("20240101-20240331"),
                         interval=numpy.str_("month")) == by_hand
    assert [p["total_mrr"] for p in by_hand["result"]] == [0, 0, 3000]
    assert target.customers(as_of=AS_OF, limit=numpy.int64(1))["result"]["count"] == 1
