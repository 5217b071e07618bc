//! The movement listing's request: which customer, which days, which kinds.

use super::param_names::{ReportParam, check_params, param};
use super::{ReportParams, parse_day};
use crate::derive::MovementKind;
use crate::error::{Error, Result};
use crate::ids::CustomerId;
use crate::model::{Settings, Timestamp};
use chrono::NaiveDate;

/// What the movement listing ([`MovementFilter::from_params`]) reads.
pub(crate) const MOVEMENT_LISTING: &[&[ReportParam]] = &[&[
    param("customer", "only this customer's movements (its id)"),
    param(
        "from",
        "the first day included (YYYY-MM-DD or yyyyMMdd, or an instant meaning its day in the ledger's time zone)",
    ),
    param("to", "the last day included (as from)"),
    param("start", "the same as from"),
    param("end", "the same as to"),
    param(
        "kinds",
        "the kinds kept, separated by spaces or commas: new, expansion, contraction, churn, reactivation",
    ),
]];

/// Which movements to return.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MovementFilter {
    /// Only this customer's movements (an unknown customer is an error).
    pub customer: Option<CustomerId>,
    /// First day included.
    pub from: Option<NaiveDate>,
    /// Last day included.
    pub to: Option<NaiveDate>,
    /// Kinds to keep; empty keeps all.
    pub kinds: Vec<MovementKind>,
}

impl MovementFilter {
    /// The filter from query-style parameters, the one reading shared by every
    /// interface: `customer`; `from` and `to` (first and last day included,
    /// `start` and `end` are accepted as aliases), each a date (`YYYY-MM-DD`
    /// or `yyyyMMdd`) or an ISO instant, which means its day in the ledger's
    /// time zone; `kinds` separated by spaces or commas. Any other name is
    /// refused, naming it and the ones the listing reads.
    pub fn from_params(params: &ReportParams, settings: &Settings) -> Result<MovementFilter> {
        check_params("movements", MOVEMENT_LISTING, params)?;
        let text = |name: &str| params.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
        // A bound by either of its names (never both), with the name given.
        let day = |name: &'static str, alias: &'static str| -> Result<Option<(&str, NaiveDate)>> {
            let (param, value) = match (text(name), text(alias)) {
                (Some(_), Some(_)) => {
                    return Err(Error::query(
                        alias,
                        format!("is another name for `{name}`; give one of them"),
                    ));
                }
                (Some(v), None) => (name, v),
                (None, Some(v)) => (alias, v),
                (None, None) => return Ok(None),
            };
            local_day(param, value, settings).map(|day| Some((param, day)))
        };
        let from = day("from", "start")?;
        let to = day("to", "end")?;
        if let (Some((from_name, first)), Some((to_name, last))) = (from, to)
            && last < first
        {
            return Err(Error::query(
                to_name,
                format!(
                    "{last} is before `{from_name}` ({first}): the range ends before it starts"
                ),
            ));
        }
        let mut kinds = Vec::new();
        for name in text("kinds")
            .into_iter()
            .flat_map(|v| v.split([' ', ',']))
            .filter(|k| !k.is_empty())
        {
            kinds.push(MovementKind::parse(name).ok_or_else(|| {
                Error::query(
                    "kinds",
                    format!(
                        "`{name}` is not one of {}",
                        MovementKind::ALL.map(|k| k.as_str()).join(", ")
                    ),
                )
            })?);
        }
        Ok(MovementFilter {
            customer: text("customer").map(|c| CustomerId::new(c.to_string())),
            from: from.map(|(_, day)| day),
            to: to.map(|(_, day)| day),
            kinds,
        })
    }
}

/// The day a parameter names: a date (`YYYY-MM-DD` or `yyyyMMdd`) as it is,
/// an ISO instant as its day in the ledger's time zone.
pub fn local_day(param: &str, text: &str, settings: &Settings) -> Result<NaiveDate> {
    let day = parse_day(text)
        .or_else(|| Timestamp::parse(text).map(|t| t.local_date(settings.timezone)))
        .ok_or_else(|| {
            Error::query(
                param,
                format!("`{text}` is not a date (YYYY-MM-DD) or an ISO 8601 instant"),
            )
        })?;
    super::within_years(param, text, day)
}

/// The report parameters that name one day.
const DAY_PARAMS: &[&str] = &["fx_date", "selected-date"];

