//! Reports on the paying customers at one instant: `map` (by country),
//! `customer-concentration` and `custom-variables` (in `variables`).
//!
//! The instant is `as_of`, or the end of `selected-date` when earlier (the
//! data as it stood then). MRR converts into `baseCurrency` at that day's
//! rate. The shared customer filters apply; `currency` keeps MRR in those
//! currencies.

use super::ReportParams;
use super::answer::{Head, Listing, ReportAnswer, Series};
use super::partial::Body;
use super::partial::rows::{KeyPart, Row, Scalar, TopRows};
use super::runs::{fold_runs, joined};
use crate::derive::Derived;
use crate::derive::replay_list;
use crate::error::Result;
use crate::model::Customer;
use crate::money::{Cents, Currency, Total, arr_of, round_ratio};
use crate::query::filters::{CustomerFilter, currency_filter};
use crate::query::{Page, Query};
use chrono::{DateTime, Utc};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The paying customers at the report's instant with their converted MRR,
/// highest first (ties by id). A customer's MRR, summed over its
/// currencies, must fit 64-bit cents; the sums over customers are totals.
pub(super) struct Snapshot<'a> {
    pub(super) currency: Currency,
    pub(super) customers: Vec<(&'a Customer, Cents)>,
}

impl Snapshot<'_> {
    pub(super) fn total(&self) -> Total {
        self.customers.iter().map(|(_, mrr)| mrr).sum()
    }
}

pub(super) fn snapshot<'a>(
    ledger: &'a Derived<'a>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Snapshot<'a>> {
    let q = Query::new(params);
    let settings = ledger.settings();
    let tz = settings.timezone;
    let at = match q.date("selected-date")? {
        Some(day) => {
            let end = crate::model::start_of_day(day.succ_opt().unwrap_or(day), tz)
                - chrono::Duration::seconds(1);
            end.min(as_of)
        }
        None => as_of,
    };
    let day = at.with_timezone(&tz).date_naive();
    let currency = q.base_currency(settings)?;
    let filter = CustomerFilter::from_params(ledger, params)?;
    let currencies = currency_filter(params)?;
    let replays = ledger.replays(at)?;
    let replays = replay_list(&replays);
    // Customers are read and converted on every core; the error answered
    // (a missing rate) is the first customer's in id order.
    let runs = fold_runs(&replays, Vec::new, |paying, &(id, replay)| {
        let Some(customer) = ledger.customer(id.as_str()) else {
            return Ok(());
        };
        if !filter.keeps(ledger, customer, Some(replay), at, day) {
            return Ok(());
        }
        let mut mrr = Total::ZERO;
        for (from, amount) in replay.mrr_by_currency() {
            if currencies.is_empty() || currencies.contains(&from) {
                mrr += ledger.fx().convert(amount, from, currency, day)?;
            }
        }
        let mrr = mrr.cents(|| format!("the MRR of customer `{id}` in {currency}"))?;
        if mrr > 0 {
            paying.push((customer, mrr));
        }
        Ok(())
    })?;
    let mut customers = joined(runs);
    // Ids are distinct: the order is total, whatever the sort.
    customers.par_sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id)));
    Ok(Snapshot {
        currency,
        customers,
    })
}

/// `100 x part / whole`, `None` (null) when `whole` is 0.
pub(super) fn share(part: impl Into<Total>, whole: impl Into<Total>) -> Option<f64> {
    let (part, whole) = (part.into(), whole.into());
    (whole != Total::ZERO).then(|| 100.0 * part.as_f64() / whole.as_f64())
}

/// The report currency of a snapshot request.
pub(super) fn currency(shape: &Derived<'_>, params: &ReportParams) -> Result<Currency> {
    Query::new(params).base_currency(shape.settings())
}

/// `map`'s sums: paying customers and MRR in all and by country.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MapPart {
    customers: i64,
    total: Total,
    countries: BTreeMap<String, (i64, Total)>,
}

impl MapPart {
    fn of(snap: &Snapshot) -> MapPart {
        let mut part = MapPart {
            customers: snap.customers.len() as i64,
            total: snap.total(),
            countries: BTreeMap::new(),
        };
        for (customer, mrr) in &snap.customers {
            let country = customer.country.as_deref().unwrap_or("unknown");
            let sums = match part.countries.get_mut(country) {
                Some(sums) => sums,
                None => part.countries.entry(country.to_string()).or_default(),
            };
            sums.0 += 1;
            sums.1 += *mrr;
        }
        part
    }

