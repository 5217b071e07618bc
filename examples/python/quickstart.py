"""Load a few invoices and print the monthly MRR table."""

import submetrics

ledger = submetrics.Ledger(base_currency="USD")
ledger.upsert_plans([
    {"id": "basic", "name": "Basic", "interval": "month", "currency": "USD"},
    {"id": "pro", "name": "Pro", "interval": "year", "currency": "USD"},
])
ledger.upsert_customers([{"id": "acme", "name": "Acme"}, {"id": "globex", "name": "Globex"}])
ledger.upsert_invoices([
    {"id": f"acme-{month}", "customer_id": "acme", "type": "subscription", "plan_id": "basic",
     "invoice_date": f"2024-0{month}-01", "amount": 3000, "currency": "USD"}
    for month in range(1, 4)
] + [
    {"id": "globex-1", "customer_id": "globex", "type": "subscription", "plan_id": "pro",
     "invoice_date": "2024-02-10", "amount": 60000, "currency": "USD"},
])

report = ledger.report("mrr", as_of="2024-03-31", date="20240101-20240331")
print(f"{'month':<12}{'MRR':>10}{'new':>10}{'customers':>11}")
for period in report["result"]:
    print(f"{period['date']:<12}{period['total_mrr']:>10}{period['new']:>10}{period['total_customers']:>11}")
