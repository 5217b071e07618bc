//! Period series of MRR: per period, the movements by type and the totals at
//! the period's start and end, for any selection of customers, in one
//! report currency.
//!
//! A customer's MRR per currency at the end of a day is the running sum of
//! its movements up to that day, so one pass over each customer's movements
//! gives every period at once. Totals convert each customer's MRR at the
//! boundary's date, movements at their own day (or everything at one fixed
//! date); what conversion leaves unexplained is the period's
//! `fx_adjustment`.

pub(crate) use crate::derive::PeriodStats;
use crate::derive::movements::{Movement, MovementKind, MovementSubtype};
use crate::error::Result;
use crate::fx::FxTable;
use crate::money::{Cents, Currency, Total};
use crate::period::{DateRange, Period};
use chrono::NaiveDate;

/// How amounts are converted into the report currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conversion {
    /// Movements at their day's rate, totals at the boundary's rate.
    Daily,
    /// Everything at the rate of one date (`fix_fx`).
    Fixed(NaiveDate),
}

/// What a series counts and in which currency.
pub struct SeriesSpec<'a> {
    pub range: DateRange,
    pub periods: &'a [Period],
    pub currency: Currency,
    pub conversion: Conversion,
    pub fx: &'a FxTable,
    /// Keep only amounts in these currencies (all when empty).
    pub currencies: &'a [Currency],
    /// Keep only these movement types in the movement columns (all when empty).
    pub kinds: &'a [MovementKind],
    /// Keep only these subtypes in the movement columns (all when empty).
    pub subtypes: &'a [MovementSubtype],
    /// The `as_of` day: totals of a boundary after it are measured (and
    /// converted) at it, never at a rate that does not exist yet.
    pub as_of_day: NaiveDate,
}

impl SeriesSpec<'_> {
    fn keeps_currency(&self, currency: Currency) -> bool {
        self.currencies.is_empty() || self.currencies.contains(&currency)
    }

    fn keeps_movement(&self, m: &Movement) -> bool {
        (self.kinds.is_empty() || self.kinds.contains(&m.kind))
            && (self.subtypes.is_empty() || self.subtypes.contains(&m.subtype))
    }

    /// The movement's amount in the report currency at its day's rate: the
    /// stored base amount when it is already what is asked, else converted.
    fn daily_amount(&self, m: &Movement, base: Currency) -> Result<Cents> {
        if self.currency == base {
            Ok(m.mrr_change_base_currency)
        } else {
            self.fx
                .convert(m.mrr_change, m.currency, self.currency, m.date)
        }
    }

    /// Adds one customer's contribution (its movements, sorted by date) to
    /// `stats` (one entry per period).
    pub fn add_customer(
        &self,
        movements: &[Movement],
        base: Currency,
        stats: &mut [PeriodStats],
    ) -> Result<()> {
        let day_before_range = self.range.start.pred_opt().unwrap_or(self.range.start);
        let mut running = Running::default();
        let mut next = 0;
        while let Some(m) = movements.get(next).filter(|m| m.date <= day_before_range) {
            if self.keeps_currency(m.currency) {
                running.add(self, m)?;
            }
            next += 1;
        }
        if next == movements.len() && running.is_zero() {
            // Nothing before the range left MRR and nothing happens in it.
            return Ok(());
        }
        let mut start_total = running.total(self, day_before_range.min(self.as_of_day))?;
        let mut start_active = running.active();
        for (period, entry) in self.periods.iter().zip(stats.iter_mut()) {
            let mut last_counted: Option<(NaiveDate, MovementKind)> = None;
            while let Some(m) = movements.get(next).filter(|m| m.date <= period.end) {
                next += 1;
                if !self.keeps_currency(m.currency) {
                    continue;
                }
                let amount = match running.add(self, m)? {
                    Some(fixed) => fixed,
                    None => self.daily_amount(m, base)?,
                };
                entry.all_movements += amount;
                if !self.keeps_movement(m) {
                    continue;
                }
                // A customer's rows of one day (one per currency) count once.
                let first_of_day = last_counted != Some((m.date, m.kind));
                last_counted = Some((m.date, m.kind));
                let customers = i64::from(first_of_day);
                entry.customers_diff += i64::from(m.customer_count_change);
                match m.kind {
                    MovementKind::New => {
                        entry.new += amount;
                        entry.new_customers += customers;
                    }
                    MovementKind::Expansion => {
                        entry.expansion += amount;
                        entry.expansion_customers += customers;
                    }
                    MovementKind::Contraction => {
                        entry.contraction += amount;
                        entry.contraction_customers += customers;
                    }
                    MovementKind::Churn => {
                        entry.churn += amount;
                        entry.churn_customers += customers;
                    }
                    MovementKind::Reactivation => {
                        entry.reactivation += amount;
                        entry.reactivation_customers += customers;
                    }
                }
            }
            let end_total = running.total(self, period.end.min(self.as_of_day))?;
            let end_active = running.active();
            entry.start_mrr += start_total;
            entry.total_mrr += end_total;
            entry.start_customers += i64::from(start_active);
            entry.total_customers += i64::from(end_active);
            entry.churned += i64::from(start_active && !end_active);
            start_total = end_total;
            start_active = end_active;
        }
        Ok(())
    }
}

