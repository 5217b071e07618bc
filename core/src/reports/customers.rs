//! The analytics customer views: the list behind `GET /customers` and the
//! detail behind `GET /customers/{id}`.
//!
//! `mrr` and `converted_mrr` are in `baseCurrency` (default the ledger's)
//! at the latest rate at or before `as_of`; `currency` is the customer's own
//! billing currency. `status` filters by the lifecycle status at `as_of`
//! (`active` by default; `all` keeps everyone). `selected-date` with
//! `selected-type` keeps customers whose creation (`lead`; without a created
//! date, the first trial or payment, as in the leads report), trial start
//! (`trials`) or first payment (`converted`) falls in the `interval` period
//! holding that date. The list is sorted by MRR, highest first, unless
//! `sort`/`order` say otherwise; ties break by id.

use super::ReportParams;
use super::answer::{Listing, NoHead, ReportAnswer};
use super::params::{CUSTOMER_DETAIL, CUSTOMER_LIST};
use crate::derive::timeline::Replay;
use crate::derive::{CurrentSubscription, CustomerProfile, CustomerStatus, Derived};
use crate::error::{Error, Result};
use crate::ids::CustomerId;
use crate::model::{CustomVariables, Customer, InvoiceType};
use crate::money::{Cents, Currency, Total};
use crate::period::PeriodInterval;
use crate::query::check_params;
use crate::query::filters::CustomerFilter;
use crate::query::{ListDefaults, ListRequest, Order, Page, Query, Sorting};
use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use serde::Serialize;
use serde_json::Value;
use std::cmp::Ordering;

/// Default and largest page size of the customer list.
pub const DEFAULT_LIMIT: usize = 200;
pub const MAX_LIMIT: usize = 10_000;

const SORTS: &[&str] = &[
    "mrr",
    "created_date",
    "country",
    "paid_started",
    "cancel_date",
    "trial_started",
    "status",
    "name",
    "id",
];

/// `sort`, `order` and the page: highest MRR first, [`DEFAULT_LIMIT`] rows.
const LIST: ListDefaults = ListDefaults {
    sorts: SORTS,
    sort: "mrr",
    order: Order::Desc,
    limit: DEFAULT_LIMIT,
    max_limit: Some(MAX_LIMIT),
};

/// What the customer list and detail show of a customer: its record's
/// fields, its lifecycle instants (RFC 3339, seconds) and status at
/// `as_of`, and its billing currency.
#[derive(Serialize)]
struct CustomerView {
    id: CustomerId,
    name: String,
    email: Option<String>,
    created_date: Option<String>,
    country: Option<String>,
    trial_started: Option<String>,
    paid_started: Option<String>,
    cancel_date: Option<String>,
    status: CustomerStatus,
    currency: Currency,
}

/// A row of the customer list: the view and the MRR in the list's
/// currency.
#[derive(Serialize)]
struct CustomerRow {
    #[serde(flatten)]
    view: CustomerView,
    mrr: Cents,
}

/// The customer detail: the view, the paying subscriptions, the MRR in the
/// requested currency and the custom variables.
#[derive(Serialize)]
struct CustomerDetail<'a> {
    #[serde(flatten)]
    view: CustomerView,
    current_subscriptions: Vec<CurrentSubscription>,
    converted_mrr: Cents,
    converted_currency: Currency,
    custom_variables: &'a CustomVariables,
}

/// One customer with what the views show.
struct Entry<'a> {
    customer: &'a Customer,
    profile: CustomerProfile,
    mrr: Cents,
}

