"""Files -> monthly MRR: the same generated data as JSONL, CSV and Parquet
(the generator writes JSONL; DuckDB converts it: every collection to
Parquet, the invoices to CSV, the other collections staying JSONL beside
them),
read and reported by `submetrics local` (one process per run: read, build,
the monthly `mrr` report over the whole history), by DuckDB (its own
readers, then the monthly movements of movements.sql) and by Polars (its
own readers, then the same movements in its lazy expression API,
movements_polars.py), and submetrics once more on the Parquet set with its
invoices in date order (as billing platforms export them; the generator
writes them customer by customer). Asserts that submetrics gives the same
monthly numbers from every format and order, DuckDB and Polars the same rows from every
format and as each other, and submetrics' own movements (listed by one
more, untimed run) the same rows grouped as theirs. Prints a Markdown
table and the JSON of every measure.

Usage: files.py INVOICES WORKDIR SUBMETRICS_BINARY GENERATE_BINARY"""

import collections
import csv
import datetime
import json
import pathlib
import re
import subprocess
import sys
import time

import duckdb
import polars

from movements_polars import monthly_movements

SQL = (pathlib.Path(__file__).parent / "movements.sql").read_text()
INVOICE_COLUMNS = """{id: 'VARCHAR', customer_id: 'VARCHAR', type: 'VARCHAR', invoice_date: 'DATE', amount: 'BIGINT', quantity: 'BIGINT',
    currency: 'VARCHAR', plan_id: 'VARCHAR', status: 'VARCHAR', period_start: 'DATE',
    period_end: 'DATE', refunded_invoice_id: 'VARCHAR'}"""
PLAN_COLUMNS = """{id: 'VARCHAR', "interval": 'VARCHAR', interval_count: 'INTEGER', currency: 'VARCHAR'}"""
# The same columns for Polars' readers.
POLARS_INVOICE_SCHEMA = {
    "id": polars.String, "customer_id": polars.String, "type": polars.String, "invoice_date": polars.Date,
    "amount": polars.Int64, "quantity": polars.Int64, "currency": polars.String, "plan_id": polars.String,
    "status": polars.String, "period_start": polars.Date, "period_end": polars.Date, "refunded_invoice_id": polars.String,
}
POLARS_PLAN_SCHEMA = {"id": polars.String, "interval": polars.String, "interval_count": polars.Int64, "currency": polars.String}
GRACE_DAYS = 7


def generate(binary: str, count: int, directory: pathlib.Path, fmt: str) -> str:
    """Writes the data set; answers the end of its history (as_of)."""
    out = subprocess.run([binary, str(count), str(directory), fmt], check=True, capture_output=True, text=True)
    return re.search(r"--as-of (\S+)", out.stdout).group(1)


def to_parquet(jsonl: pathlib.Path, parquet: pathlib.Path) -> None:
    """Every collection of the JSONL set as Parquet (DuckDB types: dates as
    DATE, nested fields as lists and structs)."""
    parquet.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    for path in sorted(jsonl.glob("*.jsonl")):
        target = parquet / (path.stem + ".parquet")
        if path.stem == "invoices":
            source = f"read_json('{path}', format='newline_delimited', columns={INVOICE_COLUMNS})"
        else:
            source = f"read_json('{path}', format='newline_delimited')"
        con.execute(f"COPY (SELECT * FROM {source}) TO '{target}' (FORMAT parquet, COMPRESSION snappy)")


def to_parquet_by_date(parquet: pathlib.Path, dated: pathlib.Path) -> None:
    """The Parquet set with its invoices in date order (then id), as billing
    platforms export them; the generator writes them customer by customer."""
    dated.mkdir(parents=True, exist_ok=True)
    for path in sorted(parquet.glob("*.parquet")):
        if path.stem == "invoices":
            duckdb.connect().execute(
                f"COPY (SELECT * FROM read_parquet('{path}') ORDER BY invoice_date, id) "
                f"TO '{dated / path.name}' (FORMAT parquet, COMPRESSION snappy)"
            )
        else:
            (dated / path.name).write_bytes(path.read_bytes())


