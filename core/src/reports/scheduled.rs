//! Scheduled changes and `cmrr-summary` on them (the scheduled-churn
//! reports are in `churn_scheduled`).
//!
//! A scheduled change is a movement dated after `as_of` that the data
//! already commits to: a future-dated subscription invoice or cancellation
//! (replayed as if the future had come), or a paying customer's record
//! `cancel_date` after `as_of` when no cancellation invoice says otherwise
//! (a churn of its whole MRR that day). A lapse that has not happened is a
//! forecast, not a commitment, and is left out. Amounts convert at the
//! latest rate known for their day (or at `fx_date`, default the `as_of`
//! day, with `fix_fx=true`).

use super::ReportParams;
use super::answer::{ReportAnswer, Single};
use super::movement_table::description;
use super::partial::rows::{KeyPart, Row, SumsPart, TopRows};
use super::partial::{Body, wrong_body};
use super::runs::{fold_runs, joined};
use crate::derive::Derived;
use crate::derive::movements::{Movement, MovementKind, MovementSubtype, PlanList};
use crate::derive::replay_list;
use crate::derive::timeline::Replay;
use crate::error::Result;
use crate::ids::CustomerId;
use crate::model::Customer;
use crate::money::{Cents, Currency, Total};
use crate::query::Query;
use crate::query::filters::{CustomerFilter, currency_filter};
use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

/// How far ahead scheduled changes are looked for.
const HORIZON_DAYS: i64 = 366 * 100;

/// One scheduled change of one customer.
pub struct Scheduled<'a> {
    pub customer: &'a Customer,
    pub movement: Movement,
    /// `mrr_change` in the report currency.
    pub base: Cents,
    /// Its place in this ledger's list before sorting (which orders only
    /// changes of one customer).
    pub seq: usize,
}

impl Scheduled<'_> {
    /// The key of the list order: day, customer id, currency, place.
    pub(super) fn key(&self) -> Vec<KeyPart> {
        vec![
            KeyPart::int(self.movement.date.num_days_from_ce()),
            KeyPart::text(self.customer.id.as_str()),
            KeyPart::text(self.movement.currency.as_str()),
            KeyPart::int(self.seq as i64),
        ]
    }
}

/// The request shared by the scheduled reports.
pub(super) struct Request {
    pub(super) currency: Currency,
    pub(super) as_of_day: NaiveDate,
    pub(super) fixed: Option<NaiveDate>,
}

pub(super) fn request(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Request> {
    let q = Query::new(params);
    let as_of_day = as_of
        .with_timezone(&ledger.settings().timezone)
        .date_naive();
    let fixed = q.fixed_fx(as_of_day)?;
    Ok(Request {
        currency: q.base_currency(ledger.settings())?,
        as_of_day,
        fixed,
    })
}

/// Every scheduled change of the customers the filters keep, soonest first
/// (ties by customer id).
pub(super) fn scheduled<'a>(
    ledger: &'a Derived<'a>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    req: &Request,
) -> Result<Vec<Scheduled<'a>>> {
    let currencies = currency_filter(params)?;
    let runs = fold_kept(
        ledger,
        params,
        as_of,
        req,
        Vec::new,
        |out, customer, replay| {
            for movement in committed_changes(ledger, customer, replay, as_of)? {
                if !currencies.is_empty() && !currencies.contains(&movement.currency) {
                    continue;
                }
                let date = req.fixed.unwrap_or(movement.date);
                let base = ledger.fx().convert(
                    movement.mrr_change,
                    movement.currency,
                    req.currency,
                    date,
                )?;
                out.push(Scheduled {
                    customer,
                    movement,
                    base,
                    seq: 0,
                });
            }
            Ok(())
        },
    )?;
    let mut out = joined(runs);
    for (seq, change) in out.iter_mut().enumerate() {
        change.seq = seq;
    }
    out.sort_by(|a, b| {
        (a.movement.date, &a.customer.id, a.movement.currency).cmp(&(
            b.movement.date,
            &b.customer.id,
            b.movement.currency,
        ))
    });
    Ok(out)
}

