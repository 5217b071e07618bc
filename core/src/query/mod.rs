//! Requests: typed reading of report query parameters (the strings of an
//! HTTP query), the customer filters reports share ([`filters`]), the
//! movement listing's filter, and the names parameters go by with the
//! check that refuses a name a report or view does not read.
//!
//! Which parameters a report takes is the report registry's (a layer up):
//! it refuses any other before the report runs. A parameter with a value that cannot be used is an
//! [`Error::InvalidQuery`] naming the parameter and what it accepts.

pub(crate) mod filters;
mod movement_filter;
mod param_names;
mod request;

pub(crate) use movement_filter::{MOVEMENT_LISTING, days_of_instants};
pub use movement_filter::{MovementFilter, local_day};
pub(crate) use param_names::{EMPTY_VALUE, check_names, check_params, param};
pub use param_names::{ReportParam, near_miss};
pub(crate) use request::{ListDefaults, ListRequest, Page, Sorting};

use crate::error::{Error, Result};
use crate::model::{Settings, Timestamp};
use crate::money::Currency;
use crate::period::{DateRange, PeriodInterval};
use chrono::{Datelike, Months, NaiveDate};
use std::collections::BTreeMap;

/// Query parameters of a report, as strings (the HTTP query string).
pub type ReportParams = BTreeMap<String, String>;

/// The items of a multi-value parameter: separated by spaces or commas; an
/// item holding either (a customer id `acme corp`, an industry `Real
/// Estate`) is written in double quotes, a quote inside it doubled, as in
/// CSV (`"acme corp",beta`). A quote that never closes is read as text.
/// Empty items are passed over.
pub fn list_items(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        if rest.is_empty() {
            return items;
        }
        let (item, after) = match quoted_item(rest) {
            Some(quoted) => quoted,
            None => {
                let end = rest.find([' ', ',']).unwrap_or(rest.len());
                (rest[..end].to_string(), &rest[end..])
            }
        };
        if !item.is_empty() {
            items.push(item);
        }
        rest = after;
    }
}

/// The text of a multi-value parameter holding `items`, as [`list_items`]
/// reads it back: space-separated, an item holding a space or comma, or
/// starting with a quote, in double quotes with its quotes doubled.
pub fn list_text<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let written: Vec<String> = items
        .into_iter()
        .map(|item| {
            let item = item.as_ref();
            if item.contains([' ', ',']) || item.starts_with('"') {
                format!("\"{}\"", item.replace('"', "\"\""))
            } else {
                item.to_string()
            }
        })
        .collect();
    written.join(" ")
}

/// The quoted item `text` starts with and the text after it, when it
/// starts with a quote that closes.
fn quoted_item(text: &str) -> Option<(String, &str)> {
    let mut inside = text.strip_prefix('"')?;
    let mut item = String::new();
    loop {
        let close = inside.find('"')?;
        item.push_str(&inside[..close]);
        inside = &inside[close + 1..];
        match inside.strip_prefix('"') {
            Some(after) => {
                item.push('"');
                inside = after;
            }
            None => return Some((item, inside)),
        }
    }
}

/// The longest `date` range, in days (about 27 years): it bounds the number
/// of periods any report computes.
pub const MAX_RANGE_DAYS: i64 = 10_000;

/// Sort direction of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Asc,
    Desc,
}

/// A view over report parameters with typed getters.
pub struct Query<'a> {
    params: &'a ReportParams,
}

impl<'a> Query<'a> {
    pub fn new(params: &'a ReportParams) -> Query<'a> {
        Query { params }
    }

    /// A parameter's text, trimmed; `None` when absent or empty. Every
    /// getter reads through here.
    pub fn text(&self, name: &str) -> Option<&'a str> {
        #[cfg(test)]
        READS.with(|reads| reads.borrow_mut().insert(name.to_string()));
        self.params
            .get(name)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }

    /// A multi-value parameter: values separated by spaces (or commas), see
    /// [`list_items`].
    pub fn list(&self, name: &str) -> Vec<String> {
        self.text(name).map(list_items).unwrap_or_default()
    }

    /// A multi-value parameter whose values must be among `accepted`.
    pub fn choices(&self, name: &str, accepted: &[&str]) -> Result<Vec<String>> {
        let values = self.list(name);
        for value in &values {
            if !accepted.contains(&value.as_str()) {
                return Err(Error::query(
                    name,
                    format!("`{value}` is not one of {}", accepted.join(", ")),
                ));
            }
        }
        Ok(values)
    }

    /// A single value among `accepted`, or `default`.
    pub fn choice(
        &self,
        name: &str,
        accepted: &[&'static str],
        default: &'static str,
    ) -> Result<&'static str> {
        match self.text(name) {
            None => Ok(default),
            Some(value) => accepted
                .iter()
                .copied()
                .find(|a| *a == value)
                .ok_or_else(|| {
                    Error::query(
                        name,
                        format!("`{value}` is not one of {}", accepted.join(", ")),
                    )
                }),
        }
    }

