//! Reports in parts: a report computed over a subset of customers as a
//! [`ReportPartial`], partials merged, and a merged partial finished into
//! the report a single ledger over all those customers answers.
//!
//! Customers are independent in the model: every report is a sum, a count
//! or a list over customers, plus arithmetic done once at the end. A
//! partial keeps exactly the sums, counts and lists (never raw records) and
//! [`ReportPartial::finish`] does the arithmetic, so that partials over
//! **disjoint** sets of customers, merged in any order and grouping, finish
//! into the very JSON [`Ledger::report`](crate::Ledger::report) gives over their union. Each
//! worker's ledger holds its customers with their invoices, and the same
//! plans, plan groups, settings and FX rates as every other worker.
//!
//! What each family keeps is documented beside its computation; amounts
//! stay in integer cents, summed exactly in 128 bits and checked into 64
//! bits only at finish, and every rate, share, average and median is
//! computed at finish from merged numerators, denominators and values.

mod format;
pub mod rows;

use super::answer::ReportAnswer;
use super::registry::Report;
use super::{ReportParams, cohort, event_parts, leads, mrr, snapshot, summary, variables};
use crate::derive::{CacheCell, Derived};
use crate::error::{Error, Result};
use crate::model::Settings;
use crate::store::Store;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One report computed over the customers of one ledger, ready to merge
/// with partials of the same request over other customers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportPartial {
    header: Header,
    body: Body,
}

/// The request a partial answers: partials merge only when all of it is
/// the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Header {
    report: String,
    params: ReportParams,
    as_of: DateTime<Utc>,
    /// The ledger settings as JSON text.
    settings: String,
}

/// What a report family keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum Body {
    Summary(summary::Part),
    Map(snapshot::MapPart),
    Concentration(snapshot::ConcentrationPart),
    CustomVariables(variables::VariablesPart),
    Series(mrr::Part),
    Cohort(cohort::Part),
    List(rows::ListPart),
    Sums(rows::SumsPart),
    Tallies(event_parts::Part),
    LeadDays(leads::DaysPart),
}

