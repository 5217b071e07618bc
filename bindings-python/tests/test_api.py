"""The Python API beyond the scenario files: exceptions, argument types,
threads, DataFrames."""

from __future__ import annotations

import datetime
import threading
from typing import Any, List

import pytest

import submetrics


def ledger() -> submetrics.Ledger:
    ledger = submetrics.Ledger(base_currency="USD", timezone="UTC")
    ledger.upsert_plans([
        {"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"},
        {"id": "m2", "name": "Plus", "billing_freq": "month", "currency": "USD"},
    ])
    ledger.upsert_customers([{"id": "A", "name": "Acme", "country": "DE"}, {"id": "B", "name": "Beta"}])
    ledger.upsert_invoices([
        {"id": "a1", "customer_id": "A", "type": "subscription", "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD", "plan_id": "m"},
        {"id": "a2", "customer_id": "A", "type": "subscription", "invoice_date": "2024-02-01", "amount": 5000, "currency": "USD", "plan_id": "m2"},
        {"id": "b1", "customer_id": "B", "type": "subscription", "invoice_date": "2024-01-15", "amount": 2000, "currency": "USD", "plan_id": "m"},
    ])
    return ledger


def test_each_error_code_has_its_exception_with_attributes() -> None:
    l = ledger()
    result = l.upsert_invoices({"id": "bad", "customer_id": "A", "type": "subscription", "invoice_date": "2024-01-01", "amount": 1, "currency": "USD"})
    assert result == [{"id": "bad", "import_status": "error", "import_error": "invoice bad: field `plan_id`: is required for a subscription invoice"}]
    with pytest.raises(submetrics.InvalidRecordError) as invalid:
        l.update_customer("A", {"currency": "DOLLARS"})
    assert (invalid.value.code, invalid.value.record_id, invalid.value.field) == ("invalid_record", "A", "currency")
    assert isinstance(invalid.value, ValueError)
    with pytest.raises(submetrics.NotFoundError) as missing:
        l.get_customer("Z")
    assert (missing.value.code, missing.value.record_id, str(missing.value)) == ("not_found", "Z", "customer Z not found")
    assert isinstance(missing.value, KeyError)
    with pytest.raises(submetrics.ConflictError) as conflict:
        l.delete_plan("m")
    assert conflict.value.code == "conflict"
    with pytest.raises(submetrics.UnknownReportError) as unknown:
        l.report("nope")
    assert "summary" in str(unknown.value)
    with pytest.raises(submetrics.InvalidQueryError) as query:
        l.report("mrr", interval="hour")
    assert query.value.field == "interval"
    with pytest.raises(submetrics.InvalidSettingError) as setting:
        submetrics.Ledger(timezone="Mars/Base")
    assert setting.value.field == "timezone"
    l.upsert_plans({"id": "e", "name": "Euro", "interval": "month", "currency": "EUR"})
    l.upsert_invoices({"id": "e1", "customer_id": "B", "type": "subscription", "invoice_date": "2024-01-20", "amount": 900, "currency": "EUR", "plan_id": "e"})
    with pytest.raises(submetrics.MissingFxRateError) as fx:
        l.report("summary", as_of="2024-01-25")
    assert fx.value.code == "missing_fx_rate"
    assert all(issubclass(e, submetrics.SubmetricsError) for e in (submetrics.MissingFxRateError, submetrics.ConflictError))


def test_as_of_takes_datetime_date_and_text() -> None:
    l = ledger()
    naive = l.report("summary", as_of=datetime.datetime(2024, 1, 20, 12, 0))
    aware = l.report("summary", as_of=datetime.datetime(2024, 1, 20, 12, 0, tzinfo=datetime.timezone.utc))
    day = l.report("summary", as_of=datetime.date(2024, 1, 20))
    text = l.report("summary", as_of="2024-01-20T12:00:00Z")
    assert naive == aware == day == text
    assert text["summary"]["mrr_current"] == 5000
    assert l.report("summary", as_of="2024-02-05")["summary"]["mrr_current"] == 7000


def test_keywords_and_params_reach_the_report() -> None:
    l = ledger()
    rows = l.report("movement-table", "2024-02-15", date="20240101-20240229", selected_date=datetime.date(2024, 2, 1), selected_type="expansion")
    assert rows["result"]["count"] == 1
    assert rows["result"]["list"][0]["description"] == "Upgrade from Monthly to Plus"
    same = l.report("movement-table", "2024-02-15", {"date": "20240101-20240229", "selected-date": "2024-02-01", "selected-type": "expansion"})
    assert same == rows
    mrr = l.report("mrr", "2024-02-15", date="20240101-20240229", fix_fx=True, country=["DE", "FR"])
    assert [p["total_mrr"] for p in mrr["result"]] == [3000, 5000]