/// The changes `customer` is committed to after `as_of`, in date order:
/// future-dated invoices and cancellations replayed as if the future had
/// come, the rest of the `as_of` day (events later that day), and a record
/// `cancel_date` after `as_of` that no cancellation invoice overrides (a
/// churn of the whole MRR of that day). A lapse that has not happened is a
/// forecast and is left out. `replay` is the customer's replay at `as_of`.
pub(super) fn committed_changes(
    ledger: &Derived<'_>,
    customer: &Customer,
    replay: &Replay,
    as_of: DateTime<Utc>,
) -> Result<Vec<Movement>> {
    let tz = ledger.settings().timezone;
    let as_of_day = as_of.with_timezone(&tz).date_naive();
    let horizon = as_of + Duration::days(HORIZON_DAYS);
    let id = &customer.id;
    let mut changes: Vec<Movement> = Vec::new();
    if replay.events_ahead {
        let ahead = ledger.replay(id.as_str(), horizon)?.movements;
        // Events later on the `as_of` day are scheduled too: the day's
        // movement minus the part that had happened by `as_of`.
        let today = |c: Currency| {
            replay
                .movements
                .iter()
                .find(|m| m.date == as_of_day && m.currency == c)
        };
        for m in &ahead {
            if m.date == as_of_day
                && m.subtype != MovementSubtype::Lapse
                && let Some(rest) = rest_of_day(replay, today(m.currency), Some(m), m.currency)
            {
                changes.push(rest);
            }
        }
        for done in replay.movements.iter().filter(|m| m.date == as_of_day) {
            let later = ahead
                .iter()
                .any(|m| m.date == as_of_day && m.currency == done.currency);
            if !later && let Some(rest) = rest_of_day(replay, Some(done), None, done.currency) {
                changes.push(rest);
            }
        }
        changes.extend(
            ahead
                .into_iter()
                .filter(|m| m.date > as_of_day && m.subtype != MovementSubtype::Lapse),
        );
    }
    let record_cancel = customer
        .cancel_date
        .map(|t| t.instant(tz))
        .filter(|t| *t > as_of);
    let churns = changes.iter().any(|m| m.kind == MovementKind::Churn);
    if let (Some(cancel), false) = (record_cancel, churns) {
        // The whole MRR of that day: today's plus the scheduled changes
        // up to it (a future invoice before the cancel_date counts).
        let mut now = replay.mrr();
        let date = cancel.with_timezone(&tz).date_naive();
        let mut plans: PlanList = now.plans.iter().cloned().collect();
        for m in changes.iter().filter(|m| m.date <= date) {
            *now.mrr.entry(m.currency).or_insert(0) += m.mrr_change;
            *now.quantity.entry(m.currency).or_insert(0) += m.quantity_change;
            plans.clone_from(&m.plans_after);
        }
        now.mrr.retain(|_, amount| *amount > 0);
        for (i, (currency, amount)) in now.mrr.iter().enumerate() {
            changes.push(Movement {
                date,
                customer_id: customer.id.clone(),
                kind: MovementKind::Churn,
                subtype: MovementSubtype::Cancellation,
                mrr_change: -amount,
                mrr_change_base_currency: 0,
                customer_count_change: if i == 0 { -1 } else { 0 },
                quantity_change: -now.quantity.get(currency).copied().unwrap_or(0),
                currency: *currency,
                plans_before: plans.clone(),
                plans_after: PlanList::new(),
            });
        }
    }
    // The rest of a day and a record's cancellation are made here: each
    // change in the base currency on its day, as a replay's movements are.
    let (fx, base) = (ledger.fx(), ledger.settings().base_currency);
    for m in &mut changes {
        m.mrr_change_base_currency = fx.convert(m.mrr_change, m.currency, base, m.date)?;
    }
    changes.sort_by_key(|m| m.date);
    Ok(changes)
}

/// The change still to come on the `as_of` day in one currency: the day's
/// full movement (`ahead`, from the replay past `as_of`) less the part that
/// had happened by `as_of` (`done`); `None` when nothing is left.
fn rest_of_day(
    replay: &Replay,
    done: Option<&Movement>,
    ahead: Option<&Movement>,
    currency: Currency,
) -> Option<Movement> {
    let change = |m: Option<&Movement>| m.map_or((0, 0), |m| (m.mrr_change, m.quantity_change));
    let (full, full_quantity) = change(ahead);
    let (part, part_quantity) = change(done);
    let delta = full - part;
    if delta == 0 {
        return None;
    }
    let Some(done) = done else {
        // Nothing had happened yet that day: the day's movement is all to come.
        return ahead.cloned();
    };
    let before = replay
        .mrr_by_currency()
        .get(&currency)
        .copied()
        .unwrap_or(0);
    let after = before + delta;
    let (kind, default) = if before == 0 {
        let paid = replay.movements.iter().any(|m| m.kind == MovementKind::New);
        if paid {
            (MovementKind::Reactivation, MovementSubtype::Reactivation)
        } else {
            (MovementKind::New, MovementSubtype::New)
        }
    } else if after <= 0 {
        (MovementKind::Churn, MovementSubtype::Cancellation)
    } else if delta > 0 {
        (MovementKind::Expansion, MovementSubtype::Expansion)
    } else {
        (MovementKind::Contraction, MovementSubtype::Contraction)
    };
    let subtype = ahead
        .map(|m| m.subtype)
        .filter(|s| s.kind() == kind)
        .unwrap_or(default);
    let count = match kind {
        MovementKind::New | MovementKind::Reactivation => 1,
        MovementKind::Churn => -1,
        _ => 0,
    };
    Some(Movement {
        kind,
        subtype,
        mrr_change: delta,
        customer_count_change: count,
        quantity_change: full_quantity - part_quantity,
        plans_before: done.plans_after.clone(),
        plans_after: ahead.map(|m| m.plans_after.clone()).unwrap_or_default(),
        ..done.clone()
    })
}

