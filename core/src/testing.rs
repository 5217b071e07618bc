//! Helpers for tests, behind the `testing` feature and never part of the
//! engine: the scenario corpus run as one test case per file, and the
//! random invoice histories the property tests draw.

use crate::{Ledger, ReportParams, Settings};
use chrono::{Duration, NaiveDate};
use libtest_mimic::{Arguments, Failed, Trial};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// An Arrow IPC stream of one small batch whose batch message claims a
/// body of `claimed` bytes, far more than follow it: what a reader must
/// refuse without allocating what the message claims.
///
/// # Panics
///
/// When the batch cannot be written (it always can).
#[cfg(feature = "arrow")]
pub fn ipc_stream_claiming_body(claimed: i64) -> Vec<u8> {
    let batch = crate::columnar::batch_of_rows(&[json!({"id": "a", "n": 1})]).unwrap();
    let mut bytes = crate::columnar::ipc_of(&batch).unwrap();
    // The stream: the schema message, the batch message (a marker, the
    // metadata's length, the metadata, the body), the end marker.
    let length_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let batch_at = 8 + length_at(4) as usize;
    let metadata = batch_at + 8..batch_at + 8 + length_at(batch_at + 4) as usize;
    let body_length = (bytes.len() - 8 - metadata.end) as i64;
    let at: Vec<usize> = metadata
        .filter(|&i| bytes[i..i + 8] == body_length.to_le_bytes())
        .collect();
    assert_eq!(at.len(), 1, "the body length is written once");
    bytes[at[0]..at[0] + 8].copy_from_slice(&claimed.to_le_bytes());
    bytes
}

/// An Arrow IPC stream of one small batch (`id` text, `n` integers with a
/// null) whose buffer number `buffer` (in the order of the batch message:
/// `id`'s validity, offsets and text, then `n`'s validity and values) is
/// stated at `offset` and `length` in the body instead: what a reader must
/// refuse as malformed.
///
/// # Panics
///
/// When the batch cannot be written (it always can) or `buffer` is not one
/// of its five.
#[cfg(feature = "arrow")]
pub fn ipc_stream_with_buffer_at(buffer: usize, offset: i64, length: i64) -> Vec<u8> {
    let rows = [json!({"id": "a", "n": 1}), json!({"id": "b"})];
    let batch = crate::columnar::batch_of_rows(&rows).unwrap();
    let mut bytes = crate::columnar::ipc_of(&batch).unwrap();
    let length_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let batch_at = 8 + length_at(4) as usize;
    let metadata = batch_at + 8..batch_at + 8 + length_at(batch_at + 4) as usize;
    let message = arrow_ipc::root_as_message(&bytes[metadata]).unwrap();
    let stated = message.header_as_record_batch().unwrap().buffers().unwrap();
    assert!(
        buffer < stated.len(),
        "the batch has {} buffers",
        stated.len()
    );
    // Buffers are stated one after another, 16 bytes each.
    let at = stated.bytes().as_ptr() as usize - bytes.as_ptr() as usize + 16 * buffer;
    bytes[at..at + 8].copy_from_slice(&offset.to_le_bytes());
    bytes[at + 8..at + 16].copy_from_slice(&length.to_le_bytes());
    bytes
}

/// Every scenario file under `root`, in its folders to any depth: the paths
/// of its `*.json` files relative to `root`, folders joined by `/`, sorted.
///
/// # Panics
///
/// When a folder cannot be read.
pub fn scenario_files(root: &Path) -> Vec<String> {
    fn walk(dir: &Path, prefix: &str, files: &mut Vec<String>) {
        let entries = std::fs::read_dir(dir)
            .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()))
                .path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let relative = format!("{prefix}{name}");
            if path.is_dir() {
                walk(&path, &format!("{relative}/"), files);
            } else if path.extension().is_some_and(|x| x == "json") {
                files.push(relative);
            }
        }
    }
    let mut files = Vec::new();
    walk(root, "", &mut files);
    files.sort();
    files
}