def test_movements_filters_and_customer_views() -> None:
    l = ledger()
    assert [m["type"] for m in l.movements("2024-02-15")] == ["new", "new", "expansion"]
    assert len(l.movements("2024-02-15", customer="A")) == 2
    assert len(l.movements("2024-02-15", start="2024-01-10", end=datetime.date(2024, 1, 31))) == 1
    assert [m["customer_id"] for m in l.movements("2024-02-15", kinds=["expansion"])] == ["A"]
    assert [c["id"] for c in l.customers("2024-02-15")["result"]["list"]] == ["A", "B"]
    detail = l.customer("A", "2024-02-15")
    assert detail["converted_mrr"] == 5000
    assert detail["current_subscriptions"][0]["plan_id"] == "m2"


def test_records_lists_settings_and_deletes() -> None:
    l = ledger()
    assert l.list_customers(limit=1, offset=1) == {"count": 2, "list": [l.get_customer("B")]}
    # A negative count was pyo3's unnamed OverflowError, a bool was 1, a
    # float or text an unnamed TypeError.
    for keywords, name, shown in [({"limit": -1}, "limit", "-1"), ({"offset": -5}, "offset", "-5"),
                                  ({"limit": True}, "limit", "True"), ({"offset": 1.5}, "offset", "1.5"),
                                  ({"limit": "5"}, "limit", "'5'")]:
        with pytest.raises(submetrics.InvalidQueryError) as raised:
            l.list_customers(**keywords)
        assert (raised.value.field, str(raised.value)) == (
            name,
            f"parameter `{name}`: `{shown}` is not a whole number of 0 or more",
        )
    with pytest.raises(TypeError, match=r"^source: must be a str, got int"):
        l.list_plans(source=5)
    with pytest.raises(TypeError, match=r"^customer: must be a str, got int"):
        l.list_invoices(customer=7)
    assert l.update_customer("A", {"custom_variables": {"industry": "Retail"}})["custom_variables"] == {"industry": "Retail"}
    assert l.update_plan("m2", {"name": "Plus+"})["name"] == "Plus+"
    assert l.update_settings(churn_grace_days=3)["churn_grace_days"] == 3
    assert l.settings["churn_grace_days"] == 3
    assert l.load_fx_rates([{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}]) == 1
    l.delete_customer("B")
    assert l.list_invoices()["count"] == 2
    assert "mrr" in submetrics.report_names()


def test_invoices_of_one_customer_and_plans_of_one_source_are_listed_as_the_client_lists_them() -> None:
    # The client had `customer=`; the ledger refused the keyword.
    l = ledger()
    page = l.list_invoices(customer="A")
    assert (page["count"], [i["id"] for i in page["list"]]) == (2, ["a1", "a2"])
    assert [i["id"] for i in l.list_invoices(limit=1, offset=1, customer="A")["list"]] == ["a2"]
    with pytest.raises(submetrics.NotFoundError) as missing:
        l.list_invoices(customer="nobody")
    assert (str(missing.value), missing.value.record_id) == ("customer nobody not found", "nobody")
    # And plans for one data source, as `source=` of the client.
    l.upsert_data_sources({"id": "ds1", "name": "Shop"})
    l.upsert_plans({"id": "s", "name": "Shop plan", "interval": "month", "currency": "USD", "data_source": "ds1"})
    assert [p["id"] for p in l.list_plans(source="ds1")["list"]] == ["s"]
    assert l.list_plans(source="elsewhere") == {"count": 0, "list": []}
    assert l.list_plans()["count"] == 3
    assert l.list_plans(source=None)["count"] == 3
    # An empty filter is refused as the service refuses `source=`, not read
    # as a filter nothing matches.
    for call, name in [(lambda: l.list_plans(source=""), "source"),
                       (lambda: l.list_plans(source=" "), "source"),
                       (lambda: l.list_invoices(customer=""), "customer")]:
        with pytest.raises(submetrics.InvalidQueryError) as empty:
            call()
        assert (empty.value.code, empty.value.field, str(empty.value)) == (
            "invalid_query", name,
            f"parameter `{name}`: is empty; give a value, or leave the parameter out for its default")


def test_readers_in_threads_see_the_same_numbers() -> None:
    l = ledger()
    expected = l.report("mrr", "2024-03-01", date="20240101-20240229")
    results: List[Any] = []
    errors: List[BaseException] = []

    def read() -> None:
        try:
            for _ in range(20):
                results.append(l.report("mrr", "2024-03-01", date="20240101-20240229"))
        except BaseException as error:  # noqa: BLE001 - collected for the assertion
            errors.append(error)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(results) == 80 and all(r == expected for r in results)