def to_csv(jsonl: pathlib.Path, csv: pathlib.Path) -> None:
    """The invoices as CSV (a header, dates as YYYY-MM-DD, nulls empty);
    the other collections, which hold nested fields, stay JSONL."""
    csv.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    for path in sorted(jsonl.glob("*.jsonl")):
        if path.stem == "invoices":
            con.execute(f"COPY (SELECT * FROM read_json('{path}', format='newline_delimited')) TO '{csv / 'invoices.csv'}' (HEADER)")
        else:
            (csv / path.name).write_bytes(path.read_bytes())


def submetrics(binary: str, directory: pathlib.Path, as_of: str, period: str) -> dict:
    started = time.perf_counter()
    out = subprocess.run(
        [binary, "local", "--data", str(directory), "--as-of", as_of, "--timing",
         "reports", "mrr", "--interval", "month", "--date", period],
        check=True, capture_output=True, text=True,
    )
    wall = time.perf_counter() - started
    timing = re.search(r"timing: load ([\d.]+) s, compute ([\d.]+) s", out.stderr)
    loaded = re.search(r"loaded (\d+) customers, (\d+) plans, (\d+) invoices; rejected (\d+)", out.stderr)
    report = json.loads(out.stdout)
    return {
        "wall_s": wall,
        "load_s": float(timing.group(1)),
        "compute_s": float(timing.group(2)),
        "invoices": int(loaded.group(3)),
        "rejected": int(loaded.group(4)),
        "months": [(p["date"], p["total_mrr"], p["total_customers"]) for p in report["result"]],
    }


def duck(directory: pathlib.Path, fmt: str, as_of: str) -> dict:
    con = duckdb.connect()
    started = time.perf_counter()
    if fmt == "jsonl":
        con.execute(f"CREATE TABLE plans AS SELECT * FROM read_json('{directory}/plans.jsonl', format='newline_delimited', columns={PLAN_COLUMNS})")
        con.execute(f"CREATE TABLE invoices AS SELECT * FROM read_json('{directory}/invoices.jsonl', format='newline_delimited', columns={INVOICE_COLUMNS})")
    elif fmt == "csv":
        con.execute(f"CREATE TABLE plans AS SELECT * FROM read_json('{directory}/plans.jsonl', format='newline_delimited', columns={PLAN_COLUMNS})")
        con.execute(
            f"""CREATE TABLE invoices AS SELECT id, customer_id, type, invoice_date::DATE AS invoice_date, amount::BIGINT AS amount,
                currency, plan_id, status, period_start::DATE AS period_start, period_end::DATE AS period_end, refunded_invoice_id
                FROM read_csv('{directory}/invoices.csv', all_varchar=true)"""
        )
    else:
        con.execute(f"CREATE TABLE plans AS SELECT id, \"interval\", interval_count::INTEGER AS interval_count, currency FROM read_parquet('{directory}/plans.parquet')")
        con.execute(f"CREATE TABLE invoices AS SELECT * FROM read_parquet('{directory}/invoices.parquet')")
    load = time.perf_counter() - started
    macro, query = SQL.split(";", 1)
    con.execute(macro)
    query = query.replace("{as_of}", f"DATE '{as_of[:10]}'").replace("{grace}", str(GRACE_DAYS)).strip().rstrip(";")
    started = time.perf_counter()
    rows = con.execute(query).fetchall()
    return {"load_s": load, "query_s": time.perf_counter() - started, "rows": rows}


def polars_movements(directory: pathlib.Path, fmt: str, as_of: str) -> dict:
    """Polars' readers into DataFrames (invoices and plans), then the
    monthly movements over them: the time of each, and the rows. Reading
    first keeps a lazy plan from scanning the file once per branch that
    uses the invoices."""
    started = time.perf_counter()
    if fmt == "parquet":
        invoices = polars.read_parquet(directory / "invoices.parquet")
        plans = polars.read_parquet(directory / "plans.parquet")
    else:
        plans = polars.read_ndjson(directory / "plans.jsonl", schema=POLARS_PLAN_SCHEMA)
        if fmt == "jsonl":
            invoices = polars.read_ndjson(directory / "invoices.jsonl", schema=POLARS_INVOICE_SCHEMA)
        else:
            invoices = polars.read_csv(directory / "invoices.csv", schema_overrides=POLARS_INVOICE_SCHEMA)
    load = time.perf_counter() - started
    started = time.perf_counter()
    rows = monthly_movements(invoices.lazy(), plans.lazy(), datetime.date.fromisoformat(as_of[:10]), GRACE_DAYS)
    return {"load_s": load, "query_s": time.perf_counter() - started, "rows": rows}


