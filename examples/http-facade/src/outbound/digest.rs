//! Email digests: an account's figures over one completed day or week, in
//! its time zone: MRR at the end of the period and at its start, the
//! movements of the period by kind (base currency), and the customers that
//! were new and that churned.
//!
//! With `email.enabled` and recipients set, each scan queues the digest of
//! the last completed period once (a daily digest the day after, a weekly
//! one after the last day of the account's week); `POST
//! /settings/notifications/digest` queues one at once.

use super::scan::money;
use crate::error::ApiError;
use crate::state::AppState;
use chrono::{Datelike, Duration, NaiveDate};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use submetrics::{Ledger, MovementFilter, MovementKind, Total};

/// How often digests go out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frequency {
    Daily,
    Weekly,
}

impl Frequency {
    pub fn parse(text: &str) -> Option<Frequency> {
        match text {
            "daily" => Some(Frequency::Daily),
            "weekly" => Some(Frequency::Weekly),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Frequency::Daily => "daily",
            Frequency::Weekly => "weekly",
        }
    }

    /// The first day of the period that ends on `end`.
    pub fn start(self, end: NaiveDate) -> NaiveDate {
        match self {
            Frequency::Daily => end,
            Frequency::Weekly => end - Duration::days(6),
        }
    }

    /// The last day of the last period completed before `today`: yesterday,
    /// or the day before the most recent first day of the week.
    pub fn last_completed(self, today: NaiveDate, first_day_of_week: u8) -> NaiveDate {
        match self {
            Frequency::Daily => today - Duration::days(1),
            Frequency::Weekly => {
                let weekday = today.weekday().num_days_from_sunday() as i64;
                let since_start = (weekday - i64::from(first_day_of_week)).rem_euclid(7);
                today - Duration::days(since_start + 1)
            }
        }
    }
}

/// The digest of one period, as JSON (amounts in cents of the base
/// currency).
pub fn compute(ledger: &Ledger, frequency: Frequency, end: NaiveDate) -> Result<Value, ApiError> {
    let settings = ledger.settings();
    let start = frequency.start(end);
    let end_of = |day: NaiveDate| submetrics::parse_as_of(&day.to_string(), settings);
    let mrr_at = |day: NaiveDate| -> Result<i64, ApiError> {
        let summary = ledger.report("summary", &Default::default(), end_of(day)?)?;
        Ok(summary["summary"]["mrr_current"].as_i64().unwrap_or(0))
    };
    let summary_end = ledger.report("summary", &Default::default(), end_of(end)?)?;
    let filter = MovementFilter {
        from: Some(start),
        to: Some(end),
        ..MovementFilter::default()
    };
    let movements = ledger.movements(end_of(end)?, &filter)?;
    // Summed exactly, and refused as the reports refuse a total beyond
    // 64-bit cents.
    let mrr_change = |kind: Option<MovementKind>| {
        let rows = movements
            .iter()
            .filter(|m| kind.is_none_or(|k| m.kind == k));
        let total: Total = rows.map(|m| m.mrr_change_base_currency).sum();
        total.cents(|| match kind {
            Some(kind) => format!("the digest's {} MRR change", kind.as_str()),
            None => "the digest's net MRR change".to_string(),
        })
    };
    let mut by_kind = serde_json::Map::new();
    for kind in MovementKind::ALL {
        by_kind.insert(
            kind.as_str().to_string(),
            json!({
                "count": movements.iter().filter(|m| m.kind == kind).count(),
                "mrr_change": mrr_change(Some(kind))?,
            }),
        );
    }
    let customers_of = |kind: MovementKind| -> Vec<Value> {
        let ids: BTreeSet<&str> = movements
            .iter()
            .filter(|m| m.kind == kind)
            .map(|m| m.customer_id.as_str())
            .collect();
        ids.into_iter()
            .map(|id| json!({"id": id, "name": ledger.customer(id).map(|c| c.name.to_string())}))
            .collect()
    };
    Ok(json!({
        "frequency": frequency.as_str(),
        "period_start": start.to_string(),
        "period_end": end.to_string(),
        "currency": settings.base_currency.as_str(),
        "mrr_start": mrr_at(start - Duration::days(1))?,
        "mrr_end": summary_end["summary"]["mrr_current"].as_i64().unwrap_or(0),
        "subscribers_end": summary_end["summary"]["subscribers_current"].as_i64().unwrap_or(0),
        "net_mrr_change": mrr_change(None)?,
        "movements": by_kind,
        "new_customers": customers_of(MovementKind::New),
        "churned_customers": customers_of(MovementKind::Churn),
    }))
}

