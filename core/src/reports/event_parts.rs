//! The shared views of event reports, written once for every family
//! (leads, transactions, failed payments, refunds, payment attempts): a
//! series, summary or table ([`EventView`]) and a detail list
//! ([`detail_whole`]), each whole, as a partial and finished. In parts a
//! series, summary or table keeps one [`Tally`] per period (counts and
//! amounts in the report currency, which add up); a detail list keeps its
//! written rows ([`ListPart`]).

use super::ReportParams;
use super::answer::{Listing, NoHead, ReportAnswer};
use super::events::{
    Event, EventRequest, EventSource, Family, Reading, Span, Tally, selected_type,
};
use super::partial::rows::{KeyPart, ListPart, ListValue, Row, Scalar, TopRows};
use super::partial::{Body, wrong_body};
use crate::derive::Derived;
use crate::error::Result;
use chrono::{DateTime, Datelike, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

impl EventRequest<'_> {
    /// The detail rows (requires [`Span::Selected`]): the events of the
    /// selected period whose type is `kind` (every type when `None`), each
    /// written by `row`, as a list partial keyed by day (descending),
    /// customer id, event id and the event's place in this ledger's list
    /// (which orders only events of one customer, so the same in every
    /// partition). [`detail_answer`] reads them back as the list.
    pub fn detail_part<'e, T, R: ListValue>(
        &self,
        events: Vec<Event<'e, T>>,
        kind: Option<&str>,
        row: impl Fn(&Event<'e, T>) -> R,
    ) -> ListPart {
        let rows = events
            .iter()
            .enumerate()
            .filter(|(_, e)| self.detail_keeps(e, kind))
            .map(|(place, e)| {
                let key = vec![
                    KeyPart::new(Scalar::Int(e.date.num_days_from_ce().into()), true),
                    KeyPart::text(e.customer_id),
                    KeyPart::text(&*e.id),
                    KeyPart::int(place as i64),
                ];
                Row::new(key, row(e))
            })
            .collect();
        ListPart {
            found: Default::default(),
            rows: TopRows::new(rows, usize::MAX),
        }
    }

    /// Whether a detail of the events of type `kind` (every type when
    /// `None`) lists `event`: one of that type in the selected period.
    pub(crate) fn detail_keeps<T>(&self, event: &Event<'_, T>, kind: Option<&str>) -> bool {
        self.period_of(event.date).is_some() && kind.is_none_or(|k| event.kind == k)
    }

    /// The period tallies of a merged partial.
    pub(crate) fn tallies_of(&self, report: &str, body: Body) -> Result<Vec<Tally>> {
        match body {
            Body::Tallies(Part { tallies }) if tallies.len() == self.periods.len() => Ok(tallies),
            other => Err(wrong_body(report, &other)),
        }
    }
}

/// A detail list of rows `R`: `{result: {count, list}}`.
pub(crate) fn detail_answer<R>(part: ListPart) -> Result<ReportAnswer>
where
    R: ListValue + DeserializeOwned,
{
    Ok(Listing {
        head: NoHead,
        count: part.rows.count as usize,
        list: part.rows.into_page::<R>(0, usize::MAX)?,
    }
    .into())
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

/// One of the period views of an event family, each served whole, as a
/// partial of one ledger (the period tallies, which add up) and finished
/// from merged partials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventView {
    /// [`EventRequest::series_of`] over the `date` range.
    Series,
    /// [`EventRequest::summary_of`]: the current and the previous period.
    Summary,
    /// [`EventRequest::table_of`] over the `date` range.
    Table,
}

impl EventView {
    /// The periods the view covers.
    fn span(self) -> Span {
        match self {
            EventView::Summary => Span::CurrentAndPrevious,
            EventView::Series | EventView::Table => Span::Range,
        }
    }

    /// How the view of `family` reads its request.
    fn reading(self, family: &Family) -> Reading {
        Reading::of(self.span()).money_of(family)
    }

