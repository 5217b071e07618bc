//! `summary`: MRR, ARR, paying customers and ARPA at `as_of`, in the base
//! currency (or `baseCurrency`).

use super::ReportParams;
use crate::error::{Error, Result};
use crate::ledger::Ledger;
use crate::money::{Currency, round_ratio};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

pub(super) fn summary(
    ledger: &Ledger,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Value> {
    let currency = match params.get("baseCurrency") {
        Some(code) => Currency::parse(code).ok_or_else(|| {
            Error::query(
                "baseCurrency",
                format!("`{code}` is not a three-letter currency code"),
            )
        })?,
        None => ledger.settings().base_currency,
    };
    let day = as_of
        .with_timezone(&ledger.settings().timezone)
        .date_naive();
    let mut mrr = 0;
    let mut subscribers = 0;
    for replay in ledger.replays(as_of)?.values() {
        let mut customer_mrr = 0;
        for (from, amount) in replay.mrr().mrr {
            customer_mrr += ledger.fx().convert(amount, from, currency, day)?;
        }
        if customer_mrr > 0 {
            subscribers += 1;
            mrr += customer_mrr;
        }
    }
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
