"""A parameter a Client call leaves unset (``None``) means its default, as
in the ledger, and a name the call does not take is refused, ``None`` or
not, with the error the service gives that name with a value (the service
is never sent an unset name, so it cannot refuse one itself)."""

from __future__ import annotations

import asyncio
import urllib.parse
import urllib.request
from typing import Any, Callable, Iterator, List

import pytest

import submetrics
from service import Service
from test_client import AS_OF, load

MRR_PARAMS = (
    "date, interval, baseCurrency, fix_fx, fx_date, breakdown, category, subtype, currency, customer, plan, "
    "billing_freq, pricing_model, status, country, region, industry, size, channel, market, payment_method, age, "
    "data_source"
)
CUSTOMERS_PARAMS = (
    "baseCurrency, q, currency, customer, plan, billing_freq, pricing_model, status, country, region, industry, "
    "size, channel, market, payment_method, age, data_source, interval, selected-date, selected-type, sort, order, "
    "limit, offset"
)


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    running = Service()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def ledger() -> submetrics.Ledger:
    ledger = submetrics.Ledger()
    load(ledger)
    return ledger


@pytest.fixture(scope="module")
def loaded(service: Service) -> submetrics.Client:
    """A client of the service holding the data of the ledger (every test here only reads)."""
    client = submetrics.Client(service.url, api_key=service.key)
    load(client)
    return client


@pytest.fixture()
def requests(monkeypatch: pytest.MonkeyPatch) -> List[str]:
    """The path of every request any client sends during the test."""
    sent: List[str] = []
    urlopen = urllib.request.urlopen

    def counting(request: urllib.request.Request, *args: Any, **kwargs: Any) -> Any:
        sent.append(request.selector)
        return urlopen(request, *args, **kwargs)

    monkeypatch.setattr(urllib.request, "urlopen", counting)
    return sent


def catalogue_reads(paths: List[str]) -> List[str]:
    """The requests among ``paths`` for the report catalogue (GET /reports)."""
    return [path for path in paths if urllib.parse.urlsplit(path).path.endswith("/reports")]


def refusal(call: Callable[[], Any]) -> submetrics.SubmetricsError:
    with pytest.raises(submetrics.SubmetricsError) as raised:
        call()
    return raised.value


def test_an_unset_parameter_a_report_does_not_take_is_refused_as_the_ledger_and_the_service_refuse_it(
    service: Service, ledger: submetrics.Ledger, loaded: submetrics.Client
) -> None:
    pytest.importorskip("pandas")
    message = f"parameter `intervall`: report `mrr` has no such parameter; did you mean `interval`? Its parameters: {MRR_PARAMS}"
    # What the service answers the name with a value, and the ledger without one.
    given = refusal(lambda: loaded.report("mrr", AS_OF, intervall="month"))
    assert (type(given), str(given), given.field, given.code) == (submetrics.InvalidQueryError, message, "intervall", "invalid_query")
    local = refusal(lambda: ledger.report("mrr", AS_OF, intervall=None))
    assert (type(local), str(local), local.field) == (submetrics.InvalidQueryError, message, "intervall")
    # Each used to run the report with its defaults.
    calls = {
        "report": lambda: loaded.report("mrr", AS_OF, intervall=None),
        "report, params": lambda: loaded.report("mrr", AS_OF, {"intervall": None}),
        "report_arrow": lambda: loaded.report_arrow("mrr", AS_OF, date="20240101-20240531", intervall=None),
        "report_df": lambda: loaded.report_df("mrr", AS_OF, intervall=None),
        "AsyncClient.report": lambda: asyncio.run(
            submetrics.AsyncClient(service.url, api_key=service.key).report("mrr", AS_OF, intervall=None)
        ),
    }
    for call, run in calls.items():
        error = refusal(run)
        assert (type(error), str(error), error.field, error.code) == (
            submetrics.InvalidQueryError, message, "intervall", "invalid_query"
        ), call
    # Every name is checked once one is unset, the first in name order named, as the ledger does.
    both = dict(params={"zeta": None}, alpha="1")
    assert str(refusal(lambda: loaded.report("mrr", AS_OF, **both))) == str(refusal(lambda: ledger.report("mrr", AS_OF, **both)))
    assert refusal(lambda: loaded.report("mrr", AS_OF, **both)).field == "alpha"
    # An unknown report is the service's to say, unset parameters or not.
    unknown = refusal(lambda: loaded.report("nope", AS_OF, intervall=None))
    assert (type(unknown), unknown.status) == (submetrics.UnknownReportError, 404)
    assert str(unknown) == str(refusal(lambda: ledger.report("nope", AS_OF)))


