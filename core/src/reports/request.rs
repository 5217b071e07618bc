//! Shared report parameters read into types once, with the errors of
//! [`Query`]: an unusable value is `invalid_query` naming the parameter and
//! listing what it accepts.

use super::mrr::BREAKDOWNS;
use super::series::Conversion;
use crate::error::{Error, Result};
use crate::model::Settings;
use crate::money::Currency;
use crate::period::{DateRange, PeriodInterval};
use crate::query::Query;
use chrono::NaiveDate;

/// The parameters of a report over a series of periods (`mrr`, `cohort`,
/// `movement-table`): `date`, `interval`, `fix_fx`/`fx_date` and
/// `baseCurrency`, read in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SeriesRequest {
    /// `date`: by default the 365 days ending on the `as_of` day.
    pub range: DateRange,
    /// `interval`: by default months.
    pub interval: PeriodInterval,
    /// `baseCurrency`: by default the ledger's base currency.
    pub currency: Currency,
    /// `fix_fx` and `fx_date`: a fixed rate defaults to the range's start.
    pub conversion: Conversion,
}

impl SeriesRequest {
    /// Reads the series parameters; `as_of_day` ends the default range.
    pub(crate) fn read(q: &Query, settings: &Settings, as_of_day: NaiveDate) -> Result<Self> {
        let range = q.date_range(as_of_day)?;
        let interval = q.interval(PeriodInterval::Month)?;
        let conversion = conversion(q, range.start)?;
        Ok(SeriesRequest {
            range,
            interval,
            currency: q.base_currency(settings)?,
            conversion,
        })
    }
}

/// `fix_fx` and `fx_date` as a [`Conversion`]: daily rates unless
/// `fix_fx=true`, then the rate of `fx_date` (default `default_day`).
pub(crate) fn conversion(q: &Query, default_day: NaiveDate) -> Result<Conversion> {
    Ok(q.fixed_fx(default_day)?
        .map_or(Conversion::Daily, Conversion::Fixed))
}

/// The `breakdown` parameter: the key rows are grouped by (`mrr`,
/// `movement-table`, `churn-scheduled-movements`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Breakdown {
    Plan,
    Currency,
    BillingFreq,
    PricingModel,
    PaymentMethod,
    Subtype,
    Market,
    Country,
    Industry,
    Age,
    Size,
}

impl Breakdown {
    /// Every breakdown, in the order of [`BREAKDOWNS`].
    const ALL: [Breakdown; 11] = [
        Breakdown::Plan,
        Breakdown::Currency,
        Breakdown::BillingFreq,
        Breakdown::PricingModel,
        Breakdown::PaymentMethod,
        Breakdown::Subtype,
        Breakdown::Market,
        Breakdown::Country,
        Breakdown::Industry,
        Breakdown::Age,
        Breakdown::Size,
    ];

    /// The parameter's value naming this breakdown.
    pub(crate) fn as_str(self) -> &'static str {
        let at = Breakdown::ALL.iter().position(|b| *b == self).unwrap_or(0);
        BREAKDOWNS[at]
    }

    /// The query's `breakdown`: `None` without one; a value that is not a
    /// breakdown is `invalid_query` listing them.
    pub(crate) fn from_query(q: &Query) -> Result<Option<Breakdown>> {
        Ok(q.optional_choice("breakdown", BREAKDOWNS)?.map(|name| {
            let at = BREAKDOWNS.iter().position(|b| *b == name).unwrap_or(0);
            Breakdown::ALL[at]
        }))
    }

    /// The one group a list report keeps: `breakdown` names what to group
    /// by and `breakdown-value` the group (lower-cased), and neither means
    /// anything without the other, so either alone is `invalid_query`.
    pub(crate) fn group_from_query(q: &Query) -> Result<Option<(&'static str, String)>> {
        let breakdown = Breakdown::from_query(q)?.map(Breakdown::as_str);
        let wanted = q.text("breakdown-value").map(str::to_lowercase);
        match (breakdown, wanted) {
            (Some(key), Some(value)) => Ok(Some((key, value))),
            (None, None) => Ok(None),
            (Some(_), None) => Err(Error::query(
                "breakdown-value",
                "is required with `breakdown`: the group to list, a value of what `breakdown` names",
            )),
            (None, Some(_)) => Err(Error::query(
                "breakdown-value",
                "applies only with `breakdown`, which names what it is a value of",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reports::ReportParams;

    fn read(value: &str) -> Result<Option<Breakdown>> {
        let params = ReportParams::from([("breakdown".to_string(), value.to_string())]);
        Breakdown::from_query(&Query::new(&params))
    }

    #[test]
    fn breakdowns_are_read_once_into_their_kind() {
        assert_eq!(Breakdown::ALL.len(), BREAKDOWNS.len());
        for (kind, name) in Breakdown::ALL.iter().zip(BREAKDOWNS) {
            assert_eq!(kind.as_str(), *name);
            assert_eq!(read(name).unwrap(), Some(*kind));
        }
        assert_eq!(
            Breakdown::from_query(&Query::new(&ReportParams::new())).unwrap(),
            None
        );
        let error = read("colour").unwrap_err();
        assert_eq!(
            (error.code(), error.field()),
            ("invalid_query", Some("breakdown"))
        );
        assert!(
            error
                .to_string()
                .starts_with("parameter `breakdown`: `colour` is not one of plan, currency, "),
            "{error}"
        );
    }
}
