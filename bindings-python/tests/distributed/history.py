"""Histories as the distributed front ends take them: the stored records of
a ledger (a scenario's, after its steps) or a generated history, as pyarrow
tables of invoices and customers plus the plans, plan groups, FX rates and
settings every partition gets; and the one ledger holding everything that
their answers are compared with."""

from __future__ import annotations

import dataclasses
import datetime
import random
from typing import Any, Dict, List, Optional

import pyarrow as pa

import submetrics

SETTINGS = ("base_currency", "timezone", "first_day_of_week", "churn_grace_days", "refund_handling")


@dataclasses.dataclass
class History:
    settings: Dict[str, Any]
    plans: List[Dict[str, Any]]
    plan_groups: List[Dict[str, Any]]
    fx_rates: List[Dict[str, Any]]
    customers: pa.Table
    invoices: pa.Table
    as_of: str

    def ledger(self) -> submetrics.Ledger:
        """One ledger holding every record."""
        ledger = submetrics.Ledger(**self.settings)
        if self.fx_rates:
            ledger.load_fx_rates(self.fx_rates)
        for results in (
            ledger.upsert_plans(self.plans),
            ledger.upsert_plan_groups(self.plan_groups),
            ledger.upsert_customers(self.customers).to_pylist(),
            ledger.upsert_invoices(self.invoices).to_pylist(),
        ):
            rejected = [r for r in results if r["import_status"] == "error"]
            assert rejected == [], rejected
        return ledger

    def shared(self) -> Dict[str, Any]:
        """The keywords of every distributed call but the frames."""
        return {"as_of": self.as_of, "settings": self.settings, "plan_groups": self.plan_groups,
                "fx_rates": self.fx_rates}


def _everything(list_page: Any) -> List[Dict[str, Any]]:
    records: List[Dict[str, Any]] = []
    while True:
        page = list_page(limit=1000, offset=len(records))["list"]
        records.extend(page)
        if len(page) < 1000:
            return records


def table(records: List[Dict[str, Any]]) -> pa.Table:
    """Records as a table: ``custom_variables`` as a string map, columns
    that are null (or empty lists and objects) in every row left out."""
    if not records:
        return pa.table({"id": pa.array([], pa.string())})
    names: List[str] = []
    for record in records:
        names.extend(k for k in record if k not in names)
    columns = {}
    for name in names:
        values = [r.get(name) for r in records]
        if all(v is None or v == [] or v == {} for v in values):
            continue
        if name == "custom_variables":
            columns[name] = pa.array([None if v is None else list(v.items()) for v in values],
                                     pa.map_(pa.string(), pa.string()))
        else:
            columns[name] = pa.array(values)
    return pa.table(columns)


def export(ledger: submetrics.Ledger, fx_rates: Optional[List[Dict[str, Any]]], as_of: str) -> History:
    """The stored records of ``ledger`` as a history."""
    groups = [{"id": g["id"], "name": g["name"], "plans": list(g["plans"])}
              for g in _everything(ledger.list_plan_groups)]
    return History(
        settings={k: v for k, v in ledger.settings.items() if k in SETTINGS},
        plans=_everything(ledger.list_plans),
        plan_groups=groups,
        fx_rates=list(fx_rates or []),
        customers=table(_everything(ledger.list_customers)),
        invoices=table(_everything(ledger.list_invoices)),
        as_of=as_of,
    )


PLANS = [
    {"id": "basic", "name": "Basic", "interval": "month", "currency": "USD", "price": 2900},
    {"id": "pro", "name": "Pro", "interval": "month", "currency": "USD", "price": 9900},
    {"id": "annual", "name": "Annual", "interval": "year", "currency": "USD", "price": 99000},
    {"id": "quarter", "name": "Quarterly", "interval": "month", "interval_count": 3, "currency": "USD",
     "price": 24000},
    {"id": "eur", "name": "Basic EUR", "interval": "month", "currency": "EUR", "price": 2500},
    {"id": "eur-pro", "name": "Pro EUR", "interval": "month", "currency": "EUR", "price": 8900},
    {"id": "gbp", "name": "Basic GBP", "interval": "month", "currency": "GBP", "price": 2200},
    {"id": "seats", "name": "Seats", "interval": "month", "currency": "USD", "price": 1000,
     "pricing_model": "metered"},
    {"id": "weekly", "name": "Weekly", "interval": "week", "currency": "USD", "price": 700},
]
COUNTRIES = ["US", "DE", "FR", "GB", "CA", "JP", "ES", "BR"]
START = datetime.date(2023, 1, 1)
MONTHS = 24


