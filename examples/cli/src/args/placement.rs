//! Where options may stand. The client's own options mean the same before
//! a command, after it, or after a command's pass-through parameters;
//! `local`'s options mean the same anywhere after `local`. Each is given
//! once (a collection option such as `--invoices` may be repeated).

use super::{Cli, Command, CustomersAction, LocalCommand, LocalCustomers};
use crate::output::Format;
use clap::ValueEnum;
use std::ffi::OsString;

/// The client's own options that take a value. Each is given once,
/// wherever it stands: before the command, after it or after a command's
/// parameters.
const VALUED_GLOBALS: &[&str] = &["--format", "--as-of", "--api-key", "--api-url"];

fn given_twice(name: &str) -> String {
    format!("{name} is given twice; give it once")
}

/// An error naming the first of the client's own valued options that
/// `args` (the command line after the program) gives more than once. clap
/// takes a global option both before and after a command, the later one
/// winning, so it is counted here, up to a `--` that ends the options.
pub fn repeated_global(args: &[String]) -> Result<(), String> {
    let mut seen: Vec<&str> = Vec::new();
    let mut items = args.iter().take_while(|arg| *arg != "--");
    while let Some(arg) = items.next() {
        let name = arg.split_once('=').map_or(arg.as_str(), |(name, _)| name);
        let Some(&global) = VALUED_GLOBALS.iter().find(|global| **global == name) else {
            continue;
        };
        if seen.contains(&global) {
            return Err(given_twice(global));
        }
        seen.push(global);
        if !arg.contains('=') {
            // Its value, which may itself look like an option.
            items.next();
        }
    }
    Ok(())
}

/// The pass-through parameters of the command, when it has them.
fn passed_through(command: &mut Command) -> Option<&mut Vec<String>> {
    match command {
        Command::Reports { params, .. } | Command::Exports { params, .. } => Some(params),
        Command::Customers {
            action: CustomersAction::List { params, .. },
        } => Some(params),
        Command::Local(local) => match &mut local.command {
            LocalCommand::Reports { params, .. } => Some(params),
            LocalCommand::Customers {
                action: LocalCustomers::List { params },
            } => Some(params),
            _ => None,
        },
        _ => None,
    }
}

/// Moves the client's own options written after a command's pass-through
/// parameters (`reports mrr --date ... --format csv --as-of 2024-06-30`)
/// back where they mean the same as before the command, so a command line
/// has one meaning wherever an option stands; a bad or missing value is an
/// error, as it is before the command.
pub fn hoist_globals(cli: &mut Cli) -> Result<(), String> {
    let Some(params) = passed_through(&mut cli.command) else {
        return Ok(());
    };
    let mut rest = Vec::new();
    let mut items = std::mem::take(params).into_iter();
    while let Some(arg) = items.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (arg.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| items.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        let flag = |set: &mut bool| {
            if inline.is_some() {
                return Err(format!("{name} takes no value"));
            }
            if std::mem::replace(set, true) {
                return Err(given_twice(&name));
            }
            Ok(())
        };
        match name.as_str() {
            "--no-color" => flag(&mut cli.no_color)?,
            "--verbose" => flag(&mut cli.verbose)?,
            "--format" => {
                let value = value()?;
                cli.format = Format::from_str(&value, true).map_err(|_| {
                    format!(
                        "invalid value '{value}' for '--format <FORMAT>' [possible values: auto, json, table, csv]"
                    )
                })?
            }
            "--api-key" => cli.api_key = Some(value()?),
            "--api-url" => cli.api_url = Some(value()?),
            "--as-of" => cli.as_of = Some(value()?),
            _ => rest.push(arg),
        }
    }
    if let Some(params) = passed_through(&mut cli.command) {
        *params = rest;
    }
    Ok(())
}

/// `local`'s options that take a value, each given once.
const LOCAL_VALUED: &[&str] = &[
    "--data",
    "--stripe",
    "--stripe-uncollectible",
    "--base-currency",
    "--timezone",
    "--first-day-of-week",
    "--churn-grace-days",
    "--refund-handling",
];

/// `local`'s collection options: each takes a value and may be repeated.
const LOCAL_REPEATABLE: &[&str] = &[
    "--customers",
    "--plans",
    "--plan-groups",
    "--invoices",
    "--fx-rates",
    "--data-sources",
];

/// `local`'s options that take no value, each given once.
const LOCAL_FLAGS: &[&str] = &["--strict", "--timing"];

