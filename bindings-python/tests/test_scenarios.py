"""Every shared scenario file passes through the Python API; each file is a
test case named by its path under testdata/scenarios."""

import pytest

from scenario_runner import SCENARIOS, run, scenario_files

FILES = scenario_files()


def test_there_are_scenarios() -> None:
    assert len(FILES) > 60


@pytest.mark.parametrize("name", FILES, ids=FILES)
def test_scenario(name: str) -> None:
    failures, unknown = run(SCENARIOS / name)
    assert failures == []
    assert unknown == [], f"reports the core does not know: {', '.join(unknown)}"