impl Derived<'_> {
    /// The analytics customer list (`GET /customers`).
    pub(crate) fn analytics_customers(
        &self,
        params: &ReportParams,
        as_of: DateTime<Utc>,
    ) -> Result<Value> {
        check_params("customers", CUSTOMER_LIST, params)?;
        let params = &*crate::query::days_of_instants(params, self.settings())?;
        let q = Query::new(params);
        let settings = self.settings();
        let tz = settings.timezone;
        let as_of_day = as_of.with_timezone(&tz).date_naive();
        let currency = q.base_currency(settings)?;
        let status = q.status("active")?;
        let search = q.text("q").map(str::to_lowercase);
        let customer_currencies: Vec<Currency> = crate::query::filters::currency_filter(params)?;
        // `status` here is the list's own filter; the shared filter must not
        // read it again.
        let mut shared = params.clone();
        shared.remove("status");
        let filter = CustomerFilter::from_params(self, &shared)?;
        let selection = match q.date("selected-date")? {
            // Without a period to select in, these would change nothing.
            None => match ["selected-type", "interval"]
                .into_iter()
                .find(|name| q.text(name).is_some())
            {
                Some(name) => return Err(Error::query(name, "applies only with `selected-date`")),
                None => None,
            },
            Some(date) => {
                let interval = q.interval(PeriodInterval::Month)?;
                let kind = q.choice("selected-type", &["lead", "trials", "converted"], "lead")?;
                let start = interval.align(date, settings.week_start());
                Some((kind, start, interval.next(start)))
            }
        };
        let ListRequest {
            sorting: Sorting { by: sort, order },
            page: Page { limit, offset },
        } = ListRequest::read(&q, &LIST)?;

        let replays = self.replays(as_of)?;
        let empty = Replay::default();
        let mut entries = Vec::new();
        for customer in self.customers() {
            let replay = replays.get(&customer.id).map(|r| &**r);
            let profile = self.profile_of(customer.id.as_str(), replay.unwrap_or(&empty));
            if status.is_some_and(|wanted| profile.status != wanted) {
                continue;
            }
            if let Some(text) = &search
                && ![
                    Some(&*customer.name),
                    customer.email.as_deref(),
                    Some(customer.id.as_str()),
                ]
                .into_iter()
                .flatten()
                .any(|field| field.to_lowercase().contains(text))
            {
                continue;
            }
            if !customer_currencies.is_empty()
                && !customer_currencies.contains(&billing_currency(self, customer, &profile, as_of))
            {
                continue;
            }
            if !filter.keeps(self, customer, replay, as_of, as_of_day) {
                continue;
            }
            if let Some((kind, start, end)) = selection {
                let moment = match kind {
                    // As in the leads report: a record without a creation
                    // date is a lead from its first trial or payment.
                    "lead" => customer.created_date.map(|t| t.instant(tz)).or_else(|| {
                        profile
                            .trial_started
                            .into_iter()
                            .chain(profile.paid_started)
                            .min()
                    }),
                    "trials" => profile.trial_started,
                    _ => profile.paid_started,
                };
                let day = moment.map(|t| t.with_timezone(&tz).date_naive());
                if !day.is_some_and(|d| d >= start && d < end) {
                    continue;
                }
            }
            let mrr = self.converted(customer, &profile, currency, as_of_day)?;
            entries.push(Entry {
                customer,
                profile,
                mrr,
            });
        }
        entries.sort_by(|a, b| {
            let primary = compare(sort, a, b, tz);
            let primary = if order == Order::Desc {
                primary.reverse()
            } else {
                primary
            };
            primary.then_with(|| a.customer.id.cmp(&b.customer.id))
        });
        let list = entries
            .iter()
            .skip(offset)
            .take(limit)
            .map(|e| CustomerRow {
                view: self.customer_view(e.customer, &e.profile, as_of),
                mrr: e.mrr,
            })
            .collect();
        let answer = Listing {
            head: NoHead,
            count: entries.len(),
            list,
        };
        Ok(ReportAnswer::from(answer).into_json())
    }

    /// The analytics detail of one customer (`GET /customers/{id}`).
    pub(crate) fn analytics_customer(
        &self,
        id: &str,
        params: &ReportParams,
        as_of: DateTime<Utc>,
    ) -> Result<Value> {
        // The request's own errors come before what the data answers it.
        check_params("customer", CUSTOMER_DETAIL, params)?;
        let customer = self.customer(id).ok_or_else(|| Error::NotFound {
            kind: Customer::KIND,
            id: id.to_string(),
        })?;
        let q = Query::new(params);
        let settings = self.settings();
        let currency = q.base_currency(settings)?;
        let as_of_day = as_of.with_timezone(&settings.timezone).date_naive();
        let replay = self.replay(id, as_of)?;
        let profile = self.profile_of(id, &replay);
        let detail = CustomerDetail {
            view: self.customer_view(customer, &profile, as_of),
            current_subscriptions: self.paying_subscriptions(&replay),
            converted_mrr: self.converted(customer, &profile, currency, as_of_day)?,
            converted_currency: currency,
            custom_variables: &customer.custom_variables,
        };
        Ok(serde_json::to_value(detail).expect("a customer's detail has text keys"))
    }

    /// The fields the list and the detail share.
    fn customer_view(
        &self,
        customer: &Customer,
        profile: &CustomerProfile,
        as_of: DateTime<Utc>,
    ) -> CustomerView {
        let stamp =
            |t: Option<DateTime<Utc>>| t.map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true));
        let tz = self.settings().timezone;
        CustomerView {
            id: customer.id.clone(),
            name: customer.name.to_string(),
            email: customer.email.as_deref().map(str::to_string),
            created_date: stamp(customer.created_date.map(|t| t.instant(tz))),
            country: customer.country.as_deref().map(str::to_string),
            trial_started: stamp(profile.trial_started),
            paid_started: stamp(profile.paid_started),
            cancel_date: stamp(profile.cancel_date),
            status: profile.status,
            currency: billing_currency(self, customer, profile, as_of),
        }
    }

    /// The customer's MRR in `currency` at the latest rate on or before
    /// `day`: the sum over its currencies must fit 64-bit cents.
    fn converted(
        &self,
        customer: &Customer,
        profile: &CustomerProfile,
        currency: Currency,
        day: NaiveDate,
    ) -> Result<Cents> {
        let mut mrr = Total::ZERO;
        for (from, amount) in &profile.mrr {
            mrr += self.fx().convert(*amount, *from, currency, day)?;
        }
        mrr.cents(|| format!("the MRR of customer `{}` in {currency}", customer.id))
    }
}

