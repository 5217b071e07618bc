"""Every shared scenario file passes through the Python API."""

from pathlib import Path

import pytest

from scenario_runner import SCENARIOS, run

FILES = sorted(SCENARIOS.glob("*.json"))


def test_there_are_scenarios() -> None:
    assert len(FILES) > 60


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_scenario(path: Path) -> None:
    failures, unknown = run(path)
    assert failures == []
    assert unknown == [], f"reports the core does not know: {', '.join(unknown)}"
