//! `leads`, `leads-summary`, `leads-table`, `leads-days`: the funnel from
//! lead to trial to paying customer, per period.
//!
//! A customer is a **lead** on its `created_date` (a customer record
//! without one became a lead when it first started a trial or paid); it
//! starts a **trial** on its first zero-amount subscription invoice (else
//! the record's `trial_started`); it **converts** on its first day with
//! MRR above 0 (else the record's `paid_started`). Each is counted in the
//! period holding its local day, and only once it has happened by `as_of`.
//!
//! Series fields per period: `leads`, `trials`, `conversions` (counts);
//! `lead_to_paid_rate` = 100 x leads of the period who have converted by
//! `as_of` / leads of the period, and `trial_to_paid_rate` = 100 x trials
//! started in the period that converted by `as_of` / trials of the period
//! (cohort rates: they follow each period's own leads and trials; `null`
//! when the period has none).
//!
//! `leads-days` gives, per period, how long conversions took, in whole
//! days between local dates: `lead_to_trial` for trials started in the
//! period, `trial_to_paid` and `lead_to_paid` for conversions in the
//! period, each as `<step>_days_avg`, `<step>_days_median` (mean of the
//! two middle values for an even count; both `null` when none) and
//! `<step>_count`. A step whose later date precedes the earlier counts 0
//! days.

use super::ReportParams;
use super::answer::{Head, ReportAnswer, Series};
use super::event_parts::{EventView, event_view};
use super::events::{
    Cells, Event, EventRequest, EventSource, Family, Figures, Metric, Reading, Span, Tally, percent,
};
use super::partial::{Body, wrong_body};
use crate::derive::Derived;
use crate::derive::timeline::Replay;
use crate::error::Result;
use crate::model::Customer;
use crate::money::Currency;
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

const LEADS: Family = Family {
    types: &[
        ("lead", "Leads"),
        ("trials", "Trials"),
        ("converted", "Conversions"),
    ],
    metrics: &[
        Metric::One("leads", "Leads"),
        Metric::One("trials", "Trials started"),
        Metric::One("conversions", "Conversions"),
        Metric::One("lead_to_paid_rate", "Lead-to-paid rate (%)"),
        Metric::One("trial_to_paid_rate", "Trial-to-paid rate (%)"),
    ],
    figures: lead_figures,
    money: false,
};

/// How every funnel report reads its request: a `date` range, no money.
const FUNNEL_RANGE: Reading = Reading::of(Span::Range).money_of(&LEADS);

/// Internal kinds: a lead (or trial) whose customer has converted by `as_of`.
const LEAD_CONVERTED: &str = "lead_converted";
const TRIAL_CONVERTED: &str = "trial_converted";

fn lead_figures(tally: &Tally) -> Figures {
    let leads = tally.count("lead");
    let trials = tally.count("trials");
    let mut row = Figures::default();
    row.set("leads", leads);
    row.set("trials", trials);
    row.set("conversions", tally.count("converted"));
    row.set(
        "lead_to_paid_rate",
        percent(tally.count(LEAD_CONVERTED), leads),
    );
    row.set(
        "trial_to_paid_rate",
        percent(tally.count(TRIAL_CONVERTED), trials),
    );
    row
}

/// A kept customer's funnel dates (local days), each only once it has
/// happened by `as_of`.
struct Funnel<'a> {
    customer_id: &'a str,
    lead: Option<NaiveDate>,
    trial: Option<NaiveDate>,
    paid: Option<NaiveDate>,
}

/// The funnel of every kept customer, in id order.
fn funnels<'a>(request: &EventRequest<'a>) -> Result<Vec<Funnel<'a>>> {
    request.gather_customers(true, |customer, replay, out| {
        out.push(funnel_of(request, customer, replay));
        Ok(())
    })
}

