"""Dicts (and any mapping or sequence) are read field by field by the
extension: for valid and invalid records of every kind, the per-record
results, the stored records and the errors are exactly those of the earlier
path, which converted each record to a serde_json::Value first (the
expected values below were taken from it)."""

from __future__ import annotations

import collections
import datetime
from typing import Any, Dict, List, Tuple

import pytest

import submetrics

BASE = {"customer_id": "A", "type": "subscription", "plan_id": "m",
        "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"}


class Record(collections.abc.Mapping):
    """A mapping that is not a dict."""

    def __init__(self, **fields: Any) -> None:
        self._fields = fields

    def __getitem__(self, key: str) -> Any:
        return self._fields[key]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)


def steps() -> List[Tuple[str, Any]]:
    return [
        ("upsert_plans", [
            {"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"},
            {"id": "y", "name": "Yearly", "billing_freq": "year", "billing_freq_count": "1", "currency": "usd"},
            {"id": "bad-freq", "name": "Bad", "interval": "fortnight", "currency": "USD"},
            {"id": "bad-count", "name": "Bad", "interval": "month", "interval_count": 1.5, "currency": "USD"},
            {"name": "no id", "interval": "month"},
        ]),
        ("upsert_customers", [
            {"id": "A", "name": "Acme", "custom_variables": {"seats": 12, "vip": True, "gone": None, "region": "EU", "ratio": 0.25}},
            {"id": 42, "name": "Numbered", "metadata": {"tier": "gold"}},
            {"id": "B", "name": "Beta", "created": datetime.date(2024, 1, 2)},
            {"id": "dated", "name": "Dated", "created": datetime.datetime(2024, 1, 2, 10, 30, tzinfo=datetime.timezone.utc)},
            {"id": "nested", "name": "Nested", "custom_variables": {"deep": {"x": 1}}},
            {"id": 2 ** 53, "name": "Too big"},
            {"id": "  ", "name": "Blank"},
            Record(id="mapped", name="Mapped", custom_variables=Record(k="v")),
            {"id": "ünï", "name": "Ünïcödé ✓ 𝄞", "email": "x" * 300},
            {"id": "tupled", "name": "Tupled", "custom_variables": {"list": ("a", "b")}},
            "not a record", 7, None, [1, 2],
        ]),
        ("upsert_customers", {"id": "solo", "name": "Solo"}),
        ("upsert_plan_groups", (
            {"name": "All", "plans": ("m", "y")},
            {"id": "g", "name": "G", "plans": ["nope"]},
            {"name": "Text", "plans": "m"},
        )),
        ("upsert_data_sources", [{"id": "ds", "name": "Billing"}, {"id": ""}, {}]),
        ("upsert_invoices", [
            {"id": "i1", **BASE},
            {"id": "i2", **BASE, "amount": "4000", "quantity": "2", "tax_amount": 100, "status": "PAID"},
            {"external_id": "i3", "customer_external_id": "B", "type": "one-time", "date": "2024-02-01T10:00:00Z", "amount_in_cents": 500, "currency": "eur"},
            {"id": "i4", **BASE, "lines": [{"amount": 3000, "description": "Seat", "period_start": "2024-01-01", "period_end": "2024-02-01"}],
             "transactions": [{"type": "payment", "date": datetime.date(2024, 1, 1), "amount": 3000, "result": "successful"}]},
            {"id": "i5", **BASE, "amount": 1.5},
            {"id": "i6", **BASE, "amount": 5e9},
            {"id": "i7", **BASE, "amount": -0.0},
            {"id": "i8", **BASE, "amount": 10 ** 16},
            {"id": "i9", **BASE, "type": "refund", "amount": 700, "plan_id": None},
            {"id": "i10", **BASE, "customer_id": "nobody"},
            {"id": "i12", **BASE, "currency": "dollars"},
            {"id": "i13", **BASE, "invoice_date": 1704067200},
            {"id": "i14", **BASE, "invoice_date": datetime.datetime(2024, 1, 1, 9, 0)},
            {"id": "i15", **BASE, "period_start": "2024-02-01", "period_end": "2024-01-01"},
            {"id": "i16", **BASE, "lines": [{"amount": "lots"}]},
            {"id": "i17", **BASE, "lines": {"amount": 1}},
            {"id": "i18", **BASE, "transactions": [{"type": "payment"}]},
            {"id": "i19", **BASE, "lines": ["line"]},
            {"id": "i20", **BASE, "quantity": 2 ** 31},
            {"id": "i21", **BASE, "status": "pending"},
            {"id": "i22", **BASE, "amount": [1]},
            {"id": "i23", **BASE, "amount": {"cents": 1}},
            {"id": "i24", **BASE, "amount": True},
            {"id": 1.5, **BASE},
            {"id": -7, **BASE},
            {**BASE},
            {"id": "i1", **BASE, "amount": 3500},
            {"id": "i25", **BASE, "description": 12, "invoice_number": 1e21},
            {"id": "i26", **BASE, "tax_amount": -1},
            {"id": "i27", **BASE, "customer_id": 42, "plan_id": "y", "amount": 2 ** 32},
            {"id": "i28", **BASE, "discount": -2147483649, "payment_date": "2024-01-03", "paid_date": "2024-01-03"},
        ]),
        ("upsert_customers", [{"id": "big", "name": "Big", "custom_variables": {"n": 2 ** 70}}]),
        ("upsert_customers", [{"id": "nan", "name": "NaN", "custom_variables": {"x": float("nan")}}]),
        ("upsert_customers", [{"id": "key", "name": "Key", "custom_variables": {1: "x"}}]),
        ("upsert_customers", [{"id": "obj", "name": "Object", "custom_variables": {"x": object()}}]),
        ("upsert_customers", [Record(id="mkey", name="Mapping key", custom_variables=collections.OrderedDict([(2, "x")]))]),
        ("upsert_customers", "text"),
        ("upsert_customers", b"bytes"),
        ("load_fx_rates", [{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}, {"date": datetime.date(2024, 2, 1), "currency": "gbp", "rate": "0.8"}]),
        ("load_fx_rates", {"date": "2024-03-01", "currency": "EUR", "rate": 0.95}),
        ("load_fx_rates", [{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}, {"date": "2024-01-01", "currency": "EUR"}]),
        ("load_fx_rates", [{"date": "soon", "currency": "EUR", "rate": 1}]),
        ("load_fx_rates", 3),
    ]


