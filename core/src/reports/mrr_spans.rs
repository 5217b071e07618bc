//! The spans of days an mrr series reads: its periods, the whole periods
//! before them that the churn average reads, and the months LTV reads.

use super::mrr::Request;
use crate::period::{DateRange, Period, PeriodInterval, periods};
use chrono::{Months, NaiveDate};

/// The periods of a request: the report's, the 5 whole periods before them
/// (for the churn average; with the whole first period too when the range
/// starts inside it) and whole months from 5 months before the first
/// period's end (or `as_of`, when earlier) to the last period's end (for LTV
/// and customer lifetime).
pub(super) struct Spans {
    pub(super) main: Vec<Period>,
    pub(super) history_range: DateRange,
    pub(super) history: Vec<Period>,
    /// Whether the range starts inside its first period: the history then
    /// ends with that whole period, whose rate the churn average takes.
    pub(super) clipped: bool,
    pub(super) months_range: DateRange,
    pub(super) months: Vec<Period>,
}

impl Request<'_> {
    /// The spans the series of this request reads.
    pub(super) fn spans(&self) -> Spans {
        let week_start = self.ledger.settings().week_start();
        let main = periods(&self.range, self.interval, week_start);
        // The 5 whole periods before the range, for the churn average, and
        // the whole first period when the range starts inside it: the
        // average is of whole periods, whatever day the range starts on.
        let first_start = main.first().map_or(self.range.start, |p| p.start);
        let clipped = self.range.start > first_start;
        let mut history_start = first_start;
        for _ in 0..5 {
            history_start = self.interval.previous(history_start);
        }
        let history_range = DateRange {
            start: history_start,
            end: match main.first() {
                Some(first) if clipped => first.end,
                _ => first_start.pred_opt().unwrap_or(first_start),
            },
        };
        let history = periods(&history_range, self.interval, week_start);
        // Whole months from 5 months before the first period's end to the
        // last period's end, for LTV and customer lifetime; a period ends
        // there at `as_of` when it ends later.
        let month = |d: NaiveDate| PeriodInterval::Month.align(d, week_start);
        let first_end = main.first().map_or(self.range.end, |p| p.end);
        let first_end = first_end.min(self.as_of_day);
        let last_end = main.last().map_or(self.range.end, |p| p.end);
        let months_range = DateRange {
            start: month(first_end)
                .checked_sub_months(Months::new(5))
                .unwrap_or(first_end),
            end: last_end,
        };
        let months = periods(&months_range, PeriodInterval::Month, week_start);
        Spans {
            main,
            history_range,
            history,
            clipped,
            months_range,
            months,
        }
    }
}