    /// A boolean: `true`/`false` (also `1`/`0`, `yes`/`no`), default false.
    pub fn flag(&self, name: &str) -> Result<bool> {
        match self.text(name).map(str::to_ascii_lowercase).as_deref() {
            None | Some("false") | Some("0") | Some("no") => Ok(false),
            Some("true") | Some("1") | Some("yes") => Ok(true),
            Some(other) => Err(Error::query(
                name,
                format!("`{other}` is not a boolean (true or false)"),
            )),
        }
    }

    /// A non-negative integer, or `default`; at most `max` when given.
    pub fn count(&self, name: &str, default: usize, max: Option<usize>) -> Result<usize> {
        let Some(text) = self.text(name) else {
            return Ok(default);
        };
        let value: usize = text.parse().map_err(|_| {
            Error::query(name, format!("`{text}` is not a whole number of 0 or more"))
        })?;
        Ok(max.map_or(value, |m| value.min(m)))
    }

    /// A date as `yyyyMMdd` or `YYYY-MM-DD`, in the years records may name.
    pub fn date(&self, name: &str) -> Result<Option<NaiveDate>> {
        self.text(name)
            .map(|text| {
                let day = parse_day(text).ok_or_else(|| {
                    Error::query(
                        name,
                        format!("`{text}` is not a date (yyyyMMdd or YYYY-MM-DD)"),
                    )
                })?;
                within_years(name, text, day)
            })
            .transpose()
    }

    /// The reporting interval (`interval`), default `default`.
    pub fn interval(&self, default: PeriodInterval) -> Result<PeriodInterval> {
        match self.text("interval") {
            None => Ok(default),
            Some(text) => PeriodInterval::parse(text).ok_or_else(|| {
                Error::query(
                    "interval",
                    format!(
                        "`{text}` is not one of {}",
                        PeriodInterval::NAMES.join(", ")
                    ),
                )
            }),
        }
    }

    /// The report currency: `baseCurrency`, else the ledger's base currency.
    pub fn base_currency(&self, settings: &Settings) -> Result<Currency> {
        match self.text("baseCurrency") {
            None => Ok(settings.base_currency),
            Some(code) => Currency::parse(code).ok_or_else(|| {
                Error::query(
                    "baseCurrency",
                    format!("`{code}` is not a three-letter currency code"),
                )
            }),
        }
    }

    /// The `date` range: `yyyyMMdd-yyyyMMdd` (inclusive), a shortcut
    /// `last-N-days|weeks|months|quarters|years` (ending on `today`), or by
    /// default the 365 days ending on `today`.
    pub fn date_range(&self, today: NaiveDate) -> Result<DateRange> {
        let Some(text) = self.text("date") else {
            return Ok(DateRange::last_365_days(today));
        };
        let bad = || {
            Error::query(
                "date",
                format!(
                    "`{text}` is not a range yyyyMMdd-yyyyMMdd or a shortcut like last-12-months (days, weeks, months, quarters, years)"
                ),
            )
        };
        if let Some(rest) = text.strip_prefix("last-") {
            let (count, unit) = rest.split_once('-').ok_or_else(bad)?;
            let count: u32 = count.parse().map_err(|_| bad())?;
            if count == 0 {
                return Err(bad());
            }
            let start = match unit {
                "days" | "day" => today.checked_sub_days(chrono::Days::new(u64::from(count) - 1)),
                "weeks" | "week" => {
                    today.checked_sub_days(chrono::Days::new(u64::from(count) * 7 - 1))
                }
                "months" | "month" => first_of_month_back(today, count - 1),
                "quarters" | "quarter" => {
                    first_of_month_back(today, (count - 1) * 3 + today.month0() % 3)
                }
                "years" | "year" => first_of_month_back(today, (count - 1) * 12 + today.month0()),
                _ => return Err(bad()),
            }
            .ok_or_else(bad)?;
            return bounded(text, DateRange { start, end: today });
        }
        let (from, to) = text.split_once('-').ok_or_else(bad)?;
        let start = within_years("date", text, parse_compact(from).ok_or_else(bad)?)?;
        let end = within_years("date", text, parse_compact(to).ok_or_else(bad)?)?;
        if end < start {
            return Err(Error::query(
                "date",
                format!("`{text}`: the range ends before it starts"),
            ));
        }
        bounded(text, DateRange { start, end })
    }

    /// `order`: asc or desc, default `default`.
    pub fn order(&self, default: Order) -> Result<Order> {
        Ok(
            match self.choice(
                "order",
                &["asc", "desc"],
                if default == Order::Asc { "asc" } else { "desc" },
            )? {
                "asc" => Order::Asc,
                _ => Order::Desc,
            },
        )
    }
}

#[cfg(test)]
thread_local! {
    /// The parameter names read on this thread (tests compare them with the
    /// report registry).
    static READS: std::cell::RefCell<std::collections::BTreeSet<String>> =
        std::cell::RefCell::default();
}

