//! The walk over an event report's customers: in id order, runs of them
//! on every core (`runs`), each customer's events found by the report's
//! [`EventSource`] and either kept (a detail) or tallied as they come (a
//! series, a summary, a table).

use super::{Event, EventRequest, Tally};
use crate::derive::timeline::Replay;
use crate::error::Result;
use crate::model::Customer;
use crate::reports::runs::{fold_runs, joined};
use rayon::prelude::*;

/// Where an event report's events come from, one customer at a time: a
/// series tallies each customer's as they are found, and only a detail
/// view keeps them.
pub(crate) trait EventSource<'a>: Sync {
    /// What an event's detail row is written from.
    type Source: Send;
    /// Whether [`EventSource::customer_events`] reads customers' replays.
    const NEEDS_REPLAY: bool;
    /// Pushes the events of `customer` (its replay at `as_of` when
    /// [`EventSource::NEEDS_REPLAY`]) onto `events`.
    fn customer_events(
        &self,
        request: &EventRequest<'a>,
        customer: &'a Customer,
        replay: Option<&Replay>,
        events: &mut Vec<Event<'a, Self::Source>>,
    ) -> Result<()>;
}

impl<'a> EventRequest<'a> {
    /// What `gather` finds of every customer the filters keep, in customer
    /// id order, each customer's items in the order it pushed them (see
    /// [`EventRequest::fold_customers`]).
    pub fn gather_customers<T: Send>(
        &self,
        needs_replay: bool,
        gather: impl Fn(&'a Customer, Option<&Replay>, &mut Vec<T>) -> Result<()> + Sync,
    ) -> Result<Vec<T>> {
        let runs = self.fold_customers(needs_replay, Vec::new, |found, customer, replay| {
            gather(customer, replay, found)
        })?;
        Ok(joined(runs))
    }

    /// Folds every customer the filters keep into an `A`, one `A` per run
    /// of customers in id order ([`fold_runs`]: on every core, the first
    /// error in id order answered); `visit` is given the customer's replay
    /// at `as_of` when `needs_replay` (`None` for a customer without
    /// subscription history, and for everyone when not needed).
    pub fn fold_customers<A: Send>(
        &self,
        needs_replay: bool,
        start: impl Fn() -> A + Sync,
        visit: impl Fn(&mut A, &'a Customer, Option<&Replay>) -> Result<()> + Sync,
    ) -> Result<Vec<A>> {
        // Replays cost a pass over every timeline: only when someone reads them.
        let replays = if needs_replay || !self.filter.is_empty() {
            Some(self.ledger.replays(self.as_of)?)
        } else {
            None
        };
        let mut customers: Vec<&'a Customer> = self.ledger.customers().collect();
        customers.par_sort_unstable_by(|a, b| a.id.cmp(&b.id));
        fold_runs(&customers, start, |folded, &customer| {
            let replay = replays
                .as_ref()
                .and_then(|r| r.get(&customer.id))
                .map(|r| &**r);
            if !self
                .filter
                .keeps(self.ledger, customer, replay, self.as_of, self.as_of_day)
            {
                return Ok(());
            }
            visit(folded, customer, replay)
        })
    }

    /// The events of `source` that `keep` keeps, customer by customer in
    /// id order; the others are dropped as each customer's are found.
    pub(crate) fn events_of<S: EventSource<'a>>(
        &self,
        source: &S,
        keep: impl Fn(&Event<'a, S::Source>) -> bool + Sync,
    ) -> Result<Vec<Event<'a, S::Source>>> {
        let start = || (Vec::new(), Vec::new());
        let runs =
            self.fold_customers(S::NEEDS_REPLAY, start, |(kept, found), customer, replay| {
                source.customer_events(self, customer, replay, found)?;
                kept.extend(found.drain(..).filter(|event| keep(event)));
                Ok(())
            })?;
        Ok(joined(runs.into_iter().map(|(kept, _)| kept).collect()))
    }

    /// One tally per period of the events of `source`, counted a customer
    /// at a time without keeping them.
    pub(crate) fn tally_of<S: EventSource<'a>>(&self, source: &S) -> Result<Vec<Tally>> {
        let start = || (vec![Tally::default(); self.periods.len()], Vec::new());
        let runs = self.fold_customers(
            S::NEEDS_REPLAY,
            start,
            |(tallies, events), customer, replay| {
                source.customer_events(self, customer, replay, events)?;
                self.tally_into(tallies, events);
                events.clear();
                Ok(())
            },
        )?;
        let mut total = vec![Tally::default(); self.periods.len()];
        for (tallies, _) in runs {
            for (into, from) in total.iter_mut().zip(tallies) {
                into.merge(from);
            }
        }
        Ok(total)
    }

    /// Adds `events` to the tallies of their periods.
    pub(super) fn tally_into<T>(&self, tallies: &mut [Tally], events: &[Event<'_, T>]) {
        for event in events {
            if let Some(i) = self.period_of(event.date) {
                tallies[i].add(event.kind, event.amount_base);
            }
        }
    }
}
