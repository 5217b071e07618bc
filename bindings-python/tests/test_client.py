"""submetrics.Client and AsyncClient against a real submetrics-server: data
written and read back, every report, paging, each kind of error, retries,
where the key comes from (the shared scenarios are compared with an
embedded Ledger in test_client_scenarios.py)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import decimal
import re
import gzip
import http.server
import json
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple, Union

import numpy
import pytest

import submetrics
from service import Service

AS_OF = "2024-06-15"
PLANS = [
    {"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"},
    {"id": "y", "name": "Yearly", "interval": "year", "currency": "USD"},
]
CUSTOMERS = [
    {"id": "acme", "name": "Acme", "country": "DE"},
    {"id": "beta", "name": "Beta", "country": "US"},
]
INVOICES = [
    {"id": "a1", "customer_id": "acme", "type": "subscription", "plan_id": "m", "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"},
    {"id": "a2", "customer_id": "acme", "type": "subscription", "plan_id": "m", "invoice_date": "2024-02-01", "amount": 5000, "currency": "USD"},
    {"id": "a3", "customer_id": "acme", "type": "subscription", "plan_id": "m", "invoice_date": "2024-03-01", "amount": 5000, "currency": "USD"},
    {"id": "b1", "customer_id": "beta", "type": "subscription", "plan_id": "y", "invoice_date": "2024-01-10", "amount": 120000, "currency": "USD"},
    {"id": "b2", "customer_id": "beta", "type": "cancellation", "invoice_date": "2024-04-05", "amount": 0, "currency": "USD"},
]

Target = Union[submetrics.Ledger, submetrics.Client]


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    running = Service()
    yield running
    running.stop()


@pytest.fixture()
def client(service: Service) -> Iterator[submetrics.Client]:
    """A client of a fresh account (so tests do not see each other's data)."""
    # A new owner key per test would share the account; start from empty instead.
    client = submetrics.Client(service.url, api_key=service.key)
    yield client
    for customer in list(client.iter_customers()):
        client.delete_customer(customer["id"])
    for group in list(client.iter_plan_groups()):
        client.delete_plan_group(group["id"])
    for plan in list(client.iter_plans()):
        client.delete_plan(plan["id"])
    for source in list(client.iter_data_sources()):
        client.delete_data_source(source["id"])


def load(target: Target) -> None:
    target.upsert_plans(PLANS)
    target.upsert_customers(CUSTOMERS)
    target.upsert_invoices(INVOICES)


def test_records_are_written_and_read_back(client: submetrics.Client) -> None:
    assert client.upsert_data_sources({"id": "stripe", "name": "Stripe", "type": "stripe"}) == [
        {"id": "stripe", "import_status": "inserted"}
    ]
    results = client.upsert_plans(PLANS + [{"id": "bad"}])
    assert [r["import_status"] for r in results] == ["inserted", "inserted", "error"]
    assert results[2]["import_error"] == "plan bad: field `name`: is required"
    assert client.upsert_customers(CUSTOMERS) == [
        {"id": "acme", "import_status": "inserted"},
        {"id": "beta", "import_status": "inserted"},
    ]
    assert len(client.upsert_invoices(INVOICES)) == 5
    assert client.upsert_plan_groups({"name": "All", "plans": ["m", "y"]}) == [{"id": "pg_1", "import_status": "inserted"}]
    assert client.get_plan("m") == {
        "id": "m", "name": "Monthly", "billing_freq": "month", "billing_freq_count": 1, "currency": "USD",
        "product_name": None, "data_source": None, "pricing_model": "licensed",
    }
    acme = client.get_customer("acme")
    # current_mrr is at now: the last invoice (March 2024) lapsed long ago.
    assert (acme["name"], acme["country"], acme["current_mrr"]) == ("Acme", "DE", {})
    invoice = client.get_invoice("b2")
    assert (invoice["type"], invoice["amount"], invoice["plan_id"]) == ("cancellation", 0, None)
    assert client.get_plan_group("pg_1")["plans"][1]["id"] == "y"
    assert client.get_data_source("stripe") == {"id": "stripe", "name": "Stripe", "type": "stripe"}
    assert client.list_invoices(customer="beta")["count"] == 2
    assert client.update_plan("m", {"name": "Monthly Pro"})["name"] == "Monthly Pro"
    assert client.update_customer("acme", {"email": "ops@acme.test"})["email"] == "ops@acme.test"
    assert client.update_data_source("stripe", {"name": "Stripe EU"})["name"] == "Stripe EU"
    assert client.import_records("stripe", "customers", {"id": "gamma", "name": "Gamma"}) == [
        {"id": "gamma", "import_status": "inserted"}
    ]
    assert client.get_customer("gamma")["data_source"] == "stripe"
    assert client.load_fx_rates([{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}]) == 1
    assert client.list_fx_rates()["list"] == [{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}]
    client.delete_invoice("a3")
    with pytest.raises(submetrics.NotFoundError):
        client.get_invoice("a3")
    client.delete_plan_group("pg_1")
    assert client.list_plan_groups() == {"count": 0, "list": []}


def test_a_table_goes_as_arrow_streams_and_answers_the_results_table_a_ledger_answers(
    client: submetrics.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    client.upsert_data_sources({"id": "files", "name": "Files", "type": "stripe"})
    sent: List[Any] = []
    send = client._send

    def recorded(*args: Any, **kwargs: Any) -> bytes:
        sent.append((kwargs.get("content_type", "application/json"), args[4]))
        return send(*args, **kwargs)

    monkeypatch.setattr(client, "_send", recorded)
    ledger = submetrics.Ledger()
    plans = pa.Table.from_pylist(PLANS)
    assert client.upsert_plans(plans).equals(ledger.upsert_plans(plans))
    customers = pl.DataFrame(CUSTOMERS)
    imported = client.import_records("files", "customers", customers)
    assert imported.equals(ledger.upsert_customers(customers))
    assert imported.to_pylist() == [
        {"id": "acme", "import_status": "inserted", "import_error": None},
        {"id": "beta", "import_status": "inserted", "import_error": None},
    ]
    assert client.get_customer("acme")["data_source"] == "files"
    refund = {"id": "bad", "customer_id": "acme", "type": "refund", "plan_id": None,
              "invoice_date": "2024-02-03", "amount": 700, "currency": "USD"}
    frame = pd.DataFrame(INVOICES + [refund]).set_index("id")
    monkeypatch.setattr(submetrics.client, "ROWS_PER_ARROW_REQUEST", 4)
    sent.clear()
    results = client.upsert_invoices(frame)
    # Arrow both ways: the rows go as Arrow streams, the results come back as one.
    assert sent == [(submetrics.client.ARROW_STREAM, submetrics.client.ARROW_STREAM)] * 2
    assert results.equals(ledger.upsert_invoices(frame))
    assert results.to_pylist()[-1] == {
        "id": "bad", "import_status": "error",
        "import_error": "invoice bad: field `amount`: must be 0 or less for a refund, got 700",
    }
    assert [r["import_status"] for r in results.to_pylist()] == ["inserted"] * 5 + ["error"]
    assert client.get_invoice("a2")["data_source"] is None
    assert client.movements(AS_OF) == ledger.movements(AS_OF)
    # A record batch with no rows still reaches the service, which checks the source.
    empty = pa.RecordBatch.from_pylist([], schema=pa.schema([("id", pa.string()), ("name", pa.string())]))
    assert client.import_records("files", "customers", empty).num_rows == 0
    with pytest.raises(submetrics.NotFoundError, match="data source `nowhere` does not exist"):
        client.import_records("nowhere", "customers", empty)
    with pytest.raises(TypeError, match="a Table is sent by upsert_customers, upsert_plans, upsert_invoices and import_records only"):
        client.upsert_data_sources(pa.Table.from_pylist([{"id": "s2", "name": "S2"}]))


def test_updates_and_replaces_answer_as_the_ledger_does(client: submetrics.Client) -> None:
    ledger = submetrics.Ledger()
    groups = {}
    for target in (ledger, client):
        load(target)
        target.upsert_data_sources({"id": "s", "name": "Billing", "type": "api"})
        groups[id(target)] = target.upsert_plan_groups({"name": "All", "plans": ["m"]})[0]["id"]
    group = groups[id(client)]  # the service numbers groups per account, deleted ones included
    assert client.update_data_source("s", {"kind": "stripe"}) == ledger.update_data_source("s", {"kind": "stripe"}) == {
        "id": "s", "name": "Billing", "type": "stripe",
    }
    # A plan group answers as the interface reads it: its plans as objects.
    every_plan = {"name": "Every plan", "plans": [
        {"id": "m", "name": "Monthly", "billing_freq": "month", "billing_freq_count": 1, "product_name": None, "currency": "USD"},
        {"id": "y", "name": "Yearly", "billing_freq": "year", "billing_freq_count": 1, "product_name": None, "currency": "USD"},
    ]}
    assert ledger.update_plan_group("pg_1", "Every plan", ["m", "y"]) == ledger.get_plan_group("pg_1") == dict(every_plan, id="pg_1")
    assert client.update_plan_group(group, "Every plan", ["m", "y"]) == client.get_plan_group(group) == dict(every_plan, id=group)
    assert ledger.list_plan_groups() == {"count": 1, "list": [dict(every_plan, id="pg_1")]}
    changed = dict(INVOICES[1], amount=6000)
    for target in (ledger, client):
        target.replace_invoice("a2", changed)
    assert client.movements(AS_OF) == ledger.movements(AS_OF)
    assert client.get_invoice("a2")["amount"] == ledger.get_invoice("a2")["amount"] == 6000
    # The same refusals, as the same error classes with the same messages.
    refusals = [
        (lambda t: t.update_data_source("s", {"name": ""}), "data_source s: field `name`: must be a non-empty string"),
        (lambda t: t.update_data_source("s", {"created": "x"}), "data_source s: field `created`: is not a field of a data_source; its fields: id, name, type"),
        (lambda t: t.replace_invoice("a2", dict(changed, id="a9")), "invoice a2: field `id`: cannot be changed by a replace (this invoice is `a2`)"),
    ]
    for call, message in refusals:
        for target in (ledger, client):
            with pytest.raises(submetrics.InvalidRecordError) as raised:
                call(target)
            assert str(raised.value) == message
    for target in (ledger, client):
        group = groups[id(target)]
        with pytest.raises(submetrics.InvalidRecordError) as raised:
            target.update_plan_group(group, "X", ["nope"])
        assert str(raised.value) == f"plan_group {group}: field `plans`: plan `nope` does not exist"
    for target in (ledger, client):
        with pytest.raises(submetrics.NotFoundError):
            target.update_plan_group("pg_9", "X", [])


def test_records_and_patches_are_read_as_the_ledger_reads_them(client: submetrics.Client) -> None:
    ledger = submetrics.Ledger()
    for target in (ledger, client):
        load(target)
    # Dates, numpy scalars and Decimals, as a ledger reads them.
    invoice = {"id": "c1", "customer_id": "acme", "type": "one-time", "invoice_date": datetime.date(2024, 4, 2),
               "amount": numpy.int64(700), "tax_amount": decimal.Decimal("0"), "currency": "USD"}
    for target in (ledger, client):
        assert target.upsert_invoices([invoice]) == [{"id": "c1", "import_status": "inserted"}]
        target.update_customer("acme", {"custom_variables": {"seats": numpy.int32(4)}})
        target.replace_invoice("c1", dict(invoice, amount=decimal.Decimal("800")))
        target.update_plan_group(target.upsert_plan_groups({"name": "G", "plans": (numpy.str_("m"),)})[0]["id"],
                                 numpy.str_("Monthly plans"), [numpy.str_("m")])
    assert client.get_invoice("c1") == ledger.get_invoice("c1")
    assert client.get_invoice("c1")["amount"] == 800
    assert client.get_customer("acme")["custom_variables"] == ledger.get_customer("acme")["custom_variables"] == {"seats": "4"}
    # A value no record can hold is the ledger's TypeError, and nothing is sent.
    refusals = [
        (lambda t: t.upsert_invoices([invoice, dict(invoice, id="c2", amount=float("nan"))]),
         "records[1]: field `amount`: nan is not a finite number"),
        (lambda t: t.load_fx_rates([{"date": "2024-01-01", "currency": "EUR", "rate": decimal.Decimal("0.12345678901234567890")}]),
         "records[0]: field `rate`: Decimal 0.12345678901234567890 has more digits than a float holds "
         "exactly; give it as a string"),
        (lambda t: t.update_customer("acme", {"custom_variables": {"tags": {1}}}),
         "the patch of customer acme: field `custom_variables.tags`: cannot convert set to JSON"),
        (lambda t: t.replace_invoice("c1", dict(invoice, amount=2 ** 64)),
         "invoice c1: field `amount`: integer 18446744073709551616 does not fit in 64 bits"),
    ]
    for call, message in refusals:
        for target in (ledger, client):
            with pytest.raises(TypeError) as raised:
                call(target)
            assert str(raised.value) == message
    assert client.list_invoices()["count"] == ledger.list_invoices()["count"] == len(INVOICES) + 1


def test_movements_and_every_report_match_an_embedded_ledger(client: submetrics.Client) -> None:
    ledger = submetrics.Ledger()
    load(ledger)
    load(client)
    assert client.movements(AS_OF) == ledger.movements(AS_OF)
    assert [m["mrr_change"] for m in client.movements(AS_OF, customer="acme")] == [3000, 2000, -5000]
    assert client.movements(AS_OF, kinds=["churn"], start="2024-04-01") == ledger.movements(AS_OF, kinds=["churn"], start="2024-04-01")
    for name in submetrics.report_names():
        params = {"date": "20240101-20240531", "selected-date": "2024-02-01"}
        try:
            local = ledger.report(name, AS_OF, params)
        except submetrics.SubmetricsError as error:
            # A report that needs another parameter refuses alike, with the same message.
            with pytest.raises(type(error), match="^" + re.escape(str(error)) + "$"):
                client.report(name, AS_OF, params)
            continue
        assert client.report(name, AS_OF, params) == local, name
        remote_table, local_table = client.report_arrow(name, AS_OF, params), ledger.report_arrow(name, AS_OF, params)
        assert remote_table.schema == local_table.schema, name
        assert remote_table.equals(local_table), name
    mrr = client.report("mrr", as_of=AS_OF, date="20240101-20240531")["result"]
    # Acme lapses after March, Beta cancels on April 5.
    assert [p["total_mrr"] for p in mrr] == [13000, 15000, 15000, 0, 0]
    table = client.report("movement-table", AS_OF, date="20240101-20240531", selected_date="2024-02-01")
    assert table == ledger.report("movement-table", AS_OF, date="20240101-20240531", selected_date="2024-02-01")
    assert client.customers(AS_OF) == ledger.customers(AS_OF)
    assert client.customer("acme", AS_OF) == ledger.customer("acme", AS_OF)
    # The service does not report the FX pivot (the base currency the account began with).
    assert client.settings == {k: v for k, v in ledger.settings.items() if k != "fx_pivot"}
    frame = client.report_df("mrr-table", AS_OF, date="20240101-20240531")
    assert frame.loc["total_mrr"].tolist() == [13000, 15000, 15000, 0, 0]
    assert client.movements_arrow(AS_OF).equals(ledger.movements_arrow(AS_OF))
    churn = client.movements_arrow(AS_OF, kinds=["churn"], start="2024-04-01")
    assert churn.equals(ledger.movements_arrow(AS_OF, kinds=["churn"], start="2024-04-01"))
    assert churn.column("customer_id").to_pylist() == ["acme", "beta"]
    remote_frame, local_frame = client.movements_df(AS_OF), ledger.movements_df(AS_OF)
    assert list(remote_frame.dtypes) == list(local_frame.dtypes)
    assert remote_frame.equals(local_frame)


def test_pages_and_paging_helpers(client: submetrics.Client) -> None:
    client.upsert_customers([{"id": f"c{i:03}", "name": f"Customer {i}"} for i in range(250)])
    page = client.list_customers(limit=100, offset=200)
    assert page["count"] == 250
    assert [c["id"] for c in page["list"]] == [f"c{i:03}" for i in range(200, 250)]
    assert [c["id"] for c in client.iter_customers(page_size=60)] == [f"c{i:03}" for i in range(250)]
    # The ledger pages alike (the same helpers over its own lists).
    ledger = submetrics.Ledger()
    for target in (ledger, client):
        target.upsert_customers([{"id": f"c{i:03}", "name": f"Customer {i}"} for i in range(250)])
        load(target)
    assert [c["id"] for c in ledger.iter_customers(page_size=60)] == [c["id"] for c in client.iter_customers(page_size=60)]
    assert [i["id"] for i in ledger.iter_invoices(page_size=1, customer="acme")] == ["a1", "a2", "a3"]
    assert [i["id"] for i in client.iter_invoices(page_size=1, customer="acme")] == ["a1", "a2", "a3"]
    assert [p["id"] for p in ledger.iter_plans(page_size=1)] == [p["id"] for p in client.iter_plans(page_size=1)] == ["m", "y"]


def test_each_kind_of_error_is_its_class_with_the_service_code(service: Service, client: submetrics.Client) -> None:
    load(client)
    with pytest.raises(submetrics.AuthenticationError) as caught:
        submetrics.Client(service.url, api_key="sm_not_a_key").list_plans()
    assert (caught.value.code, caught.value.status) == ("unauthorized", 401)
    readonly = client.create_api_key("reader", "readonly")
    assert readonly["role"] == "readonly" and readonly["key"].startswith("sm_")
    reader = submetrics.Client(service.url, api_key=readonly["key"])
    assert reader.get_plan("m")["id"] == "m"
    with pytest.raises(submetrics.PermissionDeniedError) as caught:
        reader.upsert_plans(PLANS)
    assert (caught.value.code, caught.value.status) == ("forbidden", 403)
    with pytest.raises(submetrics.NotFoundError) as caught:
        client.get_plan("nobody")
    assert (caught.value.code, caught.value.status) == ("not_found", 404)
    with pytest.raises(submetrics.UnknownReportError) as caught:
        client.report("nope")
    assert caught.value.status == 404 and "known reports: summary, mrr" in str(caught.value)
    with pytest.raises(submetrics.InvalidQueryError) as caught:
        client.report("mrr", AS_OF, interval="hour")
    assert (caught.value.code, caught.value.status, caught.value.field) == ("invalid_query", 400, "interval")
    assert str(caught.value) == "parameter `interval`: `hour` is not one of day, week, month, quarter, year"
    with pytest.raises(submetrics.ConflictError):
        client.delete_plan("m")
    with pytest.raises(submetrics.PayloadTooLargeError) as caught:
        client.upsert_invoices([{}] * 100_001)
    assert (caught.value.code, caught.value.status) == ("payload_too_large", 413)
    assert "100001 records in one request; the limit is 100000" in str(caught.value)
    client.revoke_api_key(readonly["id"])
    with pytest.raises(submetrics.AuthenticationError):
        reader.get_plan("m")


def test_service_only_calls(client: submetrics.Client) -> None:
    assert client.health() == {"status": "ok"}
    reference = client.call("getApiReference")
    assert reference.startswith("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>submetrics API reference</title>")
    assert client.update_account(name="Acme analytics")["name"] == "Acme analytics"
    assert client.update_settings(churn_grace_days=3)["churn_grace_days"] == 3
    assert client.update_settings(churn_grace_days=7)["churn_grace_days"] == 7
    assert client.profile()["provider"] == "credentials"
    assert client.update_profile(first_name="Ada")["first_name"] == "Ada"
    assert client.billing()["plan"] == "scale"
    assert "owner" in [member["role"] for member in client.team()]
    assert "owner" in [key["role"] for key in client.api_keys()]
    assert client.update_notification_settings({"slack": {"channel": "#metrics"}})["slack"]["channel"] == "#metrics"
    assert client.notification_settings()["slack"]["channel"] == "#metrics"
    assert client.payment_platform_settings()["connected"] is False
    assert client.crm_settings()["properties_mapped"] == []


def test_the_key_comes_from_the_environment_or_the_config_file(
    service: Service, client: submetrics.Client, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SUBMETRICS_API_KEY", service.key)
    monkeypatch.setenv("SUBMETRICS_API_URL", service.url)
    assert submetrics.Client().list_plans()["count"] == 0
    monkeypatch.delenv("SUBMETRICS_API_KEY")
    monkeypatch.delenv("SUBMETRICS_API_URL")
    (tmp_path / ".submetrics.json").write_text(json.dumps({"api_key": service.key, "api_url": service.url}))
    from_file = submetrics.Client()
    assert (from_file.base_url, from_file.api_key) == (service.url, service.key)
    assert from_file.list_plans()["count"] == 0


@pytest.mark.parametrize(
    ("config", "error"),
    [
        ({"api_key": "sm_x", "url": "https://analytics.example.com"}, "unknown field `url`; the fields are api_key and api_url"),
        ({"api_url": 8080}, "field `api_url` must be text, not 8080"),
        (["sm_x"], "must be a JSON object of api_key and api_url"),
    ],
)
def test_a_config_file_field_the_client_does_not_read_is_an_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, config: Any, error: str
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("SUBMETRICS_API_KEY", raising=False)
    monkeypatch.delenv("SUBMETRICS_API_URL", raising=False)
    path = tmp_path / ".submetrics.json"
    path.write_text(json.dumps(config))
    # A misspelt `url` used to leave the client on http://localhost:8080.
    with pytest.raises(submetrics.SubmetricsError) as raised:
        submetrics.Client()
    assert str(raised.value) == f"{path}: {error}"


class _StandIn(http.server.BaseHTTPRequestHandler):
    """A stand-in for the service, answering JSON."""

    def answer(self, status: int, payload: Any, headers: Dict[str, str]) -> None:
        body = json.dumps(payload).encode()
        if headers.get("Content-Encoding") == "gzip":
            body = gzip.compress(body)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def _serving(handler: type) -> Iterator[str]:
    """The address of a stand-in served by `handler` until the block ends."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Flaky(_StandIn):
    """Answers 503 (Retry-After: 0) and 429 once each, then 200."""

    answers: List[Tuple[int, Dict[str, str]]] = []

    def do_GET(self) -> None:  # noqa: N802 (the handler's name)
        status, headers = self.answers.pop(0) if self.answers else (200, {})
        self.answer(status, {"status": "ok"} if status == 200 else {"error": "busy", "code": "unavailable"}, headers)


def test_429_and_503_are_retried_as_retry_after_asks() -> None:
    with _serving(_Flaky) as url:
        _Flaky.answers = [(503, {"Retry-After": "0"}), (429, {"Retry-After": "0"})]
        assert submetrics.Client(url).health() == {"status": "ok"}
        _Flaky.answers = [(503, {"Retry-After": "0"})] * 3
        with pytest.raises(submetrics.SubmetricsError) as caught:
            submetrics.Client(url, max_retries=2).health()
        assert (caught.value.code, caught.value.status) == ("unavailable", 503)
    with pytest.raises(submetrics.SubmetricsError) as caught:
        submetrics.Client(url, timeout=2).health()
    assert caught.value.code == "unreachable"


class _Gzipping(_StandIn):
    """Answers gzip-compressed when the request accepts gzip, as the service
    does, and notes what each request accepted."""

    accepted: List[str] = []

    def do_GET(self) -> None:  # noqa: N802 (the handler's name)
        accepts = self.headers.get("Accept-Encoding", "")
        self.accepted.append(accepts)
        headers = {"Content-Encoding": "gzip"} if "gzip" in accepts else {}
        if self.path == "/health":
            self.answer(200, {"status": "ok"}, headers)
        else:
            self.answer(404, {"error": "no endpoint", "code": "not_found"}, headers)


def test_answers_travel_gzip_compressed() -> None:
    with _serving(_Gzipping) as url:
        _Gzipping.accepted = []
        assert submetrics.Client(url).health() == {"status": "ok"}
        with pytest.raises(submetrics.NotFoundError) as caught:
            submetrics.Client(url).call("getPlan", path_params={"id": "p"})
        assert (str(caught.value), caught.value.status) == ("no endpoint", 404)
        assert _Gzipping.accepted == ["gzip", "gzip"]


class _Counting(_StandIn):
    """Answers every GET with `{}` and counts the requests."""

    paths: List[str] = []

    def do_GET(self) -> None:  # noqa: N802 (the handler's name)
        self.paths.append(self.path)
        self.answer(200, {}, {})


def test_a_report_parameter_given_twice_is_refused_before_sending() -> None:
    with _serving(_Counting) as url:
        _Counting.paths = []
        with pytest.raises(submetrics.InvalidQueryError) as raised:
            submetrics.Client(url).report("mrr", "2024-03-01", {"interval": "month"}, interval="week")
        assert str(raised.value) == "parameter `interval`: is given both in params and as a keyword; give it once"
        assert raised.value.field == "interval"
        with pytest.raises(submetrics.InvalidQueryError) as twice:
            submetrics.Client(url).report("mrr", "2024-03-01", {"as_of": "2024-02-01"})
        assert str(twice.value) == (
            "parameter `as_of`: is given twice (as the as_of argument and among the parameters); give it once"
        )
        with pytest.raises(submetrics.InvalidQueryError) as arrow:
            submetrics.Client(url).report_arrow("mrr", "2024-03-01", format="csv")
        assert str(arrow.value) == "parameter `format`: this call sets it to arrow"
        assert _Counting.paths == []
        submetrics.Client(url).report("mrr", params={"as_of": "2024-02-01"})
        assert _Counting.paths == ["/reports/mrr?as_of=2024-02-01"]


class _Listing(_Counting):
    """Answers every GET with an empty page, counting the requests in `_Counting.paths`."""

    def do_GET(self) -> None:  # noqa: N802 (the handler's name)
        self.paths.append(self.path)
        self.answer(200, {"result": {"count": 0, "list": []}}, {})


@pytest.mark.parametrize(
    ("call", "error", "field"),
    [
        (lambda t: t.list_customers(limit=-1), "parameter `limit`: `-1` is not a whole number of 0 or more", "limit"),
        (lambda t: t.list_invoices(offset=-3), "parameter `offset`: `-3` is not a whole number of 0 or more", "offset"),
        (lambda t: t.list_plans(limit=1.5), "parameter `limit`: `1.5` is not a whole number of 0 or more", "limit"),
        (lambda t: t.list_data_sources(limit=True), "parameter `limit`: `True` is not a whole number of 0 or more", "limit"),
        (lambda t: t.list_plan_groups(limit="10"), "parameter `limit`: `'10'` is not a whole number of 0 or more", "limit"),
    ],
)
def test_a_page_bound_that_is_not_a_whole_number_from_0_is_refused_before_sending(call: Any, error: str, field: str) -> None:
    # A negative limit used to be sent, for the service to answer 400.
    with pytest.raises(submetrics.InvalidQueryError) as ledger:
        call(submetrics.Ledger(base_currency="USD"))
    assert (str(ledger.value), ledger.value.field) == (error, field)
    with _serving(_Listing) as url:
        _Counting.paths = []
        with pytest.raises(submetrics.InvalidQueryError) as raised:
            call(submetrics.Client(url))
        assert (str(raised.value), raised.value.field, raised.value.status) == (error, field, None)
        assert _Counting.paths == []
        submetrics.Client(url).list_customers(limit=numpy.int64(0), offset=0)
        assert _Counting.paths == ["/data/customers?limit=0"]


def test_a_list_filter_that_is_not_text_is_refused_before_sending() -> None:
    for make in (lambda url: submetrics.Ledger(base_currency="USD"), submetrics.Client):
        with _serving(_Listing) as url:
            _Counting.paths = []
            target = make(url)
            with pytest.raises(TypeError) as customer:
                target.list_invoices(customer=5)
            with pytest.raises(TypeError) as source:
                target.list_plans(source=["s"])
            assert [str(customer.value).splitlines()[0], str(source.value).splitlines()[0]] == [
                "customer: must be a str, got int", "source: must be a str, got list"]
            assert _Counting.paths == []


VALUE_KINDS = "a parameter value is text, a number, a boolean, a date or a list of those"


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda t: t.report("mrr", as_of=AS_OF, customer={"c1": 1}), f"parameter `customer`: {VALUE_KINDS}, got dict"),
        (lambda t: t.report("mrr", as_of=AS_OF, customer=b"c1"), f"parameter `customer`: {VALUE_KINDS}, got bytes"),
        (lambda t: t.report("mrr", as_of=AS_OF, customer=[["c1", "c2"]]), f"parameter `customer`: {VALUE_KINDS}, got list"),
        (lambda t: t.report("mrr", as_of=AS_OF, customer=[None, "c1"]), f"parameter `customer`: {VALUE_KINDS}, got NoneType"),
        (lambda t: t.customers(AS_OF, params={"plan": object()}), f"parameter `plan`: {VALUE_KINDS}, got object"),
        (lambda t: t.movements(AS_OF, start={"day": 1}), f"parameter `start`: {VALUE_KINDS}, got dict"),
        (lambda t: t.movements(AS_OF, kinds=[["new"]]), f"parameter `kinds`: {VALUE_KINDS}, got list"),
        (
            lambda t: t.report("mrr", as_of=AS_OF, customer=decimal.Decimal("0.1000000000000000000001")),
            "parameter `customer`: Decimal 0.1000000000000000000001 has more digits than a float holds exactly; give it as a string",
        ),
    ],
)
def test_a_parameter_value_no_query_holds_is_the_ledgers_type_error_before_sending(call: Any, error: str) -> None:
    # These used to be sent as their str(): "{'c1': 1}", "b'c1'", "['c1', 'c2']".
    with pytest.raises(TypeError) as ledger:
        call(submetrics.Ledger(base_currency="USD"))
    assert str(ledger.value) == error
    with _serving(_Counting) as url:
        _Counting.paths = []
        with pytest.raises(TypeError) as raised:
            call(submetrics.Client(url))
        assert str(raised.value) == error
        assert _Counting.paths == []


def test_parameter_values_are_sent_as_the_ledger_reads_them() -> None:
    with _serving(_Counting) as url:
        _Counting.paths = []
        client = submetrics.Client(url)
        client.report(
            "mrr",
            datetime.date(2024, 6, 1),
            customer=("a", "b"),
            interval=numpy.str_("month"),
            limit=numpy.int64(5),
            x=decimal.Decimal("2.50"),
            y=decimal.Decimal("3.0"),
            z=[True, 1.5],
        )
        assert _Counting.paths == [
            "/reports/mrr?customer=a+b&interval=month&limit=5&x=2.5&y=3&z=true+1.5&as_of=2024-06-01"
        ]


@pytest.mark.parametrize(
    ("call", "error", "field"),
    [
        (("listPlan",), "no operation listPlan: an operation is an operationId of the API description", "operation"),
        (("getCustomer",), "getCustomer needs the path parameter `id` (/data/customers/{id})", "id"),
        (("getCustomer", {"id": None}), "getCustomer needs the path parameter `id` (/data/customers/{id})", "id"),
        (
            ("getCustomer", {"ID": "c1"}),
            "getCustomer has no path parameter `ID` (/data/customers/{id}); its path parameters are id",
            "ID",
        ),
        (
            ("listPlans", {"id": "p1"}),
            "listPlans has no path parameter `id` (/data/plans); it has no path parameters",
            "id",
        ),
    ],
)
def test_an_operation_or_path_parameter_the_description_lacks_is_refused_before_sending(
    call: Tuple[Any, ...], error: str, field: str
) -> None:
    # A misspelt path parameter used to leave `{id}` in the path it sent.
    with _serving(_Counting) as url:
        _Counting.paths = []
        with pytest.raises(submetrics.InvalidArgumentError) as raised:
            submetrics.Client(url).call(*call)
        assert (str(raised.value), raised.value.field, raised.value.code) == (error, field, "invalid_argument")
        assert _Counting.paths == []
        submetrics.Client(url).call("getCustomer", {"id": "c 1/2"})
        assert _Counting.paths == ["/data/customers/c%201%2F2"]


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"timeout": 0}, "timeout: must be above 0, got 0"),
        ({"timeout": -5}, "timeout: must be above 0, got -5"),
        ({"timeout": "30"}, "timeout: must be a number of seconds, got '30'"),
        ({"timeout": float("nan")}, "timeout: must be a number of seconds, got nan"),
        ({"max_retries": -1}, "max_retries: must be a whole number from 0, got -1"),
        ({"max_retries": 2.5}, "max_retries: must be a whole number from 0, got 2.5"),
        ({"max_retries": True}, "max_retries: must be a whole number from 0, got True"),
        ({"max_retry_wait": -1}, "max_retry_wait: must be from 0, got -1"),
    ],
)
def test_a_client_option_out_of_its_range_is_an_error_naming_it(options: Dict[str, Any], error: str) -> None:
    with pytest.raises(submetrics.InvalidArgumentError) as raised:
        submetrics.Client("http://127.0.0.1:9", "key", **options)
    assert (str(raised.value), raised.value.field) == (error, next(iter(options)))
    with pytest.raises(submetrics.InvalidArgumentError):
        submetrics.AsyncClient("http://127.0.0.1:9", "key", **options)


def test_the_async_client_does_the_same(service: Service, client: submetrics.Client) -> None:
    load(client)

    async def session() -> Tuple[Any, List[str], Any]:
        async with submetrics.AsyncClient(service.url, api_key=service.key) as remote:
            mrr, summary, table = await asyncio.gather(
                remote.report("mrr", AS_OF, date="20240101-20240531"),
                remote.report("summary", AS_OF),
                remote.report_arrow("mrr", AS_OF, date="20240101-20240531"),
            )
            assert table.column("total_mrr").to_pylist() == [13000, 15000, 15000, 0, 0]
            ids = [c["id"] async for c in remote.iter_customers(page_size=1)]
            try:
                await remote.get_plan("nobody")
            except submetrics.NotFoundError as error:
                return [p["total_mrr"] for p in mrr["result"]], ids, (summary["summary"]["mrr_current"], error.status)
        raise AssertionError("no NotFoundError")

    totals, ids, (current, status) = asyncio.run(session())
    assert totals == [13000, 15000, 15000, 0, 0]
    assert ids == ["acme", "beta"]
    assert (current, status) == (0, 404)


def test_a_list_item_holding_a_space_is_quoted_as_the_ledger_quotes_it(client: submetrics.Client) -> None:
    ledger = submetrics.Ledger(base_currency="USD")
    plans = [{"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"}]
    customers = [{"id": "acme corp", "name": "Acme"}, {"id": "beta", "name": "Beta"}, {"id": "acme", "name": "A"}]
    invoices = [{"id": f"i{n}", "customer_id": c, "type": "subscription", "plan_id": "m",
                 "invoice_date": "2024-01-01", "amount": amount, "currency": "USD"}
                for n, (c, amount) in enumerate([("acme corp", 3000), ("beta", 5000), ("acme", 700)])]
    for target in (ledger, client):
        target.upsert_plans(plans)
        target.upsert_customers(customers)
        target.upsert_invoices(invoices)
        report = target.report("mrr", "2024-01-15", date="20240101-20240131", customer=["acme corp", "beta"])
        assert report["result"][0]["total_mrr"] == 8000
