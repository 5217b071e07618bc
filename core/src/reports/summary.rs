//! `summary`: MRR, ARR, paying customers and ARPA at `as_of`, in the base
//! currency (or `baseCurrency`).

use super::ReportParams;
use crate::error::Result;
use crate::ledger::Ledger;
use crate::money::{Cents, round_ratio};
use crate::query::Query;
use crate::timeline::Replay;
use chrono::{DateTime, Utc};
use rayon::prelude::*;
use serde_json::{Value, json};

pub(super) fn summary(
    ledger: &Ledger,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Value> {
    let currency = Query::new(params).base_currency(ledger.settings())?;
    let day = as_of
        .with_timezone(&ledger.settings().timezone)
        .date_naive();
    // Customers count independently: on every core.
    let replays = ledger.replays(as_of)?;
    let customers: Vec<&Replay> = replays.values().map(|r| &**r).collect();
    let (mrr, subscribers) = customers
        .par_iter()
        .map(|replay| -> Result<(Cents, i64)> {
            let mut customer_mrr = 0;
            for (from, amount) in replay.mrr_by_currency() {
                customer_mrr += ledger.fx().convert(amount, from, currency, day)?;
            }
            Ok(if customer_mrr > 0 {
                (customer_mrr, 1)
            } else {
                (0, 0)
            })
        })
        .try_reduce(|| (0, 0), |a, b| Ok((a.0 + b.0, a.1 + b.1)))?;
    Ok(json!({
        "summary": {
            "mrr_current": mrr,
            "arr_current": mrr * 12,
            "subscribers_current": subscribers,
            "arpa_current": round_ratio(i128::from(mrr), i128::from(subscribers)),
        },
        "currency": currency.as_str(),
    }))
}
