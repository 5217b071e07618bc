//! Offline mode: load a directory of exported records into a ledger and run
//! reports, customer views and movements with the engine directly.

use super::{files, stripe_files};
use crate::args::{LocalArgs, LocalCommand, LocalCustomers, pairs};
use crate::error::{CliError, Result};
use serde_json::{Value, json};
use std::io::{IsTerminal, Write};
use std::path::Path;
use submetrics::{Ledger, MovementFilter, RecordKind, ReportParams, Settings, StripeOptions};

/// Records sent to the ledger per batch (the progress bar moves per batch).
const BATCH: usize = 20_000;
/// Loads at least this large show a progress bar on a terminal.
const PROGRESS_FROM: usize = 50_000;

/// The ledger settings the options give.
fn settings(args: &LocalArgs) -> Result<Settings> {
    let mut config = serde_json::Map::new();
    if let Some(v) = &args.base_currency {
        config.insert("base_currency".into(), json!(v));
    }
    if let Some(v) = &args.timezone {
        config.insert("timezone".into(), json!(v));
    }
    if let Some(v) = args.first_day_of_week {
        config.insert("first_day_of_week".into(), json!(v));
    }
    if let Some(v) = args.churn_grace_days {
        config.insert("churn_grace_days".into(), json!(v));
    }
    if let Some(v) = &args.refund_handling {
        config.insert("refund_handling".into(), json!(v));
    }
    Ok(Settings::from_json(&Value::Object(config))?)
}

fn progress(done: usize, total: usize, what: &str) {
    let width = 30;
    let filled = done * width / total.max(1);
    eprint!(
        "\r{what:<10} [{}{}] {done}/{total}",
        "#".repeat(filled),
        " ".repeat(width - filled)
    );
    if done == total {
        eprintln!();
    }
    let _ = std::io::stderr().flush();
}

/// Loads every file of the directory; rejected records go to stderr.
pub fn load(args: &LocalArgs) -> Result<Ledger> {
    for (flag, dir) in [("--data", &args.data), ("--stripe", &args.stripe)] {
        if let Some(dir) = dir
            && !dir.is_dir()
        {
            return Err(CliError::usage(format!(
                "{flag} {}: not a directory",
                dir.display()
            )));
        }
    }
    let mut ledger = Ledger::new(settings(args)?);
    let mut rejected = 0;
    if let Some(data) = &args.data {
        rejected += load_records(&mut ledger, data)?;
    }
    if let Some(dir) = &args.stripe {
        let objects = stripe_files::read(dir)?;
        let report = ledger.import_stripe(&objects, &StripeOptions::default());
        for r in &report.rejected {
            rejected += 1;
            eprintln!(
                "rejected: {} {}: field `{}`: {}",
                r.object, r.id, r.field, r.reason
            );
        }
    }
    if rejected > 0 && args.strict {
        return Err(CliError::usage(format!(
            "{rejected} record(s) rejected (--strict)"
        )));
    }
    Ok(ledger)
}

/// Loads the record files of `dir`; returns how many records were rejected
/// (each printed on stderr).
fn load_records(ledger: &mut Ledger, dir: &Path) -> Result<usize> {
    let rates = files::read(dir, "fx_rates")?;
    if !rates.is_empty() {
        ledger.load_fx_rates(&rates)?;
    }
    let show = std::io::stderr().is_terminal();
    let mut rejected = 0;
    for (collection, kind) in [
        ("data_sources", RecordKind::DataSources),
        ("customers", RecordKind::Customers),
        ("plans", RecordKind::Plans),
        ("plan_groups", RecordKind::PlanGroups),
        ("invoices", RecordKind::Invoices),
    ] {
        let records = files::read(dir, collection)?;
        let bar = show && records.len() >= PROGRESS_FROM;
        for (i, chunk) in records.chunks(BATCH).enumerate() {
            for result in ledger.upsert(kind, chunk).rejected() {
                rejected += 1;
                eprintln!(
                    "rejected: {}",
                    result.import_error.clone().unwrap_or_default()
                );
            }
            if bar {
                progress(
                    (i * BATCH + chunk.len()).min(records.len()),
                    records.len(),
                    collection,
                );
            }
        }
    }
    Ok(rejected)
}

fn query(params: &[String]) -> Result<ReportParams> {
    Ok(pairs(params)
        .map_err(CliError::usage)?
        .into_iter()
        .collect())
}

pub fn run(args: LocalArgs) -> Result<Value> {
    let ledger = load(&args)?;
    let as_of = match &args.as_of {
        Some(text) => submetrics::parse_as_of(text, ledger.settings())?,
        None => chrono::Utc::now(),
    };
    match args.command {
        LocalCommand::Reports { name, params } => {
            Ok(ledger.report(&name, &query(&params)?, as_of)?)
        }
        LocalCommand::Customers { action } => match action {
            LocalCustomers::List { params } => {
                Ok(ledger.analytics_customers(&query(&params)?, as_of)?)
            }
            LocalCustomers::Get { id } => {
                Ok(ledger.analytics_customer(&id, &ReportParams::new(), as_of)?)
            }
        },
        LocalCommand::Movements {
            customer,
            from,
            to,
            kinds,
        } => {
            let mut params = ReportParams::new();
            let given = [
                ("customer", customer),
                ("from", from),
                ("to", to),
                ("kinds", kinds),
            ];
            for (name, value) in given {
                if let Some(value) = value {
                    params.insert(name.to_string(), value);
                }
            }
            let filter = MovementFilter::from_params(&params, ledger.settings())?;
            Ok(json!(ledger.movements(as_of, &filter)?))
        }
    }
}