def run(ledger: submetrics.Ledger) -> List[Any]:
    """What every step answered (results, or the raised error)."""
    out: List[Any] = []
    for method, records in steps():
        try:
            out.append(getattr(ledger, method)(records))
        except Exception as error:  # noqa: BLE001 - the error is the answer
            out.append([type(error).__name__, str(error)])
    return out


def present(record: Dict[str, Any]) -> Dict[str, Any]:
    """A stored record without its null fields."""
    return {key: value for key, value in record.items() if value is not None}


def stored(ledger: submetrics.Ledger) -> Dict[str, Any]:
    return {
        "customers": [present(ledger.get_customer(i)) for i in ["A", "42", "B", "dated", "mapped", "ünï", "solo"]],
        "invoices": [present(ledger.get_invoice(i)) for i in ["i1", "i2", "i3", "i4", "i6", "i7", "i14", "-7", "i27", "i28"]],
        "plan": present(ledger.get_plan("y")),
        "plan_group": present(ledger.get_plan_group("pg_1")),
    }


EXPECTED: List[Any] = [
    [
        {"id": "m", "import_status": "inserted"},
        {"id": "y", "import_status": "inserted"},
        {"id": "bad-freq", "import_status": "error", "import_error": "plan bad-freq: field `interval`: `fortnight` is not one of day, week, month, year"},
        {"id": "bad-count", "import_status": "error", "import_error": "plan bad-count: field `interval_count`: must be an integer, got 1.5"},
        {"id": "", "import_status": "error", "import_error": "plan ?: field `id`: is required"},
    ],
    [
        {"id": "A", "import_status": "inserted"},
        {"id": "42", "import_status": "inserted"},
        {"id": "B", "import_status": "inserted"},
        {"id": "dated", "import_status": "inserted"},
        {"id": "nested", "import_status": "error", "import_error": "customer nested: field `custom_variables.deep`: must be a string, number or boolean"},
        {"id": "", "import_status": "error", "import_error": "customer ?: field `id`: must be a string or a whole number of at most 9007199254740991 either way, got 9007199254740992"},
        {"id": "  ", "import_status": "error", "import_error": "customer ?: field `id`: is required"},
        {"id": "mapped", "import_status": "inserted"},
        {"id": "ünï", "import_status": "inserted"},
        {"id": "tupled", "import_status": "error", "import_error": "customer tupled: field `custom_variables.list`: must be a string, number or boolean"},
        {"id": "", "import_status": "error", "import_error": "customer ?: field `(record)`: must be a JSON object"},
        {"id": "", "import_status": "error", "import_error": "customer ?: field `(record)`: must be a JSON object"},
        {"id": "", "import_status": "error", "import_error": "customer ?: field `(record)`: must be a JSON object"},
        {"id": "", "import_status": "error", "import_error": "customer ?: field `(record)`: must be a JSON object"},
    ],
    [
        {"id": "solo", "import_status": "inserted"},
    ],
    [
        {"id": "pg_1", "import_status": "inserted"},
        {"id": "g", "import_status": "error", "import_error": "plan_group g: field `plans`: plan `nope` does not exist"},
        {"id": "", "import_status": "error", "import_error": "plan_group ?: field `plans`: must be an array"},
    ],
    [
        {"id": "ds", "import_status": "inserted"},
        {"id": "", "import_status": "error", "import_error": "data_source ?: field `id`: is required"},
        {"id": "", "import_status": "error", "import_error": "data_source ?: field `id`: is required"},
    ],
    [
        {"id": "i1", "import_status": "inserted"},
        {"id": "i2", "import_status": "inserted"},
        {"id": "i3", "import_status": "inserted"},
        {"id": "i4", "import_status": "inserted"},
        {"id": "i5", "import_status": "error", "import_error": "invoice i5: field `amount`: must be an integer, got 1.5"},
        {"id": "i6", "import_status": "inserted"},
        {"id": "i7", "import_status": "inserted"},
        {"id": "i8", "import_status": "error", "import_error": "invoice i8: field `amount`: 10000000000000000 is out of range: at most 1000000000000 cents either way"},
        {"id": "i9", "import_status": "error", "import_error": "invoice i9: field `amount`: must be 0 or less for a refund, got 700"},
        {"id": "i10", "import_status": "error", "import_error": "invoice i10: field `customer_id`: customer `nobody` does not exist; send the customer first"},
        {"id": "i12", "import_status": "error", "import_error": "invoice i12: field `currency`: `dollars` is not a three-letter currency code"},
        {"id": "i13", "import_status": "error", "import_error": "invoice i13: field `invoice_date`: must be an ISO 8601 date or timestamp string in the years 1900 to 2200, got 1704067200"},
        {"id": "i14", "import_status": "inserted"},
        {"id": "i15", "import_status": "error", "import_error": "invoice i15: field `period_end`: must be after period_start"},
        {"id": "i16", "import_status": "error", "import_error": "invoice i16: field `lines[0].amount`: must be an integer, got \"lots\""},
        {"id": "i17", "import_status": "error", "import_error": "invoice i17: field `lines`: must be an array"},
        {"id": "i18", "import_status": "error", "import_error": "invoice i18: field `transactions[0].date`: is required"},
        {"id": "i19", "import_status": "error", "import_error": "invoice i19: field `lines[0]`: must be a JSON object"},
        {"id": "i20", "import_status": "error", "import_error": "invoice i20: field `quantity`: must be at most 1000000000, got 2147483648"},
        {"id": "i21", "import_status": "error", "import_error": "invoice i21: field `status`: `pending` is not one of paid, open, failed, void"},
        {"id": "i22", "import_status": "error", "import_error": "invoice i22: field `amount`: must be an integer, got [1]"},
        {"id": "i23", "import_status": "error", "import_error": "invoice i23: field `amount`: must be an integer, got {\"cents\":1}"},
        {"id": "i24", "import_status": "error", "import_error": "invoice i24: field `amount`: must be an integer, got true"},
        {"id": "", "import_status": "error", "import_error": "invoice ?: field `id`: must be a string or a whole number of at most 9007199254740991 either way, got 1.5"},
        {"id": "-7", "import_status": "inserted"},
        {"id": "", "import_status": "error", "import_error": "invoice ?: field `id`: is required"},
        {"id": "i1", "import_status": "inserted"},
        {"id": "i25", "import_status": "error", "import_error": "invoice i25: field `invoice_number`: must be a string or a whole number of at most 9007199254740991 either way, got 1e+21"},
        {"id": "i26", "import_status": "error", "import_error": "invoice i26: field `tax_amount`: must be from 0 to the amount, got -1"},
        {"id": "i27", "import_status": "inserted"},
        {"id": "i28", "import_status": "inserted"},
    ],
    ["TypeError", "records[0]: field `custom_variables.n`: integer 1180591620717411303424 does not fit in 64 bits"],
    ["TypeError", "records[0]: field `custom_variables.x`: nan is not a finite number"],
    ["TypeError", "records[0]: field `custom_variables`: dictionary keys must be strings, got 1"],
    ["TypeError", "records[0]: field `custom_variables.x`: cannot convert object to JSON"],
    ["TypeError", "records[0]: field `custom_variables`: dictionary keys must be strings, got 2"],
    ["TypeError", "expected records: a mapping, a sequence of mappings, or Arrow data (a pyarrow Table or RecordBatch, a pandas or polars DataFrame, any object with __arrow_c_stream__); got str"],
    ["TypeError", "expected records: a mapping, a sequence of mappings, or Arrow data (a pyarrow Table or RecordBatch, a pandas or polars DataFrame, any object with __arrow_c_stream__); got bytes"],
    2,
    1,
    ["InvalidRecordError", "fx_rate row 2: field `rate`: must be a positive number"],
    ["InvalidRecordError", "fx_rate row 1: field `date`: must be an ISO 8601 date or timestamp string in the years 1900 to 2200, got \"soon\""],
    ["TypeError", "expected records: a mapping, a sequence of mappings, or Arrow data (a pyarrow Table or RecordBatch, a pandas or polars DataFrame, any object with __arrow_c_stream__); got int"],
]

