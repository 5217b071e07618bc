"""Reports and movements of a generated history read from Parquet, by one
ledger, by Spark in local mode and by a Dask LocalCluster (two workers of
one thread each) through submetrics.distributed, at several partition
counts: wall times, the overhead of one more partition, the size of a
report partial. Asserts that every engine answers what the single ledger
answers. Prints a Markdown table and the JSON of every measure.

Usage: scale_out.py INVOICES WORKDIR GENERATE_BINARY [PARTITIONS...]
(default partitions: 2 8 32). The generator and the Parquet conversion are
those of files.py."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import sys
import time
from typing import Any, Dict, List

import numpy
import pandas
import pyarrow
import pyarrow.parquet as pq

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "peer"))
import files  # noqa: E402  (the generator and the Parquet conversion)

import submetrics  # noqa: E402
from submetrics import distributed  # noqa: E402


def reports(end: str) -> List[Any]:
    """The monthly MRR report over the whole history and the summary (the
    reports the core computes in parts among them)."""
    period = f"{int(end[:4]) - 4}{end[5:7]}01-{end.replace('-', '')}"
    asked = [("mrr", {"date": period, "interval": "month"}), ("summary", {}),
             ("customer-concentration", {})]
    kept = []
    for name, params in asked:
        try:
            submetrics.Ledger().report_partial(name, "2024-01-01", params)
        except submetrics.InvalidPartialError:
            continue
        kept.append((name, params))
    return kept


def timed(f: Any) -> Any:
    started = time.perf_counter()
    value = f()
    return value, time.perf_counter() - started


def single(parquet: pathlib.Path, as_of: str, asked: List[Any]) -> Dict[str, Any]:
    def build() -> submetrics.Ledger:
        ledger = submetrics.Ledger()
        ledger.load_fx_rates(pq.read_table(parquet / "fx_rates.parquet"))
        ledger.upsert_plans(pq.read_table(parquet / "plans.parquet"))
        ledger.upsert_customers(pq.read_table(parquet / "customers.parquet"))
        ledger.upsert_invoices(pq.read_table(parquet / "invoices.parquet"))
        return ledger

    ledger, load = timed(build)
    answers, report = timed(lambda: [ledger.report(n, as_of, p) for n, p in asked])
    moves, movements = timed(lambda: ledger.movements_arrow(as_of))
    return {"ledger": ledger, "answers": answers, "movements": moves.num_rows,
            "load_s": load, "reports_s": report, "movements_s": movements}


def partial_sizes(ledger_data: Dict[str, Any], as_of: str, asked: List[Any], count: int) -> Dict[str, Any]:
    """The partials of ``count`` customer buckets built one after another
    in this process: their sizes, and the time to merge and finish them."""
    invoices, customers = ledger_data["invoices"], ledger_data["customers"]

    def bucket(ids: Any) -> Any:
        hashed = pandas.util.hash_array(ids.to_numpy(zero_copy_only=False).astype(object), categorize=False)
        return pyarrow.array((hashed % numpy.uint64(count)).astype("int64"))

    inv_bucket, cus_bucket = bucket(invoices.column("customer_id")), bucket(customers.column("id"))
    parts: List[List[bytes]] = []
    for b in range(count):
        ledger = submetrics.Ledger()
        ledger.load_fx_rates(ledger_data["fx_rates"])
        ledger.upsert_plans(ledger_data["plans"])
        ledger.upsert_customers(customers.filter(pyarrow.compute.equal(cus_bucket, b)))
        ledger.upsert_invoices(invoices.filter(pyarrow.compute.equal(inv_bucket, b)))
        parts.append([ledger.report_partial(n, as_of, p) for n, p in asked])
    finished, merge = timed(lambda: [submetrics.finish_partial(submetrics.merge_partials([p[i] for p in parts]))
                                     for i in range(len(asked))])
    sizes = {asked[i][0]: max(len(p[i]) for p in parts) for i in range(len(asked))}
    return {"partitions": count, "largest_partial_bytes": sizes, "merge_finish_s": merge, "answers": finished}


def spark_runs(parquet: pathlib.Path, as_of: str, asked: List[Any], counts: List[int], expected: Any,
               movements: int) -> Dict[str, Any]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "6g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    invoices = spark.read.parquet(str(parquet / "invoices.parquet"))
    customers = spark.read.parquet(str(parquet / "customers.parquet"))
    plans, fx = pq.read_table(parquet / "plans.parquet"), pq.read_table(parquet / "fx_rates.parquet")
    runs = {}
    first = None
    for count in [counts[0]] + counts:
        answers, wall = timed(lambda: distributed.spark_reports(invoices, customers, plans, asked, as_of=as_of,
                                                                fx_rates=fx, partitions=count))
        assert answers == expected, f"spark at {count} partitions differs from the single ledger"
        if first is None:
            first = wall  # the warm-up: worker processes start, code paths load
        else:
            runs[count] = wall
    rows, moved = timed(lambda: distributed.spark_movements(invoices, customers, plans, as_of=as_of, fx_rates=fx,
                                                            partitions=counts[0]).count())
    assert rows == movements
    spark.stop()
    return {"first_run_s": first, "reports_s": runs, "movements_s": moved}


def dask_runs(parquet: pathlib.Path, as_of: str, asked: List[Any], counts: List[int], expected: Any,
              movements: int) -> Dict[str, Any]:
    import dask.dataframe as dd
    import distributed as dist

    cluster = dist.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None, silence_logs=40)
    client = dist.Client(cluster)
    invoices = dd.read_parquet(str(parquet / "invoices.parquet"))
    customers = dd.read_parquet(str(parquet / "customers.parquet"))
    plans, fx = pq.read_table(parquet / "plans.parquet"), pq.read_table(parquet / "fx_rates.parquet")
    runs = {}
    first = None
    for count in [counts[0]] + counts:
        answers, wall = timed(lambda: distributed.dask_reports(invoices, customers, plans, asked, as_of=as_of,
                                                               fx_rates=fx, partitions=count))
        assert answers == expected, f"dask at {count} partitions differs from the single ledger"
        if first is None:
            first = wall  # the warm-up: worker processes start, code paths load
        else:
            runs[count] = wall
    rows, moved = timed(lambda: len(distributed.dask_movements(invoices, customers, plans, as_of=as_of,
                                                               fx_rates=fx, partitions=counts[0])))
    assert rows == movements
    client.close()
    cluster.close()
    return {"first_run_s": first, "reports_s": runs, "movements_s": moved}


def main() -> None:
    count, work, generator = int(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
    counts = [int(n) for n in sys.argv[4:]] or [2, 8, 32]
    jsonl, parquet = work / "jsonl", work / "parquet"
    as_of = files.generate(generator, count, jsonl, "jsonl")
    files.to_parquet(jsonl, parquet)
    shutil.rmtree(jsonl)
    asked = reports(as_of[:10])
    one = single(parquet, as_of, asked)
    data = {name: pq.read_table(parquet / f"{name}.parquet") for name in ("invoices", "customers", "plans", "fx_rates")}
    sizes = partial_sizes(data, as_of, asked, max(counts))
    assert sizes.pop("answers") == one["answers"], "merged partials differ from the single ledger"
    del data
    results = {
        "invoices": count, "reports": [n for n, _ in asked], "movements": one["movements"],
        "single": {k: v for k, v in one.items() if k.endswith("_s")},
        "partials": sizes,
        "spark": spark_runs(parquet, as_of, asked, counts, one["answers"], one["movements"]),
        "dask": dask_runs(parquet, as_of, asked, counts, one["answers"], one["movements"]),
    }
    single_s = one["load_s"] + one["reports_s"]
    print(f"{count} invoices generated, as Parquet; reports {', '.join(results['reports'])}; "
          f"{one['movements']} movements")
    print("| engine | partitions | reports (wall) | invoices/s | one more partition costs | movements (wall) |")
    print("|---|---|---|---|---|---|")
    print(f"| one ledger (load + reports) | 1 | {single_s:.2f} s | {count / single_s:,.0f} | | "
          f"{one['load_s'] + one['movements_s']:.2f} s |")
    for engine in ("spark", "dask"):
        runs = results[engine]["reports_s"]
        slope = (runs[counts[-1]] - runs[counts[0]]) / (counts[-1] - counts[0]) if len(counts) > 1 else 0.0
        for i, n in enumerate(counts):
            moved = f"{results[engine]['movements_s']:.2f} s" if i == 0 else ""
            per = f"{slope * 1000:.0f} ms" if i == 0 else ""
            print(f"| {engine} local | {n} | {runs[n]:.2f} s | {count / runs[n]:,.0f} | {per} | {moved} |")
    print(f"first run (warm-up, not in the table): spark {results['spark']['first_run_s']:.2f} s, "
          f"dask {results['dask']['first_run_s']:.2f} s")
    largest = ", ".join(f"{k} {v} B" for k, v in sizes["largest_partial_bytes"].items())
    print(f"largest partial at {sizes['partitions']} partitions: {largest}; merge + finish "
          f"{sizes['merge_finish_s'] * 1000:.1f} ms")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