/// The currency a customer is billed in: the one of its largest MRR, else
/// that of its latest subscription invoice up to `as_of` (a cancelled
/// customer keeps the currency it paid in), else the record's, else the
/// ledger's base currency.
fn billing_currency(
    ledger: &Derived<'_>,
    customer: &Customer,
    profile: &CustomerProfile,
    as_of: DateTime<Utc>,
) -> Currency {
    let tz = ledger.settings().timezone;
    profile
        .mrr
        .iter()
        .max_by_key(|(_, amount)| **amount)
        .map(|(currency, _)| *currency)
        .or_else(|| {
            ledger
                .customer_invoices(customer.id.as_str())
                .into_iter()
                .filter(|i| i.kind == InvoiceType::Subscription && i.counts())
                .map(|i| (i.invoice_date.instant(tz), i))
                .filter(|(date, _)| *date <= as_of)
                .max_by_key(|(date, i)| (*date, i.id()))
                .map(|(_, i)| i.currency)
        })
        .or(customer.currency)
        .unwrap_or(ledger.settings().base_currency)
}

fn compare(sort: &str, a: &Entry, b: &Entry, tz: chrono_tz::Tz) -> Ordering {
    match sort {
        "created_date" => a
            .customer
            .created_date
            .map(|t| t.instant(tz))
            .cmp(&b.customer.created_date.map(|t| t.instant(tz))),
        "country" => a.customer.country.cmp(&b.customer.country),
        "paid_started" => a.profile.paid_started.cmp(&b.profile.paid_started),
        "cancel_date" => a.profile.cancel_date.cmp(&b.profile.cancel_date),
        "trial_started" => a.profile.trial_started.cmp(&b.profile.trial_started),
        "status" => a.profile.status.as_str().cmp(b.profile.status.as_str()),
        "name" => a.customer.name.cmp(&b.customer.name),
        "id" => a.customer.id.cmp(&b.customer.id),
        _ => a.mrr.cmp(&b.mrr),
    }
}

#[cfg(test)]
mod tests {
    use crate::Ledger;
    use crate::model::Settings;
    use crate::query::ReportParam;
    use crate::query::{params, recorded_reads};
    use serde_json::json;
    use std::collections::BTreeSet;

    /// The parameter names of `groups`, in order.
    fn names(groups: &[&[ReportParam]]) -> Vec<&'static str> {
        groups
            .iter()
            .flat_map(|g| g.iter())
            .map(|p| p.name)
            .collect()
    }

    fn name_set(groups: &[&[ReportParam]]) -> BTreeSet<String> {
        names(groups).into_iter().map(str::to_string).collect()
    }

    /// The customer views list exactly the parameters they read, and refuse
    /// any other, naming it.
    #[test]
    fn the_customer_views_read_exactly_their_parameters() {
        let mut ledger = Ledger::new(Settings::default());
        ledger.upsert_customers(&[json!({"id": "c1", "name": "Acme"})]);
        let ledger = ledger.derived();
        let as_of = "2024-06-01T00:00:00Z".parse().unwrap();
        let mut read = BTreeSet::new();
        for variant in [params(&[]), params(&[("selected-date", "2024-01-01")])] {
            let (answer, names) = recorded_reads(|| ledger.analytics_customers(&variant, as_of));
            answer.unwrap();
            read.extend(names);
        }
        assert_eq!(read, name_set(super::CUSTOMER_LIST));
        let (answer, read) =
            recorded_reads(|| ledger.analytics_customer("c1", &params(&[]), as_of));
        answer.unwrap();
        assert_eq!(read, name_set(super::CUSTOMER_DETAIL));

        for name in ["selected-type", "interval"] {
            let error = ledger
                .analytics_customers(&params(&[(name, "week")]), as_of)
                .unwrap_err();
            assert_eq!(
                error.to_string(),
                format!("parameter `{name}`: applies only with `selected-date`")
            );
        }
        let error = ledger
            .analytics_customers(&params(&[("sortt", "name")]), as_of)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "parameter `sortt`: report `customers` has no such parameter; did you mean `sort`? Its parameters: {}",
                names(super::CUSTOMER_LIST).join(", ")
            )
        );
        let error = ledger
            .analytics_customer("c1", &params(&[("q", "acme")]), as_of)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "parameter `q`: report `customer` has no such parameter. Its parameters: baseCurrency"
        );
        // A parameter the view does not take is refused before the
        // customer is looked up, as the customer list refuses it.
        let error = ledger
            .analytics_customer("nobody", &params(&[("q", "acme")]), as_of)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "parameter `q`: report `customer` has no such parameter. Its parameters: baseCurrency"
        );
    }
}
