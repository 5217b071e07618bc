//! Subscriptions and a customer's MRR over time (SEMANTICS section 3).
//!
//! [`Timeline::build`] turns one customer's invoices into a sorted list of
//! events that does not depend on `as_of` (so it can be cached and rebuilt
//! only when the customer's records change). [`Timeline::simulate`] replays
//! the events that apply at a given `as_of` and yields the daily movements and
//! the final state. A lapse is an event at the coverage end that only applies
//! once `as_of` is past the coverage end plus the grace days.

use crate::error::Result;
use crate::fx::FxTable;
use crate::ids::{CustomerId, InvoiceId, PlanId, SubscriptionId};
use crate::model::{Invoice, InvoiceType, Plan, RefundHandling, Settings};
use crate::money::{Cents, Currency, round_ratio};
use crate::movements::{DayCauses, DayChange, Movement, Snapshot, classify};
use crate::normalize::{monthly_amount, service_period};
use chrono::{DateTime, Duration, NaiveDate, Utc};
use std::collections::HashMap;

/// What an event does to the subscriptions it targets.
#[derive(Debug, Clone, PartialEq)]
enum EventKind {
    /// Ends subscription `sub`, or every subscription when `None`.
    Cancel { sub: Option<usize> },
    /// Sets the subscription's MRR from a subscription invoice.
    Invoice {
        invoice: InvoiceId,
        monthly: Cents,
        amount: Cents,
        plan: PlanId,
        quantity: i64,
        currency: Currency,
    },
    /// Reduces MRR by `round(mrr x refunded / denominator)`.
    Refund {
        target: RefundTarget,
        refunded: Cents,
    },
    /// No renewal arrived within the grace period.
    Lapse,
}

#[derive(Debug, Clone, PartialEq)]
enum RefundTarget {
    /// A named subscription invoice: its subscription, its amount.
    Invoice { amount: Cents },
    /// The subscription's latest invoice in effect at the refund.
    Subscription,
    /// The customer's latest subscription invoice in effect at the refund.
    Latest,
}

/// One dated event of a customer's history.
#[derive(Debug, Clone, PartialEq)]
struct Event {
    at: DateTime<Utc>,
    /// A lapse applies only when `as_of` is strictly after this instant.
    visible_after: Option<DateTime<Utc>>,
    /// Same-instant order: cancellations, invoices, refunds, lapses.
    priority: u8,
    sub: usize,
    /// The invoice behind the event: the last tie-break, so input order never matters.
    source: InvoiceId,
    kind: EventKind,
}

/// A subscription invoice with its service period and plan.
type PricedInvoice<'a> = (DateTime<Utc>, DateTime<Utc>, &'a Invoice, Plan);

/// The state of one subscription during a replay.
#[derive(Debug, Clone, PartialEq)]
pub struct SubscriptionState {
    /// `None` for the customer's implicit subscription.
    pub subscription_id: Option<SubscriptionId>,
    pub mrr: Cents,
    pub currency: Option<Currency>,
    pub plan_id: Option<PlanId>,
    pub quantity: i64,
    /// Amount of the latest subscription invoice applied.
    last_invoice_amount: Cents,
    /// Effective instant of the latest subscription invoice applied.
    last_effective: Option<DateTime<Utc>>,
}

/// The outcome of replaying a customer's events up to a cutoff.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replay {
    pub movements: Vec<Movement>,
    pub subscriptions: Vec<SubscriptionState>,
    /// First instant a zero-amount invoice applied before any payment.
    pub trial_started: Option<DateTime<Utc>>,
    /// First instant the customer's MRR became positive.
    pub paid_started: Option<DateTime<Utc>>,
    /// Day of the latest churn movement.
    pub last_churn: Option<NaiveDate>,
    /// Whether a trial subscription is still open (not lapsed or cancelled).
    pub trial_open: bool,
}

impl Replay {
    /// MRR per currency at the end of the replay.
    pub fn mrr(&self) -> Snapshot {
        snapshot(&self.subscriptions)
    }
}

/// A customer's `as_of`-independent history.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    pub customer_id: CustomerId,
    subscription_ids: Vec<Option<SubscriptionId>>,
    events: Vec<Event>,
}