/// One customer's MRR per currency so far and, with a fixed rate, what it
/// converts to. A movement's amount at a fixed rate is the change of that
/// converted MRR, not the movement converted on its own: the movements then
/// add up to the converted totals exactly (`fix_fx` leaves no FX adjustment),
/// and a customer who leaves leaves nothing (two payments of 1000 GBP at
/// 0.7 are 1429 and 1428, the 2000 GBP of MRR 2857). The MRR of one
/// currency is what the replay held on the day, which fits 64-bit cents.
#[derive(Default)]
pub(super) struct Running {
    /// (currency, MRR in that currency, that MRR at the fixed rate)
    amounts: Vec<(Currency, Cents, Cents)>,
}

impl Running {
    /// Adds `m`: with a fixed rate, its amount in the report currency.
    fn add(&mut self, spec: &SeriesSpec, m: &Movement) -> Result<Option<Cents>> {
        match spec.conversion {
            Conversion::Fixed(date) => self.add_fixed(spec.fx, m, spec.currency, date).map(Some),
            Conversion::Daily => {
                self.slot(m.currency).1 += m.mrr_change;
                Ok(None)
            }
        }
    }

    /// Adds `m` and answers its amount in `to` at the rate of `date`: the
    /// change of the customer's MRR in its currency converted at that rate.
    pub(super) fn add_fixed(
        &mut self,
        fx: &FxTable,
        m: &Movement,
        to: Currency,
        date: NaiveDate,
    ) -> Result<Cents> {
        let (_, amount, converted) = self.slot(m.currency);
        *amount += m.mrr_change;
        let now = fx.convert(*amount, m.currency, to, date)?;
        let change = (Total::from(now) - Total::from(*converted)).cents(|| {
            format!(
                "the change of {} of {} in {to} at the rates of {date}",
                m.customer_id, m.currency
            )
        })?;
        *converted = now;
        Ok(change)
    }

    fn slot(&mut self, currency: Currency) -> &mut (Currency, Cents, Cents) {
        let at = match self.amounts.iter().position(|(c, _, _)| *c == currency) {
            Some(at) => at,
            None => {
                self.amounts.push((currency, 0, 0));
                self.amounts.len() - 1
            }
        };
        &mut self.amounts[at]
    }

    /// Whether every amount, converted or not, is zero: the totals are 0.
    fn is_zero(&self) -> bool {
        self.amounts
            .iter()
            .all(|(_, amount, converted)| *amount == 0 && *converted == 0)
    }

    fn active(&self) -> bool {
        self.amounts.iter().any(|(_, amount, _)| *amount > 0)
    }