    pub(crate) fn merge(mut self, other: MapPart) -> MapPart {
        self.customers += other.customers;
        self.total += other.total;
        for (country, (customers, mrr)) in other.countries {
            let entry = self.countries.entry(country).or_default();
            entry.0 += customers;
            entry.1 += mrr;
        }
        self
    }
}

/// `map`: customers, MRR, ARPA and share of MRR by country (`unknown` when
/// a customer has none), highest MRR first.
pub(super) fn map(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<ReportAnswer> {
    let snap = snapshot(ledger, params, as_of)?;
    map_value(snap.currency, MapPart::of(&snap))
}

pub(super) fn map_partial(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Body> {
    Ok(Body::Map(MapPart::of(&snapshot(ledger, params, as_of)?)))
}

pub(super) fn map_finish(
    shape: &Derived<'_>,
    params: &ReportParams,
    _as_of: DateTime<Utc>,
    body: Body,
) -> Result<ReportAnswer> {
    match body {
        Body::Map(part) => map_value(currency(shape, params)?, part),
        other => Err(super::partial::wrong_body("map", &other)),
    }
}

/// The head of the `map` answer: its currency and totals.
#[derive(Serialize)]
struct MapHead {
    currency: Currency,
    total: MapTotal,
}

/// Every paying customer: how many, their MRR and ARPA.
#[derive(Serialize)]
struct MapTotal {
    customers: i64,
    mrr: Cents,
    arpa: Cents,
}

impl Head for MapHead {
    fn currency(&self) -> Option<Currency> {
        Some(self.currency)
    }
}

/// One country of the `map`: its paying customers, MRR, ARR, ARPA and
/// share of the MRR.
#[derive(Serialize)]
struct CountryRow {
    country: String,
    region: &'static str,
    customers: i64,
    mrr: Cents,
    arr: Cents,
    arpa: Cents,
    share: Option<f64>,
}

fn map_value(currency: Currency, part: MapPart) -> Result<ReportAnswer> {
    let total = part
        .total
        .cents(|| format!("the `total.mrr` in {currency}"))?;
    let mut rows: Vec<(String, i64, Cents)> = part
        .countries
        .into_iter()
        .map(|(c, (n, m))| {
            let mrr = m.cents(|| format!("the `mrr` of country {c} in {currency}"))?;
            Ok((c, n, mrr))
        })
        .collect::<Result<_>>()?;
    rows.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    let result = rows
        .into_iter()
        .map(|(country, customers, mrr)| {
            Ok(CountryRow {
                region: crate::query::filters::region_of(&country),
                country,
                customers,
                mrr,
                arr: arr_of(mrr)?,
                arpa: round_ratio(i128::from(mrr), i128::from(customers)),
                share: share(mrr, total),
            })
        })
        .collect::<Result<_>>()?;
    let head = MapHead {
        currency,
        total: MapTotal {
            customers: part.customers,
            mrr: total,
            arpa: round_ratio(i128::from(total), i128::from(part.customers)),
        },
    };
    Ok(Series { head, result }.into())
}

/// `customer-concentration`'s parts: how many paying customers have each
/// MRR (what the shares of the top percentiles, the cumulative shares and
/// the Herfindahl index are computed from), and the customers of the page
/// (highest MRR first, ties by id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ConcentrationPart {
    /// MRR -> customers with it.
    histogram: BTreeMap<Cents, u64>,
    rows: TopRows,
}

impl ConcentrationPart {
    fn of(snap: &Snapshot, keep: usize) -> ConcentrationPart {
        let mut histogram = BTreeMap::new();
        for (_, mrr) in &snap.customers {
            *histogram.entry(*mrr).or_insert(0) += 1;
        }
        let rows = snap
            .customers
            .iter()
            .take(keep)
            .map(|(customer, mrr)| {
                Row::new(
                    vec![
                        KeyPart::new(Scalar::Int((*mrr).into()), true),
                        KeyPart::text(customer.id.as_str()),
                    ],
                    (customer.id.to_string(), customer.name.to_string(), *mrr),
                )
            })
            .collect();
        ConcentrationPart {
            histogram,
            rows: TopRows::new(rows, keep),
        }
    }

    pub(crate) fn merge(mut self, other: ConcentrationPart) -> ConcentrationPart {
        for (mrr, count) in other.histogram {
            *self.histogram.entry(mrr).or_insert(0) += count;
        }
        self.rows = self.rows.merge(other.rows);
        self
    }

    /// Every paying customer's MRR, highest first.
    fn descending(&self) -> impl Iterator<Item = Cents> + '_ {
        self.histogram
            .iter()
            .rev()
            .flat_map(|(mrr, count)| std::iter::repeat_n(*mrr, *count as usize))
    }
}