/// The email of a digest: `{"to": [...], "subject", "text"}`.
pub fn email(account_name: &str, recipients: &[String], digest: &Value) -> Value {
    let currency = digest["currency"].as_str().unwrap_or_default();
    let amount = |v: &Value| money(v.as_i64().unwrap_or(0), currency);
    let period = if digest["period_start"] == digest["period_end"] {
        digest["period_end"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    } else {
        format!(
            "{} to {}",
            digest["period_start"].as_str().unwrap_or_default(),
            digest["period_end"].as_str().unwrap_or_default()
        )
    };
    let subject = format!(
        "{} digest for {account_name}: {period}",
        if digest["frequency"] == "daily" {
            "Daily"
        } else {
            "Weekly"
        }
    );
    let mut text = format!(
        "{subject}\n\nMRR: {} (at the start: {}; net change {})\nPaying customers: {}\n\nMovements:\n",
        amount(&digest["mrr_end"]),
        amount(&digest["mrr_start"]),
        amount(&digest["net_mrr_change"]),
        digest["subscribers_end"]
    );
    for kind in MovementKind::ALL {
        let row = &digest["movements"][kind.as_str()];
        text.push_str(&format!(
            "  {:<13} {:>4}  {}\n",
            kind.as_str(),
            row["count"].as_i64().unwrap_or(0),
            amount(&row["mrr_change"])
        ));
    }
    for (title, key) in [
        ("New customers", "new_customers"),
        ("Churned customers", "churned_customers"),
    ] {
        let list = digest[key].as_array().cloned().unwrap_or_default();
        text.push_str(&format!("\n{title} ({}):\n", list.len()));
        for customer in list {
            let id = customer["id"].as_str().unwrap_or_default();
            match customer["name"].as_str().filter(|n| !n.is_empty()) {
                Some(name) => text.push_str(&format!("  {name} ({id})\n")),
                None => text.push_str(&format!("  {id}\n")),
            }
        }
    }
    json!({"to": recipients, "subject": subject, "text": text})
}

/// The email settings of an account when digests are on: (frequency,
/// recipients).
pub fn email_settings(notifications: &Value) -> Option<(Frequency, Vec<String>)> {
    let email = notifications.get("email")?;
    if email.get("enabled") != Some(&Value::Bool(true)) {
        return None;
    }
    let frequency = Frequency::parse(email.get("frequency")?.as_str()?)?;
    let recipients: Vec<String> = email
        .get("recipients")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    (!recipients.is_empty()).then_some((frequency, recipients))
}

/// Queues the digest of the last completed period of every account whose
/// digests are on and that has not had it yet.
pub fn queue_due(state: &AppState) {
    for id in state.account_ids() {
        let Ok(account) = state.account(id) else {
            continue;
        };
        let (name, notifications) = {
            let row = account.row.lock().unwrap_or_else(|p| p.into_inner());
            (row.name.clone(), row.notifications.clone())
        };
        let Some((frequency, recipients)) = email_settings(&notifications) else {
            continue;
        };
        let digest = {
            let ledger = account.ledger.read().unwrap_or_else(|p| p.into_inner());
            let settings = ledger.settings();
            let today = chrono::Utc::now()
                .with_timezone(&settings.timezone)
                .date_naive();
            let end = frequency.last_completed(today, settings.first_day_of_week);
            // On the read connection: the writer's may be waiting for the
            // database, and the ledger is held here.
            match state
                .outbound
                .reads()
                .digest_queued(id, frequency.as_str(), &end.to_string())
            {
                Ok(true) => continue,
                Ok(false) => compute(&ledger, frequency, end),
                Err(error) => Err(error),
            }
        };
        let outcome = digest.and_then(|digest| {
            let end = digest["period_end"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let body = email(&name, &recipients, &digest).to_string();
            let event_id = format!(
                "dig_{}",
                super::facts::stable_hash(&[&id.to_string(), frequency.as_str(), &end])
            );
            let queued = state.outbound.db().record_digest(
                id,
                frequency.as_str(),
                &end,
                &recipients.join(","),
                &event_id,
                &body,
            )?;
            if queued {
                state.outbound.wake();
            }
            Ok(())
        });
        if let Err(error) = outcome {
            eprintln!("warning: the digest of account {id} was not queued: {error}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_completed_period_ends_before_today() {
        let day = |d: &str| d.parse::<NaiveDate>().unwrap();
        // 2024-03-13 is a Wednesday.
        let wednesday = day("2024-03-13");
        assert_eq!(
            Frequency::Daily.last_completed(wednesday, 1),
            day("2024-03-12")
        );
        // Weeks from Monday: the last whole one ended Sunday 2024-03-10.
        assert_eq!(
            Frequency::Weekly.last_completed(wednesday, 1),
            day("2024-03-10")
        );
        // Weeks from Sunday: it ended Saturday 2024-03-09.
        assert_eq!(
            Frequency::Weekly.last_completed(wednesday, 0),
            day("2024-03-09")
        );
        // On the first day of a week, the week before has just ended.
        assert_eq!(
            Frequency::Weekly.last_completed(day("2024-03-11"), 1),
            day("2024-03-10")
        );
        assert_eq!(
            Frequency::Weekly.start(day("2024-03-10")),
            day("2024-03-04")
        );
    }
}
