//! Normalizing invoices to monthly amounts (SEMANTICS section 2): a plan's
//! interval in months, service periods by calendar arithmetic in the ledger's
//! time zone, and proration of short periods.

use crate::model::{Interval, Invoice, Plan, Timestamp};
use crate::money::{Cents, round_ratio};
use chrono::{DateTime, Duration, Months, TimeZone, Utc};
use chrono_tz::Tz;

/// A plan's interval in months as the exact fraction `numerator / denominator`:
/// month -> n, year -> 12n, week -> 12n/52, day -> 12n/365.
pub fn interval_months(interval: Interval, count: u32) -> (i128, i128) {
    let n = i128::from(count.max(1));
    match interval {
        Interval::Month => (n, 1),
        Interval::Year => (12 * n, 1),
        Interval::Week => (12 * n, 52),
        Interval::Day => (12 * n, 365),
    }
}

/// `start` plus `count` plan intervals, by calendar arithmetic in `tz`
/// (a month added to Jan 31 is the last day of February).
pub fn add_interval(start: DateTime<Utc>, interval: Interval, count: u32, tz: Tz) -> DateTime<Utc> {
    let count = count.max(1);
    if tz == Tz::UTC {
        let naive = start.naive_utc();
        let shifted = match interval {
            Interval::Month => naive.checked_add_months(Months::new(count)),
            Interval::Year => naive.checked_add_months(Months::new(12 * count)),
            Interval::Week => naive.checked_add_signed(Duration::weeks(i64::from(count))),
            Interval::Day => naive.checked_add_signed(Duration::days(i64::from(count))),
        };
        return shifted.map_or(DateTime::<Utc>::MAX_UTC, |t| t.and_utc());
    }
    let local = start.with_timezone(&tz).naive_local();
    let shifted = match interval {
        Interval::Month => local.checked_add_months(Months::new(count)),
        Interval::Year => local.checked_add_months(Months::new(12 * count)),
        Interval::Week => local.checked_add_signed(Duration::weeks(i64::from(count))),
        Interval::Day => local.checked_add_signed(Duration::days(i64::from(count))),
    };
    let Some(shifted) = shifted else {
        return DateTime::<Utc>::MAX_UTC;
    };
    match tz.from_local_datetime(&shifted) {
        chrono::LocalResult::Single(t) => t.with_timezone(&Utc),
        chrono::LocalResult::Ambiguous(earliest, _) => earliest.with_timezone(&Utc),
        // Inside a DST gap: the same wall-clock time one hour later exists.
        chrono::LocalResult::None => tz
            .from_local_datetime(&(shifted + Duration::hours(1)))
            .earliest()
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or(start),
    }
}

/// The service period an invoice pays for, with the plan interval's end for
/// proration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServicePeriod {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    /// One plan interval after `start`.
    pub nominal_end: DateTime<Utc>,
}

/// The service period an invoice pays for: from `period_start` (else the
/// invoice date) to `period_end` when given and after the start, else one plan
/// interval later.
pub fn service_period(invoice: &Invoice, plan: &Plan, tz: Tz) -> ServicePeriod {
    let start = invoice.effective().instant(tz);
    let nominal_end = add_interval(start, plan.billing_freq, plan.billing_freq_count, tz);
    let end = invoice
        .period_end
        .map(|end: Timestamp| end.instant(tz))
        .filter(|end| *end > start)
        .unwrap_or(nominal_end);
    ServicePeriod {
        start,
        end,
        nominal_end,
    }
}

/// The monthly recurring amount of a subscription invoice:
/// `round((amount - tax) / months)`, scaled up to the full interval when the
/// service period is shorter than the nominal one by more than a day
/// (a 15-day invoice of 1500 on a 30-day monthly plan is 3000 a month).
pub fn monthly_amount(invoice: &Invoice, plan: &Plan, tz: Tz) -> Cents {
    monthly_amount_over(invoice, plan, &service_period(invoice, plan, tz))
}

/// [`monthly_amount`] for an already computed service period.
pub fn monthly_amount_over(invoice: &Invoice, plan: &Plan, period: &ServicePeriod) -> Cents {
    let net = i128::from(invoice.amount - invoice.tax_amount);
    let (months_num, months_den) = interval_months(plan.billing_freq, plan.billing_freq_count);
    // Only a period_end can make the period differ from the nominal interval.
    if invoice.period_end.is_some() {
        let seconds = i128::from((period.end - period.start).num_seconds());
        let nominal = i128::from((period.nominal_end - period.start).num_seconds());
        if seconds > 0 && nominal - seconds > 86_400 {
            return round_ratio(net * nominal * months_den, seconds * months_num);
        }
    }
    round_ratio(net * months_den, months_num)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(interval: &str, count: u32) -> Plan {
        Plan::from_json(&json!({"id": "p", "name": "P", "billing_freq": interval, "billing_freq_count": count, "currency": "USD"}))
            .unwrap()
    }

    fn invoice(extra: serde_json::Value) -> Invoice {
        let mut v = json!({"id": "i", "customer_id": "c", "type": "subscription", "invoice_date": "2024-01-01",
                           "amount": 12000, "currency": "USD", "plan_id": "p"});
        for (k, val) in extra.as_object().unwrap() {
            v[k] = val.clone();
        }
        Invoice::from_json(&v).unwrap()
    }

    #[test]
    fn intervals_normalize_as_the_semantics_say() {
        let tz = Tz::UTC;
        assert_eq!(
            monthly_amount(&invoice(json!({})), &plan("year", 1), tz),
            1000
        );
        assert_eq!(
            monthly_amount(&invoice(json!({"amount": 1000})), &plan("week", 1), tz),
            4333
        );
        assert_eq!(
            monthly_amount(&invoice(json!({"amount": 100})), &plan("day", 1), tz),
            3042
        );
        assert_eq!(
            monthly_amount(&invoice(json!({"amount": 9000})), &plan("month", 3), tz),
            3000
        );
    }

    #[test]
    fn tax_is_not_revenue() {
        let i = invoice(json!({"amount": 3600, "tax_amount": 600}));
        assert_eq!(monthly_amount(&i, &plan("month", 1), Tz::UTC), 3000);
    }

    #[test]
    fn a_short_period_is_prorated_to_the_full_interval() {
        let i = invoice(
            json!({"amount": 1500, "period_start": "2024-04-01", "period_end": "2024-04-16"}),
        );
        assert_eq!(monthly_amount(&i, &plan("month", 1), Tz::UTC), 3000);
    }

    #[test]
    fn a_period_short_by_one_day_is_not_prorated() {
        let i = invoice(
            json!({"amount": 3000, "period_start": "2024-04-01", "period_end": "2024-04-30"}),
        );
        assert_eq!(monthly_amount(&i, &plan("month", 1), Tz::UTC), 3000);
    }

    #[test]
    fn month_end_arithmetic_clamps() {
        let start = Timestamp::parse("2024-01-31").unwrap().instant(Tz::UTC);
        let end = add_interval(start, Interval::Month, 1, Tz::UTC);
        assert_eq!(end.to_rfc3339(), "2024-02-29T00:00:00+00:00");
    }
}
