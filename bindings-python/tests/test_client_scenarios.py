"""submetrics.Client and an embedded Ledger answer alike on every shared
scenario: each loaded through the methods both have, into a Ledger and into
its own account of a real submetrics-server."""

from __future__ import annotations

import json
from typing import Any, Dict, Iterator, List, Union

import pytest

import submetrics
from scenario_runner import SCENARIOS, UPSERT, scenario_files
from service import Service

Target = Union[submetrics.Ledger, submetrics.Client]


def _scenario_load(target: Target, scenario: Dict[str, Any]) -> Dict[str, str]:
    """Loads a scenario through the methods Ledger and Client share; returns
    the ids the plan groups got (the service assigns them)."""
    group_ids: Dict[str, str] = {}

    def upsert(collection: str, records: List[Any]) -> None:
        if collection == "plan_groups":
            # Both give ids pg_1, pg_2, ... in order; the scenario's own ids are mapped.
            for record in records:
                given = record.get("id")
                result = target.upsert_plan_groups({k: v for k, v in record.items() if k != "id"})
                if given and result[0]["import_status"] == "inserted":
                    group_ids[given] = result[0]["id"]
            return
        getattr(target, UPSERT[collection])(records)

    if "fx_rates" in scenario:
        target.load_fx_rates(scenario["fx_rates"])
    for collection in UPSERT:
        if collection in scenario:
            upsert(collection, scenario[collection])
    for step in scenario.get("steps", []):
        if "upsert" in step:
            upsert(step["upsert"], step.get("records", []))
        elif "delete" in step:
            try:
                getattr(target, "delete_" + step["delete"].rstrip("s"))(step["id"])
            except submetrics.SubmetricsError:
                pass
        elif "config" in step:
            target.update_settings(**step["config"])
    return group_ids


def _mapped(params: Dict[str, Any], group_ids: Dict[str, str]) -> Dict[str, Any]:
    def swap(value: Any) -> Any:
        if isinstance(value, str):
            return " ".join(group_ids.get(part, part) for part in value.replace(",", " ").split()) if any(g in value for g in group_ids) else value
        return value

    return {name: swap(value) for name, value in params.items()}


SCENARIO_FILES = scenario_files()


@pytest.fixture(scope="module")
def scenario_service() -> Iterator[Service]:
    running = Service(accounts=len(SCENARIO_FILES))
    yield running
    running.stop()


def test_the_scenarios_hold_reports_to_compare() -> None:
    reports = sum(len(json.loads((SCENARIOS / name).read_text()).get("expect", {}).get("reports", [])) for name in SCENARIO_FILES)
    assert reports > 300, reports


@pytest.mark.parametrize("file", SCENARIO_FILES, ids=SCENARIO_FILES)
def test_client_and_ledger_answer_alike_on_the_scenario(file: str, scenario_service: Service) -> None:
    key = scenario_service.keys[SCENARIO_FILES.index(file)]
    scenario = json.loads((SCENARIOS / file).read_text())
    config = scenario.get("config", {})
    ledger = submetrics.Ledger(**config)
    client = submetrics.Client(scenario_service.url, api_key=key)
    if config:
        client.update_settings(**config)
    group_ids = _scenario_load(ledger, scenario)
    assert _scenario_load(client, scenario) == group_ids
    as_of = scenario["as_of"]
    assert client.movements(as_of) == ledger.movements(as_of)
    for report in scenario.get("expect", {}).get("reports", []):
        name, params = report["name"], _mapped(dict(report.get("params", {})), group_ids)
        if name == "customers":
            remote, local = client.customers(as_of, params), ledger.customers(as_of, params)
        elif name == "customer":
            id = params.pop("id")
            remote, local = client.customer(id, as_of, params), ledger.customer(id, as_of, params)
        else:
            try:
                local = ledger.report(name, as_of, params)
            except submetrics.SubmetricsError as error:
                with pytest.raises(type(error)):
                    client.report(name, as_of, params)
                continue
            remote = client.report(name, as_of, params)
        assert remote == local, f"{name} {params}"