STORED: Dict[str, Any] = {
    "customers": [
        {"id": "A", "name": "Acme", "custom_variables": {"seats": "12", "vip": "true", "region": "EU", "ratio": "0.25"}},
        {"id": "42", "name": "Numbered", "custom_variables": {"tier": "gold"}},
        {"id": "B", "name": "Beta", "created_date": "2024-01-02", "custom_variables": {}},
        {"id": "dated", "name": "Dated", "created_date": "2024-01-02T10:30:00Z", "custom_variables": {}},
        {"id": "mapped", "name": "Mapped", "custom_variables": {"k": "v"}},
        {"id": "ünï", "name": "Ünïcödé ✓ 𝄞", "email": "x" * 300, "custom_variables": {}},
        {"id": "solo", "name": "Solo", "custom_variables": {}},
    ],
    "invoices": [
        {"id": "i1", "customer_id": "A", "type": "subscription", "invoice_date": "2024-01-01", "amount": 3500, "currency": "USD", "plan_id": "m", "quantity": 1, "status": "paid", "tax_amount": 0, "discount_amount": 0, "lines": [], "transactions": []},
        {"id": "i2", "customer_id": "A", "type": "subscription", "invoice_date": "2024-01-01", "amount": 4000, "currency": "USD", "plan_id": "m", "quantity": 2, "status": "paid", "tax_amount": 100, "discount_amount": 0, "lines": [], "transactions": []},
        {"id": "i3", "customer_id": "B", "type": "one-time", "invoice_date": "2024-02-01T10:00:00Z", "amount": 500, "currency": "EUR", "quantity": 1, "status": "paid", "tax_amount": 0, "discount_amount": 0, "lines": [], "transactions": []},
        {"id": "i4", "customer_id": "A", "type": "subscription", "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD", "plan_id": "m", "quantity": 1, "status": "paid", "tax_amount": 0, "discount_amount": 0, "lines": [{"description": "Seat", "amount": 3000, "quantity": 1, "period_start": "2024-01-01", "period_end": "2024-02-01"}], "transactions": [{"id": "i4-t1", "type": "payment", "date": "2024-01-01", "result": "successful", "amount": 3000}]},
        {"id": "i6", "customer_id": "A", "type": "subscription", "invoice_date": "2024-01-01", "amount": 5000000000, "currency": "USD", "plan_id": "m", "quantity": 1, "status": "paid", "tax_amount": 0, "discount_amount": 0, "lines": [], "transactions": []},
        {"id": "i7", "customer_id": "A", "type": "subscription", "invoice_date": "2024-01-01", "amount": 0, "currency": "USD", "plan_id": "m", "quantity": 1, "status": "paid", "tax_amount": 0, "discount_amount": 0, "lines": [], "transactions": []},
        {"id": "i14", "customer_id": "A", "type": "subscription", "invoice_date": "2024-01-01T09:00:00Z", "amount": 3000, "currency": "USD", "plan_id": "m", "quantity": 1, "status": "paid", "tax_amount": 0, "discount_amount": 0, "lines": [], "transactions": []},
        {"id": "-7", "customer_id": "A", "type": "subscription", "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD", "plan_id": "m", "quantity": 1, "status": "paid", "tax_amount": 0, "discount_amount": 0, "lines": [], "transactions": []},
        {"id": "i27", "customer_id": "42", "type": "subscription", "invoice_date": "2024-01-01", "amount": 4294967296, "currency": "USD", "plan_id": "y", "quantity": 1, "status": "paid", "tax_amount": 0, "discount_amount": 0, "lines": [], "transactions": []},
        {"id": "i28", "customer_id": "A", "type": "subscription", "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD", "plan_id": "m", "quantity": 1, "status": "paid", "payment_date": "2024-01-03", "tax_amount": 0, "discount_amount": -2147483649, "lines": [], "transactions": []},
    ],
    "plan": {"id": "y", "name": "Yearly", "billing_freq": "year", "billing_freq_count": 1, "currency": "USD", "pricing_model": "licensed"},
    "plan_group": {"id": "pg_1", "name": "All", "plans": [
        {"id": "m", "name": "Monthly", "billing_freq": "month", "billing_freq_count": 1, "product_name": None, "currency": "USD"},
        {"id": "y", "name": "Yearly", "billing_freq": "year", "billing_freq_count": 1, "product_name": None, "currency": "USD"},
    ]},
}