/// The funnel of `customer`, whose replay at `as_of` is `replay`.
fn funnel_of<'a>(
    request: &EventRequest<'a>,
    customer: &'a Customer,
    replay: Option<&Replay>,
) -> Funnel<'a> {
    let ledger = request.ledger;
    let tz = ledger.settings().timezone;
    let id = customer.id.as_str();
    let profile = match replay {
        Some(replay) => ledger.profile_of(id, replay),
        None => ledger.profile_of(id, &Replay::default()),
    };
    let day = |t: Option<DateTime<Utc>>| {
        t.filter(|t| request.happened(*t))
            .map(|t| t.with_timezone(&tz).date_naive())
    };
    let trial = day(profile.trial_started);
    let paid = day(profile.paid_started);
    let created = day(customer.created_date.map(|t| t.instant(tz)));
    let lead = created.or_else(|| trial.into_iter().chain(paid).min());
    Funnel {
        customer_id: id,
        lead,
        trial,
        paid,
    }
}

/// The funnel steps of each customer as events of their day.
struct LeadEvents;

impl<'a> EventSource<'a> for LeadEvents {
    type Source = ();
    const NEEDS_REPLAY: bool = true;

    fn customer_events(
        &self,
        request: &EventRequest<'a>,
        customer: &'a Customer,
        replay: Option<&Replay>,
        events: &mut Vec<Event<'a, ()>>,
    ) -> Result<()> {
        let funnel = funnel_of(request, customer, replay);
        let mut push = |date: Option<NaiveDate>, kind: &'static str| {
            if let Some(date) = date {
                events.push(Event {
                    date,
                    kind,
                    amount: 0,
                    currency: request.currency,
                    amount_base: 0,
                    customer_id: funnel.customer_id,
                    id: Cow::Borrowed(funnel.customer_id),
                    source: (),
                });
            }
        };
        push(funnel.lead, "lead");
        push(funnel.trial, "trials");
        push(funnel.paid, "converted");
        if funnel.paid.is_some() {
            push(funnel.lead, LEAD_CONVERTED);
            if funnel.trial.is_some_and(|t| funnel.paid >= Some(t)) {
                push(funnel.trial, TRIAL_CONVERTED);
            }
        }
        Ok(())
    }
}

event_view!(
    leads,
    leads_partial,
    leads_finish,
    "leads",
    EventView::Series,
    LEADS,
    LeadEvents
);
event_view!(
    leads_summary,
    leads_summary_partial,
    leads_summary_finish,
    "leads-summary",
    EventView::Summary,
    LEADS,
    LeadEvents
);
event_view!(
    leads_table,
    leads_table_partial,
    leads_table_finish,
    "leads-table",
    EventView::Table,
    LEADS,
    LeadEvents
);

/// The funnel steps of `leads-days`, each counted in the period of its
/// later date.
const STEPS: &[&str] = &["lead_to_trial", "trial_to_paid", "lead_to_paid"];

pub(super) fn leads_days(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<ReportAnswer> {
    let request = EventRequest::read(ledger, params, as_of, FUNNEL_RANGE)?;
    days_value(&request, days_part(&request)?)
}

/// `leads-days`' values over a ledger's customers: per period and step,
/// how many conversions took each number of days (the averages and
/// medians are computed at finish from the merged counts).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DaysPart {
    samples: Vec<Vec<BTreeMap<i64, u64>>>,
}

impl DaysPart {
    pub(crate) fn merge(mut self, other: DaysPart) -> Result<DaysPart> {
        if self.samples.len() != other.samples.len() {
            return Err(crate::error::Error::MalformedPartial {
                reason: format!(
                    "one partial has {} periods and the other {}",
                    self.samples.len(),
                    other.samples.len()
                ),
            });
        }
        for (into, from) in self.samples.iter_mut().zip(other.samples) {
            for (into, from) in into.iter_mut().zip(from) {
                for (days, count) in from {
                    *into.entry(days).or_insert(0) += count;
                }
            }
        }
        Ok(self)
    }
}

