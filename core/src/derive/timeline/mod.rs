//! Subscriptions and a customer's MRR over time (SEMANTICS section 3).
//!
//! `Timeline::build` turns one customer's invoices into a sorted list of
//! events that does not depend on `as_of`. `Timeline::simulate` replays
//! the events that apply at a given `as_of` and yields the daily movements,
//! the final state and the window of `as_of` instants the replay serves. A
//! lapse is an event at the coverage end that only applies once `as_of` is
//! past the coverage end plus the grace days. The ledger keeps replays, not
//! timelines: a timeline is built for a replay and dropped after it.
//!
//! Events refer to plans and invoices by index into the timeline's own small
//! tables, so building and replaying allocate little on the hot path.

use super::movements::{DayCauses, DayChange, DayState, Movement, Snapshot, classify};
use crate::error::Result;
use crate::fx::FxTable;
use crate::ids::{CustomerId, InvoiceId, PlanId, SubscriptionId};
use crate::model::{InvoiceType, Plan, RefundHandling, Settings, StoredInvoice, UnixMillis};
use crate::money::{Cents, Currency, round_ratio};
use crate::normalize::{ServicePeriod, monthly_amount_over, service_period};
use chrono::{DateTime, Duration, NaiveDate, Utc};
use smallvec::SmallVec;
use std::cell::Cell;
use std::collections::BTreeMap;

mod build;
mod simulate;

/// What an event does to the subscriptions it targets.
#[derive(Debug, Clone, Copy, PartialEq)]
enum EventKind {
    /// Ends subscription `sub`, or every subscription when `all`.
    Cancel { all: bool },
    /// Sets the subscription's MRR from a subscription invoice.
    Invoice {
        monthly: Cents,
        amount: Cents,
        /// Index into [`Timeline::plans`].
        plan: u32,
        quantity: i64,
        currency: Currency,
    },
    /// Reduces MRR by `round(mrr x refunded / denominator)`, the refunded
    /// amount first converted into the denominator's currency (at the
    /// refund's day) when the refund is in another one.
    Refund {
        target: RefundTarget,
        refunded: Cents,
        currency: Currency,
    },
    /// No renewal arrived within the grace period.
    Lapse,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum RefundTarget {
    /// A named subscription invoice: its subscription, its amount and currency.
    Invoice { amount: Cents, currency: Currency },
    /// The subscription's latest invoice in effect at the refund.
    Subscription,
    /// The subscription of the customer's subscription invoice applied last
    /// at or before the refund (effective instant, issue instant, id).
    Latest,
}

/// One dated event of a customer's history.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Event {
    /// A lapse happens at its coverage end but applies only when `as_of` is
    /// strictly after that plus the timeline's grace period.
    at: UnixMillis,
    /// The local day of `at` in the time zone the timeline was built for
    /// (a change of time zone rebuilds every timeline).
    day: NaiveDate,
    /// Index into [`Timeline::subscription_ids`].
    sub: u32,
    /// Rank of the invoice behind the event in id order. Events at one
    /// instant and priority apply in order of their invoices' issue
    /// instants, then of this rank, so input order never matters and ids
    /// decide only between invoices issued at the same instant.
    source: u32,
    kind: EventKind,
}

impl Event {
    /// Same-instant order: cancellations, invoices, refunds, lapses.
    fn priority(&self) -> u8 {
        match self.kind {
            EventKind::Cancel { .. } => 0,
            EventKind::Invoice { .. } => 1,
            EventKind::Refund { .. } => 2,
            EventKind::Lapse => 3,
        }
    }
}

/// The state of one subscription at the end of a replay.
#[derive(Debug, Clone, PartialEq)]
pub struct SubscriptionState {
    /// `None` for the customer's implicit subscription.
    pub subscription_id: Option<SubscriptionId>,
    /// Its MRR in `currency` at the end of the replay, 0 when it no longer pays.
    pub mrr: Cents,
    /// The currency it is billed in, `None` before any of its invoices applied.
    pub currency: Option<Currency>,
    /// The plan it is on.
    pub plan_id: Option<PlanId>,
    /// The seats or units it bills.
    pub quantity: i64,
}

