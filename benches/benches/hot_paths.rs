//! Criterion benches for the hot paths: normalizing an invoice to monthly,
//! one customer's timeline (build and replay), and period aggregation over a
//! generated ledger.

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::hint::black_box;
use submetrics::{
    Invoice, Ledger, MovementFilter, Plan, ReportParams, Settings, normalize::monthly_amount,
};
use submetrics_benches::generator::{Spec, generate};

fn normalization(c: &mut Criterion) {
    let plan = Plan::from_json(
        &json!({"id": "p", "name": "P", "billing_freq": "month", "currency": "USD"}),
    )
    .unwrap();
    let invoice = Invoice::from_json(
        &json!({"id": "i", "customer_id": "c", "type": "subscription", "plan_id": "p",
        "invoice_date": "2024-01-10", "period_start": "2024-01-10", "period_end": "2024-02-01",
        "amount": 2200, "currency": "USD"}),
    )
    .unwrap();
    let tz = Settings::default().timezone;
    c.bench_function("monthly_amount (prorated)", |b| {
        b.iter(|| monthly_amount(black_box(&invoice), &plan, tz))
    });
}

fn ledger(invoices: usize) -> (Ledger, chrono::DateTime<chrono::Utc>) {
    let spec = Spec::with_invoices(invoices);
    (generate(&spec).ledger(), spec.as_of())
}

fn one_customer(c: &mut Criterion) {
    let (ledger, as_of) = ledger(2_000);
    let busiest = ledger
        .customers()
        .max_by_key(|customer| ledger.customer_invoices(customer.id.as_str()).len())
        .unwrap()
        .id
        .to_string();
    let invoices = ledger.customer_invoices(&busiest).len();
    c.bench_function(
        &format!("one customer's replay ({invoices} invoices)"),
        |b| b.iter(|| ledger.replay(black_box(&busiest), as_of).unwrap()),
    );
}

fn aggregation(c: &mut Criterion) {
    let (ledger, as_of) = ledger(20_000);
    c.bench_function("all movements, 20k invoices (cached replays)", |b| {
        b.iter(|| {
            ledger
                .movements(as_of, &MovementFilter::default())
                .unwrap()
                .len()
        })
    });
    let params: ReportParams = [("interval".to_string(), "month".to_string())].into();
    if ledger.report("mrr", &params, as_of).is_ok() {
        c.bench_function("mrr report, 20k invoices", |b| {
            b.iter(|| ledger.report("mrr", &params, as_of).unwrap())
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = normalization, one_customer, aggregation
}
criterion_main!(benches);
