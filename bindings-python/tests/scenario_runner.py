"""Runs a shared scenario file (testdata/scenarios, format SCENARIOS.md)
through the Python API; mirrors the Rust runner's subset matching, and its
reports expected to fail (``error``: the exception's code and message)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, List, Optional, Tuple

import submetrics

SCENARIOS = Path(__file__).resolve().parents[2] / "testdata" / "scenarios"


def scenario_files() -> List[str]:
    """Every scenario file under SCENARIOS, in its folders to any depth: the
    paths relative to it, ``/``-separated, sorted (each names a test case)."""
    return sorted(p.relative_to(SCENARIOS).as_posix() for p in SCENARIOS.rglob("*.json"))

UPSERT = {
    "data_sources": "upsert_data_sources",
    "customers": "upsert_customers",
    "plans": "upsert_plans",
    "plan_groups": "upsert_plan_groups",
    "invoices": "upsert_invoices",
}
DELETE = {
    "data_sources": "delete_data_source",
    "customers": "delete_customer",
    "plans": "delete_plan",
    "plan_groups": "delete_plan_group",
    "invoices": "delete_invoice",
}


def subset_difference(expected: Any, actual: Any, path: str) -> Optional[str]:
    """The first place where ``actual`` does not contain ``expected``."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path}: expected an object, got {json.dumps(actual)}"
        for key, value in expected.items():
            if key not in actual:
                return f"{path}.{key}: missing"
            diff = subset_difference(value, actual[key], f"{path}.{key}")
            if diff:
                return diff
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{path}: expected {len(expected)} items, got {json.dumps(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            diff = subset_difference(e, a, f"{path}[{i}]")
            if diff:
                return diff
        return None
    if type(expected) is int and type(actual) is int:
        # Integers compare exactly, past the 53 bits a float holds.
        return None if expected == actual else f"{path}: expected {expected}, got {actual}"
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        if isinstance(actual, (int, float)) and not isinstance(actual, bool) and math.isclose(expected, actual, rel_tol=0, abs_tol=1e-6):
            return None
        return f"{path}: expected {expected}, got {json.dumps(actual)}"
    if expected != actual:
        return f"{path}: expected {json.dumps(expected)}, got {json.dumps(actual)}"
    return None


def scenarios() -> List[Path]:
    """Every scenario file of the corpus, in its subfolders too, by path."""
    return sorted(SCENARIOS.rglob("*.json"))


def load(path: Path) -> Tuple[Any, submetrics.Ledger, List[Tuple[str, str, str]]]:
    """The scenario of ``path``, its ledger after every record and step,
    and the records rejected on the way (collection, id, error)."""
    scenario = json.loads(path.read_text())
    ledger = submetrics.Ledger(**scenario.get("config", {}))
    rejections: List[Tuple[str, str, str]] = []

    def upsert(collection: str, records: List[Any]) -> None:
        for result in getattr(ledger, UPSERT[collection])(records):
            if result["import_status"] == "error":
                rejections.append((collection, result["id"], result["import_error"]))

    if "fx_rates" in scenario:
        ledger.load_fx_rates(scenario["fx_rates"])
    for collection in UPSERT:
        if collection in scenario:
            upsert(collection, scenario[collection])
    for step in scenario.get("steps", []):
        if "upsert" in step:
            upsert(step["upsert"], step.get("records", []))
        elif "delete" in step:
            try:
                getattr(ledger, DELETE[step["delete"]])(step["id"])
            except submetrics.SubmetricsError as error:
                rejections.append((step["delete"], step["id"], str(error)))
        elif "config" in step:
            ledger.update_settings(**step["config"])
    return scenario, ledger, rejections


def run(path: Path) -> Tuple[List[str], List[str]]:
    """Runs one scenario; returns (failures, reports the core does not know)."""
    scenario, ledger, rejections = load(path)
    failures: List[str] = []
    expect = scenario.get("expect", {})
    as_of = scenario["as_of"]
    if "movements" in expect:
        diff = subset_difference(expect["movements"], ledger.movements(as_of), "$.expect.movements")
        if diff:
            failures.append(diff)
    errors = expect.get("errors", [])
    for i, expected in enumerate(errors):
        if not any(c == expected["record"] and r == expected["id"] and expected["contains"] in t for c, r, t in rejections):
            failures.append(f"$.expect.errors[{i}]: no rejection like {expected}; got {rejections}")
    if len(rejections) > len(errors):
        failures.append(f"$.expect.errors: unexpected rejections {rejections}")
    unknown: List[str] = []
    for i, report in enumerate(expect.get("reports", [])):
        name, params = report["name"], dict(report.get("params", {}))
        try:
            if name == "customers":
                actual = ledger.customers(as_of, params)
            elif name == "customer":
                actual = ledger.customer(params.pop("id"), as_of, params)
            else:
                actual = ledger.report(name, as_of, params)
        except submetrics.UnknownReportError:
            unknown.append(name)
            continue
        except submetrics.SubmetricsError as error:
            if "error" not in report:
                raise
            actual = {"code": error.code, "message": str(error)}
            diff = subset_difference(report["error"], actual, f"$.expect.reports[{i}].error")
            if diff:
                failures.append(f"report {name}: {diff}")
            continue
        if "error" in report:
            failures.append(f"report {name}: answered, expected the error {report['error']}")
            continue
        diff = subset_difference(report["result"], actual, f"$.expect.reports[{i}].result")
        if diff:
            failures.append(f"report {name}: {diff}")
    return failures, unknown