def test_an_unset_parameter_a_customer_view_does_not_take_is_refused_as_the_ledger_refuses_it(
    ledger: submetrics.Ledger, loaded: submetrics.Client
) -> None:
    listing = f"parameter `intervall`: report `customers` has no such parameter; did you mean `interval`? Its parameters: {CUSTOMERS_PARAMS}"
    one = "parameter `intervall`: report `customer` has no such parameter. Its parameters: baseCurrency"
    refusals = [
        (lambda: loaded.customers(AS_OF, intervall=None), lambda: ledger.customers(AS_OF, intervall=None), listing),
        (lambda: loaded.customers(AS_OF, {"intervall": None}), lambda: loaded.customers(AS_OF, intervall="month"), listing),
        (lambda: loaded.customer("acme", AS_OF, intervall=None), lambda: ledger.customer("acme", AS_OF, intervall=None), one),
        (lambda: loaded.customer("acme", AS_OF, intervall=None), lambda: loaded.customer("acme", AS_OF, intervall="1"), one),
        # The names are checked before the customer is looked up, by the ledger and the service alike.
        (lambda: loaded.customer("nobody", AS_OF, intervall=None), lambda: ledger.customer("nobody", AS_OF, intervall=None), one),
    ]
    for client_call, reference, message in refusals:
        error, expected = refusal(client_call), refusal(reference)
        assert (type(error), str(error), error.field, error.code) == (type(expected), message, "intervall", "invalid_query")
        assert str(expected) == message
    suggested = refusal(lambda: loaded.customers(AS_OF, params={"selected_date": None}))
    assert str(suggested) == str(refusal(lambda: ledger.customers(AS_OF, params={"selected_date": None})))
    assert "did you mean `selected-date`?" in str(suggested)


def test_an_unset_query_parameter_of_the_generic_call_is_checked_against_the_operation(
    loaded: submetrics.Client,
) -> None:
    # The service's words for the names with a value, from the description's names without one.
    cases = [
        ("listPlans", {"sourse": None}, "query parameter `sourse`: this endpoint has no such parameter; its parameters: source, limit, offset"),
        ("getAccount", {"verbose": None}, "query parameter `verbose`: this endpoint takes no query parameters"),
    ]
    for operation, query, message in cases:
        name = next(iter(query))
        given = refusal(lambda: loaded.call(operation, query={name: "1"}))
        error = refusal(lambda: loaded.call(operation, query=query))
        assert (type(error), str(error), error.field, error.code) == (submetrics.BadRequestError, message, name, "bad_request")
        assert (type(given), str(given), given.field) == (type(error), str(error), error.field)
    moves = refusal(lambda: loaded.call("listMovements", query={"kind": None}))
    assert str(moves) == str(refusal(lambda: loaded.call("listMovements", query={"kind": "churn"})))
    assert (type(moves), moves.field) == (submetrics.InvalidQueryError, "kind")
    report = refusal(lambda: loaded.call("getReport", {"name": "mrr"}, {"intervall": None}))
    assert str(report).startswith("parameter `intervall`: report `mrr` has no such parameter; did you mean `interval`?")
    assert loaded.call("listPlans", query={"source": None, "limit": None})["result"]["count"] == 2


def test_an_unset_known_parameter_is_its_default_and_the_catalogue_is_read_only_for_one(
    service: Service, loaded: submetrics.Client, requests: List[str]
) -> None:
    client = submetrics.Client(service.url, api_key=service.key)
    # No parameter unset: no catalogue, whatever the call.
    mrr = client.report("mrr", AS_OF, date="20240101-20240531")
    table = client.report_arrow("mrr", AS_OF, date="20240101-20240531")
    customers = client.customers("2024-02-15")
    acme = client.customer("acme", AS_OF)
    plans = client.list_plans()
    assert len(requests) == 5 and not catalogue_reads(requests)
    # Unset: the same answers as leaving the names out, the catalogue read
    # once for the first report with an unset name it must look up.
    assert client.report("mrr", AS_OF, date="20240101-20240531", interval=None, fix_fx=None) == mrr
    assert [p["total_mrr"] for p in mrr["result"]] == [13000, 15000, 15000, 0, 0]
    assert client.report("mrr", AS_OF, {"date": "20240101-20240531", "baseCurrency": None}) == mrr
    assert client.report_arrow("mrr", AS_OF, date="20240101-20240531", interval=None).equals(table)
    assert client.report("mrr", AS_OF, params={"date": "20240101-20240531", "as_of": None, "format": None}) == mrr
    assert client.customers("2024-02-15", status=None, selected_date=None, limit=None) == customers
    assert customers["result"]["count"] == 2
    assert client.customer("acme", AS_OF, baseCurrency=None) == acme
    assert acme["id"] == "acme"
    assert client.list_plans(source=None) == plans
    assert len(catalogue_reads(requests)) == 1
    assert all("None" not in path for path in requests), requests
    assert len(requests) == 5 + 7 + 1