/// The option a command-line item names (`--timezone` of `--timezone=UTC`),
/// when it is one.
fn option_name(item: &OsString) -> Option<&str> {
    let text = item.to_str()?;
    text.starts_with("--")
        .then(|| text.split_once('=').map_or(text, |(name, _)| name))
}

/// Whether the option item `item` (named `name`) takes the item after it
/// as its value.
fn takes_next(item: &OsString, name: &str) -> bool {
    let valued = VALUED_GLOBALS.contains(&name)
        || LOCAL_VALUED.contains(&name)
        || LOCAL_REPEATABLE.contains(&name);
    valued && !item.to_str().is_some_and(|text| text.contains('='))
}

/// The command line `args` (the program's name first) with `local`'s own
/// options written after its command (`local movements --base-currency EUR`,
/// `local customers get A --timezone UTC`, `local reports summary --data
/// DIR`) moved to just after `local`, where they mean the same; any other
/// command line as it is. An option of `local` given twice, wherever, is an
/// error naming it. The items after `--` are left alone.
pub fn local_options_first(args: Vec<OsString>) -> Result<Vec<OsString>, String> {
    let mut items = args.into_iter();
    let mut out: Vec<OsString> = items.by_ref().take(1).collect();
    // The client's options before the command, then the command.
    let mut is_local = false;
    while let Some(item) = items.next() {
        let name = option_name(&item).map(str::to_string);
        out.push(item.clone());
        match name {
            Some(name) if takes_next(&item, &name) => out.extend(items.next()),
            Some(_) => {}
            None => {
                is_local = item == "local";
                break;
            }
        }
    }
    if !is_local {
        out.extend(items);
        return Ok(out);
    }
    let at_local = out.len();
    let mut moved: Vec<OsString> = Vec::new();
    let mut subcommand_seen = false;
    let mut seen: Vec<String> = Vec::new();
    while let Some(item) = items.next() {
        if item == "--" {
            out.push(item);
            out.extend(items.by_ref());
            break;
        }
        let Some(name) = option_name(&item).map(str::to_string) else {
            subcommand_seen = true;
            out.push(item);
            continue;
        };
        let local = LOCAL_VALUED.contains(&name.as_str())
            || LOCAL_REPEATABLE.contains(&name.as_str())
            || LOCAL_FLAGS.contains(&name.as_str());
        if local && !LOCAL_REPEATABLE.contains(&name.as_str()) {
            if seen.contains(&name) {
                return Err(given_twice(&name));
            }
            seen.push(name.clone());
        }
        let value = if takes_next(&item, &name) {
            items.next()
        } else {
            None
        };
        let to = if local && subcommand_seen {
            &mut moved
        } else {
            &mut out
        };
        to.push(item);
        to.extend(value);
    }
    out.splice(at_local..at_local, moved);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved(args: &str) -> Result<String, String> {
        let args = args.split(' ').map(OsString::from).collect();
        local_options_first(args).map(|out| {
            out.iter()
                .map(|item| item.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
    }

    #[test]
    fn local_options_after_its_command_move_to_just_after_local() {
        let cases = [
            (
                "sm local movements --base-currency EUR --kinds new",
                "sm local --base-currency EUR movements --kinds new",
            ),
            (
                "sm --format csv local --data d customers get A --timezone=UTC",
                "sm --format csv local --timezone=UTC --data d customers get A",
            ),
            (
                "sm local reports summary --date x --data d --strict --invoices a --invoices b",
                "sm local --data d --strict --invoices a --invoices b reports summary --date x",
            ),
            // A value that looks like a command is the option's.
            (
                "sm --as-of local local --data reports reports summary",
                "sm --as-of local local --data reports reports summary",
            ),
            (
                "sm local reports summary -- --data d",
                "sm local reports summary -- --data d",
            ),
            ("sm reports summary --data d", "sm reports summary --data d"),
        ];
        for (given, expected) in cases {
            assert_eq!(moved(given).as_deref(), Ok(expected), "{given}");
        }
    }

    #[test]
    fn a_local_option_given_twice_is_an_error_wherever_it_stands() {
        for given in [
            "sm local --timezone UTC movements --timezone=Europe/Paris",
            "sm local reports summary --strict --strict",
        ] {
            let name = if given.contains("strict") {
                "--strict"
            } else {
                "--timezone"
            };
            assert_eq!(moved(given), Err(given_twice(name)), "{given}");
        }
    }
}
