//! The service's settings from the environment are the `SUBMETRICS_*`
//! variables its options name (`--listen` reads `SUBMETRICS_LISTEN`, and
//! so on) and `SUBMETRICS_OWNER_KEY`. A variable of that prefix that none
//! reads is a misspelling, or a setting of another version: one a letter
//! or two from a setting's name (`SUBMETRICS_RATELIMIT`) stops the start,
//! naming both; any other is a warning, since the clients and the
//! project's tools read variables of the prefix too.

/// The prefix of the service's variables.
const PREFIX: &str = "SUBMETRICS_";

/// The variables no option names that the service reads itself.
const READ_DIRECTLY: &[&str] = &["SUBMETRICS_OWNER_KEY"];

/// Variables of the prefix that the clients (`SUBMETRICS_API_KEY`,
/// `SUBMETRICS_API_URL`) and the project's test and benchmark tools read:
/// passed over without a warning.
const READ_ELSEWHERE: &[&str] = &[
    "SUBMETRICS_API_KEY",
    "SUBMETRICS_API_URL",
    "SUBMETRICS_SERVER_BIN",
    "SUBMETRICS_BINARY",
    "SUBMETRICS_PEER_PYTHON",
];

/// The warnings for the variables among `names` of the prefix that nothing
/// reads, or the error for one a near miss of a setting `command` (and
/// its subcommands) read from the environment.
pub fn unread_variables(
    command: &clap::Command,
    names: impl IntoIterator<Item = String>,
) -> Result<Vec<String>, String> {
    let mut settings: Vec<String> = READ_DIRECTLY.iter().map(|s| s.to_string()).collect();
    add_settings(command, &mut settings);
    let mut names: Vec<String> = names
        .into_iter()
        .filter(|name| name.starts_with(PREFIX))
        .filter(|name| !settings.contains(name) && !READ_ELSEWHERE.contains(&name.as_str()))
        .collect();
    names.sort();
    let mut warnings = Vec::new();
    for name in names {
        let suffixes = settings.iter().map(|setting| &setting[PREFIX.len()..]);
        if let Some(meant) = submetrics::reports::near_miss(&name[PREFIX.len()..], suffixes) {
            return Err(format!(
                "{name} is not a setting of the service; did you mean {PREFIX}{meant}?"
            ));
        }
        warnings.push(format!(
            "warning: {name} is not a setting of the service; it is not read"
        ));
    }
    Ok(warnings)
}

/// The environment variables the arguments of `command` and of its
/// subcommands read.
fn add_settings(command: &clap::Command, settings: &mut Vec<String>) {
    for argument in command.get_arguments() {
        if let Some(name) = argument.get_env().and_then(|name| name.to_str())
            && !settings.iter().any(|known| known == name)
        {
            settings.push(name.to_string());
        }
    }
    for subcommand in command.get_subcommands() {
        add_settings(subcommand, settings);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command() -> clap::Command {
        clap::Command::new("service")
            .arg(
                clap::Arg::new("listen")
                    .long("listen")
                    .env("SUBMETRICS_LISTEN"),
            )
            .arg(
                clap::Arg::new("rate_limit")
                    .long("rate-limit")
                    .env("SUBMETRICS_RATE_LIMIT"),
            )
            .subcommand(
                clap::Command::new("users").arg(
                    clap::Arg::new("url")
                        .long("url")
                        .env("SUBMETRICS_PUBLIC_URL"),
                ),
            )
    }

    fn names(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn settings_clients_and_other_variables_pass_and_unknown_ones_are_warned_of() {
        let warnings = unread_variables(
            &command(),
            names(&[
                "HOME",
                "SUBMETRICS_LISTEN",
                "SUBMETRICS_PUBLIC_URL",
                "SUBMETRICS_OWNER_KEY",
                "SUBMETRICS_API_KEY",
                "SUBMETRICS_SERVER_BIN",
                "SUBMETRICS_THEME",
            ]),
        );
        assert_eq!(
            warnings,
            Ok(vec![
                "warning: SUBMETRICS_THEME is not a setting of the service; it is not read"
                    .to_string()
            ])
        );
    }

    #[test]
    fn a_near_miss_of_a_setting_is_an_error_naming_it() {
        assert_eq!(
            unread_variables(&command(), names(&["SUBMETRICS_RATELIMIT"])),
            Err("SUBMETRICS_RATELIMIT is not a setting of the service; \
                 did you mean SUBMETRICS_RATE_LIMIT?"
                .to_string())
        );
        assert_eq!(
            unread_variables(&command(), names(&["SUBMETRICS_LISTN"])),
            Err(
                "SUBMETRICS_LISTN is not a setting of the service; did you mean SUBMETRICS_LISTEN?"
                    .to_string()
            )
        );
    }
}
