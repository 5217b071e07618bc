//! The `mrr` report's groups of period figures (the total and each
//! breakdown entry) and the rows made from them: the rates, ARPA and LTV of
//! a period (SEMANTICS section 7).

use super::ReportParams;
use super::mrr::{GroupSeries, MrrSeries};
use super::request::Breakdown;
use super::series::{PeriodStats, SeriesSpec};
use crate::error::Result;
use crate::money::{Cents, Total, arr_of, round_ratio};
use crate::period::Period;
use crate::query::Query;
use chrono::NaiveDate;
use serde::Serialize;
use std::collections::BTreeMap;

/// Stats per group: key `None` is the total, `Some(value)` a breakdown entry
/// with its label.
pub(super) type Groups = BTreeMap<Option<String>, (String, Vec<PeriodStats>)>;

/// Subtype entries split movements only: their totals are the report's.
pub(super) fn share_totals(groups: &mut Groups) {
    let totals = groups
        .get(&None)
        .map(|(_, s)| s.clone())
        .unwrap_or_default();
    for (key, (_, stats)) in groups.iter_mut() {
        if key.is_some() {
            for (entry, total) in stats.iter_mut().zip(totals.iter()) {
                entry.start_mrr = total.start_mrr;
                entry.total_mrr = total.total_mrr;
                entry.start_customers = total.start_customers;
                entry.total_customers = total.total_customers;
            }
        }
    }
}

/// Adds the stats of every breakdown entry into the total's, period by
/// period: for a breakdown by a customer-level key, whose entries hold each
/// of their customers once and the total only the customers outside them.
pub(super) fn add_entries_to_total(groups: &mut Groups) {
    let Some((_, mut total)) = groups.remove(&None) else {
        return;
    };
    for (_, stats) in groups.values() {
        for (into, from) in total.iter_mut().zip(stats) {
            into.add(from);
        }
    }
    groups.insert(None, (String::new(), total));
}

/// `mrr`'s breakdown.
pub(super) fn breakdown_param(params: &ReportParams) -> Result<Option<&'static str>> {
    Ok(Breakdown::from_query(&Query::new(params))?.map(Breakdown::as_str))
}

/// Adds the groups of `from` into `into`, period by period.
pub(super) fn merge_groups(into: &mut Groups, from: Groups) {
    for (key, (label, stats)) in from {
        match into.get_mut(&key) {
            Some((_, existing)) => {
                for (entry, other) in existing.iter_mut().zip(stats.iter()) {
                    entry.add(other);
                }
            }
            None => {
                into.insert(key, (label, stats));
            }
        }
    }
}

pub(super) fn spec_copy<'a>(spec: &SeriesSpec<'a>) -> SeriesSpec<'a> {
    SeriesSpec {
        range: spec.range,
        periods: spec.periods,
        currency: spec.currency,
        conversion: spec.conversion,
        fx: spec.fx,
        currencies: spec.currencies,
        kinds: spec.kinds,
        subtypes: spec.subtypes,
        as_of_day: spec.as_of_day,
    }
}

pub(super) fn add_movement_columns(into: &mut PeriodStats, from: &PeriodStats) {
    into.new += from.new;
    into.expansion += from.expansion;
    into.contraction += from.contraction;
    into.churn += from.churn;
    into.reactivation += from.reactivation;
    into.new_customers += from.new_customers;
    into.expansion_customers += from.expansion_customers;
    into.contraction_customers += from.contraction_customers;
    into.churn_customers += from.churn_customers;
    into.reactivation_customers += from.reactivation_customers;
    into.customers_diff += from.customers_diff;
}

/// `100 x churned / start_customers`; `None` without start customers.
pub fn customer_churn_rate(stats: &PeriodStats) -> Option<f64> {
    percent(stats.churned as f64, stats.start_customers as f64)
}

/// `100 x numerator / denominator`; `None` when the denominator is 0.
pub(super) fn percent(numerator: f64, denominator: f64) -> Option<f64> {
    (denominator != 0.0).then(|| 100.0 * numerator / denominator)
}