def _add_months(day: datetime.date, months: int) -> datetime.date:
    month = day.month - 1 + months
    return day.replace(year=day.year + month // 12, month=month % 12 + 1, day=min(day.day, 28))


def generated(customers: int = 300, seed: int = 35) -> History:
    """A random history of ``customers`` customers over two years: monthly,
    quarterly, annual, weekly and metered plans in three currencies, trials,
    upgrades, seat changes, refunds, failed and open invoices, one-time
    charges, cancellations, lapses and returns."""
    rng = random.Random(seed)
    plans = [{k: v for k, v in p.items() if k != "price"} for p in PLANS]
    price = {p["id"]: p["price"] for p in PLANS}
    currency = {p["id"]: p["currency"] for p in PLANS}
    by_currency: Dict[str, List[str]] = {}
    for p in PLANS:
        if p["interval"] == "month" and p.get("interval_count", 1) == 1:
            by_currency.setdefault(p["currency"], []).append(p["id"])
    step = {"basic": 1, "pro": 1, "eur": 1, "eur-pro": 1, "gbp": 1, "seats": 1, "quarter": 3, "annual": 12}
    customer_rows: List[Dict[str, Any]] = []
    invoice_rows: List[Dict[str, Any]] = []
    for n in range(customers):
        cid = f"cus_{n:04d}"
        first = START + datetime.timedelta(days=rng.randrange(MONTHS * 30))
        first = first.replace(day=min(first.day, 28))
        customer: Dict[str, Any] = {
            "id": cid, "name": f"Customer {n}", "email": f"c{n}@example.com",
            "country": rng.choice(COUNTRIES), "created_date": first.isoformat(),
            "custom_variables": {"industry": rng.choice(["saas", "retail", "fintech"]),
                                 "size": rng.choice(["small", "medium", "large"])},
        }
        if rng.random() < 0.2:
            customer["trial_started"] = first.isoformat()
        customer_rows.append(customer)
        if rng.random() < 0.08:
            continue  # a lead that never pays
        plan = rng.choice(list(price))
        quantity = rng.randint(1, 8) if plan == "seats" else 1
        day, k, sub = first, 0, f"sub_{n}"
        end = _add_months(START, MONTHS + 1)
        while day < end:
            k += 1
            amount = price[plan] * quantity
            if plan == "weekly":
                period_end = day + datetime.timedelta(days=7)
            else:
                period_end = _add_months(day, step[plan])
            status = rng.choices(["paid", "failed", "open"], [0.9, 0.06, 0.04])[0]
            iid = f"in_{n}_{k}"
            invoice_rows.append({
                "id": iid, "customer_id": cid, "type": "subscription", "plan_id": plan,
                "invoice_date": day.isoformat(), "amount": amount, "currency": currency[plan],
                "period_start": day.isoformat(), "period_end": period_end.isoformat(),
                "subscription_id": sub, "quantity": quantity, "status": status,
                "payment_method": rng.choice(["visa", "ach", "paypal"]),
            })
            event = rng.random()
            if event < 0.04:
                invoice_rows.append({
                    "id": f"re_{n}_{k}", "customer_id": cid, "type": "refund", "plan_id": plan,
                    "invoice_date": (day + datetime.timedelta(days=5)).isoformat(),
                    "amount": -rng.randint(1, amount), "currency": invoice_rows[-1]["currency"],
                    "refunded_invoice_id": iid,
                })
            elif event < 0.08:
                invoice_rows.append({
                    "id": f"ot_{n}_{k}", "customer_id": cid, "type": "one-time",
                    "invoice_date": (day + datetime.timedelta(days=2)).isoformat(),
                    "amount": rng.randint(500, 20000), "currency": invoice_rows[-1]["currency"],
                    "description": "Setup",
                })
            elif event < 0.12:
                invoice_rows.append({
                    "id": f"ca_{n}_{k}", "customer_id": cid, "type": "cancellation", "amount": 0,
                    "invoice_date": (day + datetime.timedelta(days=10)).isoformat(),
                    "currency": invoice_rows[-1]["currency"], "subscription_id": sub,
                })
                day = _add_months(day, rng.randint(2, 8)) if rng.random() < 0.3 else end
                continue
            elif event < 0.15:
                day = _add_months(period_end, rng.randint(1, 6)) if rng.random() < 0.4 else end
                continue
            elif event < 0.22 and plan in by_currency.get(invoice_rows[-1]["currency"], []):
                plan = rng.choice(by_currency[invoice_rows[-1]["currency"]])
            elif event < 0.27 and plan == "seats":
                quantity = max(1, quantity + rng.choice([-2, -1, 1, 3]))
            day = period_end
    fx = []
    for m in range(-1, MONTHS + 2):
        date = _add_months(START, m).isoformat()
        fx.append({"date": date, "currency": "EUR", "rate": round(0.88 + 0.004 * (m % 7), 4)})
        fx.append({"date": date, "currency": "GBP", "rate": round(0.77 + 0.003 * (m % 5), 4)})
    groups = [{"id": "g_usd", "name": "USD monthly", "plans": ["basic", "pro"]},
              {"id": "g_long", "name": "Long terms", "plans": ["annual", "quarter"]}]
    return History(
        settings={"timezone": "America/New_York", "churn_grace_days": 10},
        plans=plans, plan_groups=groups, fx_rates=fx,
        customers=table(customer_rows), invoices=table(invoice_rows),
        as_of="2025-01-20T12:00:00Z",
    )


#: Report families over the generated history, beyond every report with
#: its default parameters.
FAMILIES: List[Any] = [
    ("mrr", {"date": "20230101-20241231"}),
    ("mrr", {"date": "20230101-20241231", "interval": "quarter", "breakdown": "plan"}),
    ("mrr", {"date": "20240101-20241231", "interval": "week", "breakdown": "currency"}),
    ("mrr", {"date": "20240601-20240731", "interval": "day"}),
    ("mrr", {"date": "20230101-20241231", "breakdown": "country", "baseCurrency": "EUR"}),
    ("mrr", {"date": "20230101-20241231", "breakdown": "subtype", "fix_fx": "true"}),
    ("mrr", {"date": "20230101-20241231", "plan": "g_usd", "country": "US DE", "industry": "saas"}),
    ("mrr", {"date": "20230101-20241231", "customer": "cus_0007"}),
    ("mrr", {"date": "20230101-20241231", "breakdown": "billing_freq", "payment_method": "visa"}),
    ("mrr-table", {"date": "20230101-20241231", "interval": "quarter"}),
    ("mrr-table-subtypes", {"date": "20240101-20241231"}),
    ("summary", {"baseCurrency": "GBP"}),
    ("cmrr-summary", {"currency": "EUR"}),
    ("movement-table", {"date": "20240101-20241231", "sort": "mrr_change", "order": "asc"}),
    ("movement-table", {"date": "20230101-20241231", "selected-date": "2024-03-01", "selected-type": "churn"}),
    ("movement-table", {"date": "20230101-20241231", "breakdown": "plan", "breakdown-value": "pro"}),
    ("movement-table", {"date": "20230101-20241231", "customer": "cus_0011"}),
    ("cohort", {"date": "20230101-20241231"}),
    ("cohort", {"date": "20230101-20241231", "metric": "mrr", "interval": "quarter"}),
    ("churn-scheduled", {"date": "20250101-20251231", "interval": "quarter"}),
    ("churn-scheduled-movements", {"sort": "mrr_change", "order": "asc"}),
    ("churn-scheduled-summary", {"interval": "week"}),
    ("map", {"baseCurrency": "EUR"}),
    ("customer-concentration", {"limit": "5", "offset": "2"}),
    ("custom-variables", {"variable": "industry"}),
    ("leads", {"date": "20230101-20241231"}),
    ("leads-days", {"date": "20240101-20240331"}),
    ("leads-table", {"date": "20230101-20241231", "region": "europe"}),
    ("transactions", {"date": "20230101-20241231", "interval": "quarter"}),
    ("transactions-detail", {"selected-date": "2024-02-01", "selected-type": "month_sub"}),
    ("transactions-detail", {"customer": "cus_0003"}),
    ("transactions-table", {"date": "20240101-20241231"}),
    ("invoices-detail", {"customer": "cus_0005", "baseCurrency": "EUR"}),
    ("invoices-detail", {"limit": "7", "offset": "3"}),
    ("cashflow-failed-payments", {"date": "20230101-20241231"}),
    ("cashflow-failed-payments-detail", {"selected-date": "2024-05-01"}),
    ("cashflow-failed-payments-table", {"date": "20240101-20241231"}),
    ("cashflow-refunds", {"date": "20230101-20241231", "currency": "EUR"}),
    ("cashflow-refunds-detail", {"selected-date": "2024-02-01"}),
    ("cashflow-refunds-table", {"date": "20240101-20241231"}),
    ("cashflow-failure-rate", {"date": "20230101-20241231", "interval": "quarter"}),
    ("cashflow-outstanding-unpaid", {"limit": "4"}),
]


def in_parts(name: str) -> bool:
    """Whether the core computes report ``name`` in parts."""
    try:
        submetrics.Ledger().report_partial(name, "2024-01-01")
    except submetrics.InvalidPartialError:
        return False
    except submetrics.SubmetricsError:
        return True
    return True


def queries(ledger: submetrics.Ledger, as_of: str, extra: List[Any]) -> List[Any]:
    """Every report with its default parameters, then ``extra``; each one
    the single ledger answers (some need parameters) and the core computes
    in parts, with its answer."""
    asked = [(name, {}) for name in submetrics.report_names()] + list(extra)
    answered = []
    for name, params in asked:
        if not in_parts(name):
            continue
        try:
            answered.append(((name, params), ledger.report(name, as_of, params)))
        except submetrics.SubmetricsError:
            continue
    return answered
