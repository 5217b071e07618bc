//! A directory of Stripe API objects, one file per kind: `KIND.json` (a list
//! response `{"object": "list", "data": [...]}`, or a JSON array) or
//! `KIND.jsonl` (one object a line). `stripe export` writes it; `local
//! --stripe` reads it.

use super::{files, record_files};
use crate::args::LocalArgs;
use crate::error::{CliError, Result};
use serde_json::{Value, json};
use std::path::Path;
use submetrics::StripeOptions;

/// The kinds of a Stripe directory, in the order they are read (events last,
/// so they replace the listed objects they update).
pub const KINDS: &[&str] = &[
    "customers",
    "products",
    "prices",
    "plans",
    "subscriptions",
    "invoices",
    "credit_notes",
    "refunds",
    "charges",
    "events",
];

/// The mapping options of `--stripe` (`--stripe-uncollectible`), checked
/// before anything loads; the option without `--stripe` is an error.
pub fn options(args: &LocalArgs) -> Result<StripeOptions> {
    let Some(uncollectible) = &args.stripe_uncollectible else {
        return Ok(StripeOptions::default());
    };
    if args.stripe.is_none() {
        return Err(CliError::usage(
            "--stripe-uncollectible applies to the objects of --stripe DIR",
        ));
    }
    let options = json!({"uncollectible": uncollectible});
    StripeOptions::from_json(&options)
        .map_err(|e| CliError::usage(format!("--stripe-uncollectible: {e}")))
}

/// Every object of the directory; missing files are fine. Events are put
/// oldest first (Stripe lists them newest first).
pub fn read(dir: &Path) -> Result<Vec<Value>> {
    let unread = record_files::unread_files("--stripe", dir, KINDS, &[])?;
    record_files::note_unread("--stripe", dir, &unread);
    let mut objects = Vec::new();
    for kind in KINDS {
        let mut found = Vec::new();
        for records in
            files::read_whole(record_files::collection_files("--stripe", dir, kind)?, kind)?
        {
            match records {
                files::Records::Values(values, _) => found.extend(values),
                _ => {
                    return Err(CliError::usage(format!(
                        "{}: Stripe objects are read from {kind}.json or {kind}.jsonl",
                        dir.display()
                    )));
                }
            }
        }
        if *kind == "events" {
            found.sort_by_key(|event| event.get("created").and_then(Value::as_i64));
        }
        objects.extend(found);
    }
    Ok(objects)
}