/// How a report is computed in parts: the partial of one ledger, and the
/// finished report of a merged partial. `finish` gets an empty ledger with
/// the partial's settings (for reading the shape of the request, never a
/// customer filter) and the request's parameters and `as_of`.
#[derive(Clone, Copy)]
pub struct Parts {
    pub(crate) compute: fn(&Derived<'_>, &ReportParams, DateTime<Utc>) -> Result<Body>,
    pub(crate) finish: fn(&Derived<'_>, &ReportParams, DateTime<Utc>, Body) -> Result<ReportAnswer>,
}

impl Body {
    fn merge(self, other: Body) -> Result<Body> {
        Ok(match (self, other) {
            (Body::Summary(a), Body::Summary(b)) => Body::Summary(a.merge(b)),
            (Body::Map(a), Body::Map(b)) => Body::Map(a.merge(b)),
            (Body::Concentration(a), Body::Concentration(b)) => Body::Concentration(a.merge(b)),
            (Body::CustomVariables(a), Body::CustomVariables(b)) => {
                Body::CustomVariables(a.merge(b))
            }
            (Body::Series(a), Body::Series(b)) => Body::Series(a.merge(b)),
            (Body::Cohort(a), Body::Cohort(b)) => Body::Cohort(a.merge(b)),
            (Body::List(a), Body::List(b)) => Body::List(a.merge(b)),
            (Body::Sums(a), Body::Sums(b)) => Body::Sums(a.merge(b)?),
            (Body::Tallies(a), Body::Tallies(b)) => Body::Tallies(a.merge(b)?),
            (Body::LeadDays(a), Body::LeadDays(b)) => Body::LeadDays(a.merge(b)?),
            (a, b) => {
                return Err(Error::MalformedPartial {
                    reason: format!(
                        "the bodies of one request are of two kinds ({} and {})",
                        a.kind(),
                        b.kind()
                    ),
                });
            }
        })
    }

    fn kind(&self) -> &'static str {
        match self {
            Body::Summary(_) => "summary",
            Body::Map(_) => "map",
            Body::Concentration(_) => "concentration",
            Body::CustomVariables(_) => "custom variables",
            Body::Series(_) => "series",
            Body::Cohort(_) => "cohort",
            Body::List(_) => "list",
            Body::Sums(_) => "sums",
            Body::Tallies(_) => "tallies",
            Body::LeadDays(_) => "lead days",
        }
    }
}

/// A body of the wrong kind for a report: only a corrupt partial has one.
pub(crate) fn wrong_body(report: &str, body: &Body) -> Error {
    Error::MalformedPartial {
        reason: format!(
            "report {report} cannot finish a partial of kind {}",
            body.kind()
        ),
    }
}

/// The report `name` over the customers of `ledger` as a partial, to merge
/// with partials of the same request over other customers. The name and
/// parameters are checked exactly as a report run checks them; a report
/// without a partial form is [`Error::PartialUnsupported`].
pub(crate) fn report_partial(
    ledger: &Derived<'_>,
    name: &str,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<ReportPartial> {
    let report = Report::find(name)?;
    report.check(params)?;
    let params = crate::query::days_of_instants(params, ledger.settings())?;
    let parts = parts_of(report)?;
    let body = (parts.compute)(ledger, &params, as_of).map_err(|e| e.in_report(report.name))?;
    Ok(ReportPartial {
        header: Header {
            report: report.name.to_string(),
            params: params.into_owned(),
            as_of,
            settings: settings_text(ledger.settings()),
        },
        body,
    })
}

fn parts_of(report: &Report) -> Result<Parts> {
    report.parts().ok_or_else(|| Error::PartialUnsupported {
        report: report.name.to_string(),
    })
}

fn settings_text(settings: &Settings) -> String {
    serde_json::to_string(settings).unwrap_or_default()
}

impl ReportPartial {
    /// The report this partial is of.
    pub fn report(&self) -> &str {
        &self.header.report
    }

    /// The union of two partials of the same request over disjoint sets of
    /// customers. Associative and commutative. Partials of different
    /// reports, parameters, `as_of` or settings are
    /// [`Error::PartialMismatch`] naming what differs.
    pub fn merge(self, other: ReportPartial) -> Result<ReportPartial> {
        let (a, b) = (&self.header, &other.header);
        let differ = |what: &'static str, left: String, right: String| {
            Err(Error::PartialMismatch { what, left, right })
        };
        if a.report != b.report {
            return differ("reports", a.report.clone(), b.report.clone());
        }
        if a.params != b.params {
            let text = |p: &ReportParams| serde_json::to_string(p).unwrap_or_default();
            return differ("parameters", text(&a.params), text(&b.params));
        }
        if a.as_of != b.as_of {
            return differ("as_of", a.as_of.to_rfc3339(), b.as_of.to_rfc3339());
        }
        if a.settings != b.settings {
            return differ("settings", a.settings.clone(), b.settings.clone());
        }
        Ok(ReportPartial {
            header: self.header,
            body: self.body.merge(other.body)?,
        })
    }

    /// Every partial of `partials` merged (see [`ReportPartial::merge`]);
    /// none at all is [`Error::MalformedPartial`].
    pub fn merge_all(partials: impl IntoIterator<Item = ReportPartial>) -> Result<ReportPartial> {
        let mut partials = partials.into_iter();
        let first = partials.next().ok_or_else(|| Error::MalformedPartial {
            reason: "there is none to merge".to_string(),
        })?;
        partials.try_fold(first, ReportPartial::merge)
    }

    /// The report of every customer the merged partials cover: the JSON
    /// [`Ledger::report`](crate::Ledger::report) answers over them.
    pub fn finish(self) -> Result<Value> {
        let report = Report::find(&self.header.report)?;
        let parts = parts_of(report)?;
        let settings = serde_json::from_str(&self.header.settings)
            .map_err(|e| e.to_string())
            .and_then(|json| Settings::from_json(&json).map_err(|e| e.to_string()))
            .map_err(|reason| Error::MalformedPartial {
                reason: format!("the settings do not read: {reason}"),
            })?;
        let store = Store::new(settings);
        let cache = CacheCell::default();
        let shape = Derived::new(&store, &cache);
        let (params, as_of) = (&self.header.params, self.header.as_of);
        let answer = (parts.finish)(&shape, params, as_of, self.body)
            .map_err(|e| e.in_report(report.name))?;
        Ok(answer.into_json())
    }
}
