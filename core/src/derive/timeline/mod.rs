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
    /// Reduces MRR by `round(mrr x refunded / denominator)`.
    Refund {
        target: RefundTarget,
        refunded: Cents,
    },
    /// No renewal arrived within the grace period.
    Lapse,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum RefundTarget {
    /// A named subscription invoice: its subscription, its amount.
    Invoice { amount: Cents },
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

impl Timeline {
    /// Builds the events of one customer from its invoices. Void invoices and
    /// invoices whose plan is unknown are skipped; refunds are skipped when the
    /// settings ignore them. `ids_ascending` says the invoices already come in
    /// id order, which spares sorting them.
    pub fn build<'i, 'p>(
        customer_id: CustomerId,
        invoices: impl IntoIterator<Item = StoredInvoice<'i>>,
        ids_ascending: bool,
        plans: &dyn Fn(&PlanId) -> Option<&'p Plan>,
        settings: &Settings,
    ) -> Timeline {
        let tz = settings.timezone;
        let grace = i64::from(settings.churn_grace_days) * 86_400_000;
        // Sized for every invoice: growing it four at a time reallocates
        // twice for a customer of average length.
        let invoices = invoices.into_iter();
        let (fewest, most) = invoices.size_hint();
        let mut counted: Vec<StoredInvoice<'_>> = Vec::with_capacity(most.unwrap_or(fewest));
        counted.extend(invoices.filter(|i| i.counts()));
        // Subscription and plan indexes follow ids, never input order.
        if !ids_ascending {
            counted.sort_unstable_by(|a, b| a.id().cmp(b.id()));
        }
        debug_assert!(counted.is_sorted_by(|a, b| a.id() < b.id()));
        let rank_of = |id: &InvoiceId| counted.binary_search_by(|i| i.id().cmp(id.as_str())).ok();

        let mut subscription_ids: SmallVec<[Option<SubscriptionId>; 2]> = SmallVec::new();
        // The customer's plans in order of first use. An invoice's plan id
        // usually shares the plan record's string, so it is found here by
        // pointer before any lookup by name.
        let mut used_plans: SmallVec<[&Plan; 4]> = SmallVec::new();
        let mut priced: Vec<PricedInvoice> = Vec::with_capacity(counted.len());
        for (rank, invoice) in counted.iter().copied().enumerate() {
            if invoice.kind != InvoiceType::Subscription {
                continue;
            }
            let Some(plan_id) = invoice.plan_id.as_ref() else {
                continue;
            };
            let known = used_plans.iter().position(|p| p.id.shares(plan_id));
            let plan_slot = match known {
                Some(slot) => slot,
                None => {
                    let Some(plan) = plans(plan_id) else {
                        continue;
                    };
                    match used_plans.iter().position(|p| std::ptr::eq(*p, plan)) {
                        Some(slot) => slot,
                        None => {
                            used_plans.push(plan);
                            used_plans.len() - 1
                        }
                    }
                }
            };
            let plan = used_plans[plan_slot];
            let sub = index_of(&mut subscription_ids, &invoice.subscription_id);
            priced.push(PricedInvoice {
                sub,
                period: service_period(&invoice, plan, tz),
                rank: rank as u32,
                invoice,
                plan,
                plan_slot: plan_slot as u32,
                renewed: false,
            });
        }
        // Plan indexes order like plan ids.
        let mut by_id: SmallVec<[u32; 4]> = (0..used_plans.len() as u32).collect();
        by_id.sort_unstable_by(|a, b| used_plans[*a as usize].id.cmp(&used_plans[*b as usize].id));
        let plan_ids: SmallVec<[PlanId; 2]> = by_id
            .iter()
            .map(|&slot| used_plans[slot as usize].id.clone())
            .collect();
        let mut plan_index_of_slot: SmallVec<[u32; 4]> = smallvec::smallvec![0; used_plans.len()];
        for (index, &slot) in by_id.iter().enumerate() {
            plan_index_of_slot[slot as usize] = index as u32;
        }
        // Per subscription, by effective instant, then issue instant, then
        // id: of one subscription's invoices effective together the one
        // issued last stands and is the one tested for renewal. Such ties
        // are rare, so the issue instants are read only when there are some.
        priced.sort_unstable_by_key(|p| (p.sub, p.period.start, p.rank));
        if mark_renewals(&mut priced, grace) {
            order_ties_by_issue(
                &mut priced,
                |a, b| a.sub == b.sub && a.period.start == b.period.start,
                |p| (p.invoice.invoice_date.millis_and_day(tz).0, p.rank),
            );
            mark_renewals(&mut priced, grace);
        }
        let others = counted
            .iter()
            .filter(|i| matches!(i.kind, InvoiceType::Cancellation | InvoiceType::Refund))
            .count();
        let lapses = priced.iter().filter(|p| !p.renewed).count();
        let mut events = Vec::with_capacity(priced.len() + lapses + others);
        for p in &priced {
            let PricedInvoice {
                sub,
                period,
                rank,
                invoice,
                plan,
                plan_slot,
                renewed,
            } = p;
            events.push(Event {
                at: period.start,
                day: period.start_day,
                sub: *sub,
                source: *rank,
                kind: EventKind::Invoice {
                    monthly: monthly_amount_over(invoice, plan, period),
                    amount: invoice.amount,
                    plan: plan_index_of_slot[*plan_slot as usize],
                    quantity: i64::from(invoice.quantity),
                    currency: invoice.currency,
                },
            });
            if !*renewed {
                events.push(Event {
                    at: period.end,
                    day: period.end_day,
                    sub: *sub,
                    source: *rank,
                    kind: EventKind::Lapse,
                });
            }
        }
        for (rank, invoice) in counted.iter().enumerate() {
            // Read only for the cancellations and refunds that become events.
            let dated = || invoice.invoice_date.millis_and_day(tz);
            let source = rank as u32;
            match invoice.kind {
                InvoiceType::Cancellation => {
                    let (at, day) = dated();
                    let sub = invoice
                        .subscription_id
                        .as_ref()
                        .map(|id| index_of(&mut subscription_ids, &Some(id.clone())));
                    events.push(Event {
                        at,
                        day,
                        sub: sub.unwrap_or(0),
                        source,
                        kind: EventKind::Cancel { all: sub.is_none() },
                    });
                }
                InvoiceType::Refund if settings.refund_handling == RefundHandling::Reduce => {
                    // A named invoice must be a counted subscription invoice of
                    // this customer; refunding anything else (a one-time, void,
                    // unknown or other customer's invoice) never moves MRR.
                    let refunded = invoice
                        .details()
                        .refunded_invoice_id
                        .as_ref()
                        .map(|id| rank_of(id).map(|r| counted[r]));
                    let (sub, target) = match refunded {
                        Some(None) => continue,
                        Some(Some(original)) if original.kind != InvoiceType::Subscription => {
                            continue;
                        }
                        Some(Some(original)) => (
                            index_of(&mut subscription_ids, &original.subscription_id),
                            RefundTarget::Invoice {
                                amount: original.amount,
                            },
                        ),
                        None => match &invoice.subscription_id {
                            Some(id) => (
                                index_of(&mut subscription_ids, &Some(id.clone())),
                                RefundTarget::Subscription,
                            ),
                            None => (0, RefundTarget::Latest),
                        },
                    };
                    let (at, day) = dated();
                    events.push(Event {
                        at,
                        day,
                        sub,
                        source,
                        kind: EventKind::Refund {
                            target,
                            refunded: invoice.amount.abs(),
                        },
                    });
                }
                _ => {}
            }
        }
        // A stable sort: events were written per subscription in the order
        // that subscription applies them (cancellations and refunds in id
        // order), and the ties it leaves keep that order.
        events.sort_by_key(|e| (e.at, e.priority(), e.sub));
        // Invoices (or refunds) of different subscriptions at one instant
        // apply by issue instant, then id, not by subscription. The order of
        // cancellations or of lapses at one instant changes nothing.
        if subscription_ids.len() > 1 {
            order_ties_by_issue(
                &mut events,
                |a, b| {
                    a.at == b.at
                        && matches!(
                            (a.kind, b.kind),
                            (EventKind::Invoice { .. }, EventKind::Invoice { .. })
                                | (EventKind::Refund { .. }, EventKind::Refund { .. })
                        )
                },
                |e| {
                    let issued = counted[e.source as usize].invoice_date;
                    (issued.millis_and_day(tz).0, e.source)
                },
            );
        }
        Timeline {
            customer_id,
            subscription_ids,
            plans: plan_ids,
            events,
            grace,
        }
    }

    /// Whether the customer has any event at all.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The `as_of` instants around `as_of` at which the same events apply and
    /// the same events lie ahead: an event switches both at its instant, and
    /// a lapse also one nanosecond after its grace period ends. Events are in
    /// time order, so the instants of the last event by `as_of` and the first
    /// after it (at `ahead`) bound the first part. Of the lapses, only the
    /// latest grace end `as_of` is past and the earliest it is not can
    /// narrow the window. All is compared in whole milliseconds (`as_of` is
    /// at or past an event's millisecond exactly when it is rounded down,
    /// and past a grace end exactly when it is rounded up, as in
    /// [`Timeline::applies`]); only the two ends become instants.
    fn window_around(&self, as_of: DateTime<Utc>, ahead: usize) -> ReplayWindow {
        let (as_of_floor, as_of_ceil) = (UnixMillis::floor(as_of).0, UnixMillis::ceil(as_of).0);
        let mut from: Option<WindowEnd> = None;
        let mut until: Option<WindowEnd> = None;
        let mut keep_side = |passed: bool, switch: WindowEnd| {
            if passed {
                from = from.max(Some(switch));
            } else {
                let before = (switch.0, switch.1 - 1);
                until = Some(until.map_or(before, |end| end.min(before)));
            }
        };
        for event in self.events[ahead.saturating_sub(1)..].iter().take(2) {
            keep_side(as_of_floor >= event.at.0, (event.at.0, 0));
        }
        let (mut latest_passed, mut earliest_ahead): (Option<i64>, Option<i64>) = (None, None);
        for event in &self.events {
            if matches!(event.kind, EventKind::Lapse)
                && let Some(grace_end) = event.at.0.checked_add(self.grace)
            {
                if as_of_ceil > grace_end {
                    latest_passed = latest_passed.max(Some(grace_end));
                } else {
                    earliest_ahead = Some(earliest_ahead.map_or(grace_end, |e| e.min(grace_end)));
                }
            }
        }
        if let Some(grace_end) = latest_passed {
            keep_side(true, (grace_end, 1));
        }
        if let Some(grace_end) = earliest_ahead {
            keep_side(false, (grace_end, 1));
        }
        ReplayWindow {
            from: from.map_or(DateTime::<Utc>::MIN_UTC, instant_at),
            until: until.map_or(DateTime::<Utc>::MAX_UTC, instant_at),
        }
    }

    /// Whether an event happens by `limit` (the last whole millisecond by
    /// the cutoff and `as_of`) and applies at `as_of` (a lapse only once
    /// `as_of` is past its grace period; `as_of_ceil` is `as_of` rounded up
    /// to a whole millisecond, which is past a whole millisecond exactly
    /// when `as_of` is).
    fn applies(&self, event: &Event, limit: UnixMillis, as_of_ceil: UnixMillis) -> bool {
        event.at <= limit
            && (!matches!(event.kind, EventKind::Lapse)
                || as_of_ceil > event.at.saturating_add(self.grace))
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
        let mut live: SmallVec<[Live; 2]> =
            smallvec::smallvec![Live::default(); self.subscription_ids.len()];
        // Indexed as a slice: a small vector checks where its items are on
        // every access.
        let subs = live.as_mut_slice();
        let mut replay = Replay::default();
        let mut rows = ROWS_IN_PROGRESS.take();
        rows.clear();
        let mut trial_seen = false;
        let mut paid_before = false;
        // The subscription of the subscription invoice applied last: the
        // target of a refund that names neither an invoice nor a
        // subscription.
        let mut last_applied: Option<usize> = None;
        let mut invoices_applied: u32 = 0;
        let limit = UnixMillis::floor(cutoff.min(as_of));
        let as_of_ceil = UnixMillis::ceil(as_of);
        let applies = |e: &Event| self.applies(e, limit, as_of_ceil);
        let mut before = DayState::default();
        let mut after = DayState::default();
        let mut events = self.events.iter().filter(|e| applies(e)).peekable();
        while let Some(first) = events.peek() {
            let day = first.day;
            let mut causes = DayCauses::default();
            let mut trial_before = trial_seen;
            // The first positive amount applied this day: when the customer
            // first pays, if the day ends paying.
            let mut first_payment_today: Option<UnixMillis> = None;
            // Whether any subscription's paying state changed: most days
            // renew at the same price, and the day's comparison is skipped.
            let mut changed = false;
            while let Some(event) = events.next_if(|e| e.day == day) {
                let touched = match event.kind {
                    EventKind::Cancel { all: true } => None,
                    EventKind::Refund {
                        target: RefundTarget::Latest,
                        ..
                    } => None,
                    _ => Some(event.sub as usize),
                };
                let paying_before = touched.map(|i| subs[i].paying());
                let any_paying_before = touched.is_none() && subs.iter().any(|s| s.mrr > 0);
                match event.kind {
                    EventKind::Cancel { all } => {
                        for (index, state) in subs.iter_mut().enumerate() {
                            if all || index as u32 == event.sub {
                                causes.cancellation |= state.mrr > 0;
                                state.mrr = 0;
                                state.trial = false;
                            }
                        }
                    }
                    EventKind::Invoice {
                        monthly,
                        amount,
                        plan,
                        quantity,
                        currency,
                    } => {
                        let state = &mut subs[event.sub as usize];
                        causes.cancellation |= monthly == 0 && state.mrr > 0;
                        // Trials are per subscription, whatever the others did.
                        let trial = monthly == 0 && !state.paid;
                        state.mrr = monthly;
                        state.currency = Some(currency);
                        state.plan = Some(plan);
                        state.quantity = quantity;
                        state.last_invoice_amount = amount;
                        state.paid |= monthly > 0;
                        state.trial = trial;
                        last_applied = Some(event.sub as usize);
                        invoices_applied += 1;
                        state.applied = invoices_applied;
                        if trial && !paid_before {
                            trial_seen = true;
                            trial_before = true;
                            replay.trial_started.get_or_insert(event.at.to_datetime());
                        }
                        if monthly > 0 {
                            first_payment_today.get_or_insert(event.at);
                        }
                    }
                    EventKind::Refund { target, refunded } => {
                        let index = match target {
                            RefundTarget::Latest => last_applied,
                            _ => Some(event.sub as usize),
                        };
                        if let Some(state) = index.map(|i| &mut subs[i]) {
                            let denominator = match target {
                                RefundTarget::Invoice { amount } => amount,
                                _ => state.last_invoice_amount,
                            };
                            if denominator > 0 && state.mrr > 0 {
                                let reduction = round_ratio(
                                    i128::from(state.mrr) * i128::from(refunded),
                                    i128::from(denominator),
                                );
                                state.mrr = (state.mrr - reduction).max(0);
                                causes.refund = true;
                            }
                        }
                    }
                    EventKind::Lapse => {
                        let state = &mut subs[event.sub as usize];
                        causes.lapse |= state.mrr > 0;
                        state.mrr = 0;
                        state.trial = false;
                    }
                }
                changed |= match touched {
                    Some(i) => paying_before != Some(subs[i].paying()),
                    // Every subscription may have changed.
                    None => any_paying_before || subs.iter().any(|s| s.mrr > 0),
                };
            }
            if !changed {
                // The day ends as the day before did: nothing moved.
                continue;
            }
            after.fill(subs.iter().map(|s| (s.mrr, s.currency, s.plan, s.quantity)));
            let first_row = rows.len();
            classify(
                &DayChange {
                    customer_id: &self.customer_id,
                    date: day,
                    before: &before,
                    after: &after,
                    plans: &self.plans,
                    causes,
                    paid_before,
                    trial_before,
                },
                settings.base_currency,
                fx,
                &mut rows,
            )?;
            if rows[first_row..]
                .iter()
                .any(|m| m.customer_count_change < 0)
            {
                replay.last_churn = Some(day);
            }
            let paying = after.is_paying();
            if paying && replay.paid_started.is_none() {
                replay.paid_started = first_payment_today.map(UnixMillis::to_datetime);
            }
            paid_before |= paying;
            std::mem::swap(&mut before, &mut after);
        }
        replay.trial_open = subs.iter().any(|s| s.trial) && !paid_before;
        // Events are in time order: those after `as_of` start at `ahead`.
        let as_of_floor = UnixMillis::floor(as_of);
        let ahead = self.events.partition_point(|e| e.at <= as_of_floor);
        replay.events_ahead = ahead < self.events.len();
        replay.next_cancellation = self.events[ahead..]
            .iter()
            .find(|e| matches!(e.kind, EventKind::Cancel { .. }))
            .map(|e| e.at.to_datetime());
        replay.window = self.window_around(as_of, ahead);
        let mut kept = Vec::with_capacity(rows.len());
        kept.append(&mut rows);
        replay.movements = kept;
        if rows.capacity() <= ROWS_KEPT_BETWEEN_REPLAYS {
            ROWS_IN_PROGRESS.set(rows);
        }
        let state_of = |(live, id): (&Live, &Option<SubscriptionId>)| SubscriptionState {
            subscription_id: id.clone(),
            mrr: live.mrr,
            currency: live.currency,
            plan_id: live.plan.map(|p| self.plans[p as usize].clone()),
            quantity: live.quantity,
        };
        let in_index_order = subs.iter().zip(&self.subscription_ids);
        replay.subscriptions = if subs.len() > 1 {
            let mut in_applied_order: SmallVec<[_; 4]> = in_index_order.collect();
            in_applied_order.sort_by_key(|(live, _)| live.applied);
            in_applied_order.into_iter().map(state_of).collect()
        } else {
            in_index_order.map(state_of).collect()
        };
        Ok(replay)
    }
}