/// A subscription's state during a replay (plans by index).
#[derive(Debug, Clone, Copy, Default)]
struct Live {
    mrr: Cents,
    currency: Option<Currency>,
    plan: Option<u32>,
    quantity: i64,
    /// Amount of the latest subscription invoice applied.
    last_invoice_amount: Cents,
    /// A positive amount has been applied to the subscription: a later
    /// zero-amount invoice is a drop to 0, not a trial.
    paid: bool,
    /// On a trial (a zero-amount invoice before any positive one) that has
    /// not ended.
    trial: bool,
    /// When its latest subscription invoice applied, counted in invoices
    /// applied during the replay (0: none yet).
    applied: u32,
}

impl Live {
    /// What the subscription adds to the day's paying state: nothing unless
    /// its MRR is above 0.
    fn paying(&self) -> Option<(Cents, Option<Currency>, Option<u32>, i64)> {
        (self.mrr > 0).then_some((self.mrr, self.currency, self.plan, self.quantity))
    }
}

/// The outcome of replaying a customer's events up to a cutoff.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replay {
    /// The daily movements up to `as_of`, by date.
    pub movements: Vec<Movement>,
    /// Every subscription, in the order their latest invoices applied (the
    /// one whose invoice applied last comes last).
    pub subscriptions: Vec<SubscriptionState>,
    /// First instant a trial (a zero-amount invoice on a subscription that
    /// had no positive amount yet) applied while the customer had not yet
    /// ended a day paying.
    pub trial_started: Option<DateTime<Utc>>,
    /// First instant a positive amount applied on the first day that ended
    /// with the customer's MRR above 0 (a payment undone within its day does
    /// not count).
    pub paid_started: Option<DateTime<Utc>>,
    /// Day of the latest churn movement.
    pub last_churn: Option<NaiveDate>,
    /// Whether a trial subscription is still open (not lapsed or cancelled).
    pub trial_open: bool,
    /// Whether any event of the customer's history happens after `as_of`
    /// (a committed change: a future-dated invoice or cancellation, or a
    /// coverage end).
    pub events_ahead: bool,
    /// The first cancellation after `as_of` (a scheduled churn).
    pub next_cancellation: Option<DateTime<Utc>>,
    /// The `as_of` instants at which this replay would come out the same.
    pub window: ReplayWindow,
}

/// The `as_of` instants at which a replay comes out the same as at the one it
/// was made at: the same events apply and the same events lie ahead. Both
/// ends are inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayWindow {
    /// The earliest such instant.
    pub from: DateTime<Utc>,
    /// The latest such instant.
    pub until: DateTime<Utc>,
}

impl Default for ReplayWindow {
    fn default() -> Self {
        ReplayWindow {
            from: DateTime::<Utc>::MIN_UTC,
            until: DateTime::<Utc>::MAX_UTC,
        }
    }
}

impl ReplayWindow {
    /// Whether `at` lies in the window, ends included.
    pub fn contains(&self, at: DateTime<Utc>) -> bool {
        self.from <= at && at <= self.until
    }

    /// The instants both windows hold.
    pub fn narrow(&mut self, other: &ReplayWindow) {
        self.from = self.from.max(other.from);
        self.until = self.until.min(other.until);
    }
}

/// One end of a replay's window while it is worked out: whole milliseconds
/// and a nanosecond either side (an event switches at its millisecond, a
/// lapse one nanosecond after its grace period ends, and a window ends one
/// nanosecond before a switch). Pairs order like the instants they name.
type WindowEnd = (i64, i8);

/// The instant a window end names. Stored timestamps lie far inside the
/// range an instant can hold, where the nanosecond always fits.
fn instant_at((millis, nanos): WindowEnd) -> DateTime<Utc> {
    let whole = UnixMillis(millis).to_datetime();
    whole
        .checked_add_signed(Duration::nanoseconds(i64::from(nanos)))
        .unwrap_or(whole)
}

impl Replay {
    /// MRR, quantity and plans of the paying subscriptions at the end of the replay.
    pub(crate) fn mrr(&self) -> Snapshot {
        let mut snap = Snapshot {
            mrr: self.mrr_by_currency(),
            ..Snapshot::default()
        };
        for sub in self.paying() {
            if let Some(currency) = sub.currency {
                *snap.quantity.entry(currency).or_insert(0) += sub.quantity;
            }
            if let Some(plan) = &sub.plan_id {
                snap.plans.insert(plan.clone());
            }
        }
        snap
    }