def test_dataframes() -> None:
    pytest.importorskip("pandas")
    l = ledger()
    frame = submetrics.movements_df(l, "2024-02-15")
    assert list(frame["mrr_change"]) == [3000, 2000, 2000]
    periods = submetrics.report_df(l, "mrr", "2024-02-15", date="20240101-20240229")
    assert list(periods["total_mrr"]) == [5000, 7000]
    table = submetrics.report_df(l, "movement-table", "2024-02-15", date="20240101-20240229")
    assert len(table) == 3


def test_bad_python_values_are_type_errors() -> None:
    l = ledger()
    with pytest.raises(TypeError):
        l.upsert_customers(42)
    with pytest.raises(TypeError):
        l.upsert_customers({"id": "X", "name": object()})


def test_an_unknown_report_parameter_is_refused_with_a_near_miss() -> None:
    l = ledger()
    with pytest.raises(submetrics.InvalidQueryError) as summary:
        l.report("summary", as_of="2024-01-20", curency="EUR")
    assert (summary.value.code, summary.value.field, str(summary.value)) == (
        "invalid_query",
        "curency",
        "parameter `curency`: report `summary` has no such parameter. Its parameters: baseCurrency",
    )
    with pytest.raises(submetrics.InvalidQueryError) as churn:
        l.report("churn-scheduled-summary", params={"intervall": "month"})
    assert churn.value.field == "intervall"
    assert str(churn.value) == (
        "parameter `intervall`: report `churn-scheduled-summary` has no such parameter; did you mean `interval`? "
        "Its parameters: interval, baseCurrency, fix_fx, fx_date, currency, customer, plan, billing_freq, "
        "pricing_model, status, country, region, industry, size, channel, market, payment_method, age, data_source"
    )
    with pytest.raises(submetrics.InvalidQueryError) as keyword:
        l.report("summary", base_currency="EUR")
    assert str(keyword.value) == (
        "parameter `base_currency`: report `summary` has no such parameter; did you mean `baseCurrency`? "
        "Its parameters: baseCurrency"
    )


def test_an_unknown_parameter_set_to_none_is_refused_as_with_a_value() -> None:
    l = ledger()
    message = "parameter `bogus`: report `mrr` has no such parameter. Its parameters: "
    calls = [
        lambda: l.report("mrr", as_of="2024-02-15", bogus=None),
        lambda: l.report("mrr", as_of="2024-02-15", params={"bogus": None}),
        lambda: l.report_arrow("mrr", as_of="2024-02-15", bogus=None),
        lambda: l.report_partial("mrr", as_of="2024-02-15", params={"bogus": None}),
        lambda: submetrics.report_df(l, "mrr", "2024-02-15", bogus=None),
    ]
    with pytest.raises(submetrics.InvalidQueryError) as valued:
        l.report("mrr", as_of="2024-02-15", bogus="x")
    assert str(valued.value).startswith(message)
    for call in calls:
        with pytest.raises(submetrics.InvalidQueryError) as unset:
            call()
        assert (unset.value.code, unset.value.field, str(unset.value)) == (
            "invalid_query", "bogus", str(valued.value))
    with pytest.raises(submetrics.InvalidQueryError) as customers:
        l.customers(as_of="2024-02-15", qq=None)
    assert customers.value.field == "qq"
    with pytest.raises(submetrics.InvalidQueryError) as customer:
        l.customer("A", as_of="2024-02-15", params={"bogus": None})
    assert str(customer.value) == (
        "parameter `bogus`: report `customer` has no such parameter. Its parameters: baseCurrency")
    # None for a parameter the report takes still means its default.
    assert l.report("mrr", as_of="2024-02-15", date="20240101-20240229", interval=None,
                    breakdown=None) == l.report("mrr", as_of="2024-02-15", date="20240101-20240229")


def test_the_constructor_reads_settings_as_update_settings_does() -> None:
    assert submetrics.Ledger(churn_grace_days="3", fx_pivot="EUR").settings == {
        "base_currency": "USD", "timezone": "UTC", "first_day_of_week": 1,
        "churn_grace_days": 3, "refund_handling": "reduce", "fx_pivot": "EUR"}
    for settings, message in [
        ({"churn_grace_days": True},
         "setting `churn_grace_days`: must be a whole number of days from 0 to 3650"),
        ({"bogus": 1},
         "setting `bogus`: unknown setting; known: base_currency, timezone, first_day_of_week, "
         "churn_grace_days, refund_handling, fx_pivot"),
    ]:
        with pytest.raises(submetrics.InvalidSettingError) as refused:
            submetrics.Ledger(**settings)
        assert str(refused.value) == message
        with pytest.raises(submetrics.InvalidSettingError) as refused:
            submetrics.Ledger().update_settings(**settings)
        assert str(refused.value) == message