/// The mean of the values present; `None` when none is.
pub(super) fn mean(values: &[Option<f64>]) -> Option<f64> {
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    (!present.is_empty()).then(|| present.iter().sum::<f64>() / present.len() as f64)
}

/// ARPA: `round(total_mrr / total_customers)`, 0 without customers; at
/// most the total MRR, so it fits whenever that does.
pub(super) fn arpa(total_mrr: Cents, stats: &PeriodStats) -> Cents {
    round_ratio(i128::from(total_mrr), i128::from(stats.total_customers))
}

/// LTV and customer lifetime from ARPA and a mean monthly churn rate `m`:
/// `ARPA / (m / 100)`, which a low churn rate can take beyond 64-bit
/// cents (then `ltv` is refused as out of range).
fn lifetime_value(
    arpa: Cents,
    monthly_churn: Option<f64>,
    figures: &Scope,
) -> Result<(Option<Cents>, Option<f64>)> {
    Ok(match monthly_churn {
        Some(m) if m > 0.0 => {
            let ltv = Total::rounded(arpa as f64 / (m / 100.0));
            (Some(figures.cents("ltv", ltv)?), Some(1.0 / (m / 100.0)))
        }
        _ => (None, None),
    })
}

/// Where a figure of the `mrr` report is: its period, its breakdown group
/// and the report currency, to name a figure beyond 64-bit cents.
struct Scope<'a> {
    series: &'a MrrSeries,
    period: &'a Period,
    group: Option<&'a str>,
}

impl Scope<'_> {
    /// `total` as cents, or [`Error::OutOfRange`](crate::Error::OutOfRange)
    /// naming the figure by its place in the row, e.g. "the `total_mrr` (or
    /// `breakdown.pro.total_mrr`) of the period 2024-03-01 to 2024-03-31 in
    /// USD".
    fn cents(&self, figure: &str, total: Total) -> Result<Cents> {
        total.cents(|| {
            let group = self
                .group
                .map(|g| format!("breakdown.{g}."))
                .unwrap_or_default();
            format!(
                "the `{group}{figure}` of the period {} to {} in {}",
                self.period.start, self.period.end, self.series.currency
            )
        })
    }
}

/// One period of the `mrr` report, in the report's currency: movements
/// and totals in cents, customer counts, rates in percent.
#[derive(Debug, Clone, Serialize)]
pub(super) struct MrrRow {
    pub(super) date: NaiveDate,
    pub(super) end_date: NaiveDate,
    pub(super) new: Cents,
    pub(super) expansion: Cents,
    pub(super) contraction: Cents,
    pub(super) churn: Cents,
    pub(super) reactivation: Cents,
    pub(super) mrr_diff: Cents,
    pub(super) customers_diff: i64,
    pub(super) start_mrr: Cents,
    pub(super) start_customers: i64,
    pub(super) total_mrr: Cents,
    pub(super) total_arr: Cents,
    pub(super) total_customers: i64,
    pub(super) arpa: Cents,
    pub(super) asp: Cents,
    /// `(new + expansion) / losses`; `None` without losses.
    pub(super) quick_ratio: Option<f64>,
    pub(super) customer_churn_rate: Option<f64>,
    pub(super) mrr_churn_rate: Option<f64>,
    pub(super) net_mrr_churn_rate: Option<f64>,
    pub(super) customer_retention_rate: Option<f64>,
    pub(super) mrr_retention_rate: Option<f64>,
    pub(super) nrr: Option<f64>,
    pub(super) customer_churn_avg: Option<f64>,
    pub(super) ltv: Option<Cents>,
    /// Months.
    pub(super) customer_lifetime: Option<f64>,
    pub(super) fx_adjustment: Cents,
    /// Each breakdown group's figures, by group value (only with a
    /// `breakdown`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) breakdown: Option<BTreeMap<String, GroupRow>>,
}

