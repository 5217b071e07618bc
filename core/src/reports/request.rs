//! Shared report parameters read into types once, with the errors of
//! [`Query`]: an unusable value is `invalid_query` naming the parameter and
//! listing what it accepts.

use super::mrr::BREAKDOWNS;
use crate::error::Result;
use crate::query::Query;

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
        if q.text("breakdown").is_none() {
            return Ok(None);
        }
        let name = q.choice("breakdown", BREAKDOWNS, "plan")?;
        let at = BREAKDOWNS.iter().position(|b| *b == name).unwrap_or(0);
        Ok(Some(Breakdown::ALL[at]))
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