/// Parameters from name and value pairs.
#[cfg(test)]
pub(crate) fn params(pairs: &[(&str, &str)]) -> ReportParams {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Runs `work` and returns its result with the parameter names it read.
#[cfg(test)]
pub(crate) fn recorded_reads<T>(
    work: impl FnOnce() -> T,
) -> (T, std::collections::BTreeSet<String>) {
    READS.with(|reads| reads.borrow_mut().clear());
    let result = work();
    (
        result,
        READS.with(|reads| std::mem::take(&mut *reads.borrow_mut())),
    )
}

/// The range, unless it spans more than [`MAX_RANGE_DAYS`].
fn bounded(text: &str, range: DateRange) -> Result<DateRange> {
    if (range.end - range.start).num_days() >= MAX_RANGE_DAYS {
        return Err(Error::query(
            "date",
            format!("`{text}`: a range spans at most {MAX_RANGE_DAYS} days"),
        ));
    }
    Ok(range)
}

/// `day`, read from the parameter `param`'s `text`, when it falls in the
/// years records and `as_of` may name ([`Timestamp::YEARS`]): a day
/// beyond them is a slip (`0000`, `99991231`), refused naming the parameter.
pub(crate) fn within_years(param: &str, text: &str, day: NaiveDate) -> Result<NaiveDate> {
    if Timestamp::YEARS.contains(&day.year()) {
        return Ok(day);
    }
    Err(Error::query(
        param,
        format!(
            "`{text}` is outside the years {} to {}",
            Timestamp::YEARS.start(),
            Timestamp::YEARS.end()
        ),
    ))
}

/// `yyyyMMdd`.
fn parse_compact(text: &str) -> Option<NaiveDate> {
    if text.len() != 8 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    NaiveDate::parse_from_str(text, "%Y%m%d").ok()
}

/// `yyyyMMdd` or `YYYY-MM-DD`.
pub fn parse_day(text: &str) -> Option<NaiveDate> {
    parse_compact(text).or_else(|| NaiveDate::parse_from_str(text, "%Y-%m-%d").ok())
}

/// The first day of the month `months` before `today`'s month.
fn first_of_month_back(today: NaiveDate, months: u32) -> Option<NaiveDate> {
    today.with_day(1)?.checked_sub_months(Months::new(months))
}

#[cfg(test)]
mod tests {
    #[test]
    fn list_items_and_their_text_read_back() {
        use super::{list_items, list_text};
        assert_eq!(list_items(" a, b  c,"), ["a", "b", "c"]);
        assert_eq!(list_items("\"acme corp\",beta"), ["acme corp", "beta"]);
        assert_eq!(list_items("\"say \"\"hi\"\"\" x"), ["say \"hi\"", "x"]);
        assert_eq!(list_items("\"open"), ["\"open"]);
        assert_eq!(list_items("\"\" ,"), Vec::<String>::new());
        let items = ["acme corp", "a,b", "\"q", "plain", "say\"hi"];
        assert_eq!(
            list_text(items),
            "\"acme corp\" \"a,b\" \"\"\"q\" plain say\"hi"
        );
        assert_eq!(list_items(&list_text(items)), items);
    }

    use super::*;

    fn d(text: &str) -> NaiveDate {
        text.parse().unwrap()
    }

    #[test]
    fn ranges_parse_inclusive_and_shortcuts_end_today() {
        let p = params(&[("date", "20240101-20240331")]);
        let range = Query::new(&p).date_range(d("2024-06-01")).unwrap();
        assert_eq!((range.start, range.end), (d("2024-01-01"), d("2024-03-31")));
        let p = params(&[("date", "last-3-months")]);
        let range = Query::new(&p).date_range(d("2024-06-15")).unwrap();
        assert_eq!((range.start, range.end), (d("2024-04-01"), d("2024-06-15")));
    }

    #[test]
    fn bad_values_name_the_parameter_and_what_it_accepts() {
        let p = params(&[("date", "2024"), ("interval", "hour"), ("fix_fx", "maybe")]);
        let q = Query::new(&p);
        assert!(
            q.date_range(d("2024-06-01"))
                .unwrap_err()
                .to_string()
                .contains("`date`")
        );
        let err = q.interval(PeriodInterval::Month).unwrap_err().to_string();
        assert_eq!(
            err,
            "parameter `interval`: `hour` is not one of day, week, month, quarter, year"
        );
        assert!(q.flag("fix_fx").unwrap_err().to_string().contains("fix_fx"));
    }

    #[test]
    fn reversed_and_huge_ranges_are_rejected() {
        let p = params(&[("date", "20240301-20240101")]);
        assert!(Query::new(&p).date_range(d("2024-06-01")).is_err());
        let p = params(&[("date", "19000101-22001231")]);
        let err = Query::new(&p)
            .date_range(d("2024-06-01"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "parameter `date`: `19000101-22001231`: a range spans at most 10000 days"
        );
        let p = params(&[("date", "last-20000-days")]);
        assert!(Query::new(&p).date_range(d("2024-06-01")).is_err());
    }
}