def test_records_are_read_with_the_results_and_errors_of_the_earlier_path() -> None:
    ledger = submetrics.Ledger(base_currency="USD")
    assert run(ledger) == EXPECTED
    assert stored(ledger) == STORED


def test_a_record_holding_itself_is_a_type_error() -> None:
    ledger = submetrics.Ledger(base_currency="USD")
    cyclic: Dict[str, Any] = {"id": "c", "name": "C"}
    cyclic["custom_variables"] = {"self": cyclic}
    with pytest.raises(TypeError) as refused:
        ledger.upsert_customers([cyclic])
    field = "custom_variables" + ".self.custom_variables" * 63
    assert str(refused.value) == (
        f"records[0]: field `{field}`: records nest deeper than 128 levels "
        "(or hold themselves)")
    assert ledger.list_customers()["count"] == 0


def test_a_patch_or_parameter_holding_itself_is_a_type_error_not_a_crash() -> None:
    ledger = submetrics.Ledger(base_currency="USD")
    ledger.upsert_customers([{"id": "acme", "name": "Acme"}])
    cyclic: Dict[str, Any] = {}
    cyclic["x"] = cyclic
    with pytest.raises(TypeError) as refused:
        ledger.update_customer("acme", {"custom_variables": cyclic})
    field = "custom_variables" + ".x" * 127
    assert str(refused.value) == (
        f"the patch of customer acme: field `{field}`: records nest deeper than 128 levels "
        "(or hold themselves)")
    with pytest.raises(TypeError) as refused:
        ledger.update_settings(base_currency=cyclic)
    assert str(refused.value).startswith("the settings: field `base_currency.x.x")
    nested: List[Any] = []
    nested.append(nested)
    with pytest.raises(TypeError) as refused:
        ledger.report("mrr", as_of="2024-06-01", plan=nested)
    assert str(refused.value) == (
        "parameter `plan`: a parameter value is text, a number, a boolean, a date or a list "
        "of those, got list")
    with pytest.raises(TypeError) as refused:
        ledger.report("mrr", as_of="2024-06-01", customer={"id": "acme"})
    assert str(refused.value) == (
        "parameter `customer`: a parameter value is text, a number, a boolean, a date or a "
        "list of those, got dict")
    with pytest.raises(TypeError) as refused:
        ledger.update_customer("acme", {"custom_variables": {"score": float("nan")}})
    assert str(refused.value) == (
        "the patch of customer acme: field `custom_variables.score`: nan is not a finite number")
    assert ledger.get_customer("acme")["custom_variables"] == {}