/// The figures of one breakdown group in one period of the `mrr` report.
#[derive(Debug, Clone, Serialize)]
pub(super) struct GroupRow {
    pub(super) label: String,
    pub(super) total_mrr: Cents,
    pub(super) total_arr: Cents,
    pub(super) total_customers: i64,
    pub(super) new: Cents,
    pub(super) expansion: Cents,
    pub(super) contraction: Cents,
    pub(super) churn: Cents,
    pub(super) reactivation: Cents,
    pub(super) mrr_diff: Cents,
    pub(super) customers_diff: i64,
    pub(super) new_customers: i64,
    pub(super) expansion_customers: i64,
    pub(super) contraction_customers: i64,
    pub(super) churn_customers: i64,
    pub(super) reactivation_customers: i64,
    pub(super) arpa: Cents,
    pub(super) asp: Cents,
    pub(super) customer_churn_rate: Option<f64>,
    pub(super) customer_churn_avg: Option<f64>,
    pub(super) ltv: Option<Cents>,
    pub(super) customer_lifetime: Option<f64>,
    pub(super) fx_adjustment: Cents,
}

/// The row of period `i` of `series`, without breakdown.
pub(super) fn period_row(series: &MrrSeries, i: usize) -> Result<MrrRow> {
    let (group, period) = (&series.total, &series.periods[i]);
    let figures = Scope {
        series,
        period,
        group: None,
    };
    let cents = |figure: &str, total: Total| figures.cents(figure, total);
    let s = &group.stats[i];
    let start_mrr = s.start_mrr.as_f64();
    // Negated as totals, never as floats: a float's -0.0 would answer
    // "-0.00" for a period without losses.
    let losses = (-(s.churn + s.contraction)).as_f64();
    let new = cents("new", s.new)?;
    let total_mrr = cents("total_mrr", s.total_mrr)?;
    let arpa = arpa(total_mrr, s);
    let (ltv, lifetime) = lifetime_value(arpa, group.monthly_churn[i], &figures)?;
    let churn_rate = customer_churn_rate(s);
    let mrr_churn_rate = percent(losses, start_mrr);
    Ok(MrrRow {
        date: period.start,
        end_date: period.end,
        new,
        expansion: cents("expansion", s.expansion)?,
        contraction: cents("contraction", s.contraction)?,
        churn: cents("churn", s.churn)?,
        reactivation: cents("reactivation", s.reactivation)?,
        mrr_diff: cents("mrr_diff", s.total_mrr - s.start_mrr)?,
        customers_diff: s.customers_diff,
        start_mrr: cents("start_mrr", s.start_mrr)?,
        start_customers: s.start_customers,
        total_mrr,
        total_arr: arr_of(total_mrr)?,
        total_customers: s.total_customers,
        arpa,
        asp: round_ratio(i128::from(new), i128::from(s.new_customers)),
        quick_ratio: (losses != 0.0).then(|| (s.new + s.expansion).as_f64() / losses),
        customer_churn_rate: churn_rate,
        mrr_churn_rate,
        net_mrr_churn_rate: percent(
            (-(s.churn + s.contraction + s.expansion + s.reactivation)).as_f64(),
            start_mrr,
        ),
        customer_retention_rate: churn_rate.map(|r| 100.0 - r),
        mrr_retention_rate: mrr_churn_rate.map(|r| 100.0 - r),
        nrr: percent(
            (s.start_mrr + s.expansion + s.contraction + s.churn).as_f64(),
            start_mrr,
        ),
        customer_churn_avg: group.churn_avg[i],
        ltv,
        customer_lifetime: lifetime,
        fx_adjustment: cents("fx_adjustment", s.fx_adjustment())?,
        breakdown: None,
    })
}

