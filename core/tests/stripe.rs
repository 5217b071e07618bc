//! The Stripe mapping end to end: every fixture set in `testdata/stripe/`
//! (scenario files whose input is a `stripe` list of Stripe API objects)
//! must give exactly the movements it expects, and importing a set twice
//! must change nothing.

use serde_json::Value;
use std::path::PathBuf;
use submetrics::testing::scenario_files;
use submetrics::{Ledger, MovementFilter, Settings, StripeOptions};

fn fixture_sets() -> Vec<(String, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/stripe");
    scenario_files(&dir)
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(&name)).unwrap();
            (name, serde_json::from_str(&text).expect("valid JSON"))
        })
        .collect()
}

#[test]
fn every_fixture_set_gives_its_exact_movements() {
    let sets = fixture_sets();
    assert!(sets.len() >= 14, "expected the Stripe fixture sets");
    let mut failures = Vec::new();
    for (name, scenario) in &sets {
        match submetrics::scenario::run(scenario) {
            Ok(outcome) => {
                failures.extend(outcome.failures.into_iter().map(|f| format!("{name}: {f}")))
            }
            Err(error) => failures.push(format!("{name}: could not run: {error}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn importing_again_is_an_idempotent_upsert() {
    for (name, scenario) in fixture_sets() {
        let (mut ledger, _) = submetrics::scenario::load(&scenario).unwrap();
        let as_of = submetrics::parse_as_of(scenario["as_of"].as_str().unwrap(), ledger.settings())
            .unwrap();
        let before =
            serde_json::to_value(ledger.movements(as_of, &MovementFilter::default()).unwrap())
                .unwrap();
        let counts = ledger.counts();
        let options =
            StripeOptions::from_json(scenario.get("stripe_options").unwrap_or(&Value::Null))
                .unwrap();
        let objects = scenario["stripe"].as_array().unwrap();
        let again = ledger.import_stripe(objects, &options);
        assert_eq!(again.removed, 0, "{name}");
        assert_eq!(ledger.counts(), counts, "{name}: no record added");
        let after =
            serde_json::to_value(ledger.movements(as_of, &MovementFilter::default()).unwrap())
                .unwrap();
        assert_eq!(before, after, "{name}");
    }
}

#[test]
fn import_reports_what_it_stored_skipped_and_rejected() {
    let (_, scenario) = fixture_sets()
        .into_iter()
        .find(|(n, _)| n == "01-monthly.json")
        .unwrap();
    let mut ledger = Ledger::new(Settings::default());
    let report = ledger.import_stripe(
        scenario["stripe"].as_array().unwrap(),
        &StripeOptions::default(),
    );
    assert_eq!((report.customers, report.plans, report.invoices), (1, 1, 4));
    let skipped: Vec<(&str, &str)> = report
        .skipped
        .iter()
        .map(|s| (s.object.as_str(), s.id.as_str()))
        .collect();
    assert_eq!(skipped, [("invoice", "in_A0")]);
    assert_eq!(report.rejected.len(), 1);
    let rejected = &report.rejected[0];
    assert_eq!(
        (
            rejected.object.as_str(),
            rejected.id.as_str(),
            rejected.field.as_str()
        ),
        ("invoice", "in_bad", "lines.data[0].price")
    );
    let first = ledger.invoice("in_A1/si_A").unwrap();
    assert_eq!(
        first.subscription_id.as_ref().unwrap().as_str(),
        "sub_A/si_A"
    );
    assert_eq!(ledger.invoice("in_A1/one-time").unwrap().amount, 5000);
    assert_eq!(ledger.invoice("in_A2").unwrap().amount, 2000);
    let customer = ledger.customer("cus_A").unwrap();
    assert_eq!(customer.country.as_deref(), Some("DE"));
    assert_eq!(customer.custom_variables.get("seats"), Some("3"));
    assert_eq!(ledger.plan("price_monthly").unwrap().name, "Team monthly");
}
