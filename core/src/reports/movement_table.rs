//! `movement-table`: the movements behind the mrr report, one row per
//! customer, day and currency, with the period they fall in.
//!
//! Rows are newest first (ties by customer id) unless `sort`/`order` say
//! otherwise. `selected-date` keeps the period holding that date and
//! `selected-type` one movement type. `committed=true` adds the changes
//! scheduled after `as_of`, the same ones the scheduled reports count
//! (future-dated invoices and cancellations, the rest of the `as_of` day, a
//! record `cancel_date`; a lapse that has not happened is a forecast, not a
//! commitment, and is left out).
//! With `customer`, each row carries `lines`: what was removed (negative)
//! and added, by plan.

use super::ReportParams;
use super::answer::{Listing, NoHead, ReportAnswer};
use super::partial::rows::{KeyPart, ListPart, Row as ListRow, Scalar, TopRows};
use super::partial::{Body, wrong_body};
use super::request::{Breakdown, SeriesRequest};
use super::runs::{fold_runs, joined};
use super::scheduled::committed_changes;
use super::series::{Conversion, Running};
use crate::derive::Derived;
use crate::derive::movements::{Movement, MovementKind, MovementSubtype, PlanList};
use crate::derive::replay_list;
use crate::error::Result;
use crate::ids::{CustomerId, PlanId};
use crate::money::{Cents, Currency};
use crate::query::filters::{CustomerFacts, CustomerFilter, breakdown_value, currency_filter};
use crate::query::{ListDefaults, ListRequest, Order, Page, Query, Sorting};
use chrono::{DateTime, Datelike, NaiveDate, Utc};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// One row before it is written out.
struct Row<'a> {
    /// Position in the walk over the replays (each customer's rows in date
    /// order): the last tie-breaker, which orders only one customer's rows.
    seq: usize,
    period: NaiveDate,
    movement: Cow<'a, Movement>,
    base_amount: Cents,
    customer_name: &'a str,
    customer_email: Option<&'a str>,
    lines: Option<Vec<Line>>,
}

/// One listed movement: one customer, day and currency, with the period it
/// falls in; `mrr_change` in the movement's currency, the base amount in
/// the report's.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct MovementRow {
    date: NaiveDate,
    movement_date: NaiveDate,
    currency: Currency,
    customer_id: CustomerId,
    customer_name: String,
    customer_email: Option<String>,
    #[serde(rename = "type")]
    kind: MovementKind,
    subtype: MovementSubtype,
    description: String,
    mrr_change: Cents,
    mrr_change_base_currency: Cents,
    customer_count_change: i32,
    quantity_change: i64,
    plans_before: PlanList,
    plans_after: PlanList,
    /// What changed by plan (only with `customer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lines: Option<Vec<Line>>,
}

/// A plan line of a movement: what was removed (negative) or added.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct Line {
    description: String,
    mrr: Cents,
    quantity: i64,
}

/// `sort`, `order` and the page: by date, latest first, every row.
const LIST: ListDefaults = ListDefaults {
    sorts: &["date", "mrr_change", "customer_name", "customer_id", "type"],
    sort: "date",
    order: Order::Desc,
    limit: usize::MAX,
    max_limit: None,
};

/// The row's sort key as a list partial keeps it: the primary field (in
/// `order`), then customer id, day, currency and the row's place in this
/// ledger's list (which orders only rows of one customer).
fn sort_key(list: &ListRequest, row: &Row) -> Vec<KeyPart> {
    let m: &Movement = &row.movement;
    let primary = match list.sorting.by {
        "mrr_change" => Scalar::Int(row.base_amount.into()),
        "customer_name" => Scalar::Text(row.customer_name.to_string()),
        "customer_id" => Scalar::Text(m.customer_id.as_str().to_string()),
        "type" => Scalar::Text(m.kind.as_str().to_string()),
        _ => Scalar::Int(m.date.num_days_from_ce().into()),
    };
    vec![
        KeyPart::new(primary, list.sorting.order == Order::Desc),
        KeyPart::text(m.customer_id.as_str()),
        KeyPart::int(m.date.num_days_from_ce()),
        KeyPart::text(m.currency.as_str()),
        KeyPart::int(row.seq as i64),
    ]
}