/// One scheduled change as listed: `mrr_change` in cents of its
/// `currency`, `mrr_change_base_currency` in the report's; `period` is the
/// start of its period in the scheduled-churn list.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct ScheduledRow {
    date: NaiveDate,
    currency: Currency,
    customer_id: CustomerId,
    customer_name: String,
    customer_email: Option<String>,
    #[serde(rename = "type")]
    kind: MovementKind,
    subtype: MovementSubtype,
    mrr_change: Cents,
    mrr_change_base_currency: Cents,
    customer_count_change: i32,
    description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    period: Option<NaiveDate>,
}

pub(super) fn row(ledger: &Derived<'_>, s: &Scheduled, period: Option<NaiveDate>) -> ScheduledRow {
    let m = &s.movement;
    ScheduledRow {
        date: m.date,
        currency: m.currency,
        customer_id: s.customer.id.clone(),
        customer_name: s.customer.name.to_string(),
        customer_email: s.customer.email.as_deref().map(str::to_string),
        kind: m.kind,
        subtype: m.subtype,
        mrr_change: m.mrr_change,
        mrr_change_base_currency: s.base,
        customer_count_change: m.customer_count_change,
        description: description(ledger, m),
        period,
    }
}

/// One view of the scheduled-change reports (`cmrr-summary` and the
/// scheduled-churn reports): what one ledger contributes and how the
/// (merged) contributions are written. The registry's three functions,
/// [`whole`], [`partial`] and [`finish`], are written once from these.
pub(super) trait ScheduledView {
    /// The report's name, for a partial of the wrong shape.
    const NAME: &'static str;

    /// This ledger's part of the report.
    fn part(
        ledger: &Derived<'_>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
        req: &Request,
    ) -> Result<Body>;

    /// The answer from a part; a part of another shape is
    /// [`wrong_body`] naming [`ScheduledView::NAME`].
    fn value(
        shape: &Derived<'_>,
        params: &ReportParams,
        req: &Request,
        body: Body,
    ) -> Result<ReportAnswer>;
}

