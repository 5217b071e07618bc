"""Computes monthly MRR movements with DuckDB SQL (movements.sql) over the
JSONL files of a generated data set and prints JSON: load and query times
and the result rows. Usage: duckdb_movements.py DIR AS_OF_DATE [GRACE_DAYS]"""

import json
import pathlib
import statistics
import sys
import time

import duckdb


def main() -> None:
    directory, as_of = sys.argv[1], sys.argv[2]
    grace = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    con = duckdb.connect()
    started = time.perf_counter()
    con.execute(
        f"""CREATE TABLE plans AS SELECT * FROM read_json('{directory}/plans.jsonl', format='newline_delimited',
            columns={{id: 'VARCHAR', "interval": 'VARCHAR', interval_count: 'INTEGER', currency: 'VARCHAR'}})"""
    )
    con.execute(
        f"""CREATE TABLE invoices AS SELECT * FROM read_json('{directory}/invoices.jsonl', format='newline_delimited',
            columns={{id: 'VARCHAR', customer_id: 'VARCHAR', type: 'VARCHAR', invoice_date: 'DATE', amount: 'BIGINT',
                      currency: 'VARCHAR', plan_id: 'VARCHAR', status: 'VARCHAR', period_start: 'DATE',
                      period_end: 'DATE', refunded_invoice_id: 'VARCHAR'}})"""
    )
    load_ms = (time.perf_counter() - started) * 1000
    sql = (pathlib.Path(__file__).parent / "movements.sql").read_text()
    macro, query = sql.split(";", 1)[0], sql.split(";", 1)[1]
    con.execute(macro)
    query = query.replace("{as_of}", f"DATE '{as_of}'").replace("{grace}", str(grace)).strip().rstrip(";")
    timings, rows = [], []
    for _ in range(3):
        started = time.perf_counter()
        rows = con.execute(query).fetchall()
        timings.append((time.perf_counter() - started) * 1000)
    print(
        json.dumps(
            {
                "duckdb": duckdb.__version__,
                "load_ms": load_ms,
                "query_ms": statistics.median(timings),
                "rows": [
                    {"month": m, "currency": c, "kind": k, "mrr_change": v, "movements": n}
                    for (m, c, k, v, n) in rows
                ],
            }
        )
    )


if __name__ == "__main__":
    main()