    /// The MRR at the end of `date` in the report currency.
    fn total(&self, spec: &SeriesSpec, date: NaiveDate) -> Result<Total> {
        self.amounts
            .iter()
            .try_fold(Total::ZERO, |sum, (currency, amount, converted)| {
                Ok(sum
                    + Total::from(match spec.conversion {
                        Conversion::Fixed(_) => *converted,
                        Conversion::Daily => {
                            spec.fx.convert(*amount, *currency, spec.currency, date)?
                        }
                    }))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::movements::MovementSubtype;
    use crate::ids::CustomerId;
    use crate::period::{PeriodInterval, periods};

    fn d(text: &str) -> NaiveDate {
        text.parse().unwrap()
    }

    fn t(cents: Cents) -> Total {
        Total::from(cents)
    }

    fn movement(date: &str, kind: MovementKind, change: Cents, count: i32) -> Movement {
        let subtype = match kind {
            MovementKind::New => MovementSubtype::New,
            MovementKind::Expansion => MovementSubtype::Expansion,
            MovementKind::Contraction => MovementSubtype::Contraction,
            MovementKind::Churn => MovementSubtype::Lapse,
            MovementKind::Reactivation => MovementSubtype::Reactivation,
        };
        Movement {
            date: d(date),
            customer_id: CustomerId::new("A".to_string()),
            kind,
            subtype,
            mrr_change: change,
            mrr_change_base_currency: change,
            customer_count_change: count,
            quantity_change: 0,
            currency: Currency::parse("USD").unwrap(),
            plans_before: Default::default(),
            plans_after: Default::default(),
        }
    }

    /// A USD series converting daily, with no currency or subtype filter.
    fn usd_spec<'a>(
        range: DateRange,
        periods: &'a [Period],
        fx: &'a FxTable,
        kinds: &'a [MovementKind],
        as_of_day: NaiveDate,
    ) -> SeriesSpec<'a> {
        SeriesSpec {
            range,
            periods,
            currency: Currency::parse("USD").unwrap(),
            conversion: Conversion::Daily,
            fx,
            currencies: &[],
            kinds,
            subtypes: &[],
            as_of_day,
        }
    }

    #[test]
    fn totals_are_running_sums_and_churned_counts_start_customers_lost() {
        let range = DateRange {
            start: d("2024-01-15"),
            end: d("2024-03-31"),
        };
        let list = periods(&range, PeriodInterval::Month, chrono::Weekday::Mon);
        let fx = FxTable::new(Currency::parse("USD").unwrap());
        let spec = usd_spec(range, &list, &fx, &[], d("2024-12-31"));
        let movements = vec![
            movement("2024-01-01", MovementKind::New, 3000, 1),
            movement("2024-02-01", MovementKind::Expansion, 2000, 0),
            movement("2024-03-01", MovementKind::Churn, -5000, -1),
        ];
        let mut stats = vec![PeriodStats::default(); 3];
        let usd = Currency::parse("USD").unwrap();
        spec.add_customer(&movements, usd, &mut stats).unwrap();
        // The Jan 1 movement precedes the range: it is in the start total only.
        assert_eq!(
            (stats[0].start_mrr, stats[0].new, stats[0].total_mrr),
            (t(3000), t(0), t(3000))
        );
        assert_eq!((stats[1].expansion, stats[1].total_mrr), (t(2000), t(5000)));
        assert_eq!(
            (stats[2].churn, stats[2].total_mrr, stats[2].churned),
            (t(-5000), t(0), 1)
        );
        assert!(stats.iter().all(|s| s.fx_adjustment() == t(0)));
    }
    #[test]
    fn a_movement_filter_narrows_the_columns_but_leaves_no_fx_adjustment() {
        let range = DateRange {
            start: d("2024-01-01"),
            end: d("2024-02-29"),
        };
        let list = periods(&range, PeriodInterval::Month, chrono::Weekday::Mon);
        let usd = Currency::parse("USD").unwrap();
        let fx = FxTable::new(usd);
        let spec = usd_spec(range, &list, &fx, &[MovementKind::Churn], d("2024-12-31"));
        let movements = vec![
            movement("2024-01-10", MovementKind::New, 3000, 1),
            movement("2024-02-10", MovementKind::Churn, -3000, -1),
        ];
        let mut stats = vec![PeriodStats::default(); 2];
        spec.add_customer(&movements, usd, &mut stats).unwrap();
        assert_eq!((stats[0].new, stats[0].total_mrr), (t(0), t(3000)));
        assert_eq!((stats[1].churn, stats[1].total_mrr), (t(-3000), t(0)));
        assert!(stats.iter().all(|s| s.fx_adjustment() == t(0)));
    }
    #[test]
    fn a_period_ending_after_as_of_converts_its_total_at_as_of() {
        let range = DateRange {
            start: d("2024-03-01"),
            end: d("2024-03-31"),
        };
        let list = periods(&range, PeriodInterval::Month, chrono::Weekday::Mon);
        let usd = Currency::parse("USD").unwrap();
        let eur = Currency::parse("EUR").unwrap();
        let mut fx = FxTable::new(usd);
        fx.insert([
            crate::fx::FxRate::on(d("2024-01-01"), eur, rust_decimal::Decimal::new(8, 1)),
            crate::fx::FxRate::on(d("2024-03-20"), eur, rust_decimal::Decimal::new(5, 1)),
        ]);
        let spec = usd_spec(range, &list, &fx, &[], d("2024-03-15"));
        let mut new = movement("2024-01-10", MovementKind::New, 2000, 1);
        new.currency = eur;
        new.mrr_change_base_currency = 2500;
        let mut stats = vec![PeriodStats::default(); 1];
        spec.add_customer(&[new], usd, &mut stats).unwrap();
        // 2000 EUR at the as_of rate 0.8, not at the later 0.5.
        assert_eq!((stats[0].start_mrr, stats[0].total_mrr), (t(2500), t(2500)));
        assert_eq!(stats[0].fx_adjustment(), t(0));
    }
}
