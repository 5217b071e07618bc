//! Offline mode: load a directory of exported records into a ledger and run
//! reports, customer views and movements with the engine directly
//! ([`load`] reads the files, [`pieces`] streams them into the ledger).

mod load;
mod pieces;

pub use load::Loaded;

use crate::args::{LocalArgs, LocalCommand, LocalCustomers, not_blank, pairs};
use crate::error::{CliError, Result};
use serde_json::{Value, json};
use std::time::Instant;
use submetrics::{Ledger, MovementFilter, ReportParams, Settings};

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

fn query(params: &[String]) -> Result<ReportParams> {
    Ok(pairs(params)
        .map_err(CliError::usage)?
        .into_iter()
        .collect())
}

/// Runs a `local` command at `as_of` (default now); `loaded` gets what
/// the load kept, also when the command fails.
pub fn run(args: LocalArgs, as_of: Option<&str>, loaded: &mut Loaded) -> Result<Value> {
    let settings = settings(&args)?;
    let as_of = match as_of {
        Some(text) => submetrics::parse_as_of(text, &settings)?,
        None => chrono::Utc::now(),
    };
    one_base_currency(&args)?;
    check_before_loading(&args.command, &settings, as_of)?;
    let started = Instant::now();
    let ledger = load::load(&args, settings, loaded)?;
    let load_time = started.elapsed();
    let timing = args.timing;
    let computed = Instant::now();
    let result = compute(&ledger, &args.command, as_of);
    // The process ends once the answer is printed, and the system takes its
    // memory back at once; freeing a large ledger record by record first
    // would only delay the answer (a quarter of a second at 10M invoices).
    std::mem::forget(ledger);
    if timing {
        eprintln!(
            "timing: load {:.3} s, compute {:.3} s",
            load_time.as_secs_f64(),
            computed.elapsed().as_secs_f64()
        );
    }
    result
}

/// Refuses `--base-currency` beside a report's or the customer list's
/// `--baseCurrency`: the ledger's base currency is the currency reports
/// answer in, so both is one parameter given twice, as it is online (where
/// `--base-currency` is `--baseCurrency`).
fn one_base_currency(args: &LocalArgs) -> Result<()> {
    let params = match &args.command {
        LocalCommand::Reports { params, .. }
        | LocalCommand::Customers {
            action: LocalCustomers::List { params },
        } => params,
        _ => return Ok(()),
    };
    let Some(base) = &args.base_currency else {
        return Ok(());
    };
    match pairs(params)
        .map_err(CliError::usage)?
        .into_iter()
        .find(|(name, _)| name == "baseCurrency")
    {
        Some((_, value)) => Err(CliError::usage(format!(
            "--baseCurrency is given twice (`{base}`, then `{value}`); a parameter takes one \
             value (several ids go in one, space-separated)"
        ))),
        None => Ok(()),
    }
}

/// Fails before anything loads when the command is refused whatever the
/// data: an unknown report or parameter, or a value that cannot be read. The
/// command runs on an empty ledger of the same settings, which is the
/// engine's own check at no cost; its other errors (a customer not found,
/// or a `plan` filter naming a plan the files hold) depend on the data and
/// are left to the run on the loaded ledger.
fn check_before_loading(
    command: &LocalCommand,
    settings: &Settings,
    as_of: chrono::DateTime<chrono::Utc>,
) -> Result<()> {
    match compute(&Ledger::new(settings.clone()), command, as_of) {
        Err(error @ CliError::Usage(_)) => Err(error),
        Err(CliError::Core(error))
            if matches!(error.code(), "unknown_report" | "invalid_query")
                && !matches!(&error, submetrics::Error::InvalidQuery { param, .. } if param == "plan") =>
        {
            Err(CliError::Core(error))
        }
        _ => Ok(()),
    }
}

/// Runs a `local` command on the loaded ledger.
fn compute(
    ledger: &Ledger,
    command: &LocalCommand,
    as_of: chrono::DateTime<chrono::Utc>,
) -> Result<Value> {
    match command {
        LocalCommand::Reports { name, params } => {
            Ok(ledger.report(name, &query(params)?, as_of)?)
        }
        LocalCommand::Customers { action } => match action {
            LocalCustomers::List { params } => {
                Ok(ledger.analytics_customers(&query(params)?, as_of)?)
            }
            LocalCustomers::Get { id } => {
                Ok(ledger.analytics_customer(id, &ReportParams::new(), as_of)?)
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
                    not_blank(&format!("--{name}"), value).map_err(CliError::usage)?;
                    params.insert(name.to_string(), value.clone());
                }
            }
            let filter = MovementFilter::from_params(&params, ledger.settings())?;
            Ok(json!(ledger.movements(as_of, &filter)?))
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    /// A ledger of one paying customer.
    fn small_ledger(settings: &Settings) -> Ledger {
        let mut ledger = Ledger::new(settings.clone());
        let plan = json!({"id": "m", "name": "M", "interval": "month", "currency": "USD"});
        let customer = json!({"id": "c", "name": "C"});
        let invoice = json!({"id": "i", "customer_id": "c", "type": "subscription",
            "plan_id": "m", "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"});
        ledger.upsert(submetrics::RecordKind::Plans, &[plan]);
        ledger.upsert(submetrics::RecordKind::Customers, &[customer]);
        let stored = ledger.upsert(submetrics::RecordKind::Invoices, &[invoice]);
        assert_eq!(stored.accepted(), 1);
        ledger
    }

    #[test]
    fn the_check_before_loading_refuses_only_what_the_loaded_ledger_refuses_alike() {
        let as_of = chrono::Utc::now();
        let settings = Settings::default();
        let ledger = small_ledger(&settings);
        let mut commands: Vec<LocalCommand> = submetrics::reports::report_names()
            .into_iter()
            .map(|name| LocalCommand::Reports {
                name: name.to_string(),
                params: Vec::new(),
            })
            .collect();
        commands.push(LocalCommand::Customers {
            action: LocalCustomers::List { params: Vec::new() },
        });
        // A plan filter names a plan of the files, which an empty ledger lacks.
        for name in ["mrr", "summary"] {
            commands.push(LocalCommand::Reports {
                name: name.to_string(),
                params: vec!["--plan".to_string(), "m".to_string()],
            });
        }
        commands.push(LocalCommand::Movements {
            customer: None,
            from: None,
            to: None,
            kinds: None,
        });
        let mut refused = Vec::new();
        for command in &commands {
            let loaded = compute(&ledger, command, as_of).map_err(|e| e.to_string());
            match check_before_loading(command, &settings, as_of) {
                Ok(()) => assert!(loaded.is_ok(), "{loaded:?}"),
                Err(error) => {
                    assert_eq!(loaded, Err(error.to_string()));
                    refused.push(error.to_string());
                }
            }
        }
        // The reports of a period's customers need the period.
        let needs_date =
            "parameter `selected-date`: is required (the start of the period to list, YYYY-MM-DD)";
        // `summary` reads no `plan` (refused before loading), `mrr` does.
        let no_plan = "parameter `plan`: report `summary` has no such parameter. Its parameters: baseCurrency";
        assert_eq!(refused, [needs_date, needs_date, needs_date, no_plan]);
    }
}