impl Timeline {
    /// Builds the events of one customer from its invoices. Void invoices and
    /// invoices whose plan is unknown are skipped; refunds are skipped when the
    /// settings ignore them.
    pub fn build(
        customer_id: CustomerId,
        invoices: &[&Invoice],
        plans: &dyn Fn(&PlanId) -> Option<Plan>,
        settings: &Settings,
    ) -> Timeline {
        let tz = settings.timezone;
        let grace = Duration::days(i64::from(settings.churn_grace_days));
        let mut subscription_ids: Vec<Option<SubscriptionId>> = Vec::new();
        let sub_index =
            |id: &Option<SubscriptionId>, ids: &mut Vec<Option<SubscriptionId>>| -> usize {
                match ids.iter().position(|existing| existing == id) {
                    Some(i) => i,
                    None => {
                        ids.push(id.clone());
                        ids.len() - 1
                    }
                }
            };
        let mut counted: Vec<&Invoice> = invoices.iter().copied().filter(|i| i.counts()).collect();
        // Subscription indexes follow invoice ids, never input order.
        counted.sort_by(|a, b| a.id.cmp(&b.id));
        let by_id: HashMap<&InvoiceId, &Invoice> = counted.iter().map(|i| (&i.id, *i)).collect();
        let mut events = Vec::new();
        // Subscription invoices, grouped per subscription for coverage and lapses.
        let mut per_sub: Vec<Vec<PricedInvoice>> = Vec::new();
        for invoice in counted
            .iter()
            .filter(|i| i.kind == InvoiceType::Subscription)
        {
            let Some(plan) = invoice.plan_id.as_ref().and_then(plans) else {
                continue;
            };
            let sub = sub_index(&invoice.subscription_id, &mut subscription_ids);
            if per_sub.len() <= sub {
                per_sub.resize_with(sub + 1, Vec::new);
            }
            let (start, end) = service_period(invoice, &plan, tz);
            per_sub[sub].push((start, end, invoice, plan));
        }
        for (sub, invoices) in per_sub.iter_mut().enumerate() {
            invoices.sort_by(|a, b| (a.0, &a.2.id).cmp(&(b.0, &b.2.id)));
            for (i, (start, end, invoice, plan)) in invoices.iter().enumerate() {
                events.push(Event {
                    at: *start,
                    visible_after: None,
                    priority: 1,
                    sub,
                    source: invoice.id.clone(),
                    kind: EventKind::Invoice {
                        invoice: invoice.id.clone(),
                        monthly: monthly_amount(invoice, plan, tz),
                        amount: invoice.amount,
                        plan: plan.id.clone(),
                        quantity: invoice.quantity,
                        currency: invoice.currency,
                    },
                });
                let renewed = invoices
                    .get(i + 1)
                    .is_some_and(|next| next.0 <= *end + grace);
                if !renewed {
                    events.push(Event {
                        at: *end,
                        visible_after: Some(*end + grace),
                        priority: 3,
                        sub,
                        source: invoice.id.clone(),
                        kind: EventKind::Lapse,
                    });
                }
            }
        }
        for invoice in &counted {
            let at = invoice.invoice_date.instant(tz);
            match invoice.kind {
                InvoiceType::Cancellation => {
                    let sub = invoice
                        .subscription_id
                        .as_ref()
                        .map(|id| sub_index(&Some(id.clone()), &mut subscription_ids));
                    events.push(Event {
                        at,
                        visible_after: None,
                        priority: 0,
                        sub: sub.unwrap_or(0),
                        source: invoice.id.clone(),
                        kind: EventKind::Cancel { sub },
                    });
                }
                InvoiceType::Refund if settings.refund_handling == RefundHandling::Reduce => {
                    // A named invoice must be a counted subscription invoice of
                    // this customer; refunding anything else (a one-time, void,
                    // unknown or other customer's invoice) never moves MRR.
                    let refunded = invoice.refunded_invoice_id.as_ref().map(|id| by_id.get(id));
                    let (sub, target) = match refunded {
                        Some(None) => continue,
                        Some(Some(original)) if original.kind != InvoiceType::Subscription => {
                            continue;
                        }
                        Some(Some(original)) => (
                            sub_index(&original.subscription_id, &mut subscription_ids),
                            RefundTarget::Invoice {
                                amount: original.amount,
                            },
                        ),
                        None => match &invoice.subscription_id {
                            Some(id) => (
                                sub_index(&Some(id.clone()), &mut subscription_ids),
                                RefundTarget::Subscription,
                            ),
                            None => (0, RefundTarget::Latest),
                        },
                    };
                    events.push(Event {
                        at,
                        visible_after: None,
                        priority: 2,
                        sub,
                        source: invoice.id.clone(),
                        kind: EventKind::Refund {
                            target,
                            refunded: invoice.amount.abs(),
                        },
                    });
                }
                _ => {}
            }
        }
        events.sort_by(|a, b| {
            (a.at, a.priority, a.sub, &a.source).cmp(&(b.at, b.priority, b.sub, &b.source))
        });
        Timeline {
            customer_id,
            subscription_ids,
            events,
        }
    }

    /// Whether the customer has any event at all.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Instants of events that do not apply yet at `as_of` (scheduled changes).
    pub fn has_events_after(&self, as_of: DateTime<Utc>) -> bool {
        self.events.last().is_some_and(|e| e.at > as_of)
    }

