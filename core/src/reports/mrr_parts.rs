//! The mrr series in parts (`mrr`, `mrr-table`, `mrr-table-subtypes`):
//! each partition keeps the period stats of every group; finishing
//! assembles the series from the merged stats exactly as one ledger does.

use super::ReportParams;
use super::answer::ReportAnswer;
use super::mrr::{Groups, MrrSeries, Request, breakdown_param, merge_groups, mrr_answer};
use super::partial::{Body, wrong_body};
use crate::derive::Derived;
use crate::error::Result;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The mrr series' sums over a ledger's customers: the stats of every group
/// (the total and each breakdown entry with its label) per period of the
/// report, of the 5 periods before it and of the months the LTV reads.
/// Subtype entries keep only their own movement columns until finish.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Part {
    pub(super) main: Groups,
    pub(super) history: Groups,
    pub(super) months: Groups,
}

impl Part {
    pub(crate) fn merge(mut self, other: Part) -> Part {
        merge_groups(&mut self.main, other.main);
        merge_groups(&mut self.history, other.history);
        merge_groups(&mut self.months, other.months);
        self
    }
}

impl MrrSeries {
    /// The partial of a series (see [`Part`]).
    pub(super) fn partial(
        ledger: &Derived<'_>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
        breakdown: Option<&'static str>,
    ) -> Result<Body> {
        let request = Request::read(ledger, params, as_of, breakdown, true)?;
        Ok(Body::Series(request.part(&request.spans())?))
    }

    /// The series of a merged partial; `shape` is an empty ledger with the
    /// partial's settings.
    pub(super) fn finish(
        shape: &Derived<'_>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
        breakdown: Option<&'static str>,
        body: Body,
    ) -> Result<MrrSeries> {
        let Body::Series(part) = body else {
            return Err(wrong_body("mrr", &body));
        };
        let request = Request::read(shape, params, as_of, breakdown, false)?;
        Ok(request.assemble(&request.spans(), part))
    }
}

pub(super) fn mrr_partial(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Body> {
    MrrSeries::partial(ledger, params, as_of, breakdown_param(params)?)
}

pub(super) fn mrr_finish(
    shape: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    body: Body,
) -> Result<ReportAnswer> {
    let series = MrrSeries::finish(shape, params, as_of, breakdown_param(params)?, body)?;
    mrr_answer(&series)
}
