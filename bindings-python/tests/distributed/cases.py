"""The cases both front ends are tested on: every scenario of the corpus
(its records after its steps, as tables) and a generated history, each
with the reports to compute and the one-ledger answers to expect."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import history
from scenario_runner import SCENARIOS, load, scenarios

import submetrics

FILES = scenarios()
#: Each file's path under testdata/scenarios, the name of its test case.
IDS = [p.relative_to(SCENARIOS).as_posix() for p in FILES]
#: Reports the scenarios ask for that are not ledger reports.
VIEWS = {"customers", "customer"}


@functools.lru_cache(maxsize=None)
def scenario(path: Path) -> Tuple[history.History, List[Any], List[Dict[str, Any]]]:
    """A scenario's history, its reports (those it expects, then every
    report with default parameters) with the answers of one ledger holding
    the history, and that ledger's movements."""
    spec, ledger, _ = load(path)
    as_of = spec["as_of"]
    case = history.export(ledger, spec.get("fx_rates"), as_of)
    single = case.ledger()
    asked = [(r["name"], dict(r.get("params", {}))) for r in spec.get("expect", {}).get("reports", [])
             if r["name"] not in VIEWS]
    answers = history.queries(single, as_of, asked)
    # The exported records make the scenario's ledger again.
    for (name, params), answer in answers:
        assert ledger.report(name, as_of, params) == answer, (name, params)
    return case, answers, single.movements(as_of)


@functools.lru_cache(maxsize=None)
def generated() -> Tuple[history.History, List[Any], List[Dict[str, Any]]]:
    case = history.generated()
    single = case.ledger()
    return case, history.queries(single, case.as_of, history.FAMILIES), single.movements(case.as_of)


def one_report(answers: List[Any]) -> Any:
    """The monthly MRR report with its answer (or, while the core computes
    it in parts no more, a report with parameters)."""
    for answer in answers:
        if answer[0] == ("mrr", {"date": "20230101-20241231"}):
            return answer
    return next(answer for answer in answers if answer[0][1])


def sorted_rows(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Movement rows in one order whatever the partitioning."""
    return sorted(rows, key=lambda row: json.dumps(row, sort_keys=True))


def check_reports(answers: List[Any], got: List[Dict[str, Any]]) -> None:
    assert len(got) == len(answers)
    for ((name, params), expected), actual in zip(answers, got):
        assert actual == expected, f"report {name} {params}"


def testable(case: history.History) -> bool:
    """Whether a scenario has invoices and customers to distribute."""
    return case.invoices.num_rows > 0 and case.customers.num_rows > 0 and "name" in case.customers.column_names


def report_count() -> int:
    return len(submetrics.report_names())
