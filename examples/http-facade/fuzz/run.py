"""Property-based fuzzing of the REST service with schemathesis.

Starts the server binary (``SUBMETRICS_SERVER_BIN``, else the debug build
under ``CARGO_TARGET_DIR`` or ``target``) on a free loopback port with a fresh
data directory and an owner key, seeds the account with a plan, a customer
and an invoice, and runs schemathesis against the service's own
``/openapi.json``: a bounded number of examples per operation (``FUZZ_EXAMPLES``,
default 25) under a time budget (``FUZZ_MAX_TIME`` seconds, default 150), with reports in ``FUZZ_REPORT_DIR`` when set,
checking that no answer is a 5xx and that every answer matches the schema the
description gives for its status.

Operations that would make the service send requests to other hosts
(webhook targets, notification and digest settings) are left out: their
targets must be public addresses, and a test sends traffic to this machine
only.

Then, on the same service, schemathesis' stateful phase (unless
``FUZZ_STATEFUL=0``) for ``FUZZ_STATEFUL_TIME`` seconds (default 60): sequences
of calls that feed one answer's ids into the next request, along the links
schemathesis infers from the description (it has none of its own), with the
same checks; it counts as one more test. It runs apart from the other phases
because they share one time budget, which the fuzzing phase spends alone.

Prints ``fuzz: N passed, N failed`` last, one test per operation, and exits
non-zero when any operation failed or none ran. An operation on which
schemathesis itself crashed (an ``error`` in its report, not a failed check:
its coverage phase now and then stops on an internal error of the Python
runtime) is run once more on its own, and counts as that run says.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
OWNER_KEY = "owner-key-for-fuzzing-0123456789"

# Operations whose writes set outbound targets or send to them.
EXCLUDED = [
    ("POST", "/webhooks"),
    ("PUT", "/webhooks/{id}"),
    ("POST", "/webhooks/{id}/test"),
    ("POST", "/webhooks/{id}/deliveries/{delivery_id}/redeliver"),
    ("PUT", "/settings/notifications"),
    ("POST", "/settings/notifications/digest"),
]


def binary() -> Path:
    given = os.environ.get("SUBMETRICS_SERVER_BIN")
    if given:
        return Path(given)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "debug" / "submetrics-server"


def call(url: str, method: str, path: str, body: object) -> object:
    request = urllib.request.Request(
        url + path,
        method=method,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {OWNER_KEY}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def seed(url: str) -> None:
    """One plan, customer and invoice, so reads and ids have something to find."""
    call(url, "POST", "/data/plans", {"id": "basic", "name": "Basic", "billing_freq": "month", "billing_freq_count": 1, "currency": "USD"})
    call(url, "POST", "/data/customers", {"id": "cus_1", "name": "First customer"})
    invoice = {"id": "inv_1", "customer_id": "cus_1", "type": "subscription", "invoice_date": "2024-01-01",
               "amount": 1000, "currency": "USD", "plan_id": "basic"}
    call(url, "POST", "/data/invoices", invoice)


def outcomes(junit: Path) -> dict[str, str]:
    """Each operation's outcome in a report: passed, failed (a check),
    crashed (schemathesis's own error) or skipped."""
    result = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("name", "")
        if case.find("failure") is not None:
            result[name] = "failed"
        elif case.find("error") is not None:
            result[name] = "crashed"
        elif case.find("skipped") is not None:
            result[name] = "skipped"
        else:
            result[name] = "passed"
    return result


def main() -> int:
    data = Path(tempfile.mkdtemp(prefix="submetrics-fuzz-"))
    report = Path(os.environ.get("FUZZ_REPORT_DIR", data / "report"))
    env = dict(os.environ, SUBMETRICS_OWNER_KEY=OWNER_KEY)
    server = subprocess.Popen(
        [str(binary()), "--listen", "127.0.0.1:0", "--data-dir", str(data / "db")],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = None
        for line in server.stdout:
            if line.startswith("listening on "):
                url = line.split(" ", 2)[2].strip()
                break
        if url is None:
            print("fuzz: the server stopped before it listened")
            print("fuzz: 0 passed, 1 failed")
            return 1
        seed(url)
        schema = json.load(urllib.request.urlopen(url + "/openapi.json", timeout=30))
        for method, path in EXCLUDED:
            del schema["paths"][path][method.lower()]
        schema_file = data / "openapi.json"
        schema_file.write_text(json.dumps(schema))
        command = [
            str(Path(sys.executable).parent / "schemathesis"),
            "run",
            str(schema_file),
            "--url", url,
            "--checks", "not_a_server_error,response_schema_conformance",
            "--max-examples", os.environ.get("FUZZ_EXAMPLES", "25"),
            "--max-time", os.environ.get("FUZZ_MAX_TIME", "150"),
            "--seed", os.environ.get("FUZZ_SEED", "37"),
            "--phases", "examples,coverage,fuzzing",
            # One worker: with two, hypothesis parses sources for its lambdas
            # on two threads at once, and CPython 3.11's parser then fails
            # ("AST constructor recursion depth mismatch"), crashing the run.
            "--workers", "1",
            "--request-timeout", "30",
            "--suppress-health-check", "all",
            "--header", f"Authorization: Bearer {OWNER_KEY}",
            "--report", "junit,ndjson",
            "--report-dir", str(report),
            "--report-junit-path", str(report / "junit.xml"),
        ]
        # In the data directory: schemathesis keeps a cache where it runs.
        status = subprocess.run(command, env=env, cwd=data).returncode
        junit = report / "junit.xml"
        results = outcomes(junit) if junit.exists() else {}
        crashed = [name for name, outcome in results.items() if outcome == "crashed"]
        if crashed and "failed" not in results.values():
            for name in crashed:
                print(f"fuzz: schemathesis crashed on {name}; running it once more")
                again = report / "again"
                rerun = [arg for arg in command]
                rerun[rerun.index("--report-dir") + 1] = str(again)
                rerun[rerun.index("--report-junit-path") + 1] = str(again / "junit.xml")
                rerun[rerun.index("--max-time") + 1] = "30"
                rerun += ["--include-name", name]
                subprocess.run(rerun, env=env, cwd=data)
                second = outcomes(again / "junit.xml") if (again / "junit.xml").exists() else {}
                results[name] = second.get(name, "crashed")
            status = 0 if all(o in ("passed", "skipped") for o in results.values()) else status
        if os.environ.get("FUZZ_STATEFUL", "1") != "0":
            stateful = report / "stateful"
            sequences = [arg for arg in command]
            sequences[sequences.index("--phases") + 1] = "stateful"
            sequences[sequences.index("--max-time") + 1] = os.environ.get("FUZZ_STATEFUL_TIME", "60")
            sequences[sequences.index("--report-dir") + 1] = str(stateful)
            sequences[sequences.index("--report-junit-path") + 1] = str(stateful / "junit.xml")
            code = subprocess.run(sequences, env=env, cwd=data).returncode
            found = outcomes(stateful / "junit.xml") if (stateful / "junit.xml").exists() else {}
            if code != 0 and not any(o in ("failed", "crashed") for o in found.values()):
                found["stateful"] = "failed"
            for name, outcome in found.items():
                results[f"stateful: {name}"] = outcome
            if code != 0:
                status = code
        passed = sum(1 for outcome in results.values() if outcome == "passed")
        failed = sum(1 for outcome in results.values() if outcome in ("failed", "crashed"))
        if status != 0 and failed == 0:
            failed = 1
        print(f"fuzz: {passed} passed, {failed} failed")
        return 0 if failed == 0 and passed > 0 else 1
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