    /// Replays the events that apply at `as_of` and happen no later than
    /// `cutoff`, producing daily movements in the ledger's time zone.
    pub fn simulate(
        &self,
        cutoff: DateTime<Utc>,
        as_of: DateTime<Utc>,
        settings: &Settings,
        fx: &FxTable,
    ) -> Result<Replay> {
        let tz = settings.timezone;
        let mut subs: Vec<SubscriptionState> = self
            .subscription_ids
            .iter()
            .map(|id| SubscriptionState {
                subscription_id: id.clone(),
                mrr: 0,
                currency: None,
                plan_id: None,
                quantity: 0,
                last_invoice_amount: 0,
                last_effective: None,
            })
            .collect();
        let mut replay = Replay::default();
        let mut trial_seen = false;
        let mut paid_before = false;
        let mut trial_subs: Vec<bool> = vec![false; subs.len()];
        let limit = cutoff.min(as_of);
        let applies = |e: &Event| e.at <= limit && e.visible_after.is_none_or(|v| as_of > v);
        let mut i = 0;
        let events: Vec<&Event> = self.events.iter().filter(|e| applies(e)).collect();
        while i < events.len() {
            let day = events[i].at.with_timezone(&tz).date_naive();
            let before = snapshot(&subs);
            let mut causes = DayCauses::default();
            let mut trial_before = trial_seen;
            while i < events.len() && events[i].at.with_timezone(&tz).date_naive() == day {
                let event = events[i];
                i += 1;
                match &event.kind {
                    EventKind::Cancel { sub } => {
                        for (index, state) in subs.iter_mut().enumerate() {
                            if sub.is_none_or(|s| s == index) {
                                if state.mrr > 0 {
                                    causes.cancellation = true;
                                }
                                state.mrr = 0;
                                trial_subs[index] = false;
                            }
                        }
                    }
                    EventKind::Invoice {
                        monthly,
                        amount,
                        plan,
                        quantity,
                        currency,
                        ..
                    } => {
                        let state = &mut subs[event.sub];
                        if *monthly == 0 && state.mrr > 0 {
                            causes.cancellation = true;
                        }
                        state.mrr = *monthly;
                        state.currency = Some(*currency);
                        state.plan_id = Some(plan.clone());
                        state.quantity = *quantity;
                        state.last_invoice_amount = *amount;
                        state.last_effective = Some(event.at);
                        trial_subs[event.sub] = *monthly == 0;
                        if *monthly == 0 && !paid_before && replay.paid_started.is_none() {
                            trial_seen = true;
                            trial_before = true;
                            replay.trial_started.get_or_insert(event.at);
                        }
                        if *monthly > 0 && replay.paid_started.is_none() {
                            replay.paid_started = Some(event.at);
                        }
                    }
                    EventKind::Refund { target, refunded } => {
                        let index = match target {
                            RefundTarget::Latest => subs
                                .iter()
                                .enumerate()
                                .filter(|(_, s)| s.last_effective.is_some())
                                .max_by_key(|(i, s)| (s.last_effective, *i))
                                .map(|(i, _)| i),
                            _ => Some(event.sub),
                        };
                        if let Some(index) = index {
                            let state = &mut subs[index];
                            let denominator = match target {
                                RefundTarget::Invoice { amount } => *amount,
                                _ => state.last_invoice_amount,
                            };
                            if denominator > 0 && state.mrr > 0 {
                                let reduction = round_ratio(
                                    i128::from(state.mrr) * i128::from(*refunded),
                                    i128::from(denominator),
                                );
                                state.mrr = (state.mrr - reduction).max(0);
                                causes.refund = true;
                            }
                        }
                    }
                    EventKind::Lapse => {
                        if subs[event.sub].mrr > 0 {
                            causes.lapse = true;
                        }
                        subs[event.sub].mrr = 0;
                        trial_subs[event.sub] = false;
                    }
                }
            }
            let after = snapshot(&subs);
            let rows = classify(
                &DayChange {
                    customer_id: &self.customer_id,
                    date: day,
                    before: &before,
                    after: &after,
                    causes,
                    paid_before,
                    trial_before,
                },
                settings.base_currency,
                fx,
            )?;
            if rows.iter().any(|m| m.customer_count_change < 0) {
                replay.last_churn = Some(day);
            }
            replay.movements.extend(rows);
            if after.mrr.values().any(|m| *m > 0) {
                paid_before = true;
            }
        }
        replay.trial_open = trial_subs.iter().any(|t| *t) && !paid_before;
        replay.subscriptions = subs;
        Ok(replay)
    }

    /// Scheduled events after `as_of`: (instant, description, MRR change hint).
    pub fn scheduled_cancellations(&self, as_of: DateTime<Utc>) -> Vec<DateTime<Utc>> {
        self.events
            .iter()
            .filter(|e| e.at > as_of && matches!(e.kind, EventKind::Cancel { .. }))
            .map(|e| e.at)
            .collect()
    }
}

fn snapshot(subs: &[SubscriptionState]) -> Snapshot {
    let mut snap = Snapshot::default();
    for sub in subs.iter().filter(|s| s.mrr > 0) {
        if let Some(currency) = sub.currency {
            *snap.mrr.entry(currency).or_insert(0) += sub.mrr;
            *snap.quantity.entry(currency).or_insert(0) += sub.quantity;
        }
        if let Some(plan) = &sub.plan_id {
            snap.plans.insert(plan.clone());
        }
    }
    snap
}