/// The report of view `V` over one ledger.
pub(super) fn whole<V: ScheduledView>(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<ReportAnswer> {
    let req = request(ledger, params, as_of)?;
    let body = V::part(ledger, params, as_of, &req)?;
    V::value(ledger, params, &req, body)
}

/// View `V`'s part of one ledger.
pub(super) fn partial<V: ScheduledView>(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Body> {
    let req = request(ledger, params, as_of)?;
    V::part(ledger, params, as_of, &req)
}

/// View `V` of merged parts (`shape` holds only the settings).
pub(super) fn finish<V: ScheduledView>(
    shape: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    body: Body,
) -> Result<ReportAnswer> {
    let req = request(shape, params, as_of)?;
    V::value(shape, params, &req, body)
}

/// `cmrr-summary`: committed MRR = MRR at `as_of` plus every scheduled
/// change, with the changes by type and the list behind them.
pub(super) struct CmrrSummary;

impl ScheduledView for CmrrSummary {
    const NAME: &'static str = "cmrr-summary";

    fn part(
        ledger: &Derived<'_>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
        req: &Request,
    ) -> Result<Body> {
        Ok(Body::Sums(cmrr_part(ledger, params, as_of, req)?))
    }

    fn value(_: &Derived<'_>, _: &ReportParams, req: &Request, body: Body) -> Result<ReportAnswer> {
        match body {
            Body::Sums(part) if part.sums.len() == 9 => cmrr_value(req, part),
            other => Err(wrong_body(Self::NAME, &other)),
        }
    }
}

/// `cmrr-summary`'s sums: current MRR and customers, the change and the
/// customers it adds, the change by type (`MovementKind::ALL` order), and
/// every scheduled row.
fn cmrr_part(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    req: &Request,
) -> Result<SumsPart> {
    let changes = scheduled(ledger, params, as_of, req)?;
    // Current MRR of the same customers and currencies, at the same rates.
    let mrr_now = current_mrr(ledger, params, as_of, req)?;
    let by_kind = |kind: MovementKind| -> Total {
        changes
            .iter()
            .filter(|s| s.movement.kind == kind)
            .map(|s| s.base)
            .sum()
    };
    let change: Total = changes.iter().map(|s| s.base).sum();
    let customers_change: Total = changes
        .iter()
        .map(|s| i64::from(s.movement.customer_count_change))
        .sum();
    let rows: Vec<Row> = changes
        .iter()
        .map(|s| Row::new(s.key(), row(ledger, s, None)))
        .collect();
    let mut sums = vec![mrr_now.0, Total::from(mrr_now.1), change, customers_change];
    sums.extend(KINDS.iter().map(|kind| by_kind(*kind)));
    Ok(SumsPart {
        sums,
        rows: TopRows::new(rows, usize::MAX),
    })
}

const KINDS: [MovementKind; 5] = [
    MovementKind::New,
    MovementKind::Expansion,
    MovementKind::Contraction,
    MovementKind::Churn,
    MovementKind::Reactivation,
];

/// The `cmrr-summary` answer: the figures and the changes behind them.
#[derive(Serialize)]
struct CmrrAnswer {
    currency: Currency,
    summary: CmrrFigures,
    scheduled: Vec<ScheduledRow>,
}

/// MRR now and committed, the change by type (cents of the report's
/// currency), and the paying customers now and committed.
#[derive(Serialize)]
struct CmrrFigures {
    mrr_current: Cents,
    cmrr: Cents,
    change: Cents,
    customers_current: i64,
    customers_committed: i64,
    scheduled_new: Cents,
    scheduled_expansion: Cents,
    scheduled_contraction: Cents,
    scheduled_churn: Cents,
    scheduled_reactivation: Cents,
}

fn cmrr_value(req: &Request, part: SumsPart) -> Result<ReportAnswer> {
    let s = &part.sums;
    let cents =
        |figure: &str, total: Total| total.cents(|| format!("the `{figure}` in {}", req.currency));
    let (mrr, change) = (s[0], s[2]);
    let summary = CmrrFigures {
        mrr_current: cents("mrr_current", mrr)?,
        cmrr: cents("cmrr", mrr + change)?,
        change: cents("change", change)?,
        customers_current: cents("customers_current", s[1])?,
        customers_committed: cents("customers_committed", s[1] + s[3])?,
        scheduled_new: cents("scheduled_new", s[4])?,
        scheduled_expansion: cents("scheduled_expansion", s[5])?,
        scheduled_contraction: cents("scheduled_contraction", s[6])?,
        scheduled_churn: cents("scheduled_churn", s[7])?,
        scheduled_reactivation: cents("scheduled_reactivation", s[8])?,
    };
    let value = CmrrAnswer {
        currency: req.currency,
        summary,
        scheduled: part.rows.into_page(0, usize::MAX)?,
    };
    Ok(Single {
        currency: Some(req.currency),
        value,
    }
    .into())
}

/// MRR and paying customers at `as_of` of the filtered customers.
fn current_mrr(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    req: &Request,
) -> Result<(Total, i64)> {
    let currencies = currency_filter(params)?;
    let day = req.fixed.unwrap_or(req.as_of_day);
    let runs = fold_kept(
        ledger,
        params,
        as_of,
        req,
        || (Total::ZERO, 0),
        |sums, _, replay| {
            let mut own = Total::ZERO;
            for (currency, amount) in replay.mrr_by_currency() {
                if currencies.is_empty() || currencies.contains(&currency) {
                    own += ledger.fx().convert(amount, currency, req.currency, day)?;
                }
            }
            if own > Total::ZERO {
                sums.0 += own;
                sums.1 += 1;
            }
            Ok(())
        },
    )?;
    let start = (Total::ZERO, 0);
    Ok(runs.into_iter().fold(start, |(mrr, customers), run| {
        (mrr + run.0, customers + run.1)
    }))
}

/// Folds each customer with a replay at `as_of` that the filters keep, on
/// every core, a run at a time ([`fold_runs`]).
fn fold_kept<'a, A: Send>(
    ledger: &'a Derived<'a>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    req: &Request,
    start: impl Fn() -> A + Sync,
    visit: impl Fn(&mut A, &'a Customer, &Replay) -> Result<()> + Sync,
) -> Result<Vec<A>> {
    let filter = CustomerFilter::from_params(ledger, params)?;
    let replays = ledger.replays(as_of)?;
    let customers = replay_list(&replays);
    fold_runs(&customers, start, |folded, &(id, replay)| {
        let Some(customer) = ledger.customer(id.as_str()) else {
            return Ok(());
        };
        if !filter.keeps(ledger, customer, Some(replay), as_of, req.as_of_day) {
            return Ok(());
        }
        visit(folded, customer, replay)
    })
}
