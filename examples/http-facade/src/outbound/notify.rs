//! The notification settings that make messages: `slack` (chat messages
//! through an incoming webhook, Slack-compatible `{"text": ...}`) and
//! `email` (digests), checked when they change.

use super::catalog::CHAT_KINDS;
use super::digest::Frequency;
use crate::error::ApiError;
use serde_json::Value;

/// Settings beyond the interface's shape, absent until set:
/// `slack.webhook_url`, the chat incoming webhook.
fn optional_settings() -> Value {
    serde_json::json!({"slack": {"webhook_url": ""}})
}

/// Adds to the stored settings the optional ones that `patch` sets and
/// they lack (with their empty value), so a partial update can set them.
pub fn add_optional_settings(settings: &mut Value, patch: &Value) {
    fill(settings, &optional_settings(), patch);
}

fn fill(settings: &mut Value, optional: &Value, patch: &Value) {
    let (Some(target), Some(optional)) = (settings.as_object_mut(), optional.as_object()) else {
        return;
    };
    for (key, default) in optional {
        let Some(sent) = patch.get(key) else {
            continue;
        };
        match target.get_mut(key) {
            Some(existing) => fill(existing, default, sent),
            None => {
                target.insert(key.clone(), default.clone());
            }
        }
    }
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
