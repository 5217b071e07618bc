//! Ledger settings: the per-account configuration every computation reads.

use crate::error::{Error, Result};
use crate::money::Currency;
use chrono::Weekday;
use chrono_tz::Tz;
use serde::Serialize;
use serde_json::Value;

/// How refund invoices affect MRR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefundHandling {
    /// A refund reduces its subscription's MRR proportionally (the default).
    Reduce,
    /// Refunds are cash flow only and never move MRR.
    Ignore,
}

/// The configuration of one ledger (one account).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settings {
    /// Currency every report converts to.
    pub base_currency: Currency,
    /// Time zone of the daily grid and of bare dates in records.
    #[serde(serialize_with = "serialize_tz")]
    pub timezone: Tz,
    /// First day of a reporting week: 0 = Sunday, 1 = Monday, ... 6 = Saturday.
    pub first_day_of_week: u8,
    /// Days after the end of a service period before a missing renewal is a lapse.
    pub churn_grace_days: u32,
    /// Whether refunds move MRR.
    pub refund_handling: RefundHandling,
    /// The currency FX rates are quoted against (rate 1). `None` means the
    /// base currency; a ledger pins it when it is created, so a later change
    /// of `base_currency` never re-reads the rates already loaded.
    pub fx_pivot: Option<Currency>,
}

fn serialize_tz<S: serde::Serializer>(tz: &Tz, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(tz.name())
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            base_currency: Currency::USD,
            timezone: Tz::UTC,
            first_day_of_week: 1,
            churn_grace_days: 7,
            refund_handling: RefundHandling::Reduce,
            fx_pivot: None,
        }
    }
}

impl Settings {
    /// Reads settings from a JSON object; absent keys keep the defaults.
    pub fn from_json(value: &Value) -> Result<Settings> {
        Settings::default().merged(value)
    }

    /// These settings with the keys present in `value` replaced (a null
    /// keeps the setting); unknown keys, null or not, are an error so a typo
    /// never passes silently.
    pub fn merged(&self, value: &Value) -> Result<Settings> {
        let mut settings = self.clone();
        let Some(map) = value.as_object() else {
            if value.is_null() {
                return Ok(settings);
            }
            return Err(invalid("(settings)", "must be a JSON object"));
        };
        const KNOWN: &[&str] = &[
            "base_currency",
            "timezone",
            "first_day_of_week",
            "churn_grace_days",
            "refund_handling",
            "fx_pivot",
        ];
        for (key, value) in map {
            // A null keeps the setting, but only a setting's name may be null.
            if value.is_null() && KNOWN.contains(&key.as_str()) {
                continue;
            }
            match key.as_str() {
                "base_currency" => {
                    settings.base_currency = value
                        .as_str()
                        .and_then(Currency::parse)
                        .ok_or_else(|| invalid(key, "must be a three-letter currency code"))?;
                }
                "timezone" => {
                    settings.timezone = value
                        .as_str()
                        .and_then(|name| name.parse::<Tz>().ok())
                        .ok_or_else(|| {
                            invalid(key, "must be an IANA time zone name such as Europe/Berlin")
                        })?;
                }
                "first_day_of_week" => {
                    settings.first_day_of_week = value
                        .as_u64()
                        .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
                        .filter(|d| *d <= 6)
                        .ok_or_else(|| invalid(key, "must be 0 (Sunday) to 6 (Saturday)"))?
                        as u8;
                }
                "churn_grace_days" => {
                    settings.churn_grace_days = value
                        .as_u64()
                        .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
                        .filter(|d| *d <= 3650)
                        .ok_or_else(|| {
                            invalid(key, "must be a whole number of days from 0 to 3650")
                        })? as u32;
                }
                "refund_handling" => {
                    settings.refund_handling = match value.as_str() {
                        Some("reduce") => RefundHandling::Reduce,
                        Some("ignore") => RefundHandling::Ignore,
                        _ => return Err(invalid(key, "must be `reduce` or `ignore`")),
                    };
                }
                "fx_pivot" => {
                    settings.fx_pivot = Some(
                        value
                            .as_str()
                            .and_then(Currency::parse)
                            .ok_or_else(|| invalid(key, "must be a three-letter currency code"))?,
                    );
                }
                other => {
                    return Err(invalid(
                        other,
                        &format!("unknown setting; known: {}", KNOWN.join(", ")),
                    ));
                }
            }
        }
        Ok(settings)
    }

    /// The currency FX rates are quoted against: `fx_pivot`, else the base currency.
    pub fn pivot(&self) -> Currency {
        self.fx_pivot.unwrap_or(self.base_currency)
    }

    /// The weekday reporting weeks start on.
    pub fn week_start(&self) -> Weekday {
        match self.first_day_of_week {
            0 => Weekday::Sun,
            1 => Weekday::Mon,
            2 => Weekday::Tue,
            3 => Weekday::Wed,
            4 => Weekday::Thu,
            5 => Weekday::Fri,
            _ => Weekday::Sat,
        }
    }
}

fn invalid(setting: &str, reason: &str) -> Error {
    Error::InvalidSetting {
        setting: setting.to_string(),
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_follow_the_semantics() {
        let s = Settings::default();
        assert_eq!(s.base_currency.as_str(), "USD");
        assert_eq!(s.first_day_of_week, 1);
        assert_eq!(s.churn_grace_days, 7);
        assert_eq!(s.refund_handling, RefundHandling::Reduce);
    }

    #[test]
    fn merge_replaces_only_given_keys() {
        let s = Settings::from_json(&json!({"timezone": "Europe/Berlin", "base_currency": "eur"}))
            .unwrap();
        assert_eq!(s.timezone.name(), "Europe/Berlin");
        assert_eq!(s.base_currency.as_str(), "EUR");
        assert_eq!(s.churn_grace_days, 7);
    }

    #[test]
    fn bad_values_name_the_setting() {
        let err = Settings::from_json(&json!({"timezone": "Mars/Base"})).unwrap_err();
        assert_eq!(err.field(), Some("timezone"));
        let err = Settings::from_json(&json!({"grace": 3})).unwrap_err();
        assert_eq!(err.field(), Some("grace"));
        // A null keeps a setting, but an unknown name is refused null or not.
        let kept = Settings::from_json(&json!({"timezone": null})).unwrap();
        assert_eq!(kept, Settings::default());
        let err = Settings::from_json(&json!({"bogus": null})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "setting `bogus`: unknown setting; known: base_currency, timezone, first_day_of_week, churn_grace_days, refund_handling, fx_pivot"
        );
    }
}