    /// The MRR per currency of the paying subscriptions alone: what most reports
    /// read, without collecting quantities and plans for every customer.
    pub fn mrr_by_currency(&self) -> BTreeMap<Currency, Cents> {
        let mut mrr = BTreeMap::new();
        for sub in self.paying() {
            if let Some(currency) = sub.currency {
                *mrr.entry(currency).or_insert(0) += sub.mrr;
            }
        }
        mrr
    }

    fn paying(&self) -> impl Iterator<Item = &SubscriptionState> {
        self.subscriptions.iter().filter(|s| s.mrr > 0)
    }
}

/// A subscription invoice with its subscription index, service period, rank
/// in id order and plan (also as its slot among the customer's plans in
/// order of first use).
struct PricedInvoice<'a> {
    sub: u32,
    period: ServicePeriod,
    rank: u32,
    invoice: StoredInvoice<'a>,
    plan: &'a Plan,
    plan_slot: u32,
    /// Whether the next invoice of its subscription starts within the grace
    /// period after its end (else it lapses).
    renewed: bool,
}

thread_local! {
    /// The rows of the replay in progress on this thread. Replays are kept,
    /// so their rows then move into a list of exactly their length: one
    /// allocation, where growing a list and shrinking it reallocates and may
    /// keep the slack (an allocator shrinks in place down to half).
    static ROWS_IN_PROGRESS: Cell<Vec<Movement>> = const { Cell::new(Vec::new()) };
}

/// Past this many rows, the list of rows in progress is freed rather than
/// kept for the next replay on its thread.
const ROWS_KEPT_BETWEEN_REPLAYS: usize = 1024;

/// A customer's `as_of`-independent history. Its tables of subscriptions
/// and plans hold the usual one or two without allocating.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Timeline {
    pub customer_id: CustomerId,
    subscription_ids: SmallVec<[Option<SubscriptionId>; 2]>,
    /// Distinct plans of the customer's subscription invoices, sorted by id,
    /// so plan indexes order like plan ids.
    plans: SmallVec<[PlanId; 2]>,
    events: Vec<Event>,
    /// How long after a coverage end a lapse waits for a renewal, in
    /// milliseconds.
    grace: i64,
}

/// The index of `item` in `items`, added at the end if absent.
#[inline(always)]
fn index_of<A: smallvec::Array>(items: &mut SmallVec<A>, item: &A::Item) -> u32
where
    A::Item: PartialEq + Clone,
{
    match items.iter().position(|existing| existing == item) {
        Some(i) => i as u32,
        None => {
            items.push(item.clone());
            (items.len() - 1) as u32
        }
    }
}

/// Marks each subscription invoice (sorted by subscription, then effective
/// instant) renewed when the next one of its subscription starts within the
/// grace period after its end, else it lapses. Returns whether two
/// invoices of one subscription take effect at the same instant.
fn mark_renewals(priced: &mut [PricedInvoice], grace: i64) -> bool {
    let mut tied = false;
    for k in 1..priced.len() {
        let (before, next) = (&priced[k - 1], &priced[k]);
        let same_subscription = next.sub == before.sub;
        tied |= same_subscription && next.period.start == before.period.start;
        priced[k - 1].renewed =
            same_subscription && next.period.start <= before.period.end.saturating_add(grace);
    }
    if let Some(last) = priced.last_mut() {
        last.renewed = false;
    }
    tied
}

/// Sorts each run of adjacent items that `tied` joins by `issue_order`
/// (an invoice's issue instant, then its rank in id order, which is unique).
/// Items come sorted by everything else, so only the runs of more than one
/// are sorted, in place, and an issue instant is read only for them.
#[inline]
fn order_ties_by_issue<T>(
    items: &mut [T],
    tied: impl Fn(&T, &T) -> bool,
    issue_order: impl Fn(&T) -> (UnixMillis, u32),
) {
    let mut start = 0;
    while start < items.len() {
        let mut end = start + 1;
        while end < items.len() && tied(&items[end - 1], &items[end]) {
            end += 1;
        }
        if end - start > 1 {
            items[start..end].sort_unstable_by_key(&issue_order);
        }
        start = end;
    }
}
