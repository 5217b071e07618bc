"""Reports and movements computed by Dask (a LocalCluster of two workers,
partitioned by customer) equal those of one ledger holding everything."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Tuple

import pytest

dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

import cases  # noqa: E402
import history  # noqa: E402

import submetrics  # noqa: E402
from submetrics import distributed  # noqa: E402


def frames(case: history.History, npartitions: int = 2) -> Tuple[Any, Any]:
    def frame(table: Any) -> Any:
        return dd.from_pandas(table.to_pandas(types_mapper=pd.ArrowDtype), npartitions=npartitions)

    return frame(case.invoices), frame(case.customers)


def movement_rows(frame: Any) -> Any:
    table = pa.Table.from_pandas(frame.compute(), preserve_index=False)
    return cases.sorted_rows(table.cast(distributed._movement_schema()).to_pylist())


@pytest.mark.parametrize("path", cases.FILES, ids=cases.IDS)
def test_scenario(dask_client: Any, path: Path) -> None:
    case, answers, movements = cases.scenario(path)
    invoices, customers = frames(case)
    got = distributed.dask_reports(invoices, customers, case.plans, [q for q, _ in answers], partitions=3,
                                   **case.shared())
    cases.check_reports(answers, got)
    moved = distributed.dask_movements(invoices, customers, case.plans, partitions=3, **case.shared())
    assert movement_rows(moved) == cases.sorted_rows(movements)


def test_generated_history(dask_client: Any) -> None:
    case, answers, movements = cases.generated()
    invoices, customers = frames(case, npartitions=4)
    got = distributed.dask_reports(invoices, customers, case.plans, [q for q, _ in answers], split_every=2,
                                   **case.shared())
    cases.check_reports(answers, got)
    moved = distributed.dask_movements(invoices, customers, case.plans, partitions=5, **case.shared())
    assert moved.npartitions == 5
    assert list(moved.columns) == distributed._movement_schema().names
    assert movement_rows(moved) == cases.sorted_rows(movements)


def test_one_report_small_frames_as_dask_frames_and_extra_columns(dask_client: Any) -> None:
    case, answers, _ = cases.generated()
    (name, params), expected = cases.one_report(answers)
    invoices, customers = frames(case, npartitions=3)
    invoices = invoices.assign(raw=invoices["id"].map(lambda v: v.encode(), meta=("raw", object)))
    customers = customers.assign(note="x")
    plans = dd.from_pandas(pd.DataFrame(case.plans), npartitions=1)
    shared = case.shared()
    shared["fx_rates"] = pd.DataFrame(case.fx_rates)
    for partitions in (1, 6):
        got = distributed.dask_report(invoices, customers, plans, name, partitions=partitions, **shared,
                                      **params)
        assert got == expected


def test_errors_name_the_frame_column_parameter_and_record(dask_client: Any) -> None:
    case, _, _ = cases.generated()
    invoices, customers = frames(case)
    with pytest.raises(submetrics.InvalidRecordError, match=r"^invoices: missing column `customer_id` \(or `customer_external_id`, `customer`\)$"):
        distributed.dask_report(invoices.drop(columns=["customer_id"]), customers, case.plans, "mrr",
                                **case.shared())
    with pytest.raises(submetrics.InvalidRecordError, match=r"^plans: missing column `currency`$"):
        distributed.dask_movements(invoices, customers, pd.DataFrame(case.plans).drop(columns=["currency"]),
                                   **case.shared())
    with pytest.raises(submetrics.InvalidQueryError, match="parameter `bogus`: report `mrr` has no such parameter"):
        distributed.dask_report(invoices, customers, case.plans, "mrr", bogus="1", **case.shared())
    with pytest.raises(TypeError, match="bogus"):
        distributed.dask_movements(invoices, customers, case.plans, bogus="1", **case.shared())
    # A pair of another shape used to fail unpacking, naming nothing.
    for bad in (("mrr",), ("mrr", {"interval": "month"}, "extra"), ("mrr", "interval=month"), 7):
        with pytest.raises(TypeError, match=r"^reports\[1\]: a report name or a \(name, params\) pair"):
            distributed.dask_reports(invoices, customers, case.plans, ["summary", bad], **case.shared())
    with pytest.raises(submetrics.InvalidQueryError, match="split_every"):
        distributed.dask_report(invoices, customers, case.plans, "mrr", split_every=1, **case.shared())
    orphan = dd.from_pandas(pd.DataFrame([{
        "id": "orphan", "customer_id": "nobody", "type": "subscription", "plan_id": "basic",
        "invoice_date": "2024-01-01", "amount": 100, "currency": "USD"}]), npartitions=1)
    with pytest.raises(submetrics.InvalidRecordError, match="^invoice orphan: field `customer_id`: customer `nobody` does not exist"):
        distributed.dask_report(dd.concat([invoices[list(orphan.columns)], orphan]), customers, case.plans,
                                "summary", **case.shared())
