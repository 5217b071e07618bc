//! Normalizing invoices to monthly amounts (SEMANTICS section 2): a plan's
//! interval in months, service periods by calendar arithmetic in the ledger's
//! time zone, and proration of short periods.

use crate::model::{Interval, InvoiceRecord, Plan, Timestamp, UnixMillis};
use crate::money::{Cents, round_ratio};
use chrono::{DateTime, Datelike, Days, Duration, Months, NaiveDate, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;

/// A plan's interval in months as the exact fraction `numerator / denominator`:
/// month -> n, year -> 12n, week -> 12n/52, day -> 12n/365.
#[inline]
pub(crate) fn interval_months(interval: Interval, count: u32) -> (i128, i128) {
    let n = i128::from(count.max(1));
    match interval {
        Interval::Month => (n, 1),
        Interval::Year => (12 * n, 1),
        Interval::Week => (12 * n, 52),
        Interval::Day => (12 * n, 365),
    }
}

/// `start` plus `count` plan intervals, by calendar arithmetic in `tz`
/// (a month added to Jan 31 is the last day of February); the end of time
/// past the calendar's end.
pub(crate) fn add_interval(
    start: DateTime<Utc>,
    interval: Interval,
    count: u32,
    tz: Tz,
) -> DateTime<Utc> {
    let count = count.max(1);
    let shift = |naive: NaiveDateTime| match interval {
        Interval::Month => naive.checked_add_months(Months::new(count)),
        Interval::Year => naive.checked_add_months(Months::new(count.checked_mul(12)?)),
        Interval::Week => naive.checked_add_signed(Duration::weeks(i64::from(count))),
        Interval::Day => naive.checked_add_signed(Duration::days(i64::from(count))),
    };
    if tz == Tz::UTC {
        return shift(start.naive_utc()).map_or(DateTime::<Utc>::MAX_UTC, |t| t.and_utc());
    }
    let Some(shifted) = shift(start.with_timezone(&tz).naive_local()) else {
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

/// A date plus `count` plan intervals by the calendar; `None` past the
/// calendar's end.
#[inline]
fn shift_date(date: NaiveDate, interval: Interval, count: u32) -> Option<NaiveDate> {
    let count = count.max(1);
    match interval {
        Interval::Month => add_months(date, count),
        Interval::Year => add_months(date, count.checked_mul(12)?),
        Interval::Week => date.checked_add_days(Days::new(7 * u64::from(count))),
        Interval::Day => date.checked_add_days(Days::new(u64::from(count))),
    }
}

/// `date` plus `months` calendar months, the day held at the last of the
/// month it lands in (Jan 31 plus a month is Feb 28 or 29); `None` past the
/// calendar's end. What chrono's `checked_add_months` gives, from the year,
/// month and day alone instead of a round trip through day counts.
#[inline]
fn add_months(date: NaiveDate, months: u32) -> Option<NaiveDate> {
    let month0 = i64::from(date.year()) * 12 + i64::from(date.month0()) + i64::from(months);
    let year = i32::try_from(month0.div_euclid(12)).ok()?;
    let month = month0.rem_euclid(12) as u32 + 1;
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days_in_month = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    NaiveDate::from_ymd_opt(year, month, date.day().min(days_in_month))
}

/// [`add_interval`] from a stored timestamp, as milliseconds with the local
/// day in `tz`. In UTC the stored date moves and the time of day stays, with
/// no calendar types in between (a leap second takes the general path, where
/// adding days drops it).
#[inline]
fn interval_end(
    start: Timestamp,
    interval: Interval,
    count: u32,
    tz: Tz,
) -> (UnixMillis, NaiveDate) {
    if tz == Tz::UTC {
        let (date, millis_of_day) = start.utc_date_and_millis();
        if millis_of_day < 86_400_000
            && let Some(date) = shift_date(date, interval, count)
        {
            return (UnixMillis::at_day(date, millis_of_day), date);
        }
    }
    let end = add_interval(start.instant(tz), interval, count, tz);
    (UnixMillis::floor(end), end.with_timezone(&tz).date_naive())
}

/// The service period an invoice pays for, with the plan interval's end for
/// proration, as milliseconds, and the local days its start and end fall on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ServicePeriod {
    /// `period_start`, else `invoice_date`.
    pub start: UnixMillis,
    /// `period_end` when given and after the start, else `nominal_end`.
    pub end: UnixMillis,
    /// One plan interval after `start`.
    pub nominal_end: UnixMillis,
    /// The local day `start` falls on.
    pub start_day: NaiveDate,
    /// The local day `end` falls on.
    pub end_day: NaiveDate,
}

/// The service period an invoice pays for: from `period_start` (else the
/// invoice date) to `period_end` when given and after the start, else one plan
/// interval later.
#[inline(always)]
pub(crate) fn service_period(invoice: &InvoiceRecord, plan: &Plan, tz: Tz) -> ServicePeriod {
    let effective = invoice.effective();
    let (start, start_day) = effective.millis_and_day(tz);
    let (nominal_end, nominal_end_day) =
        interval_end(effective, plan.billing_freq, plan.billing_freq_count, tz);
    let (end, end_day) = invoice
        .period_end
        .map(|end: Timestamp| end.millis_and_day(tz))
        .filter(|(end, _)| *end > start)
        .unwrap_or((nominal_end, nominal_end_day));
    ServicePeriod {
        start,
        end,
        nominal_end,
        start_day,
        end_day,
    }
}

/// The monthly recurring amount of a subscription invoice:
/// `round((amount - tax) / months)`, scaled up to the full interval when the
/// service period is shorter than the nominal one by more than a day
/// (a 15-day invoice of 1500 on a 30-day monthly plan is 3000 a month).
pub fn monthly_amount(invoice: &InvoiceRecord, plan: &Plan, tz: Tz) -> Cents {
    monthly_amount_over(invoice, plan, &service_period(invoice, plan, tz))
}

/// [`monthly_amount`] for an already computed service period.
#[inline(always)]
pub(crate) fn monthly_amount_over(
    invoice: &InvoiceRecord,
    plan: &Plan,
    period: &ServicePeriod,
) -> Cents {
    let net_cents = invoice.amount - invoice.tax_amount;
    let net = i128::from(net_cents);
    let (months_num, months_den) = interval_months(plan.billing_freq, plan.billing_freq_count);
    // Only a period_end can make the period differ from the nominal interval.
    if invoice.period_end.is_some() {
        // Whole seconds, truncated toward zero.
        let seconds = i128::from((period.end.0 - period.start.0) / 1000);
        let nominal = i128::from((period.nominal_end.0 - period.start.0) / 1000);
        if seconds > 0 && nominal - seconds > 86_400 {
            return round_ratio(net * nominal * months_den, seconds * months_num);
        }
    }
    if months_num == months_den {
        // A one-month plan: the amount is already monthly.
        return net_cents;
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

    fn invoice(extra: serde_json::Value) -> crate::model::Invoice {
        let mut v = json!({"id": "i", "customer_id": "c", "type": "subscription", "invoice_date": "2024-01-01",
                           "amount": 12000, "currency": "USD", "plan_id": "p"});
        for (k, val) in extra.as_object().unwrap() {
            v[k] = val.clone();
        }
        crate::model::Invoice::from_json(&v).unwrap()
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

    #[test]
    fn adding_months_holds_the_day_at_the_month_end() {
        let date = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
        assert_eq!(add_months(date(2024, 1, 31), 1), Some(date(2024, 2, 29)));
        assert_eq!(add_months(date(2023, 1, 31), 1), Some(date(2023, 2, 28)));
        assert_eq!(add_months(date(1899, 12, 31), 2), Some(date(1900, 2, 28)));
        assert_eq!(add_months(date(1999, 11, 30), 3), Some(date(2000, 2, 29)));
        assert_eq!(add_months(date(2024, 3, 31), 1), Some(date(2024, 4, 30)));
        assert_eq!(
            add_months(date(2024, 5, 15), 12 * 3),
            Some(date(2027, 5, 15))
        );
        assert_eq!(add_months(NaiveDate::MAX, 1), None);
    }

    #[test]
    fn a_leap_second_start_ends_where_adding_days_puts_it() {
        let leap = NaiveDate::from_ymd_opt(2016, 12, 31)
            .unwrap()
            .and_hms_milli_opt(23, 59, 59, 1_500)
            .unwrap()
            .and_utc();
        let start = Timestamp::from_instant(leap);
        for interval in [Interval::Week, Interval::Month] {
            let expected = add_interval(leap, interval, 1, Tz::UTC);
            assert_eq!(
                interval_end(start, interval, 1, Tz::UTC),
                (UnixMillis::floor(expected), expected.date_naive())
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn the_utc_shortcut_ends_where_calendar_arithmetic_does(
            days in 1i32..3_652_000,
            millis in proptest::option::of(0u32..86_400_000),
            interval in proptest::sample::select(vec![
                Interval::Month, Interval::Year, Interval::Week, Interval::Day,
            ]),
            count in proptest::prop_oneof![1u32..40, proptest::strategy::Just(u32::MAX / 6)],
        ) {
            let date = NaiveDate::from_num_days_from_ce_opt(days).unwrap();
            let start = match millis {
                Some(millis) => Timestamp::from_instant(
                    date.and_time(chrono::NaiveTime::MIN).and_utc()
                        + Duration::milliseconds(i64::from(millis)),
                ),
                None => Timestamp::from_date(date),
            };
            let expected = add_interval(start.instant(Tz::UTC), interval, count, Tz::UTC);
            let (end, day) = interval_end(start, interval, count, Tz::UTC);
            proptest::prop_assert_eq!(end, UnixMillis::floor(expected));
            proptest::prop_assert_eq!(day, expected.date_naive());
        }
    }
}
