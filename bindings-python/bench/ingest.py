"""Invoices into a ledger from Python: the generated data set (the
generator's JSONL, ``generate N DIR``) as a list of dicts (``json.loads``
per line) through ``upsert_invoices``, and as a ``pyarrow.Table``
(``pyarrow.json.read_json``, dates as timestamp columns) through the same
call. Reading the files and loading plans, customers and FX rates are not
timed. Each run starts from a fresh ledger; prints the best of the runs and
every run, and checks that both paths store every invoice and give the same
summary report. After each table load it also times ``movements_arrow``
(every movement as a ``pyarrow.Table``): the first call, which builds and
replays every customer's timeline, and a second, warm one; then the same
movements as a list of dicts (``movements``).

``--arrow-only`` times the table alone (10M invoices as dicts take more
memory than the machine has). ``--loads-only`` skips the movements, so the
loads follow one another (the first in a process pays for fresh memory,
the later ones reuse what the one before freed).

Usage: python bench/ingest.py DIR [--runs N] [--arrow-only] [--loads-only]   (with the
release extension installed: ``maturin develop --release`` or the wheel of
``maturin build --release``)"""

from __future__ import annotations

import json
import pathlib
import platform
import sys
import time
from typing import Any, Dict, List

import pyarrow
import pyarrow.compute
import pyarrow.json

import submetrics

AS_OF = "2025-01-01T00:00:00Z"


def jsonl(directory: pathlib.Path, name: str) -> List[Dict[str, Any]]:
    with open(directory / f"{name}.jsonl", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def main() -> None:
    usage = "usage: python bench/ingest.py DIR [--runs N] [--arrow-only] [--loads-only]"
    args = sys.argv[1:]
    arrow_only = "--arrow-only" in args
    loads_only = "--loads-only" in args
    args = [a for a in args if a not in ("--arrow-only", "--loads-only")]
    if len(args) not in (1, 3) or (len(args) == 3 and args[1] != "--runs"):
        sys.exit(usage)
    directory = pathlib.Path(args[0])
    runs = int(args[2]) if len(args) == 3 else 3
    plans, customers, rates = (jsonl(directory, n) for n in ("plans", "customers", "fx_rates"))
    dicts = [] if arrow_only else jsonl(directory, "invoices")
    table = pyarrow.json.read_json(directory / "invoices.jsonl")

    def ledger() -> submetrics.Ledger:
        l = submetrics.Ledger(base_currency="USD")
        l.upsert_plans(plans)
        l.upsert_customers(customers)
        l.load_fx_rates(rates)
        return l

    times: Dict[str, List[float]] = {
        "dicts": [], "arrow": [], "movements_first": [], "movements_warm": [], "movements_dicts": [],
    }
    movement_rows = 0
    summaries: Dict[str, Any] = {}
    for _ in range(0 if arrow_only else runs):
        l = ledger()
        started = time.perf_counter()
        results = l.upsert_invoices(dicts)
        times["dicts"].append(time.perf_counter() - started)
        rejected = sum(1 for r in results if r["import_status"] != "inserted")
        assert len(results) == len(dicts) and rejected == 0, f"dicts: {rejected} rejected"
        summaries["dicts"] = l.report("summary", as_of=AS_OF)
        del l, results
    for _ in range(runs):
        l = ledger()
        started = time.perf_counter()
        results = l.upsert_invoices(table)
        times["arrow"].append(time.perf_counter() - started)
        errors = pyarrow.compute.sum(pyarrow.compute.equal(results["import_status"], "error")).as_py()
        assert results.num_rows == table.num_rows and not errors, f"arrow: {errors} rejected"
        if loads_only:
            summaries["arrow"] = l.report("summary", as_of=AS_OF)
            del l, results
            continue
        for phase in ("movements_first", "movements_warm"):
            started = time.perf_counter()
            movements = l.movements_arrow(as_of=AS_OF)
            times[phase].append(time.perf_counter() - started)
            assert movement_rows in (0, movements.num_rows), "the movements differ between runs"
            movement_rows = movements.num_rows
            del movements
        started = time.perf_counter()
        rows = l.movements(as_of=AS_OF)
        times["movements_dicts"].append(time.perf_counter() - started)
        assert len(rows) == movement_rows, "the dicts and the table hold different movements"
        del rows
        summaries["arrow"] = l.report("summary", as_of=AS_OF)
        del l, results
    if not arrow_only:
        assert len(dicts) == table.num_rows, "the paths read different counts"
        assert summaries["dicts"] == summaries["arrow"], f"the paths disagree: {summaries}"

    count = table.num_rows
    print(f"{count} invoices, {len(customers)} customers; best of {runs} runs (Python {platform.python_version()})")
    print("| path | best | runs | invoices/s (best) |")
    print("|---|---|---|---|")
    for name, label in (("dicts", "`upsert_invoices(list of dicts)`"), ("arrow", "`upsert_invoices(pyarrow.Table)`")):
        if not times[name]:
            continue
        best = min(times[name])
        every = ", ".join(f"{t:.3f}" for t in times[name])
        print(f"| {label} | {best:.3f} s | {every} | {count / best / 1e6:.2f}M |")
    for name, label in (
        ("movements_first", f"`movements_arrow()`, first ({movement_rows} rows)"),
        ("movements_warm", "`movements_arrow()`, warm"),
        ("movements_dicts", "`movements()`, a list of dicts, warm"),
    ):
        if not times[name]:
            continue
        every = ", ".join(f"{t:.3f}" for t in times[name])
        print(f"| {label} | {min(times[name]):.3f} s | {every} | |")
    print(json.dumps({"invoices": count, "movements": movement_rows, "runs": runs, "seconds": times, "summary": summaries["arrow"]}))


if __name__ == "__main__":
    main()
