"""``Ledger.import_stripe``: Stripe API objects in, the core's mapping
(docs/stripe.md) behind it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import submetrics

STRIPE = Path(__file__).resolve().parents[2] / "testdata" / "stripe"


def test_a_refund_through_a_credit_note_counts_once() -> None:
    fixture = json.loads((STRIPE / "08-credit-note-refund.json").read_text())
    ledger = submetrics.Ledger()
    report = ledger.import_stripe(fixture["stripe"])
    assert (report["customers"], report["plans"], report["invoices"]) == (1, 1, 2)
    assert report["rejected"] == []
    assert [(s["object"], s["id"]) for s in report["skipped"]] == [("refund", "re_R1")]
    moves = ledger.movements(as_of="2024-03-01T00:00:00Z")
    assert [(m["date"], m["type"], m["mrr_change"]) for m in moves] == [
        ("2024-01-01", "new", 10000),
        ("2024-02-10", "contraction", -5000),
    ]
    again = ledger.import_stripe(fixture["stripe"])
    assert again["invoices"] == 2 and len(ledger.list_invoices()["list"]) == 2


def test_options_and_rejections_name_the_stripe_object_and_field() -> None:
    fixture = json.loads((STRIPE / "11-uncollectible-as-void.json").read_text())
    ledger = submetrics.Ledger()
    ledger.import_stripe(fixture["stripe"], uncollectible="void")
    assert ledger.get_invoice("in_V2")["status"] == "void"
    report = ledger.import_stripe([{"id": "in_x", "object": "invoice", "status": "paid"}])
    assert report["rejected"] == [
        {"object": "invoice", "id": "in_x", "field": "customer", "reason": "is required"}
    ]
    with pytest.raises(submetrics.SubmetricsError):
        ledger.import_stripe([], uncollectible="sometimes")
    # None means an option's default, as the stub's Optional says; an
    # unknown option is refused, None or not.
    customer = {"id": "cus_n", "object": "customer", "name": "N", "created": 1704067200}
    assert ledger.import_stripe([customer], data_source=None, uncollectible=None)["customers"] == 1
    assert ledger.get_customer("cus_n")["data_source"] == "stripe"
    with pytest.raises(submetrics.InvalidQueryError) as unknown:
        ledger.import_stripe([], bogus=None)
    assert str(unknown.value) == (
        "parameter `bogus`: is not an option of the Stripe import (uncollectible, data_source)")
    # A value no object can hold names its object's place and field.
    with pytest.raises(TypeError) as refused:
        ledger.import_stripe([{"id": "cus_1", "object": "customer"},
                              {"id": "cus_2", "object": "customer", "created": 2 ** 64}])
    assert str(refused.value) == (
        "records[1]: field `created`: integer 18446744073709551616 does not fit in 64 bits")