/// The entry of breakdown group `key` (`label`, figures `group`) in period
/// `i` of `series`; a subtype entry is given the report's `fx_adjustment`.
pub(super) fn breakdown_entry(
    series: &MrrSeries,
    key: &str,
    label: &str,
    group: &GroupSeries,
    i: usize,
    fx_adjustment: Option<Total>,
) -> Result<GroupRow> {
    let figures = Scope {
        series,
        period: &series.periods[i],
        group: Some(key),
    };
    let cents = |figure: &str, total: Total| figures.cents(figure, total);
    let s = &group.stats[i];
    let total_mrr = cents("total_mrr", s.total_mrr)?;
    let arpa = arpa(total_mrr, s);
    let (ltv, lifetime) = lifetime_value(arpa, group.monthly_churn[i], &figures)?;
    let new = cents("new", s.new)?;
    Ok(GroupRow {
        label: label.to_string(),
        total_mrr,
        total_arr: arr_of(total_mrr)?,
        total_customers: s.total_customers,
        new,
        expansion: cents("expansion", s.expansion)?,
        contraction: cents("contraction", s.contraction)?,
        churn: cents("churn", s.churn)?,
        reactivation: cents("reactivation", s.reactivation)?,
        mrr_diff: cents("mrr_diff", s.total_mrr - s.start_mrr)?,
        customers_diff: s.customers_diff,
        new_customers: s.new_customers,
        expansion_customers: s.expansion_customers,
        contraction_customers: s.contraction_customers,
        churn_customers: s.churn_customers,
        reactivation_customers: s.reactivation_customers,
        arpa,
        asp: round_ratio(i128::from(new), i128::from(s.new_customers)),
        customer_churn_rate: customer_churn_rate(s),
        customer_churn_avg: group.churn_avg[i],
        ltv,
        customer_lifetime: lifetime,
        fx_adjustment: cents(
            "fx_adjustment",
            fx_adjustment.unwrap_or_else(|| s.fx_adjustment()),
        )?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::money::Currency;

    /// A one-month series whose total (and group `pro`) has one customer
    /// paying `mrr`, with a mean monthly churn of `churn` percent.
    fn series(mrr: Total, churn: f64) -> MrrSeries {
        let d = |text: &str| text.parse::<NaiveDate>().unwrap();
        let group = GroupSeries {
            stats: vec![PeriodStats {
                total_mrr: mrr,
                total_customers: 1,
                ..PeriodStats::default()
            }],
            churn_avg: vec![None],
            monthly_churn: vec![Some(churn)],
        };
        MrrSeries {
            currency: Currency::USD,
            breakdown: Some("plan"),
            periods: vec![Period {
                start: d("2024-03-01"),
                end: d("2024-03-31"),
            }],
            total: group.clone(),
            groups: BTreeMap::from([("pro".to_string(), ("Pro".to_string(), group))]),
        }
    }

    #[test]
    fn an_ltv_beyond_64_bit_cents_is_refused_naming_the_figure_and_group() {
        let beyond =
            " is outside the range of 64-bit cents (at most 9223372036854775807 either way)";
        // 5 x 10^17 a month at 1% churn is an LTV of 5 x 10^19, beyond.
        let large = series(Total::from(500_000_000_000_000_000), 1.0);
        assert_eq!(
            period_row(&large, 0).unwrap_err().to_string(),
            format!("the `ltv` of the period 2024-03-01 to 2024-03-31 in USD{beyond}")
        );
        let (label, group) = &large.groups["pro"];
        assert_eq!(
            breakdown_entry(&large, "pro", label, group, 0, None)
                .unwrap_err()
                .to_string(),
            format!(
                "the `breakdown.pro.ltv` of the period 2024-03-01 to 2024-03-31 in USD{beyond}"
            )
        );
        // At 10% it is 5 x 10^18, inside and exact.
        let row = period_row(&series(Total::from(500_000_000_000_000_000), 10.0), 0).unwrap();
        assert_eq!(row.ltv, Some(5_000_000_000_000_000_000));
        assert_eq!(row.total_arr, 6_000_000_000_000_000_000);
    }
}