/// The main of a test target that runs every scenario file under `root`
/// (see [`scenario_files`]) as its own test case, named by its relative path
/// (`semantics/001-lapse-churns-at-coverage.json`). `check` gets that name
/// and the parsed file and returns its failures; a case passes when there
/// are none, and fails listing them. A file that is not JSON fails naming
/// the parse error. Takes the standard test harness's arguments (filters,
/// `--list`, `--exact`, ...), so `cargo test` and `cargo nextest` run and
/// filter the files one by one; exits with the run's status.
///
/// # Panics
///
/// When `root` holds no scenario file: a run of nothing would pass.
pub fn run_scenario_files<F>(root: &Path, check: F) -> !
where
    F: Fn(&str, &Value) -> Vec<String> + Send + Sync + Clone + 'static,
{
    let files = scenario_files(root);
    assert!(
        !files.is_empty(),
        "no scenario files under {}",
        root.display()
    );
    let trials = files
        .into_iter()
        .map(|name| {
            let path: PathBuf = root.join(&name);
            let check = check.clone();
            Trial::test(name.clone(), move || {
                let text =
                    std::fs::read_to_string(&path).map_err(|e| Failed::from(e.to_string()))?;
                let scenario: Value = serde_json::from_str(&text)
                    .map_err(|e| Failed::from(format!("invalid JSON: {e}")))?;
                let failures = check(&name, &scenario);
                if failures.is_empty() {
                    Ok(())
                } else {
                    Err(Failed::from(failures.join("\n")))
                }
            })
        })
        .collect();
    libtest_mimic::run(&Arguments::from_args(), trials).exit()
}

/// The day `offset` days after 2024-01-01, where random histories start.
pub fn day(offset: i64) -> NaiveDate {
    NaiveDate::from_ymd_opt(2024, 1, 1).expect("a valid date") + Duration::days(offset)
}

/// Report parameters from name-value pairs.
pub fn params(pairs: &[(&str, &str)]) -> ReportParams {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// An integer a report answered.
///
/// # Panics
///
/// When `value` is not an integer.
pub fn int(value: &Value) -> i64 {
    value
        .as_i64()
        .unwrap_or_else(|| panic!("an integer, got {value}"))
}

/// Exchange-rate records from (date, currency, rate) triples.
pub fn fx_rates(rates: &[(&str, &str, f64)]) -> Vec<Value> {
    rates
        .iter()
        .map(|(date, currency, rate)| json!({"date": date, "currency": currency, "rate": rate}))
        .collect()
}

/// Shuffles `items` in place, the same way for the same `seed` (xorshift,
/// Fisher-Yates).
pub fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut state = seed | 1;
    for i in (1..items.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let bound = u64::try_from(i + 1).expect("a slice length fits u64");
        items.swap(i, usize::try_from(state % bound).expect("below a length"));
    }
}

/// The customer record `c{i}` named `Customer {i}`, to which tests add
/// their own fields.
pub fn customer(i: usize) -> Value {
    json!({"id": format!("c{i}"), "name": format!("Customer {i}")})
}

/// A plan of a random history.
#[derive(Debug, Clone, Copy)]
pub struct TestPlan {
    /// The plan id.
    pub id: &'static str,
    /// Billing frequency: `day`, `week`, `month` or `year`.
    pub interval: &'static str,
    /// How many `interval`s one period lasts.
    pub count: u32,
    /// The plan's currency code.
    pub currency: &'static str,
    /// `licensed` or `metered`.
    pub pricing_model: &'static str,
}

impl TestPlan {
    /// A licensed plan billed every `count` `interval`s in `currency`.
    pub const fn new(
        id: &'static str,
        interval: &'static str,
        count: u32,
        currency: &'static str,
    ) -> TestPlan {
        TestPlan {
            id,
            interval,
            count,
            currency,
            pricing_model: "licensed",
        }
    }

    /// The same plan, metered.
    pub const fn metered(self) -> TestPlan {
        TestPlan {
            pricing_model: "metered",
            ..self
        }
    }

    /// The plan as a data-API record, named by its id.
    pub fn record(&self) -> Value {
        json!({"id": self.id, "name": self.id, "billing_freq": self.interval,
               "billing_freq_count": self.count, "currency": self.currency,
               "pricing_model": self.pricing_model})
    }
}

/// The type of a random invoice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A subscription invoice, on one of the history's plans.
    Subscription,
    /// A one-time charge.
    OneTime,
    /// A refund: a negative amount.
    Refund,
    /// A cancellation: amount 0.
    Cancellation,
}

impl Kind {
    /// The invoice `type` field.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Subscription => "subscription",
            Kind::OneTime => "one-time",
            Kind::Refund => "refund",
            Kind::Cancellation => "cancellation",
        }
    }
}

/// Subscription invoices three times in six, each other kind once.
pub const EVERY_KIND: &[Kind] = &[
    Kind::Subscription,
    Kind::Subscription,
    Kind::Subscription,
    Kind::OneTime,
    Kind::Refund,
    Kind::Cancellation,
];

/// Subscription invoices four times in six, refunds and cancellations once
/// each; no one-time charges.
pub const RECURRING_KINDS: &[Kind] = &[
    Kind::Subscription,
    Kind::Subscription,
    Kind::Subscription,
    Kind::Subscription,
    Kind::Refund,
    Kind::Cancellation,
];