pub(super) fn movement_table(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<ReportAnswer> {
    with_rows(ledger, params, as_of, |mut rows, list| {
        let ListRequest {
            sorting: Sorting { by: sort, order },
            page: Page { offset, .. },
        } = *list;
        let compare = |a: &Row, b: &Row| {
            let primary = match sort {
                "mrr_change" => a.base_amount.cmp(&b.base_amount),
                "customer_name" => a.customer_name.cmp(b.customer_name),
                "customer_id" => a.movement.customer_id.cmp(&b.movement.customer_id),
                "type" => a.movement.kind.as_str().cmp(b.movement.kind.as_str()),
                _ => a.movement.date.cmp(&b.movement.date),
            };
            let primary = if order == Order::Desc {
                primary.reverse()
            } else {
                primary
            };
            primary
                .then_with(|| a.movement.customer_id.cmp(&b.movement.customer_id))
                .then_with(|| a.movement.date.cmp(&b.movement.date))
                .then_with(|| a.movement.currency.cmp(&b.movement.currency))
                .then_with(|| a.seq.cmp(&b.seq))
        };
        // Only the requested page is put in order; `count` is every row.
        let count = rows.len();
        let wanted = list.page.end().min(count);
        if wanted < count {
            if wanted > 0 {
                rows.select_nth_unstable_by(wanted - 1, compare);
            }
            rows.truncate(wanted);
        }
        rows.par_sort_unstable_by(compare);
        // Rows now end with the page, which is written on every core.
        let page = rows.get(offset..).unwrap_or_default();
        let list = page.par_iter().map(|row| row_of(ledger, row)).collect();
        Ok(listing(count, list))
    })
}

/// `movement-table` in parts: the first `offset + limit` rows in the
/// requested order, written, and how many rows there are.
pub(super) fn partial(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Body> {
    with_rows(ledger, params, as_of, |rows, list| {
        let keep = list.page.end();
        let count = rows.len() as u64;
        let mut keyed: Vec<(Vec<KeyPart>, Row)> = rows
            .into_iter()
            .map(|row| (sort_key(list, &row), row))
            .collect();
        if keep < keyed.len() {
            if keep > 0 {
                keyed.select_nth_unstable_by(keep - 1, |a, b| a.0.cmp(&b.0));
            }
            keyed.truncate(keep);
        }
        let written: Vec<ListRow> = keyed
            .par_iter()
            .map(|(key, row)| ListRow::new(key.clone(), row_of(ledger, row)))
            .collect();
        let mut top = TopRows::new(written, keep);
        top.count = count;
        Ok(Body::List(ListPart {
            found: Default::default(),
            rows: top,
        }))
    })
}

pub(super) fn finish(
    _shape: &Derived<'_>,
    params: &ReportParams,
    _as_of: DateTime<Utc>,
    body: Body,
) -> Result<ReportAnswer> {
    let page = Page::read(&Query::new(params), LIST.limit, LIST.max_limit)?;
    match body {
        Body::List(part) => Ok(listing(
            part.rows.count as usize,
            part.rows.into_page(page.offset, page.limit)?,
        )),
        other => Err(wrong_body("movement-table", &other)),
    }
}

fn listing(count: usize, list: Vec<MovementRow>) -> ReportAnswer {
    Listing {
        head: NoHead,
        count,
        list,
    }
    .into()
}

/// Reads the request and calls `then` with every row of this ledger's
/// customers (unordered) and how they are ordered and paged.
fn with_rows<T>(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    then: impl FnOnce(Vec<Row>, &ListRequest) -> Result<T>,
) -> Result<T> {
    let q = Query::new(params);
    let settings = ledger.settings();
    let tz = settings.timezone;
    let week_start = settings.week_start();
    let as_of_day = as_of.with_timezone(&tz).date_naive();
    let SeriesRequest {
        range,
        interval,
        currency,
        conversion,
    } = SeriesRequest::read(&q, settings, as_of_day)?;
    let selected_period = q
        .date("selected-date")?
        .map(|d| interval.align(d, week_start));
    let selected_type = q
        .optional_choice(
            "selected-type",
            &["new", "expansion", "contraction", "churn", "reactivation"],
        )?
        .and_then(MovementKind::parse);
    let group = Breakdown::group_from_query(&q)?;
    let breakdown = group.as_ref().map(|(key, _)| *key);
    let breakdown_value_wanted = group.map(|(_, value)| value);
    let committed = q.flag("committed")?;
    let with_lines = q.text("customer").is_some();
    let filter = CustomerFilter::from_params(ledger, params)?;
    let currencies = currency_filter(params)?;
    let list = ListRequest::read(&q, &LIST)?;

    let replays = ledger.replays(as_of)?;
    let base = settings.base_currency;
    let customer_breakdown = breakdown.filter(|key| *key != "currency" && *key != "subtype");
    let entries = replay_list(&replays);
    // Customers are selected and their rows built independently: on every
    // core, in runs that keep the order (and the first error in it).
    let runs = fold_runs(&entries, Vec::new, |rows, &(customer_id, replay)| {
        let Some(customer) = ledger.customer(customer_id.as_str()) else {
            return Ok(());
        };
        let facts = (!filter.is_empty() || customer_breakdown.is_some())
            .then(|| CustomerFacts::gather(ledger, customer, Some(replay), as_of));
        if let Some(facts) = &facts
            && !filter.matches(ledger, facts, as_of_day)
        {
            return Ok(());
        }
        let group = customer_breakdown.zip(facts.as_ref()).map(|(key, facts)| {
            breakdown_value(ledger, key, facts, as_of_day)
                .0
                .to_lowercase()
        });
        if group.is_some() && group != breakdown_value_wanted {
            return Ok(());
        }
        let future = if committed {
            committed_changes(ledger, customer, replay, as_of)?
        } else {
            Vec::new()
        };
        let history: Vec<&Movement> = replay.movements.iter().chain(future.iter()).collect();
        let lines = with_lines.then(|| lines_of(ledger, &history));
        // At a fixed rate a movement is the change of the customer's
        // converted MRR, as the mrr series counts it: every one is added.
        let mut running = Running::default();
        for (i, m) in history.iter().enumerate() {
            let fixed = match conversion {
                Conversion::Fixed(date) => {
                    Some(running.add_fixed(ledger.fx(), m, currency, date)?)
                }
                Conversion::Daily => None,
            };
            // Committed changes are listed whatever the range.
            let in_range = i >= replay.movements.len() || range.contains(m.date);
            if !in_range
                || selected_type.is_some_and(|k| k != m.kind)
                || (!currencies.is_empty() && !currencies.contains(&m.currency))
            {
                continue;
            }
            match breakdown {
                Some("currency")
                    if breakdown_value_wanted.as_deref()
                        != Some(&m.currency.as_str().to_lowercase()) =>
                {
                    continue;
                }
                Some("subtype")
                    if breakdown_value_wanted.as_deref() != Some(m.subtype.as_str()) =>
                {
                    continue;
                }
                _ => {}
            }
            let period = interval.align(m.date, week_start);
            if selected_period.is_some_and(|p| p != period) {
                continue;
            }
            let base_amount = match fixed {
                Some(amount) => amount,
                None if currency == base => m.mrr_change_base_currency,
                None => ledger
                    .fx()
                    .convert(m.mrr_change, m.currency, currency, m.date)?,
            };
            // A committed change is the closure's own: the row keeps a copy.
            let movement = match replay.movements.get(i) {
                Some(listed) => Cow::Borrowed(listed),
                None => Cow::Owned((*m).clone()),
            };
            rows.push(Row {
                seq: 0,
                period,
                movement,
                base_amount,
                customer_name: &customer.name,
                customer_email: customer.email.as_deref(),
                lines: lines.as_ref().map(|l| l[i].clone()),
            });
        }
        Ok(())
    })?;
    let mut rows = joined(runs);
    for (seq, row) in rows.iter_mut().enumerate() {
        row.seq = seq;
    }
    then(rows, &list)
}

fn row_of(ledger: &Derived<'_>, row: &Row) -> MovementRow {
    let m: &Movement = &row.movement;
    MovementRow {
        date: row.period,
        movement_date: m.date,
        currency: m.currency,
        customer_id: m.customer_id.clone(),
        customer_name: row.customer_name.to_string(),
        customer_email: row.customer_email.map(str::to_string),
        kind: m.kind,
        subtype: m.subtype,
        description: description(ledger, m),
        mrr_change: m.mrr_change,
        mrr_change_base_currency: row.base_amount,
        customer_count_change: m.customer_count_change,
        quantity_change: m.quantity_change,
        plans_before: m.plans_before.clone(),
        plans_after: m.plans_after.clone(),
        lines: row.lines.clone(),
    }
}

/// Plan names joined for display (ids of plans no longer known).
fn plan_names(ledger: &Derived<'_>, plans: &[PlanId]) -> String {
    plans
        .iter()
        .map(|id| {
            ledger
                .plan(id.as_str())
                .map_or(id.as_str(), |p| p.name.as_str())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A sentence saying what happened.
pub fn description(ledger: &Derived<'_>, m: &Movement) -> String {
    let before = plan_names(ledger, &m.plans_before);
    let after = plan_names(ledger, &m.plans_after);
    match m.subtype {
        MovementSubtype::New => format!("New subscription: {after}"),
        MovementSubtype::NewFromTrial => format!("Converted from trial: {after}"),
        MovementSubtype::Expansion => format!("Expansion: {after}"),
        MovementSubtype::Upgrade => format!("Upgrade from {before} to {after}"),
        MovementSubtype::Contraction => format!("Contraction: {after}"),
        MovementSubtype::Downgrade => format!("Downgrade from {before} to {after}"),
        MovementSubtype::Cancellation => format!("Cancelled: {before}"),
        MovementSubtype::Refund => format!("Refunded: {before}"),
        MovementSubtype::Lapse => format!("Lapsed, not renewed: {before}"),
        MovementSubtype::Reactivation => format!("Reactivated: {after}"),
    }
}

/// The `lines` of each movement of one customer (in date order): with the
/// same plans, one line of the change; with other plans, a negative line
/// for what was there before and a positive one for what is there after.
fn lines_of(ledger: &Derived<'_>, history: &[&Movement]) -> Vec<Vec<Line>> {
    let mut mrr: Vec<(Currency, Cents, i64)> = Vec::new();
    history
        .iter()
        .map(|m| {
            let entry = match mrr.iter().position(|(c, _, _)| *c == m.currency) {
                Some(i) => i,
                None => {
                    mrr.push((m.currency, 0, 0));
                    mrr.len() - 1
                }
            };
            let (_, before, quantity_before) = mrr[entry];
            let after = before + m.mrr_change;
            let quantity_after = quantity_before + m.quantity_change;
            mrr[entry] = (m.currency, after, quantity_after);
            let line = |plans: &[PlanId], mrr, quantity| Line {
                description: plan_names(ledger, plans),
                mrr,
                quantity,
            };
            if m.plans_before == m.plans_after {
                vec![line(&m.plans_after, m.mrr_change, m.quantity_change)]
            } else {
                let mut lines = Vec::new();
                if before != 0 || !m.plans_before.is_empty() {
                    lines.push(line(&m.plans_before, -before, -quantity_before));
                }
                if after != 0 || !m.plans_after.is_empty() {
                    lines.push(line(&m.plans_after, after, quantity_after));
                }
                lines
            }
        })
        .collect()
}