pub(super) fn leads_days_partial(
    ledger: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
) -> Result<Body> {
    let request = EventRequest::read(ledger, params, as_of, FUNNEL_RANGE)?;
    Ok(Body::LeadDays(days_part(&request)?))
}

pub(super) fn leads_days_finish(
    shape: &Derived<'_>,
    params: &ReportParams,
    as_of: DateTime<Utc>,
    body: Body,
) -> Result<ReportAnswer> {
    let request = EventRequest::read(shape, params, as_of, FUNNEL_RANGE.shape())?;
    match body {
        Body::LeadDays(part) if part.samples.len() == request.periods.len() => {
            days_value(&request, part)
        }
        other => Err(wrong_body("leads-days", &other)),
    }
}

fn days_part(request: &EventRequest) -> Result<DaysPart> {
    let mut samples = vec![vec![BTreeMap::<i64, u64>::new(); STEPS.len()]; request.periods.len()];
    for funnel in funnels(request)? {
        let steps = [
            (funnel.lead, funnel.trial),
            (funnel.trial, funnel.paid),
            (funnel.lead, funnel.paid),
        ];
        for (step, (from, to)) in steps.into_iter().enumerate() {
            if let (Some(from), Some(to)) = (from, to)
                && let Some(i) = request.period_of(to)
            {
                *samples[i][step]
                    .entry((to - from).num_days().max(0))
                    .or_insert(0) += 1;
            }
        }
    }
    Ok(DaysPart { samples })
}

/// A period of `leads-days`: per funnel step, the mean and median days
/// it took and how many took it.
#[derive(Serialize)]
struct DaysRow {
    date: NaiveDate,
    end_date: NaiveDate,
    #[serde(flatten)]
    steps: Cells,
}

/// The head of `leads-days`: only its interval (no money, no currency).
#[derive(Serialize)]
struct DaysHead {
    interval: &'static str,
}

impl Head for DaysHead {
    fn currency(&self) -> Option<Currency> {
        None
    }
}

fn days_value(request: &EventRequest, part: DaysPart) -> Result<ReportAnswer> {
    let mut samples: Vec<Vec<Vec<i64>>> = part
        .samples
        .into_iter()
        .map(|steps| {
            steps
                .into_iter()
                .map(|counts| {
                    counts
                        .into_iter()
                        .flat_map(|(days, n)| std::iter::repeat_n(days, n as usize))
                        .collect()
                })
                .collect()
        })
        .collect();
    let result = request
        .periods
        .iter()
        .zip(samples.iter_mut())
        .map(|(period, per_step)| {
            let mut steps = Figures::default();
            for (name, days) in STEPS.iter().zip(per_step.iter_mut()) {
                steps.set(format!("{name}_days_avg"), mean(days));
                steps.set(format!("{name}_days_median"), median(days));
                steps.set(format!("{name}_count"), days.len() as i64);
            }
            Ok(DaysRow {
                date: period.start,
                end_date: period.end,
                steps: steps.cells(|name| {
                    let (start, end) = (period.start, period.end);
                    format!("the `{name}` of the period {start} to {end}")
                })?,
            })
        })
        .collect::<Result<_>>()?;
    let head = DaysHead {
        interval: request.interval.as_str(),
    };
    Ok(Series { head, result }.into())
}

fn mean(values: &[i64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<i64>() as f64 / values.len() as f64)
}

/// The middle value (mean of the two middle values for an even count).
fn median(values: &mut [i64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    let mid = values.len() / 2;
    Some(if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) as f64 / 2.0
    } else {
        values[mid] as f64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&mut [5, 1, 3]), Some(3.0));
        assert_eq!(median(&mut [4, 1, 3, 10]), Some(3.5));
        assert_eq!(median(&mut []), None);
        assert_eq!(mean(&[1, 2]), Some(1.5));
    }
}
