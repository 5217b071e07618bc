//! The options an administration command (`keys`, `accounts`, `users`)
//! reads. Every option of the service is global, so clap takes `--listen`
//! or `--rate-limit` after `keys create` too; there they would do nothing,
//! so one given on the command line is an error naming it. From the
//! environment they stay quiet: one environment serves the service and its
//! administration commands.

use clap::ArgMatches;
use clap::parser::ValueSource;

/// The options every administration command reads: where the database is
/// and how long a write waits for its lock.
const ADMINISTRATION: &[&str] = &["data_dir", "busy_timeout"];

/// The options `command` and `action` read beyond [`ADMINISTRATION`]:
/// `users invite` prints a link to the `--listen` address.
fn also_read(command: &str, action: &str) -> &'static [&'static str] {
    match (command, action) {
        ("users", "invite") => &["listen"],
        _ => &[],
    }
}

/// An error naming the first service option `matches` got on the command
/// line that its administration command does not read; `Ok` for the
/// service itself (no command).
pub fn unread_options(cli: &clap::Command, matches: &ArgMatches) -> Result<(), String> {
    let Some((command, command_matches)) = matches.subcommand() else {
        return Ok(());
    };
    let (action, action_matches) = command_matches
        .subcommand()
        .unwrap_or(("", command_matches));
    let reads = also_read(command, action);
    for argument in cli.get_arguments().filter(|a| a.is_global_set()) {
        let id = argument.get_id().as_str();
        if ADMINISTRATION.contains(&id) || reads.contains(&id) {
            continue;
        }
        let given = [matches, command_matches, action_matches]
            .iter()
            .any(|m| m.value_source(id) == Some(ValueSource::CommandLine));
        if given {
            let name = argument.get_long().unwrap_or(id);
            return Err(format!(
                "--{name} is an option of the service; `{command} {action}` does not read it"
            ));
        }
    }
    Ok(())
}
