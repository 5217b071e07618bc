//! The notification settings that make messages: `slack` (chat messages
//! through an incoming webhook, Slack-compatible `{"text": ...}`) and
//! `email` (digests): their types and values, checked when they change.

use super::catalog::CHAT_KINDS;
use super::digest::Frequency;
use crate::error::ApiError;
use serde_json::Value;

/// The JSON type a notification setting takes.
#[derive(Clone, Copy)]
enum Declared {
    Boolean,
    Text,
    List,
    /// A number, or null for none.
    NumberOrNull,
}

/// Every notification setting (section, name) with its type: the
/// interface's, and `slack.webhook_url`, shown once it is set.
const SETTINGS: &[(&str, &str, Declared)] = &[
    ("email", "enabled", Declared::Boolean),
    ("email", "recipients", Declared::List),
    ("email", "frequency", Declared::Text),
    ("slack", "enabled", Declared::Boolean),
    ("slack", "channel", Declared::Text),
    ("slack", "events", Declared::List),
    ("slack", "webhook_url", Declared::Text),
    ("alerts", "churn_threshold", Declared::NumberOrNull),
    ("alerts", "mrr_drop_threshold", Declared::NumberOrNull),
];

/// Merges a partial update into the stored settings, field by field. Every
/// field sent must be a known setting of its declared type, whatever is
/// stored; the error names the first that is not.
pub fn merge(settings: &mut Value, patch: &Value) -> Result<(), ApiError> {
    let Some(patch) = patch.as_object() else {
        return Err(ApiError::bad_request(
            "the body must be a (partial) notification settings object",
        ));
    };
    for (section, fields) in patch {
        if !SETTINGS.iter().any(|(known, _, _)| known == section) {
            return Err(unknown(section));
        }
        let Some(fields) = fields.as_object() else {
            return Err(ApiError::bad_field(
                section,
                format!("notification setting `{section}` must be an object"),
            ));
        };
        for (name, value) in fields {
            let path = format!("{section}.{name}");
            let (_, _, declared) = SETTINGS
                .iter()
                .find(|(s, n, _)| s == section && n == name)
                .ok_or_else(|| unknown(&path))?;
            let (fits, what) = match declared {
                Declared::Boolean => (value.is_boolean(), "a boolean"),
                Declared::Text => (value.is_string(), "a string"),
                Declared::List => (value.is_array(), "a list"),
                Declared::NumberOrNull => {
                    (value.is_number() || value.is_null(), "a number or null")
                }
            };
            if !fits {
                return Err(ApiError::bad_field(
                    &path,
                    format!("notification setting `{path}` must be {what}"),
                ));
            }
        }
    }
    if !settings.is_object() {
        *settings = Value::Object(Default::default());
    }
    for (section, fields) in patch {
        let stored = &mut settings[section.as_str()];
        if !stored.is_object() {
            *stored = Value::Object(Default::default());
        }
        for (name, value) in fields.as_object().into_iter().flatten() {
            stored[name.as_str()] = value.clone();
        }
    }
    Ok(())
}

fn unknown(path: &str) -> ApiError {
    ApiError::bad_field(path, format!("unknown notification setting `{path}`"))
}

/// Checks the notification settings: `email.frequency` daily or weekly,
/// `email.recipients` email addresses, `slack.events` chat kinds, and
/// `slack.webhook_url` empty or a deliverable target.
pub fn validate(settings: &Value, allow_private: bool) -> Result<(), ApiError> {
    let email = &settings["email"];
    if let Some(frequency) = email["frequency"].as_str()
        && Frequency::parse(frequency).is_none()
    {
        return Err(ApiError::bad_field(
            "email.frequency",
            format!("notification setting `email.frequency`: `{frequency}` is not daily or weekly"),
        ));
    }
    for recipient in email["recipients"].as_array().into_iter().flatten() {
        let valid = recipient
            .as_str()
            .is_some_and(|r| r.parse::<lettre::Address>().is_ok());
        if !valid {
            return Err(ApiError::bad_field(
                "email.recipients",
                format!(
                    "notification setting `email.recipients`: {recipient} is not an email address"
                ),
            ));
        }
    }
    let slack = &settings["slack"];
    for kind in slack["events"].as_array().into_iter().flatten() {
        if !kind
            .as_str()
            .is_some_and(|k| CHAT_KINDS.iter().any(|(name, _)| *name == k))
        {
            let kinds: Vec<&str> = CHAT_KINDS.iter().map(|(name, _)| *name).collect();
            return Err(ApiError::bad_field(
                "slack.events",
                format!(
                    "notification setting `slack.events`: {kind} is not one of {}",
                    kinds.join(", ")
                ),
            ));
        }
    }
    if let Some(url) = slack["webhook_url"].as_str()
        && !url.trim().is_empty()
    {
        super::target::check_given(url, allow_private, "slack.webhook_url").map_err(|e| {
            ApiError::bad_field(
                "slack.webhook_url",
                format!(
                    "notification setting {}",
                    e.to_string().trim_start_matches("field ")
                ),
            )
        })?;
    }
    Ok(())
}
