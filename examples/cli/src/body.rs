//! Request bodies: inline JSON, `@file`, or `-` / piped stdin.

use crate::error::{CliError, Result};
use serde_json::Value;
use std::io::{IsTerminal, Read};

/// The body given on the command line, or read from stdin when it is `-`
/// or absent while stdin is not a terminal.
pub fn read(given: Option<&str>) -> Result<Option<Value>> {
    let text = match given {
        Some("-") => Some(stdin()?),
        Some(path) if path.starts_with('@') => Some(
            std::fs::read_to_string(&path[1..])
                .map_err(|e| CliError::Io(format!("cannot read {}: {e}", &path[1..])))?,
        ),
        Some(inline) => Some(inline.to_string()),
        None if !std::io::stdin().is_terminal() => {
            let text = stdin()?;
            (!text.trim().is_empty()).then_some(text)
        }
        None => None,
    };
    // The core's reader, as the service's: a key given twice in one
    // object is refused, never read as its last value.
    text.map(|t| {
        submetrics::model::Json::parse(&t)
            .map(|json| json.to_value())
            .map_err(|e| CliError::usage(format!("the body is not valid JSON: {e}")))
    })
    .transpose()
}

fn stdin() -> Result<String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| CliError::Io(format!("cannot read stdin: {e}")))?;
    Ok(text)
}

/// A body that must be there.
pub fn required(given: Option<&str>) -> Result<Value> {
    read(given)?.ok_or_else(|| {
        CliError::usage("a JSON body is needed: --body '{...}', --body @file.json or stdin")
    })
}
