//! The notification settings that make messages: `slack` (chat messages
//! through an incoming webhook, Slack-compatible `{"text": ...}`) and
//! `email` (digests), checked when they change.

use super::catalog::CHAT_KINDS;
use super::digest::Frequency;
use crate::error::ApiError;
use serde_json::Value;

/// Adds the settings a stored document lacks (documents written before
/// they existed) from `defaults`, keeping every value it has.
pub fn fill_defaults(settings: &mut Value, defaults: &Value) {
    let (Some(target), Some(defaults)) = (settings.as_object_mut(), defaults.as_object()) else {
        return;
    };
    for (key, default) in defaults {
        match target.get_mut(key) {
            Some(existing) => fill_defaults(existing, default),
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
        return Err(ApiError::bad_request(format!(
            "notification setting `email.frequency`: `{frequency}` is not daily or weekly"
        )));
    }
    for recipient in email["recipients"].as_array().into_iter().flatten() {
        let valid = recipient
            .as_str()
            .is_some_and(|r| r.parse::<lettre::Address>().is_ok());
        if !valid {
            return Err(ApiError::bad_request(format!(
                "notification setting `email.recipients`: {recipient} is not an email address"
            )));
        }
    }
    let slack = &settings["slack"];
    for kind in slack["events"].as_array().into_iter().flatten() {
        if !kind
            .as_str()
            .is_some_and(|k| CHAT_KINDS.iter().any(|(name, _)| *name == k))
        {
            let kinds: Vec<&str> = CHAT_KINDS.iter().map(|(name, _)| *name).collect();
            return Err(ApiError::bad_request(format!(
                "notification setting `slack.events`: {kind} is not one of {}",
                kinds.join(", ")
            )));
        }
    }
    if let Some(url) = slack["webhook_url"].as_str()
        && !url.trim().is_empty()
    {
        super::target::check(url, allow_private, "slack.webhook_url").map_err(|e| {
            ApiError::bad_request(format!(
                "notification setting {}",
                e.to_string().trim_start_matches("field ")
            ))
        })?;
    }
    Ok(())
}
