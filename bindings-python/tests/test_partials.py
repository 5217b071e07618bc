"""Reports in parts through the real extension: two ledgers over disjoint
customers give partials that merge and finish into the report of one ledger
over all of them."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

import submetrics

PLANS = [
    {"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"},
    {"id": "e", "name": "Euro monthly", "interval": "month", "currency": "EUR"},
]
RATES = [{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}]
AS_OF = "2024-06-30"


def customer(i: int) -> Dict[str, Any]:
    return {"id": f"c{i}", "name": f"Customer {i}", "country": ["DE", "US", "FR"][i % 3]}


def invoices(i: int) -> List[Dict[str, Any]]:
    plan, currency = ("e", "EUR") if i % 2 else ("m", "USD")
    out = [
        {"id": f"i{i}-{month}", "customer_id": f"c{i}", "type": "subscription", "plan_id": plan,
         "invoice_date": f"2024-0{month}-0{1 + i % 5}", "amount": 1000 * (i + 1) + 100 * month,
         "currency": currency}
        for month in range(1, 4 + i % 3)
    ]
    return out


def ledger(ids: List[int]) -> submetrics.Ledger:
    l = submetrics.Ledger(base_currency="USD")
    l.load_fx_rates(RATES)
    l.upsert_plans(PLANS)
    l.upsert_customers([customer(i) for i in ids])
    l.upsert_invoices([inv for i in ids for inv in invoices(i)])
    return l


REQUESTS = [
    ("summary", {}),
    ("mrr", {"interval": "month", "date": "20240101-20240630"}),
    ("mrr", {"breakdown": "currency"}),
    ("mrr-table", {"baseCurrency": "EUR"}),
    ("map", {}),
    ("cohort", {"metric": "mrr"}),
    ("transactions", {"interval": "week"}),
    ("transactions-detail", {"customer": "c1 c4"}),
    ("customer-concentration", {"limit": "3", "offset": "1"}),
    ("custom-variables", {}),
]


@pytest.mark.parametrize("name,params", REQUESTS)
def test_two_ledgers_merged_and_finished_equal_one_ledger(name: str, params: Dict[str, str]) -> None:
    whole = ledger(list(range(7)))
    first, second = ledger([0, 2, 4, 6]), ledger([1, 3, 5])
    parts = [l.report_partial(name, AS_OF, params) for l in (first, second)]
    assert all(isinstance(p, bytes) for p in parts)
    merged = submetrics.merge_partials(iter(parts))
    assert submetrics.finish_partial(merged) == whole.report(name, AS_OF, params)
    assert submetrics.finish_partial(submetrics.merge_partials(reversed(parts))) == whole.report(
        name, AS_OF, params
    )


def test_keywords_are_the_report_parameters() -> None:
    whole = ledger(list(range(5)))
    parts = [l.report_partial("customer-concentration", AS_OF, limit=2) for l in (ledger([0, 1]), ledger([2, 3, 4]))]
    assert submetrics.finish_partial(submetrics.merge_partials(parts)) == whole.report(
        "customer-concentration", AS_OF, limit=2
    )


def test_partials_of_different_requests_and_bad_bytes_raise_invalid_partial() -> None:
    l = ledger([0, 1])
    with pytest.raises(submetrics.InvalidPartialError, match="their reports differ"):
        submetrics.merge_partials([l.report_partial("summary", AS_OF), l.report_partial("map", AS_OF)])
    with pytest.raises(submetrics.InvalidPartialError, match="magic"):
        submetrics.finish_partial(b"not a partial")
    with pytest.raises(submetrics.InvalidPartialError, match="none to merge"):
        submetrics.merge_partials([])
    with pytest.raises(submetrics.UnknownReportError):
        l.report_partial("nope", AS_OF)
    with pytest.raises(submetrics.InvalidQueryError, match="curency"):
        l.report_partial("summary", AS_OF, curency="EUR")