    fn render(
        self,
        request: &EventRequest<'_>,
        family: &Family,
        tallies: Vec<Tally>,
    ) -> Result<ReportAnswer> {
        match self {
            EventView::Series => request.series_of(family, tallies),
            EventView::Summary => request.summary_of(family, tallies),
            EventView::Table => request.table_of(family, tallies),
        }
    }

    /// The view of `family` over the events `source` finds in `ledger`.
    pub(crate) fn whole<'a>(
        self,
        ledger: &'a Derived<'a>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
        family: &Family,
        source: &impl EventSource<'a>,
    ) -> Result<ReportAnswer> {
        let request = EventRequest::read(ledger, params, as_of, self.reading(family))?;
        let tallies = request.tally_of(source)?;
        self.render(&request, family, tallies)
    }

    /// The period tallies of this ledger's events.
    pub(crate) fn partial<'a>(
        self,
        ledger: &'a Derived<'a>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
        family: &Family,
        source: &impl EventSource<'a>,
    ) -> Result<Body> {
        let request = EventRequest::read(ledger, params, as_of, self.reading(family))?;
        Ok(Body::Tallies(Part::of(request.tally_of(source)?)))
    }

    /// The view of merged tallies (`report` names the report in errors).
    pub(crate) fn finish(
        self,
        shape: &Derived<'_>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
        report: &str,
        family: &Family,
        body: Body,
    ) -> Result<ReportAnswer> {
        let request = EventRequest::read(shape, params, as_of, self.reading(family).shape())?;
        let tallies = request.tallies_of(report, body)?;
        self.render(&request, family, tallies)
    }
}

