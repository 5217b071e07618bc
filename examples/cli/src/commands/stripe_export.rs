//! `stripe export`: downloads a Stripe account's objects into the directory
//! `local --stripe` reads, one list response per kind.

use super::stripe_files;
use crate::args::StripeAction;
use crate::error::{CliError, Result};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use submetrics_stripe_client::{LISTS, StripeClient, read_list};

/// The Stripe key: `--api-key`, else `STRIPE_API_KEY`.
fn key(given: Option<String>) -> Result<String> {
    let key = given
        .or_else(|| std::env::var("STRIPE_API_KEY").ok())
        .filter(|k| !k.trim().is_empty())
        .ok_or_else(|| {
            CliError::usage(
                "stripe export needs a Stripe key: --api-key sk_... (or STRIPE_API_KEY)",
            )
        })?;
    if !(key.starts_with("sk_") || key.starts_with("rk_")) {
        return Err(CliError::usage(
            "--api-key must be a Stripe secret key (sk_...) or restricted key (rk_...)",
        ));
    }
    Ok(key)
}

/// Downloads every list into `to`, all or nothing: each kind is written
/// beside its file first (`customers.json.partial`, a name `local --stripe`
/// passes over) and the files take their names once every list is in. A
/// failed export removes what it wrote, so the directory keeps the files
/// of the export before it, all from one moment, and a directory the
/// export made is removed again.
pub fn run(action: StripeAction, api_key: Option<String>) -> Result<Value> {
    let StripeAction::Export { to, api_base } = action;
    let client = StripeClient::new(&api_base, &key(api_key)?, Duration::from_secs(1));
    let made = !to.exists();
    std::fs::create_dir_all(&to)
        .map_err(|e| CliError::Io(format!("cannot create {}: {e}", to.display())))?;
    let mut written: Vec<(PathBuf, PathBuf)> = Vec::new();
    let exported = download(&client, &to, &mut written).and_then(|counts| {
        for (partial, file) in &written {
            std::fs::rename(partial, file)
                .map_err(|e| CliError::Io(format!("cannot write {}: {e}", file.display())))?;
        }
        Ok(counts)
    });
    let counts = exported.inspect_err(|_| {
        for (partial, _) in &written {
            let _ = std::fs::remove_file(partial);
        }
        if made {
            let _ = std::fs::remove_dir(&to);
        }
    })?;
    Ok(json!({"directory": to.display().to_string(), "objects": counts}))
}

/// Reads every list and writes each to its partial file in `to`, adding
/// (partial file, file) to `written`; returns the count of each kind.
fn download(
    client: &StripeClient,
    to: &Path,
    written: &mut Vec<(PathBuf, PathBuf)>,
) -> Result<Map<String, Value>> {
    let mut counts = Map::new();
    for list in LISTS {
        let (kind, path) = (list.kind, list.path);
        debug_assert!(stripe_files::KINDS.contains(&kind));
        let objects = read_list(client, list)?;
        eprintln!("{kind}: {}", objects.len());
        counts.insert(kind.to_string(), json!(objects.len()));
        let list = json!({"object": "list", "data": objects, "has_more": false, "url": path});
        let file = to.join(format!("{kind}.json"));
        let partial = to.join(format!("{kind}.json.partial"));
        let text = serde_json::to_string(&list).map_err(|e| CliError::Io(e.to_string()))?;
        written.push((partial.clone(), file));
        std::fs::write(&partial, text)
            .map_err(|e| CliError::Io(format!("cannot write {}: {e}", partial.display())))?;
    }
    Ok(counts)
}
