//! `summary`: MRR, ARR, paying customers and ARPA at `as_of`, in the base
//! currency (or `baseCurrency`).

use super::ReportParams;
use super::answer::{ReportAnswer, Single};
use super::partial::Body;
use super::runs::fold_runs;
use crate::derive::Derived;
use crate::derive::timeline::Replay;
use crate::error::Result;
use crate::money::{Cents, Currency, Total, arr_of, round_ratio};
use crate::query::Query;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub(super) fn summary(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<ReportAnswer> {
    let (currency, part) = compute(ledger, params, as_of)?;
    render(currency, part)
}

/// The summary's sums over a ledger's customers: their MRR in the report
/// currency and how many pay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Part {
    mrr: Total,
    subscribers: i64,
}

impl Part {
    pub(crate) fn merge(self, other: Part) -> Part {
        Part {
            mrr: self.mrr + other.mrr,
            subscribers: self.subscribers + other.subscribers,
        }
    }
}

pub(super) fn partial(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Body> {
    Ok(Body::Summary(compute(ledger, params, as_of)?.1))
}

pub(super) fn finish(
    shape: &Derived<'_>,
    params: &ReportParams,
    _as_of: DateTime<Utc>,
    body: Body,
) -> Result<ReportAnswer> {
    let currency = Query::new(params).base_currency(shape.settings())?;
    match body {
        Body::Summary(part) => render(currency, part),
        other => Err(super::partial::wrong_body("summary", &other)),
    }
}

fn compute(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<(Currency, Part)> {
    let currency = Query::new(params).base_currency(ledger.settings())?;
    let day = as_of
        .with_timezone(&ledger.settings().timezone)
        .date_naive();
    // Customers count independently: on every core.
    let replays = ledger.replays(as_of)?;
    let customers: Vec<&Replay> = replays.values().map(|r| &**r).collect();
    let runs = fold_runs(
        &customers,
        || (Total::ZERO, 0),
        |sums, replay| {
            let mut customer_mrr = Total::ZERO;
            for (from, amount) in replay.mrr_by_currency() {
                customer_mrr += ledger.fx().convert(amount, from, currency, day)?;
            }
            if customer_mrr > Total::ZERO {
                sums.0 += customer_mrr;
                sums.1 += 1;
            }
            Ok(())
        },
    )?;
    let (mrr, subscribers) = runs
        .into_iter()
        .fold((Total::ZERO, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    Ok((currency, Part { mrr, subscribers }))
}

/// The `summary` answer: the figures, then the currency they are in.
#[derive(Serialize)]
struct SummaryAnswer {
    summary: Figures,
    currency: Currency,
}

/// MRR, ARR and ARPA in cents, and how many customers pay.
#[derive(Serialize)]
struct Figures {
    mrr_current: Cents,
    arr_current: Cents,
    subscribers_current: i64,
    arpa_current: Cents,
}

fn render(currency: Currency, Part { mrr, subscribers }: Part) -> Result<ReportAnswer> {
    let mrr = mrr.cents(|| format!("the `mrr_current` in {currency}"))?;
    let summary = Figures {
        mrr_current: mrr,
        arr_current: arr_of(mrr)?,
        subscribers_current: subscribers,
        arpa_current: round_ratio(i128::from(mrr), i128::from(subscribers)),
    };
    Ok(Single {
        currency: Some(currency),
        value: SummaryAnswer { summary, currency },
    }
    .into())
}