/// One random invoice before it is a record.
#[derive(Debug, Clone)]
pub struct Draft {
    /// The customer `c{customer}`.
    pub customer: usize,
    /// Index into the history's plans (its currency is the invoice's).
    pub plan: usize,
    /// Days after 2024-01-01.
    pub day: i64,
    /// The amount as sent, signed by the kind.
    pub amount: i64,
    /// The invoice type.
    pub kind: Kind,
}

/// What random histories look like: their plans and the ranges every draw
/// comes from. One history is a number of customers, then invoices of
/// those customers, each drawn independently.
#[derive(Debug, Clone)]
pub struct Shape {
    /// The plans invoices are on.
    pub plans: &'static [TestPlan],
    /// How many customers a history has.
    pub customers: Range<usize>,
    /// How many invoices a history has.
    pub invoices: Range<usize>,
    /// Days after 2024-01-01 an invoice is dated.
    pub days: Range<i64>,
    /// The amounts drawn, before [`Shape::zero_below`] and refunds apply.
    pub amounts: Range<i64>,
    /// The kinds drawn, each entry equally likely (an entry repeated
    /// weighs more).
    pub kinds: &'static [Kind],
    /// A subscription or one-time amount drawn below this is sent as 0 (a
    /// zero subscription invoice on a payer is a cancellation).
    pub zero_below: i64,
    /// A refund is sent as minus the drawn amount divided by this.
    pub refund_divisor: i64,
}

impl Shape {
    /// One invoice of a history with `customers` customers. The draws are,
    /// in order: customer, plan, day, amount, kind.
    pub fn draft(&self, customers: usize) -> impl Strategy<Value = Draft> + Clone + use<> {
        let (kinds, zero_below, divisor) = (self.kinds, self.zero_below, self.refund_divisor);
        let kind_count = u8::try_from(kinds.len()).expect("fewer than 256 kinds");
        (
            0..customers,
            0..self.plans.len(),
            self.days.clone(),
            self.amounts.clone(),
            0u8..kind_count,
        )
            .prop_map(move |(customer, plan, day, amount, kind)| {
                let kind = kinds[usize::from(kind)];
                let amount = match kind {
                    Kind::Refund => -(amount / divisor),
                    Kind::Cancellation => 0,
                    _ if amount < zero_below => 0,
                    _ => amount,
                };
                Draft {
                    customer,
                    plan,
                    day,
                    amount,
                    kind,
                }
            })
    }

    /// A history: its number of customers and its invoices.
    pub fn history(&self) -> impl Strategy<Value = (usize, Vec<Draft>)> + use<> {
        let shape = self.clone();
        self.customers.clone().prop_flat_map(move |customers| {
            (
                Just(customers),
                prop::collection::vec(shape.draft(customers), shape.invoices.clone()),
            )
        })
    }

    /// A history whose invoices each come with a draw of `extra` (fields
    /// the shape does not draw), after the invoice's own draws.
    pub fn history_with<E>(
        &self,
        extra: E,
    ) -> impl Strategy<Value = (usize, Vec<(Draft, E::Value)>)> + use<E>
    where
        E: Strategy + Clone + 'static,
    {
        let shape = self.clone();
        self.customers.clone().prop_flat_map(move |customers| {
            (
                Just(customers),
                prop::collection::vec(
                    (shape.draft(customers), extra.clone()),
                    shape.invoices.clone(),
                ),
            )
        })
    }

    /// The invoice record of `draft` with id `id`: customer, type, amount,
    /// the plan's currency, the day as `invoice_date`, and the plan of a
    /// subscription invoice.
    pub fn record(&self, draft: &Draft, id: &str) -> Value {
        let plan = &self.plans[draft.plan];
        let mut invoice = json!({
            "id": id, "customer_id": format!("c{}", draft.customer),
            "type": draft.kind.as_str(), "amount": draft.amount,
            "currency": plan.currency, "invoice_date": day(draft.day).to_string(),
        });
        if draft.kind == Kind::Subscription {
            invoice["plan_id"] = json!(plan.id);
        }
        invoice
    }

    /// The records of the shape's plans.
    pub fn plan_records(&self) -> Vec<Value> {
        self.plans.iter().map(TestPlan::record).collect()
    }

    /// A ledger with default settings holding `rates`, the shape's plans,
    /// `customers` and `invoices`, written in that order.
    pub fn ledger(&self, rates: &[Value], customers: &[Value], invoices: &[Value]) -> Ledger {
        let mut ledger = Ledger::new(Settings::default());
        if !rates.is_empty() {
            ledger.load_fx_rates(rates).expect("valid rates");
        }
        ledger.upsert_plans(&self.plan_records());
        ledger.upsert_customers(customers);
        ledger.upsert_invoices(invoices);
        ledger
    }
}
