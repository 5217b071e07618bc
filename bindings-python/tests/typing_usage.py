"""A typed use of the package, checked by mypy --strict in the test suite."""

from __future__ import annotations

import datetime
from typing import Any, Dict, List

import submetrics


def monthly_mrr(ledger: submetrics.Ledger) -> List[int]:
    report: Dict[str, Any] = ledger.report("mrr", datetime.date(2024, 3, 1), date="20240101-20240229")
    return [int(period["total_mrr"]) for period in report["result"]]


def load(ledger: submetrics.Ledger) -> int:
    results = ledger.upsert_customers([{"id": "A", "name": "Acme"}])
    try:
        ledger.get_plan("missing")
    except submetrics.NotFoundError as error:
        assert error.code == "not_found"
    return len(results)


def frames(ledger: submetrics.Ledger) -> int:
    moves = ledger.movements_df("2024-03-01", kinds=["new"])
    table = ledger.report_df("mrr-table", "2024-03-01", {"date": "20240101-20240229"})
    return len(moves) + len(table)


def records_of_any_shape(ledger: submetrics.Ledger) -> List[Dict[str, Any]]:
    rows = ({"id": "B", "name": "Beta"},)
    return ledger.upsert_customers(rows) + ledger.upsert_plans({"id": "m", "name": "M"})


def client_usage() -> None:
    """The service client types its answers from the description."""
    client = submetrics.Client("http://localhost:8080", api_key="sm_x", timeout=5)
    plan = client.get_plan("m")
    name: str = plan["name"]
    results = client.upsert_plans({"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"})
    status: str = results[0]["import_status"]
    movements = client.movements("2024-06-01", kinds=["new"])
    change: int = movements[0]["mrr_change"]
    remote: submetrics.AsyncClient = submetrics.AsyncClient()
    del name, status, change, remote


def partials_usage(ledgers: List[submetrics.Ledger]) -> Dict[str, Any]:
    """Partials are bytes; merged and finished they are the report's dict."""
    parts: List[bytes] = [l.report_partial("mrr", "2024-06-01", interval="month") for l in ledgers]
    merged: bytes = submetrics.merge_partials(parts)
    return submetrics.finish_partial(merged)
