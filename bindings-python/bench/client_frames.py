"""DataFrames from a running service, through its JSON answers and through
its Arrow streams: the Python client's movements_df and report_df (one
report, default invoices-detail) both ways, best of --runs.

Usage: client_frames.py URL API_KEY AS_OF [--report NAME] [--runs N]
(for example against the release server `target/release/load` leaves
running, or any service holding a generated data set)."""

import argparse
import time

import pandas

import submetrics
from submetrics import _native, _report_frame


def best(runs: int, make) -> tuple:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        frame = make()
        times.append(time.perf_counter() - started)
    return min(times), times, frame


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("api_key")
    parser.add_argument("as_of")
    parser.add_argument("--report", default="invoices-detail")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    client = submetrics.Client(args.url, api_key=args.api_key, timeout=600)
    ways = {
        "movements_df through JSON dicts": lambda: pandas.DataFrame(client.movements(args.as_of)),
        "movements_df through the Arrow stream": lambda: client.movements_df(args.as_of),
        f"report_df({args.report}) through the JSON answer": lambda: _report_frame(
            _native.report_table(client.report(args.report, args.as_of), args.report)
        ),
        f"report_df({args.report}) through the Arrow stream": lambda: client.report_df(args.report, args.as_of),
    }
    for label, make in ways.items():
        fastest, times, frame = best(args.runs, make)
        runs = ", ".join(f"{t:.2f}" for t in times)
        print(f"{label}: {fastest:.2f} s (runs {runs}; {len(frame)} rows)", flush=True)


if __name__ == "__main__":
    main()
