//! `submetrics`: the command-line client of the REST API, and an offline
//! mode that computes the same reports from exported files.

mod args;
mod body;
mod commands;
mod config;
mod error;
mod http;
mod output;

use clap::Parser;
use std::process::ExitCode;
use submetrics::reports::{ReportSchema, schema};

/// The client allocates through mimalloc, as the service does (see
/// `submetrics_allocator`): an offline load of millions of records
/// allocates heavily, and glibc's allocator is the slower of the two there.
/// It keeps freed memory as long as the service does, so a load does not
/// hand back the chunk buffers it is about to reuse.
#[global_allocator]
static ALLOCATOR: submetrics_allocator::Mimalloc = submetrics_allocator::Mimalloc;

fn main() -> ExitCode {
    submetrics_allocator::keep_freed_memory_longer();
    let given = match args::local_options_first(std::env::args_os().collect()) {
        Ok(given) => given,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut cli = match args::Cli::try_parse_from(&given) {
        Ok(cli) => cli,
        Err(error) => {
            // --help and --version print on stdout and succeed; every usage
            // error exits 1 like any other error (clap's own code is 2).
            let _ = error.print();
            return if error.use_stderr() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let given: Vec<String> = given
        .iter()
        .skip(1)
        .map(|item| item.to_string_lossy().into_owned())
        .collect();
    if let Err(error) = args::repeated_global(&given).and_then(|()| args::hoist_globals(&mut cli)) {
        eprintln!("error: {error}");
        return ExitCode::FAILURE;
    }
    // An export is CSV unless a format is asked for.
    let format = match (&cli.command, cli.format) {
        (args::Command::Exports { .. }, output::Format::Auto) => output::Format::Csv,
        (_, format) => format,
    };
    let mut style = output::Style::new(format, cli.no_color);
    style.schema = schema_of(&cli.command);
    style.beside = beside_of(&cli.command, style.schema);
    style.header = header_of(&cli.command, style.schema);
    style.base = base_currency_param(&cli.command);
    if let args::Command::Local(local) = &cli.command
        && style.base.is_none()
    {
        style.base = Some(local.base_currency.as_deref().unwrap_or("USD").to_string());
    }
    // `local` ends its stderr with what it loaded, whatever happens.
    let mut loaded = None;
    let outcome = match cli.command {
        args::Command::Local(_) if cli.api_url.is_some() || cli.api_key.is_some() => {
            Err(error::CliError::usage(
                "--api-url and --api-key are the service's; local computes offline, from files",
            ))
        }
        args::Command::Local(_) if cli.verbose => Err(error::CliError::usage(
            "--verbose logs the traffic with the service; local computes offline, from files",
        )),
        args::Command::Local(local) => {
            let counts = loaded.insert(commands::local::Loaded::default());
            commands::local::run(*local, cli.as_of.as_deref(), counts)
        }
        args::Command::Stripe { .. } if cli.as_of.is_some() => Err(error::CliError::usage(
            "--as-of applies to reports, customers list and get, exports movements and local",
        )),
        args::Command::Stripe { .. } if cli.api_url.is_some() => Err(error::CliError::usage(
            "--api-url is the service's; stripe export talks to Stripe (its key is --api-key)",
        )),
        args::Command::Stripe { .. } if cli.verbose => Err(error::CliError::usage(
            "--verbose logs the traffic with the service; stripe export talks to Stripe",
        )),
        args::Command::Stripe { action } => commands::stripe_export::run(action, cli.api_key),
        command => config::api_key(cli.api_key)
            .and_then(|key| Ok((key, config::api_url(cli.api_url)?)))
            .and_then(|(key, url)| {
                let client = http::Client::new(url, key, cli.verbose);
                let answer = commands::online::run(&client, command, cli.as_of)?;
                if style.base.is_none() && output::needs_base(&answer, &style) {
                    style.base = account_base_currency(&client);
                }
                Ok(answer)
            }),
    };
    let outcome =
        outcome.and_then(|value| output::print(&value, &style).map_err(error::CliError::Usage));
    match outcome {
        Ok(()) => {
            if let Some(loaded) = loaded {
                eprintln!("{loaded}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            if let Some(loaded) = loaded {
                eprintln!("{loaded}");
            }
            ExitCode::FAILURE
        }
    }
}

/// The `baseCurrency` parameter a report or customer list command passes
/// (`--baseCurrency`, or online `--base-currency`), upper case.
fn base_currency_param(command: &args::Command) -> Option<String> {
    use args::{Command, CustomersAction, LocalCommand, LocalCustomers};
    let params = match command {
        Command::Reports { params, .. }
        | Command::Exports {
            what: args::Export::Movements,
            params,
        }
        | Command::Customers {
            action: CustomersAction::List { params, .. },
        } => params,
        Command::Local(local) => match &local.command {
            LocalCommand::Reports { params, .. }
            | LocalCommand::Customers {
                action: LocalCustomers::List { params },
            } => params,
            _ => return None,
        },
        _ => return None,
    };
    let pairs = args::pairs(params).ok()?;
    let (_, code) = pairs.into_iter().find(|(name, _)| name == "baseCurrency")?;
    Some(code.trim().to_ascii_uppercase())
}

/// The account's base currency, for money an answer does not name the
/// currency of; `None` when the key may not read the account (a readonly
/// key) or the service does not answer it.
fn account_base_currency(client: &http::Client) -> Option<String> {
    let account = client.send("GET", "/account", &[], None).ok()?;
    Some(account.get("base_currency")?.as_str()?.to_string())
}

/// The report `command` runs, online or offline.
fn report_name(command: &args::Command) -> Option<&str> {
    match command {
        args::Command::Reports { name, .. } => Some(name),
        args::Command::Local(local) => match &local.command {
            args::LocalCommand::Reports { name, .. } => Some(name),
            _ => None,
        },
        _ => None,
    }
}

/// The kinds of the parts beside the rows of what `command` prints: the
/// report's `beside_rows`, else the fields of its answer (a summary's
/// fields beside `summary`).
fn beside_of(
    command: &args::Command,
    schema: Option<ReportSchema>,
) -> &'static [submetrics::reports::Column] {
    let declared =
        report_name(command).and_then(|name| submetrics::reports::beside_rows(name).ok());
    match (declared, schema) {
        (Some(beside), _) if !beside.is_empty() => beside,
        (Some(_), Some(ReportSchema::Rows(columns))) => columns,
        _ => &[],
    }
}

/// The columns of what `command` prints as CSV when there is no row: the
/// declared ones (a `*-table`'s `metric`), as the service's CSV names them;
/// none when they are not known (a list of records).
fn header_of(command: &args::Command, schema: Option<ReportSchema>) -> Vec<String> {
    if let args::Command::Local(local) = command
        && let args::LocalCommand::Movements { .. } = local.command
    {
        let fields = submetrics::columnar::movement_schema();
        return fields.fields().iter().map(|f| f.name().clone()).collect();
    }
    match schema {
        Some(ReportSchema::Rows(columns)) => columns.iter().map(|c| c.name.to_string()).collect(),
        Some(ReportSchema::ByMetric(_)) => vec!["metric".to_string()],
        None => Vec::new(),
    }
}

/// The columns of what `command` prints, when it prints a report, the
/// customer list or the movements.
fn schema_of(command: &args::Command) -> Option<ReportSchema> {
    use args::{Command, CustomersAction, LocalCommand, LocalCustomers};
    match command {
        Command::Reports { name, .. } => submetrics::reports::schema(name).ok(),
        Command::Exports {
            what: args::Export::Movements,
            ..
        } => Some(schema::MOVEMENTS),
        Command::Customers {
            action: CustomersAction::List { .. },
        } => Some(schema::CUSTOMERS),
        Command::Local(local) => match &local.command {
            LocalCommand::Reports { name, .. } => submetrics::reports::schema(name).ok(),
            LocalCommand::Customers {
                action: LocalCustomers::List { .. },
            } => Some(schema::CUSTOMERS),
            LocalCommand::Movements { .. } => Some(schema::MOVEMENTS),
            _ => None,
        },
        _ => None,
    }
}