def submetrics_movements(binary: str, directory: pathlib.Path, as_of: str) -> list[tuple]:
    """Every movement submetrics lists (`local ... movements`), grouped as
    the peers group theirs: month, currency, type; sum of `mrr_change` (in
    the movement's currency) and count."""
    out = subprocess.run(
        [binary, "local", "--data", str(directory), "--as-of", as_of, "movements", "--format", "csv"],
        check=True, capture_output=True, text=True,
    )
    groups = collections.defaultdict(lambda: [0, 0])
    for row in csv.DictReader(out.stdout.splitlines()):
        group = groups[(row["date"][:7], row["currency"], row["type"])]
        group[0] += int(row["mrr_change"])
        group[1] += 1
    return sorted((*key, change, count) for key, (change, count) in groups.items())


def main() -> None:
    count, work = int(sys.argv[1]), pathlib.Path(sys.argv[2])
    binary, generator = sys.argv[3], sys.argv[4]
    dirs = {fmt: work / fmt for fmt in ("jsonl", "csv", "parquet")}
    as_of = generate(generator, count, dirs["jsonl"], "jsonl")
    to_csv(dirs["jsonl"], dirs["csv"])
    to_parquet(dirs["jsonl"], dirs["parquet"])
    by_date = work / "parquet-by-date"
    to_parquet_by_date(dirs["parquet"], by_date)
    end = as_of[:10]
    period = f"{int(end[:4]) - 4}{end[5:7]}01-{end.replace('-', '')}"
    results = {}
    for fmt, directory in dirs.items():
        results[fmt] = {
            "submetrics": submetrics(binary, directory, as_of, period),
            "duckdb": duck(directory, fmt, as_of),
            "polars": polars_movements(directory, fmt, as_of),
        }
    dated = submetrics(binary, by_date, as_of, period)
    months = {fmt: r["submetrics"]["months"] for fmt, r in results.items()}
    assert months["jsonl"] == months["csv"] == months["parquet"], "submetrics: the same months from every format"
    assert dated["months"] == months["parquet"], "submetrics: the same months from invoices in date order"
    rows = {fmt: sorted(r["duckdb"]["rows"]) for fmt, r in results.items()}
    assert rows["jsonl"] == rows["csv"] == rows["parquet"], "DuckDB: the same rows from every format"
    for fmt, r in results.items():
        assert sorted(r["polars"]["rows"]) == rows[fmt], f"Polars: DuckDB's rows from {fmt}"
    assert submetrics_movements(binary, dirs["parquet"], as_of) == rows["parquet"], "submetrics: the peers' movements"
    invoices = results["jsonl"]["submetrics"]["invoices"]
    print(f"{invoices} invoices stored, {len(months['jsonl'])} months, last: {months['jsonl'][-1]}")
    print(f"{len(rows['parquet'])} movement groups, equal in submetrics, DuckDB and Polars")
    print("| format | submetrics: read + build + monthly mrr (wall) | of which load / report | invoices/s | DuckDB: load + movements query | Polars: read + movements |")
    print("|---|---|---|---|---|---|")
    for fmt, r in results.items():
        s, d, p = r["submetrics"], r["duckdb"], r["polars"]
        print(
            f"| {fmt} | {s['wall_s']:.2f} s | {s['load_s']:.2f} / {s['compute_s']:.3f} s | "
            f"{s['invoices'] / s['load_s'] / 1e6:.2f}M | {d['load_s'] + d['query_s']:.2f} s "
            f"({d['load_s']:.2f} + {d['query_s']:.2f}) | {p['load_s'] + p['query_s']:.2f} s ({p['load_s']:.2f} + {p['query_s']:.2f}) |"
        )
    print(
        f"| parquet, invoices in date order | {dated['wall_s']:.2f} s | {dated['load_s']:.2f} / {dated['compute_s']:.3f} s | "
        f"{dated['invoices'] / dated['load_s'] / 1e6:.2f}M | | |"
    )
    del dated["months"]
    results["parquet-by-date"] = {"submetrics": dated}
    for r in results.values():
        if "duckdb" not in r:
            continue
        del r["duckdb"]["rows"]
        del r["polars"]["rows"]
        del r["submetrics"]["months"]
    print(json.dumps({"duckdb": duckdb.__version__, "polars": polars.__version__, "results": results}))


if __name__ == "__main__":
    main()
