//! Where the key and the service address come from. The key: `--api-key`,
//! else `SUBMETRICS_API_KEY`, else `api_key` in `~/.submetrics.json` (the
//! `HOME` directory's). The address: `--api-url`, else `SUBMETRICS_API_URL`,
//! else `api_url` in the same file, else `http://localhost:8080`.

use crate::error::{CliError, Result};
use serde_json::Value;
use std::path::PathBuf;

pub const DEFAULT_URL: &str = "http://localhost:8080";
pub const CONFIG_FILE: &str = ".submetrics.json";

fn config_path() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(CONFIG_FILE))
}

/// The config file's settings: a JSON object of `api_key` and `api_url`,
/// both text (an absent file has none). Anything else is an error naming
/// the file and the field: a misspelt `url` would leave the client on the
/// default address, an `apiKey` without a key.
fn file() -> Result<Value> {
    let Some(path) = config_path() else {
        return Ok(Value::Null);
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(Value::Null);
    };
    let config: Value = serde_json::from_str(&text)
        .map_err(|e| CliError::usage(format!("{} is not valid JSON: {e}", path.display())))?;
    let wrong = |what: String| CliError::usage(format!("{}: {what}", path.display()));
    let Some(fields) = config.as_object() else {
        return Err(wrong(
            "must be a JSON object of api_key and api_url".to_string(),
        ));
    };
    for (name, value) in fields {
        if !matches!(name.as_str(), "api_key" | "api_url") {
            return Err(wrong(format!(
                "unknown field `{name}`; the fields are api_key and api_url"
            )));
        }
        if !value.is_string() {
            return Err(wrong(format!("field `{name}` must be text, not {value}")));
        }
    }
    Ok(config)
}

fn from_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

pub fn api_key(flag: Option<String>) -> Result<Option<String>> {
    if flag.is_some() {
        return Ok(flag);
    }
    if let Some(key) = from_env("SUBMETRICS_API_KEY") {
        return Ok(Some(key));
    }
    Ok(file()?
        .get("api_key")
        .and_then(Value::as_str)
        .map(str::to_string))
}

pub fn api_url(flag: Option<String>) -> Result<String> {
    if let Some(url) = flag.or_else(|| from_env("SUBMETRICS_API_URL")) {
        return Ok(url);
    }
    Ok(file()?
        .get("api_url")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_URL)
        .to_string())
}
