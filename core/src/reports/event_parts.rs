//! Event reports in parts: a series, summary or table keeps one [`Tally`]
//! per period (counts and amounts in the report currency, which add up);
//! a detail list keeps its written rows ([`ListPart`]).

use super::events::{Event, EventRequest, Tally};
use super::partial::rows::{KeyPart, ListPart, Row, Scalar, TopRows};
use super::partial::{Body, wrong_body};
use crate::error::Result;
use chrono::Datelike;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

impl EventRequest<'_> {
    /// The rows of [`EventRequest::detail`] as a list partial: keyed by
    /// day (descending), customer id, event id and the event's place in
    /// this ledger's list (which orders only events of one customer, so
    /// the same in every partition).
    pub fn detail_part<T>(
        &self,
        events: Vec<Event<T>>,
        kind: Option<&str>,
        row: impl Fn(&Event<T>) -> Value,
    ) -> ListPart {
        let rows = events
            .iter()
            .enumerate()
            .filter(|(_, e)| self.period_of(e.date).is_some() && kind.is_none_or(|k| e.kind == k))
            .map(|(place, e)| {
                let key = vec![
                    KeyPart::new(Scalar::Int(e.date.num_days_from_ce().into()), true),
                    KeyPart::text(e.customer_id.as_str()),
                    KeyPart::text(e.id.as_str()),
                    KeyPart::int(place as i64),
                ];
                Row::new(key, &row(e))
            })
            .collect();
        ListPart {
            found: Default::default(),
            rows: TopRows::new(rows, usize::MAX),
        }
    }

    /// The period tallies of a merged partial.
    pub(crate) fn tallies_of(&self, report: &str, body: Body) -> Result<Vec<Tally>> {
        match body {
            Body::Tallies(Part { tallies }) if tallies.len() == self.periods.len() => Ok(tallies),
            other => Err(wrong_body(report, &other)),
        }
    }
}

/// A detail list: `{result: {count, list}}`.
pub fn detail_value(part: &ListPart) -> Result<Value> {
    let list = part.rows.page(0, usize::MAX)?;
    Ok(json!({"result": {"count": part.rows.count, "list": list}}))
}

/// An event report's sums over a ledger's customers: one tally per period.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Part {
    tallies: Vec<Tally>,
}

impl Part {
    pub(crate) fn of(tallies: Vec<Tally>) -> Part {
        Part { tallies }
    }

    pub(crate) fn merge(mut self, other: Part) -> Result<Part> {
        if self.tallies.len() != other.tallies.len() {
            return Err(crate::error::Error::MalformedPartial {
                reason: format!(
                    "one partial has {} periods and the other {}",
                    self.tallies.len(),
                    other.tallies.len()
                ),
            });
        }
        for (into, from) in self.tallies.iter_mut().zip(other.tallies) {
            into.merge(from);
        }
        Ok(self)
    }
}

/// The partial and finish functions of an event report that is a series,
/// summary or table (`$view`: `series_of`, `summary_of`, `table_of`) of
/// `$family` over the events of `$events`, for the registry.
macro_rules! event_parts {
    ($partial:ident, $finish:ident, $name:literal, $span:expr, $family:expr, $events:expr, $view:ident) => {
        pub(super) fn $partial(
            ledger: &Derived<'_>,
            params: &ReportParams,
            as_of: DateTime<Utc>,
        ) -> Result<crate::reports::partial::Body> {
            let request = EventRequest::read(ledger, params, as_of, $span, false)?;
            let tallies = request.tally(&$events(&request)?);
            Ok(crate::reports::partial::Body::Tallies(
                crate::reports::event_parts::Part::of(tallies),
            ))
        }

        pub(super) fn $finish(
            shape: &Derived<'_>,
            params: &ReportParams,
            as_of: DateTime<Utc>,
            body: crate::reports::partial::Body,
        ) -> Result<Value> {
            let request = EventRequest::read_shape(shape, params, as_of, $span, false)?;
            let tallies = request.tallies_of($name, body)?;
            Ok(request.$view(&$family, tallies))
        }
    };
}
pub(crate) use event_parts;