/// A count of customers of a histogram: far inside 64 bits.
fn customers(count: u64) -> i64 {
    count as i64
}

/// The page of `customer-concentration`: 100 rows unless `limit` says
/// otherwise.
fn page(params: &ReportParams) -> Result<Page> {
    Page::read(&Query::new(params), 100, None)
}

/// `customer-concentration`: customers by MRR with share and cumulative
/// share, the share of the top 1, 5, 10 and 20 percent of customers (at
/// least one customer each), and the Herfindahl index (sum of squared
/// shares as fractions, 0 to 1; `hhi` is the same on the 0 to 10,000 scale).
pub(super) fn concentration(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<ReportAnswer> {
    let page = page(params)?;
    let snap = snapshot(ledger, params, as_of)?;
    let part = ConcentrationPart::of(&snap, page.end());
    concentration_value(snap.currency, part, page)
}

pub(super) fn concentration_partial(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Body> {
    let page = page(params)?;
    let snap = snapshot(ledger, params, as_of)?;
    Ok(Body::Concentration(ConcentrationPart::of(
        &snap,
        page.end(),
    )))
}

pub(super) fn concentration_finish(
    shape: &Derived<'_>,
    params: &ReportParams,
    _as_of: DateTime<Utc>,
    body: Body,
) -> Result<ReportAnswer> {
    let page = page(params)?;
    match body {
        Body::Concentration(part) => concentration_value(currency(shape, params)?, part, page),
        other => Err(super::partial::wrong_body("customer-concentration", &other)),
    }
}

/// The head of `customer-concentration`: the currency, the total MRR and
/// paying customers, the Herfindahl index and the top percentiles' shares.
#[derive(Serialize)]
struct ConcentrationHead {
    currency: Currency,
    total_mrr: Cents,
    customers: usize,
    herfindahl: f64,
    hhi: f64,
    top: Vec<TopShare>,
}

impl Head for ConcentrationHead {
    fn currency(&self) -> Option<Currency> {
        Some(self.currency)
    }
}

/// The top `percent` of customers (at least one): how many, their MRR and
/// its share.
#[derive(Serialize)]
struct TopShare {
    percent: u32,
    customers: usize,
    mrr: Cents,
    share: Option<f64>,
}

/// A customer ranked by MRR, with its share and the cumulative share up to
/// it.
#[derive(Serialize)]
struct RankRow {
    rank: usize,
    customer_id: String,
    customer_name: String,
    mrr: Cents,
    share: Option<f64>,
    cumulative_share: Option<f64>,
}

fn concentration_value(
    currency: Currency,
    part: ConcentrationPart,
    page: Page,
) -> Result<ReportAnswer> {
    let total: Total = part
        .histogram
        .iter()
        .map(|(mrr, count)| Total::from(*mrr) * customers(*count))
        .sum();
    let count = part.histogram.values().sum::<u64>() as usize;
    let herfindahl: f64 = if total == Total::ZERO {
        0.0
    } else {
        part.descending()
            .map(|mrr| (mrr as f64 / total.as_f64()).powi(2))
            .sum()
    };
    let top = [1u32, 5, 10, 20]
        .into_iter()
        .map(|percent| {
            let n = if count == 0 {
                0
            } else {
                (count * percent as usize).div_ceil(100).max(1)
            };
            let mrr: Total = part.descending().take(n).sum();
            Ok(TopShare {
                percent,
                customers: n,
                mrr: mrr.cents(|| format!("the `mrr` of the top {percent}% in {currency}"))?,
                share: share(mrr, total),
            })
        })
        .collect::<Result<_>>()?;
    // The MRR of every customer ranked before the page.
    let mut cumulative: Total = part.descending().take(page.offset).sum();
    let list = part
        .rows
        .into_page::<(String, String, Cents)>(page.offset, page.limit)?
        .into_iter()
        .enumerate()
        .map(|(i, (customer_id, customer_name, mrr))| {
            cumulative += mrr;
            RankRow {
                rank: page.offset + i + 1,
                customer_id,
                customer_name,
                mrr,
                share: share(mrr, total),
                cumulative_share: share(cumulative, total),
            }
        })
        .collect();
    let head = ConcentrationHead {
        currency,
        total_mrr: total.cents(|| format!("the `total_mrr` in {currency}"))?,
        customers: count,
        herfindahl,
        hhi: herfindahl * 10_000.0,
        top,
    };
    Ok(Listing { head, count, list }.into())
}
