//! Records of one id within a batch apply in order, as separate writes of
//! them would: each answers `inserted`, and the later one is what stays
//! stored, in a small batch and in one large enough to be stored on every
//! core.

use serde_json::{Value, json};
use submetrics::{ImportStatus, Ledger, Settings};

fn invoice(id: &str, amount: i64) -> Value {
    json!({"id": id, "customer_id": "a", "type": "subscription", "plan_id": "m",
           "invoice_date": "2024-01-15", "amount": amount, "currency": "USD"})
}

#[test]
fn the_later_record_of_one_id_is_stored_and_both_answer_inserted() {
    for filler in [0, 1_000] {
        let mut ledger = Ledger::new(Settings::default());
        ledger.upsert_plans(&[
            json!({"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"}),
        ]);
        let customers = ledger.upsert_customers(&[
            json!({"id": "a", "name": "First"}),
            json!({"id": "a", "name": "Second"}),
        ]);
        assert_eq!(customers.accepted(), 2);
        assert_eq!(ledger.customer("a").map(|c| &*c.name), Some("Second"));

        let mut batch = vec![invoice("x", 1000)];
        batch.extend((0..filler).map(|i| invoice(&format!("f{i:04}"), 10)));
        batch.push(invoice("x", 2500));
        let report = ledger.upsert_invoices(&batch);
        assert_eq!(report.results.len(), filler + 2, "filler {filler}");
        assert!(
            report
                .results
                .iter()
                .all(|r| r.import_status == ImportStatus::Inserted),
            "filler {filler}"
        );
        assert_eq!(report.results[0].id, "x");
        assert_eq!(report.results[filler + 1].id, "x");
        assert_eq!(
            ledger.invoice("x").map(|i| i.amount),
            Some(2500),
            "filler {filler}"
        );
        assert_eq!(ledger.counts().3, filler + 1, "filler {filler}");
    }
}