/// `params` with each day parameter given as an ISO 8601 instant
/// (`fx_date=2024-01-01T12:00:00Z`) made its day in the ledger's time zone,
/// as the embedded ledgers read a datetime given there; a date is left as
/// it is. Borrowed when there is none to change.
pub(crate) fn days_of_instants<'p>(
    params: &'p ReportParams,
    settings: &Settings,
) -> Result<std::borrow::Cow<'p, ReportParams>> {
    let instants: Vec<(&str, &String)> = DAY_PARAMS
        .iter()
        .filter_map(|name| Some(*name).zip(params.get(*name)))
        .filter(|(_, value)| value.contains('T'))
        .collect();
    if instants.is_empty() {
        return Ok(std::borrow::Cow::Borrowed(params));
    }
    let mut days = params.clone();
    for (name, value) in instants {
        days.insert(
            name.to_string(),
            local_day(name, value, settings)?.to_string(),
        );
    }
    Ok(std::borrow::Cow::Owned(days))
}

#[cfg(test)]
mod filter_tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> ReportParams {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn reads_every_field_and_the_aliases() {
        let settings = Settings::default();
        let f = MovementFilter::from_params(
            &params(&[
                ("customer", "C1"),
                ("from", "2024-01-02"),
                ("end", "20240305"),
                ("kinds", "new, churn"),
            ]),
            &settings,
        )
        .unwrap();
        assert_eq!(f.customer, Some(CustomerId::new("C1".to_string())));
        assert_eq!(f.from, Some(d(2024, 1, 2)));
        assert_eq!(f.to, Some(d(2024, 3, 5)));
        assert_eq!(f.kinds, vec![MovementKind::New, MovementKind::Churn]);
        let f =
            MovementFilter::from_params(&params(&[("start", "2024-02-01")]), &settings).unwrap();
        assert_eq!(f.from, Some(d(2024, 2, 1)));
        assert_eq!(f.to, None);
        assert_eq!(
            MovementFilter::from_params(&ReportParams::new(), &settings).unwrap(),
            MovementFilter::default()
        );
    }

    #[test]
    fn an_instant_is_its_day_in_the_ledger_time_zone() {
        let settings = Settings {
            timezone: chrono_tz::Tz::Asia__Tokyo,
            ..Settings::default()
        };
        let f = MovementFilter::from_params(
            &params(&[
                ("from", "2024-01-31T10:00:00Z"),
                ("to", "2024-01-31T20:00:00Z"),
            ]),
            &settings,
        )
        .unwrap();
        assert_eq!(f.from, Some(d(2024, 1, 31)));
        assert_eq!(f.to, Some(d(2024, 2, 1)));
    }

    #[test]
    fn bad_values_name_the_parameter() {
        let settings = Settings::default();
        let e = MovementFilter::from_params(&params(&[("to", "soon")]), &settings).unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid_query", Some("to")));
        let e = MovementFilter::from_params(&params(&[("kinds", "new upsell")]), &settings)
            .unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid_query", Some("kinds")));
        assert!(e.to_string().contains("`upsell`"), "{e}");
    }

    #[test]
    fn a_range_that_ends_before_it_starts_or_a_bound_named_twice_is_refused() {
        let settings = Settings::default();
        let refused = |pairs: &[(&str, &str)]| {
            let e = MovementFilter::from_params(&params(pairs), &settings).unwrap_err();
            (e.field().map(str::to_string), e.to_string())
        };
        assert_eq!(
            refused(&[("start", "2024-03-01"), ("end", "2024-02-29")]),
            (
                Some("end".to_string()),
                "parameter `end`: 2024-02-29 is before `start` (2024-03-01): \
                 the range ends before it starts"
                    .to_string()
            )
        );
        assert_eq!(
            refused(&[("from", "2024-03-01"), ("start", "2024-01-01")]),
            (
                Some("start".to_string()),
                "parameter `start`: is another name for `from`; give one of them".to_string()
            )
        );
        assert_eq!(
            refused(&[("start", "0000-01-01")]),
            (
                Some("start".to_string()),
                "parameter `start`: `0000-01-01` is outside the years 1900 to 2200".to_string()
            )
        );
        // A range of one day is a range.
        let f = MovementFilter::from_params(
            &params(&[("from", "2024-03-01"), ("end", "2024-03-01")]),
            &settings,
        )
        .unwrap();
        assert_eq!((f.from, f.to), (Some(d(2024, 3, 1)), Some(d(2024, 3, 1))));
    }

    #[test]
    fn a_name_the_listing_does_not_read_is_refused() {
        let e = MovementFilter::from_params(&params(&[("kind", "new")]), &Settings::default())
            .unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid_query", Some("kind")));
        assert_eq!(
            e.to_string(),
            "parameter `kind`: report `movements` has no such parameter; did you mean `kinds`? \
             Its parameters: customer, from, to, start, end, kinds"
        );
    }
}