def test_a_value_that_cannot_be_read_is_named_by_record_and_field() -> None:
    ledger = submetrics.Ledger(base_currency="USD")
    good = {"id": "a", "name": "A"}

    def refused(records: Any) -> str:
        with pytest.raises(TypeError) as error:
            ledger.upsert_customers(records)
        return str(error.value)

    assert refused([good, good, {"id": "c", "name": "C", "custom_variables": {"tags": ["x", 2 ** 64]}}]) == (
        "records[2]: field `custom_variables.tags[1]`: "
        "integer 18446744073709551616 does not fit in 64 bits")
    assert refused(({"id": "t", "name": "T", "custom_variables": {"pair": ("x", float("inf"))}},)) == (
        "records[0]: field `custom_variables.pair[1]`: inf is not a finite number")
    assert refused({"id": "s", "name": "S", "custom_variables": {"set": {1}}}) == (
        "the record: field `custom_variables.set`: cannot convert set to JSON")
    # A lone surrogate is not Unicode text: named by record and field (it
    # was Python's own UnicodeEncodeError, naming neither), as Node does.
    lone = "holds a lone UTF-16 surrogate ({}), which is not Unicode text"
    assert refused([good, {"id": "s\ud800", "name": "S"}]) == (
        "records[1]: field `id`: " + lone.format("\\uD800"))
    assert refused({"id": "k", "name": "K", "custom_variables": {"k\udfff": "v"}}) == (
        "the record: field `custom_variables`: " + lone.format("\\uDFFF"))
    # Two surrogates in a row are two code points in Python, not a pair.
    assert refused({"id": "p", "name": "\ud83d\ude00"}) == "the record: field `name`: " + lone.format("\\uD83D")
    # Text beyond the basic plane and a real U+FFFD are text.
    assert refused([good, {"id": "p", "name": "\U0001F600", "email": "\ufffd", "custom_variables": {"x": {1}}}]) == (
        "records[1]: field `custom_variables.x`: cannot convert set to JSON")
    # An id, a report name or a parameter name holding one is named too.
    def argument_error(call: Any) -> str:
        with pytest.raises(TypeError) as error:
            call()
        return str(error.value)

    assert argument_error(lambda: ledger.get_customer("c\ud800")) == "id: " + lone.format("\\uD800")
    assert argument_error(lambda: ledger.delete_invoice(5)) == "id: must be a str, got int"
    assert argument_error(lambda: ledger.report("mr\udc00r")) == "name: " + lone.format("\\uDC00")
    assert argument_error(lambda: ledger.report("mrr", params={"inter\ud800val": "month"})) == (
        "parameter name `inter\\uD800val`: " + lone.format("\\uD800"))
    # Invoices are read a chunk at a time: the index is the list's.
    invoice = {"id": "i", "customer_id": "a", "type": "one-time", "invoice_date": "2024-01-01",
               "amount": 100, "currency": "USD"}
    with pytest.raises(TypeError) as error:
        ledger.upsert_invoices([invoice] * 5000 + [{**invoice, "amount": 2 ** 64}])
    assert str(error.value) == (
        "records[5000]: field `amount`: integer 18446744073709551616 does not fit in 64 bits")
    # Nothing of a refused call is stored.
    assert ledger.list_customers()["count"] == 0
    assert ledger.list_invoices()["count"] == 0
