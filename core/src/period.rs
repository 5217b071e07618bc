//! Reporting periods: intervals aligned to calendar boundaries, date ranges,
//! and the list of periods a range covers.
//!
//! Weeks start on the ledger's first day of week, quarters are calendar
//! quarters. The first period is the one holding the range start; every
//! period's end is clipped to the range end.

use chrono::{Datelike, Months, NaiveDate, Weekday};

/// The length of a reporting period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PeriodInterval {
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

impl PeriodInterval {
    /// Every interval name, for error messages.
    pub const NAMES: [&'static str; 5] = ["day", "week", "month", "quarter", "year"];

    pub fn parse(name: &str) -> Option<PeriodInterval> {
        match name {
            "day" => Some(PeriodInterval::Day),
            "week" => Some(PeriodInterval::Week),
            "month" => Some(PeriodInterval::Month),
            "quarter" => Some(PeriodInterval::Quarter),
            "year" => Some(PeriodInterval::Year),
            _ => None,
        }
    }

    pub fn as_str(&self) -> &'static str {
        Self::NAMES[*self as usize]
    }

    /// The start of the period holding `date`.
    pub fn align(&self, date: NaiveDate, week_start: Weekday) -> NaiveDate {
        match self {
            PeriodInterval::Day => date,
            PeriodInterval::Week => {
                let back = (7 + date.weekday().num_days_from_monday()
                    - week_start.num_days_from_monday())
                    % 7;
                date - chrono::Days::new(u64::from(back))
            }
            PeriodInterval::Month => date.with_day(1).unwrap_or(date),
            PeriodInterval::Quarter => {
                let month = (date.month0() / 3) * 3 + 1;
                NaiveDate::from_ymd_opt(date.year(), month, 1).unwrap_or(date)
            }
            PeriodInterval::Year => NaiveDate::from_ymd_opt(date.year(), 1, 1).unwrap_or(date),
        }
    }

    /// The start of the period after the one starting at the aligned `start`.
    pub fn next(&self, start: NaiveDate) -> NaiveDate {
        let next = match self {
            PeriodInterval::Day => start.succ_opt(),
            PeriodInterval::Week => start.checked_add_days(chrono::Days::new(7)),
            PeriodInterval::Month => start.checked_add_months(Months::new(1)),
            PeriodInterval::Quarter => start.checked_add_months(Months::new(3)),
            PeriodInterval::Year => start.checked_add_months(Months::new(12)),
        };
        next.unwrap_or(NaiveDate::MAX)
    }

    /// The start of the period before the one starting at the aligned `start`.
    pub fn previous(&self, start: NaiveDate) -> NaiveDate {
        let previous = match self {
            PeriodInterval::Day => start.pred_opt(),
            PeriodInterval::Week => start.checked_sub_days(chrono::Days::new(7)),
            PeriodInterval::Month => start.checked_sub_months(Months::new(1)),
            PeriodInterval::Quarter => start.checked_sub_months(Months::new(3)),
            PeriodInterval::Year => start.checked_sub_months(Months::new(12)),
        };
        previous.unwrap_or(NaiveDate::MIN)
    }
}

/// An inclusive range of local days.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateRange {
    pub start: NaiveDate,
    pub end: NaiveDate,
}

impl DateRange {
    /// The default range: the 365 days ending on `last_day`.
    pub fn last_365_days(last_day: NaiveDate) -> DateRange {
        DateRange {
            start: last_day - chrono::Days::new(364),
            end: last_day,
        }
    }

    pub fn contains(&self, date: NaiveDate) -> bool {
        self.start <= date && date <= self.end
    }
}

/// One reporting period: `start` is aligned to the interval (it may precede
/// the range start for the first period); `end` is the last day, clipped to
/// the range end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    pub start: NaiveDate,
    pub end: NaiveDate,
}

impl Period {
    /// The first day of the period inside `range` (movements count from here).
    pub fn first_counted_day(&self, range: &DateRange) -> NaiveDate {
        self.start.max(range.start)
    }
}

/// The periods covering `range`, in order.
pub fn periods(range: &DateRange, interval: PeriodInterval, week_start: Weekday) -> Vec<Period> {
    let mut out = Vec::new();
    let mut start = interval.align(range.start, week_start);
    while start <= range.end {
        let next = interval.next(start);
        let end = next.pred_opt().unwrap_or(next).min(range.end);
        out.push(Period { start, end });
        if next <= start {
            break;
        }
        start = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> NaiveDate {
        text.parse().unwrap()
    }

    #[test]
    fn weeks_align_to_the_first_day_of_week() {
        // 2024-01-03 is a Wednesday.
        assert_eq!(
            PeriodInterval::Week.align(d("2024-01-03"), Weekday::Mon),
            d("2024-01-01")
        );
        assert_eq!(
            PeriodInterval::Week.align(d("2024-01-03"), Weekday::Sun),
            d("2023-12-31")
        );
        assert_eq!(
            PeriodInterval::Week.align(d("2024-01-03"), Weekday::Wed),
            d("2024-01-03")
        );
    }

    #[test]
    fn quarters_are_calendar_quarters() {
        assert_eq!(
            PeriodInterval::Quarter.align(d("2024-05-17"), Weekday::Mon),
            d("2024-04-01")
        );
        assert_eq!(
            PeriodInterval::Quarter.next(d("2024-10-01")),
            d("2025-01-01")
        );
    }

    #[test]
    fn the_first_period_holds_the_range_start_and_the_last_is_clipped() {
        let range = DateRange {
            start: d("2024-01-15"),
            end: d("2024-03-10"),
        };
        let list = periods(&range, PeriodInterval::Month, Weekday::Mon);
        assert_eq!(
            list,
            vec![
                Period {
                    start: d("2024-01-01"),
                    end: d("2024-01-31")
                },
                Period {
                    start: d("2024-02-01"),
                    end: d("2024-02-29")
                },
                Period {
                    start: d("2024-03-01"),
                    end: d("2024-03-10")
                },
            ]
        );
        assert_eq!(list[0].first_counted_day(&range), d("2024-01-15"));
    }

    #[test]
    fn the_default_range_is_365_days() {
        let range = DateRange::last_365_days(d("2024-12-31"));
        assert_eq!(range.start, d("2024-01-02"));
    }
}
