//! What a customer's replay says about it at an `as_of`: its lifecycle
//! status and dates, its paying subscriptions, and every customer's
//! movements read in place from the cached replays.

use super::Derived;
use super::movements::Movement;
use super::replays::ReplaySet;
use super::timeline::Replay;
use crate::ids::{CustomerId, PlanId, SubscriptionId};
use crate::model::{Customer, Interval};
use crate::money::{Cents, Currency};
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::BTreeMap;

/// The movements of every customer at one `as_of`, shared with the
/// ledger's replay cache (see `Ledger::customer_movements`); later writes
/// to the ledger do not change them.
#[derive(Debug, Clone)]
pub struct CustomerMovements {
    replays: ReplaySet,
}

impl CustomerMovements {
    /// Every row, customer by customer in id order, each customer's by date
    /// then currency.
    pub fn iter(&self) -> impl Iterator<Item = &Movement> {
        self.customers().flat_map(|(_, rows)| rows)
    }

    /// Each customer that has movements, in id order, with its rows.
    pub fn customers(&self) -> impl Iterator<Item = (&CustomerId, &[Movement])> {
        self.replays
            .iter()
            .filter(|(_, replay)| !replay.movements.is_empty())
            .map(|(id, replay)| (id, replay.movements.as_slice()))
    }
}

impl CustomerMovements {
    /// The movements of the replays of `replays`.
    pub(crate) fn new(replays: ReplaySet) -> CustomerMovements {
        CustomerMovements { replays }
    }
}

/// Lifecycle of a customer at `as_of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CustomerStatus {
    /// No subscription yet.
    Lead,
    /// On a zero-amount subscription, never paid.
    Trial,
    /// MRR above 0.
    Active,
    /// Paid before, MRR 0 now.
    Cancelled,
}

impl CustomerStatus {
    /// The interface name: `lead`, `trial`, `active` or `cancelled`.
    pub fn as_str(&self) -> &'static str {
        match self {
            CustomerStatus::Lead => "lead",
            CustomerStatus::Trial => "trial",
            CustomerStatus::Active => "active",
            CustomerStatus::Cancelled => "cancelled",
        }
    }
}

/// A paying subscription at `as_of`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurrentSubscription {
    /// The invoices' subscription id, `None` when they give none.
    pub subscription_id: Option<SubscriptionId>,
    /// The plan billed.
    pub plan_id: PlanId,
    /// The plan's name.
    pub name: String,
    /// The plan's billing interval unit.
    pub billing_freq: Interval,
    /// How many units one billing period lasts.
    pub billing_freq_count: u32,
    /// The currency the subscription is billed in.
    pub currency: Currency,
    /// Its MRR in that currency, normalized to a month.
    pub mrr: Cents,
    /// The seats or units billed.
    pub quantity: i64,
}

/// A customer's derived lifecycle fields at `as_of`. Values the sender gave on
/// the customer record fill in where the invoices say nothing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CustomerProfile {
    /// The lifecycle status at `as_of`.
    pub status: CustomerStatus,
    /// When the first trial started, if there was one.
    pub trial_started: Option<DateTime<Utc>>,
    /// When the first paid subscription started, if there was one.
    pub paid_started: Option<DateTime<Utc>>,
    /// The last churn when cancelled, else a scheduled cancellation after `as_of`.
    pub cancel_date: Option<DateTime<Utc>>,
    /// MRR per currency at `as_of`.
    pub mrr: BTreeMap<Currency, Cents>,
}

impl Derived<'_> {
    /// The customer's paying subscriptions in `replay` (MRR above 0), in
    /// the order their latest invoices applied.
    pub(crate) fn paying_subscriptions(&self, replay: &Replay) -> Vec<CurrentSubscription> {
        replay
            .subscriptions
            .iter()
            .filter(|s| s.mrr > 0)
            .filter_map(|s| {
                let plan = self.plan(s.plan_id.as_ref()?.as_str())?;
                Some(CurrentSubscription {
                    subscription_id: s.subscription_id.clone(),
                    plan_id: plan.id.clone(),
                    name: plan.name.clone(),
                    billing_freq: plan.billing_freq,
                    billing_freq_count: plan.billing_freq_count,
                    currency: s.currency.unwrap_or(plan.currency),
                    mrr: s.mrr,
                    quantity: s.quantity,
                })
            })
            .collect()
    }

    /// The customer's lifecycle fields from its replay at the `as_of` asked
    /// for.
    pub(crate) fn profile_of(&self, customer: &str, replay: &Replay) -> CustomerProfile {
        let tz = self.settings.timezone;
        let record = self.customer(customer);
        let given = |pick: fn(&Customer) -> Option<crate::model::Timestamp>| {
            record.and_then(pick).map(|t| t.instant(tz))
        };
        let mrr = replay.mrr_by_currency();
        let paying = mrr.values().any(|m| *m > 0);
        let status = if paying {
            CustomerStatus::Active
        } else if replay.paid_started.is_some() {
            CustomerStatus::Cancelled
        } else if replay.trial_open {
            CustomerStatus::Trial
        } else {
            CustomerStatus::Lead
        };
        let scheduled = replay.next_cancellation;
        let churned = replay
            .last_churn
            .filter(|_| status == CustomerStatus::Cancelled)
            .map(|day| crate::model::start_of_day(day, tz));
        CustomerProfile {
            status,
            trial_started: replay.trial_started.or_else(|| given(|c| c.trial_started)),
            paid_started: replay.paid_started.or_else(|| given(|c| c.paid_started)),
            cancel_date: churned.or(scheduled).or_else(|| given(|c| c.cancel_date)),
            mrr,
        }
    }
}
