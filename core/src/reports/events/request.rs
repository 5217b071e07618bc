//! Reading an event report's request: the periods it covers (`date`,
//! `interval`, `selected-date`), the report currency and conversion, the
//! customer filter and the `currency` filter, each once.

use super::Family;
use crate::derive::Derived;
use crate::error::{Error, Result};
use crate::money::{Cents, Currency};
use crate::period::{DateRange, Period, PeriodInterval, periods};
use crate::query::Query;
use crate::query::filters::{CustomerFilter, currency_filter};
use crate::reports::ReportParams;
use crate::reports::request::conversion;
use crate::reports::series::Conversion;
use chrono::{DateTime, NaiveDate, Utc};

/// What [`EventRequest::read`] reads besides `date` and `interval` (which
/// [`Span::AsOf`] does not read): the
/// periods, whether `selected-date` may be absent, whether the customer
/// filter is read (not when finishing a partial, whose customers were
/// filtered where it was computed) and whether the money parameters are.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    span: Span,
    selected_optional: bool,
    filters: bool,
    money: bool,
}

impl Reading {
    /// The periods of `span`, with every customer filter and the money
    /// parameters; `selected-date` required for [`Span::Selected`].
    pub const fn of(span: Span) -> Reading {
        Reading {
            span,
            selected_optional: false,
            filters: true,
            money: true,
        }
    }

    /// Without `selected-date`, one period: the `date` range when given,
    /// else everything up to `as_of`.
    pub const fn selected_optional(self, optional: bool) -> Reading {
        Reading {
            selected_optional: optional,
            ..self
        }
    }

    /// For events of `family`: without amounts (the funnel), no
    /// `baseCurrency`, `fix_fx`, `fx_date` or `currency` is read (giving one
    /// is the registry's unknown-parameter error); the report currency is
    /// then the account's base currency and no event is converted.
    pub const fn money_of(self, family: &Family) -> Reading {
        Reading {
            money: family.money,
            ..self
        }
    }

    /// Without the customer filter: the shape of a request, for finishing
    /// a partial (read from an empty ledger with the partial's settings).
    pub const fn shape(self) -> Reading {
        Reading {
            filters: false,
            ..self
        }
    }
}

/// Which periods a request covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// The periods of the `date` range (default the 365 days to `as_of`).
    Range,
    /// The period before the one holding `as_of`, and that one up to `as_of`.
    CurrentAndPrevious,
    /// The one period holding `selected-date` (a detail report).
    Selected,
    /// The `as_of` day alone, for what stands at `as_of` (what is owed):
    /// no `date` or `interval` is read, and amounts convert on that day
    /// (no `fix_fx` or `fx_date` is read either).
    AsOf,
}

/// The parameters every event report shares, read once.
pub struct EventRequest<'a> {
    pub ledger: &'a Derived<'a>,
    pub as_of: DateTime<Utc>,
    pub as_of_day: NaiveDate,
    pub currency: Currency,
    pub interval: PeriodInterval,
    pub range: DateRange,
    pub periods: Vec<Period>,
    pub conversion: Conversion,
    pub filter: CustomerFilter,
    /// Amount currencies kept (all when empty).
    pub currencies: Vec<Currency>,
}

impl<'a> EventRequest<'a> {
    /// Reads the shared parameters: `date`, `interval`, and as `reading`
    /// says `baseCurrency`, `fix_fx`, `fx_date`, `currency`, every customer
    /// filter and `selected-date`.
    pub fn read(
        ledger: &'a Derived<'a>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
        reading: Reading,
    ) -> Result<EventRequest<'a>> {
        let Reading {
            span,
            selected_optional,
            filters,
            money,
        } = reading;
        let q = Query::new(params);
        let settings = ledger.settings();
        let week_start = settings.week_start();
        let as_of_day = as_of.with_timezone(&settings.timezone).date_naive();
        let interval = match span {
            Span::AsOf => PeriodInterval::Day,
            _ => q.interval(PeriodInterval::Month)?,
        };
        let (range, list) = match span {
            Span::AsOf => {
                let range = DateRange {
                    start: as_of_day,
                    end: as_of_day,
                };
                (range, periods(&range, interval, week_start))
            }
            Span::Range => {
                let range = q.date_range(as_of_day)?;
                (range, periods(&range, interval, week_start))
            }
            Span::CurrentAndPrevious => {
                let current = interval.align(as_of_day, week_start);
                let range = DateRange {
                    start: interval.previous(current),
                    end: as_of_day,
                };
                (range, periods(&range, interval, week_start))
            }
            Span::Selected => match q.date("selected-date")? {
                Some(day) => {
                    let start = interval.align(day, week_start);
                    let end = interval.next(start).pred_opt().unwrap_or(start);
                    (DateRange { start, end }, vec![Period { start, end }])
                }
                None if selected_optional => {
                    // Everything up to `as_of`, or the `date` range when given.
                    let range = match q.text("date") {
                        Some(_) => q.date_range(as_of_day)?,
                        None => DateRange {
                            start: NaiveDate::MIN,
                            end: as_of_day,
                        },
                    };
                    (
                        range,
                        vec![Period {
                            start: range.start,
                            end: range.end,
                        }],
                    )
                }
                None => {
                    return Err(Error::query(
                        "selected-date",
                        "is required (the start of the period to list, YYYY-MM-DD)",
                    ));
                }
            },
        };
        let (conversion, currency) = match (money, span) {
            (false, _) => (Conversion::Daily, settings.base_currency),
            (true, Span::AsOf) => (Conversion::Daily, q.base_currency(settings)?),
            (true, _) => (conversion(&q, range.start)?, q.base_currency(settings)?),
        };
        Ok(EventRequest {
            ledger,
            as_of,
            as_of_day,
            currency,
            interval,
            range,
            periods: list,
            conversion,
            filter: if filters {
                CustomerFilter::from_params(ledger, params)?
            } else {
                CustomerFilter::default()
            },
            currencies: if money {
                currency_filter(params)?
            } else {
                Vec::new()
            },
        })
    }

    /// Whether an amount in `currency` passes the `currency` filter.
    pub fn keeps_currency(&self, currency: Currency) -> bool {
        self.currencies.is_empty() || self.currencies.contains(&currency)
    }

    /// Whether an event at `instant` has happened by `as_of`.
    pub fn happened(&self, instant: DateTime<Utc>) -> bool {
        instant <= self.as_of
    }

    /// `amount` in `from` on `date`, in the report currency.
    pub fn convert(&self, amount: Cents, from: Currency, date: NaiveDate) -> Result<Cents> {
        let date = match self.conversion {
            Conversion::Daily => date,
            Conversion::Fixed(fixed) => fixed,
        };
        self.ledger.fx().convert(amount, from, self.currency, date)
    }

    /// The index of the period holding `date` inside the range.
    pub fn period_of(&self, date: NaiveDate) -> Option<usize> {
        if !self.range.contains(date) {
            return None;
        }
        let i = self.periods.partition_point(|p| p.end < date);
        (i < self.periods.len() && self.periods[i].start <= date).then_some(i)
    }
}