/// The `-detail` view of `family` over one selected period: `selected-date`
/// required, `selected-type` optional (every type); `row` writes an event.
pub(crate) fn detail_whole<'a, S: EventSource<'a>, R>(
    ledger: &'a Derived<'a>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    family: &Family,
    source: &S,
    row: impl Fn(&Event<'a, S::Source>) -> R,
) -> Result<ReportAnswer>
where
    R: ListValue + DeserializeOwned,
{
    detail_answer::<R>(detail_rows(
        ledger, params, as_of, family, ONE_PERIOD, source, row,
    )?)
}

/// The rows of [`detail_whole`] in this ledger, as a list partial.
pub(crate) fn detail_partial<'a, S: EventSource<'a>, R: ListValue>(
    ledger: &'a Derived<'a>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    family: &Family,
    source: &S,
    row: impl Fn(&Event<'a, S::Source>) -> R,
) -> Result<Body> {
    Ok(Body::List(detail_rows(
        ledger, params, as_of, family, ONE_PERIOD, source, row,
    )?))
}

/// Which selections a `-detail` report may leave out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Selection {
    /// Without `selected-date`: everything up to `as_of`, or the `date`
    /// range when given.
    pub date_optional: bool,
    /// Without `selected-type`: every type.
    pub type_optional: bool,
}

/// `selected-date` required, `selected-type` optional.
pub(crate) const ONE_PERIOD: Selection = Selection {
    date_optional: false,
    type_optional: true,
};

/// The rows of a `-detail` view in this ledger, as a list partial.
pub(crate) fn detail_rows<'a, S: EventSource<'a>, R: ListValue>(
    ledger: &'a Derived<'a>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    family: &Family,
    selection: Selection,
    source: &S,
    row: impl Fn(&Event<'a, S::Source>) -> R,
) -> Result<ListPart> {
    let span = Span::Selected;
    let request = EventRequest::read(
        ledger,
        params,
        as_of,
        Reading::of(span).selected_optional(selection.date_optional),
    )?;
    let kind = selected_type(params, family, selection.type_optional)?;
    let events = request.events_of(source, |event| request.detail_keeps(event, kind))?;
    Ok(request.detail_part(events, kind, row))
}

/// Checks a `-detail` request as [`detail_rows`] reads it, for finishing
/// merged rows (`shape` holds only the settings).
pub(crate) fn check_detail(
    shape: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    family: &Family,
    selection: Selection,
) -> Result<()> {
    let span = Span::Selected;
    EventRequest::read(
        shape,
        params,
        as_of,
        Reading::of(span)
            .selected_optional(selection.date_optional)
            .shape(),
    )?;
    selected_type(params, family, selection.type_optional)?;
    Ok(())
}

/// [`detail_whole`] of merged rows `R`: the request is checked as the
/// whole report checks it (`report` names the report in errors).
pub(crate) fn detail_finish<R>(
    shape: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    report: &str,
    family: &Family,
    body: Body,
) -> Result<ReportAnswer>
where
    R: ListValue + DeserializeOwned,
{
    check_detail(shape, params, as_of, family, ONE_PERIOD)?;
    match body {
        Body::List(part) => detail_answer::<R>(part),
        other => Err(wrong_body(report, &other)),
    }
}

/// The registry's three functions of one view of an event report: whole
/// (`$whole`), as a partial (`$partial`) and finished (`$finish`), the view
/// `$view` ([`EventView`]) of `$family` over the events of the source
/// `$events` ([`EventSource`]).
macro_rules! event_view {
    ($whole:ident, $partial:ident, $finish:ident, $name:literal, $view:expr, $family:expr, $events:expr) => {
        pub(super) fn $whole(
            ledger: &Derived<'_>,
            params: &ReportParams,
            as_of: DateTime<Utc>,
        ) -> Result<crate::reports::answer::ReportAnswer> {
            $view.whole(ledger, params, as_of, &$family, &$events)
        }

        pub(super) fn $partial(
            ledger: &Derived<'_>,
            params: &ReportParams,
            as_of: DateTime<Utc>,
        ) -> Result<crate::reports::partial::Body> {
            $view.partial(ledger, params, as_of, &$family, &$events)
        }

        pub(super) fn $finish(
            shape: &Derived<'_>,
            params: &ReportParams,
            as_of: DateTime<Utc>,
            body: crate::reports::partial::Body,
        ) -> Result<crate::reports::answer::ReportAnswer> {
            $view.finish(shape, params, as_of, $name, &$family, body)
        }
    };
}
pub(crate) use event_view;

/// The registry's three functions of an event report's `-detail` view
/// ([`detail_whole`], [`detail_partial`], [`detail_finish`]) of `$family`
/// over the events of `$events`, each written by `$row(ledger, event)` as a
/// `$row_type`.
macro_rules! event_detail {
    ($whole:ident, $partial:ident, $finish:ident, $name:literal, $family:expr, $events:expr, $row:expr, $row_type:ty) => {
        /// `selected-date` required; `selected-type` optional (every type).
        pub(super) fn $whole(
            ledger: &Derived<'_>,
            params: &ReportParams,
            as_of: DateTime<Utc>,
        ) -> Result<crate::reports::answer::ReportAnswer> {
            let row = |e: &_| $row(ledger, e);
            crate::reports::event_parts::detail_whole(
                ledger, params, as_of, &$family, &$events, row,
            )
        }

        pub(super) fn $partial(
            ledger: &Derived<'_>,
            params: &ReportParams,
            as_of: DateTime<Utc>,
        ) -> Result<crate::reports::partial::Body> {
            let row = |e: &_| $row(ledger, e);
            crate::reports::event_parts::detail_partial(
                ledger, params, as_of, &$family, &$events, row,
            )
        }

        pub(super) fn $finish(
            shape: &Derived<'_>,
            params: &ReportParams,
            as_of: DateTime<Utc>,
            body: crate::reports::partial::Body,
        ) -> Result<crate::reports::answer::ReportAnswer> {
            crate::reports::event_parts::detail_finish::<$row_type>(
                shape, params, as_of, $name, &$family, body,
            )
        }
    };
}
pub(crate) use event_detail;
