"""Reports and movements computed by Spark (local mode, partitioned by
customer) equal those of one ledger holding everything."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Tuple

import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")

import cases  # noqa: E402
import history  # noqa: E402

import submetrics  # noqa: E402
from submetrics import distributed  # noqa: E402


def frames(spark: Any, case: history.History) -> Tuple[Any, Any]:
    return spark.createDataFrame(case.invoices), spark.createDataFrame(case.customers)


def movement_rows(frame: Any) -> Any:
    return cases.sorted_rows([row.asDict() for row in frame.collect()])


@pytest.mark.parametrize("path", cases.FILES, ids=cases.IDS)
def test_scenario(spark: Any, path: Path) -> None:
    case, answers, movements = cases.scenario(path)
    invoices, customers = frames(spark, case)
    got = distributed.spark_reports(invoices, customers, case.plans, [q for q, _ in answers], partitions=3,
                                    **case.shared())
    cases.check_reports(answers, got)
    moved = distributed.spark_movements(invoices, customers, case.plans, partitions=3, **case.shared())
    assert movement_rows(moved) == cases.sorted_rows(movements)


def test_generated_history(spark: Any) -> None:
    case, answers, movements = cases.generated()
    invoices, customers = frames(spark, case)
    assert len(answers) == cases.report_count() - 3 + len(history.FAMILIES)
    got = distributed.spark_reports(invoices.repartition(4), customers, case.plans, [q for q, _ in answers],
                                    **case.shared())
    cases.check_reports(answers, got)
    moved = distributed.spark_movements(invoices, customers, case.plans, partitions=5, **case.shared())
    assert moved.rdd.getNumPartitions() == 5
    assert movement_rows(moved) == cases.sorted_rows(movements)


def test_one_report_small_frames_as_spark_frames_and_extra_columns(spark: Any) -> None:
    case, answers, _ = cases.generated()
    (name, params), expected = cases.one_report(answers)
    invoices, customers = frames(spark, case)
    invoices = invoices.withColumn("raw", invoices["id"].cast("binary")).withColumn("note", invoices["type"])
    customers = customers.withColumn("blob", customers["id"].cast("binary"))
    plans = spark.createDataFrame(history.table(case.plans))
    shared = case.shared()
    shared["fx_rates"] = spark.createDataFrame(history.table(case.fx_rates))
    for partitions in (1, 7):
        got = distributed.spark_report(invoices, customers, plans, name, partitions=partitions, **shared,
                                       **params)
        assert got == expected


def test_schema_of_movements(spark: Any) -> None:
    case, _, _ = cases.generated()
    invoices, customers = frames(spark, case)
    moved = distributed.spark_movements(invoices, customers, case.plans, customer="cus_0011", **case.shared())
    assert [(f.name, f.dataType.simpleString()) for f in moved.schema.fields] == [
        ("date", "string"), ("customer_id", "string"), ("type", "string"), ("subtype", "string"),
        ("mrr_change", "bigint"), ("mrr_change_base_currency", "bigint"), ("customer_count_change", "bigint"),
        ("quantity_change", "bigint"), ("currency", "string"), ("plans_before", "array<string>"),
        ("plans_after", "array<string>"),
    ]
    assert movement_rows(moved) == cases.sorted_rows(case.ledger().movements(case.as_of, customer="cus_0011"))


def test_errors_name_the_frame_column_parameter_and_record(spark: Any) -> None:
    case, _, _ = cases.generated()
    invoices, customers = frames(spark, case)
    with pytest.raises(submetrics.InvalidRecordError, match=r"^invoices: missing column `amount` \(or `amount_in_cents`\)$"):
        distributed.spark_report(invoices.drop("amount"), customers, case.plans, "mrr", **case.shared())
    with pytest.raises(submetrics.InvalidRecordError, match=r"^customers: missing column `name`$"):
        distributed.spark_movements(invoices, customers.drop("name"), case.plans, **case.shared())
    with pytest.raises(submetrics.InvalidQueryError, match="parameter `bogus`: report `mrr` has no such parameter"):
        distributed.spark_report(invoices, customers, case.plans, "mrr", bogus="1", **case.shared())
    with pytest.raises(submetrics.UnknownReportError):
        distributed.spark_report(invoices, customers, case.plans, "no-such-report", **case.shared())
    with pytest.raises(TypeError, match="bogus"):
        distributed.spark_movements(invoices, customers, case.plans, bogus="1", **case.shared())
    orphan = spark.createDataFrame(pa.Table.from_pylist([{
        "id": "orphan", "customer_id": "nobody", "type": "subscription", "plan_id": "basic",
        "invoice_date": "2024-01-01", "amount": 100, "currency": "USD"}]))
    with pytest.raises(submetrics.InvalidRecordError) as error:
        distributed.spark_report(invoices.unionByName(orphan, allowMissingColumns=True), customers, case.plans,
                                 "summary", **case.shared())
    assert str(error.value).startswith("invoice orphan: field `customer_id`: customer `nobody` does not exist")
    assert error.value.record_id == "orphan"
