//! Customer filters shared by every report, and the customer attributes
//! behind filters and breakdowns.
//!
//! Filters select customers, so a filtered report keeps the MRR identity:
//! `plan`, `billing_freq` and `pricing_model` keep customers billed on a
//! matching plan at any time up to `as_of`; `status` and `age` are read at `as_of`; `industry`, `size`,
//! `channel`, `market` and `payment_method` are custom variables (any key
//! case), `payment_method` also the latest invoice's method; `region` maps to
//! countries by [`REGIONS`]. Text values match case-insensitively. `currency`
//! is not a customer filter: reports apply it to each amount's currency.

use super::{Query, ReportParams};
use crate::derive::timeline::Replay;
use crate::derive::{CustomerStatus, Derived};
use crate::error::{Error, Result};
use crate::ids::PlanId;
use crate::model::{Customer, Interval, InvoiceType, StoredInvoice};
use crate::money::Currency;
use chrono::{DateTime, Datelike, NaiveDate, Utc};
use std::cell::OnceCell;

/// Regions of the `region` filter and the ISO 3166 country codes in each.
pub const REGIONS: &[(&str, &[&str])] = &[
    (
        "europe",
        &[
            "AD", "AL", "AT", "BA", "BE", "BG", "BY", "CH", "CY", "CZ", "DE", "DK", "EE", "ES",
            "FI", "FO", "FR", "GB", "GI", "GR", "HR", "HU", "IE", "IS", "IT", "LI", "LT", "LU",
            "LV", "MC", "MD", "ME", "MK", "MT", "NL", "NO", "PL", "PT", "RO", "RS", "SE", "SI",
            "SK", "SM", "UA", "VA", "XK",
        ],
    ),
    ("north_america", &["US", "CA", "MX", "GL", "BM", "PM"]),
    (
        "latin_america",
        &[
            "AR", "BO", "BR", "CL", "CO", "CR", "CU", "DO", "EC", "GT", "HN", "JM", "NI", "PA",
            "PE", "PR", "PY", "SV", "TT", "UY", "VE", "BS", "BB", "BZ", "GY", "HT", "SR",
        ],
    ),
    (
        "asia",
        &[
            "CN", "HK", "MO", "TW", "JP", "KR", "KP", "MN", "IN", "PK", "BD", "LK", "NP", "BT",
            "MV", "AF", "SG", "MY", "ID", "TH", "VN", "PH", "KH", "LA", "MM", "BN", "TL", "KZ",
            "UZ", "KG", "TJ", "TM",
        ],
    ),
    (
        "middle_east",
        &[
            "AE", "SA", "QA", "KW", "BH", "OM", "YE", "IL", "PS", "JO", "LB", "SY", "IQ", "IR",
            "TR", "AM", "AZ", "GE",
        ],
    ),
    (
        "africa",
        &[
            "DZ", "AO", "BJ", "BW", "BF", "BI", "CM", "CV", "CF", "TD", "KM", "CD", "CG", "CI",
            "DJ", "EG", "GQ", "ER", "SZ", "ET", "GA", "GM", "GH", "GN", "GW", "KE", "LS", "LR",
            "LY", "MG", "MW", "ML", "MR", "MU", "MA", "MZ", "NA", "NE", "NG", "RW", "ST", "SN",
            "SC", "SL", "SO", "ZA", "SS", "SD", "TZ", "TG", "TN", "UG", "ZM", "ZW",
        ],
    ),
    (
        "oceania",
        &[
            "AU", "NZ", "FJ", "PG", "SB", "VU", "WS", "TO", "KI", "FM", "MH", "NR", "PW", "TV",
        ],
    ),
];

/// Region names accepted by `region`: the table above plus `emea`, `amer`
/// and `apac`, which combine them.
const REGION_GROUPS: &[(&str, &[&str])] = &[
    ("emea", &["europe", "middle_east", "africa"]),
    ("amer", &["north_america", "latin_america"]),
    ("apac", &["asia", "oceania"]),
];

/// The countries of the named regions, or an error listing the known names.
pub fn region_countries(names: &[String]) -> Result<Vec<&'static str>> {
    let mut countries = Vec::new();
    for name in names {
        let key = name.to_ascii_lowercase().replace('-', "_");
        let parts: Vec<&str> = match REGION_GROUPS.iter().find(|(group, _)| *group == key) {
            Some((_, parts)) => parts.to_vec(),
            None => vec![key.as_str()],
        };
        for part in parts {
            let (_, list) = REGIONS
                .iter()
                .find(|(region, _)| *region == part)
                .ok_or_else(|| {
                    let known: Vec<&str> = REGIONS
                        .iter()
                        .map(|(r, _)| *r)
                        .chain(REGION_GROUPS.iter().map(|(g, _)| *g))
                        .collect();
                    Error::query(
                        "region",
                        format!("`{name}` is not one of {}", known.join(", ")),
                    )
                })?;
            countries.extend_from_slice(list);
        }
    }
    Ok(countries)
}

/// The region of a country code, `other` when it is in none.
pub fn region_of(country: &str) -> &'static str {
    REGIONS
        .iter()
        .find(|(_, list)| list.iter().any(|c| c.eq_ignore_ascii_case(country)))
        .map_or("other", |(name, _)| *name)
}

/// An `age` bucket: whole months since the first payment, `from` included,
/// `to` excluded (`None`: open-ended).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgeRange {
    pub from: u32,
    pub to: Option<u32>,
}

impl AgeRange {
    /// `6` (exactly 6 months), `0-6`, `12+`.
    fn parse(text: &str) -> Option<AgeRange> {
        if let Some(from) = text.strip_suffix('+') {
            return Some(AgeRange {
                from: from.parse().ok()?,
                to: None,
            });
        }
        match text.split_once('-') {
            Some((from, to)) => {
                let (from, to) = (from.parse().ok()?, to.parse().ok()?);
                (from < to).then_some(AgeRange { from, to: Some(to) })
            }
            None => {
                let months: u32 = text.parse().ok()?;
                Some(AgeRange {
                    from: months,
                    to: Some(months + 1),
                })
            }
        }
    }

    fn contains(&self, months: u32) -> bool {
        months >= self.from && self.to.is_none_or(|to| months < to)
    }
}

/// The standard `age` breakdown buckets.
pub const AGE_BUCKETS: &[&str] = &["0-3", "3-6", "6-12", "12-24", "24+"];

/// Whole months from `start` to `end` (0 when `end` is earlier).
pub fn months_between(start: NaiveDate, end: NaiveDate) -> u32 {
    if end <= start {
        return 0;
    }
    let mut months = (end.year() - start.year()) * 12 + end.month() as i32 - start.month() as i32;
    if end.day() < start.day() {
        months -= 1;
    }
    months.max(0) as u32
}

/// The age bucket label of a customer who first paid on `paid_started`.
pub fn age_bucket(paid_started: Option<NaiveDate>, as_of_day: NaiveDate) -> &'static str {
    let Some(start) = paid_started else {
        return "unknown";
    };
    let months = months_between(start, as_of_day);
    AGE_BUCKETS
        .iter()
        .copied()
        .find(|label| AgeRange::parse(label).is_some_and(|r| r.contains(months)))
        .unwrap_or("24+")
}

/// Everything a filter or breakdown may ask of one customer at `as_of`. The
/// costlier facts (status, first payment, invoices) are worked out on first
/// use, so a filter on a plain customer field reads nothing else.
pub struct CustomerFacts<'a> {
    pub customer: &'a Customer,
    pub replay: Option<&'a Replay>,
    ledger: &'a Derived<'a>,
    as_of: DateTime<Utc>,
    profile: OnceCell<(CustomerStatus, Option<NaiveDate>)>,
    invoices: OnceCell<Vec<StoredInvoice<'a>>>,
}

impl<'a> CustomerFacts<'a> {
    pub fn gather(
        ledger: &'a Derived<'a>,
        customer: &'a Customer,
        replay: Option<&'a Replay>,
        as_of: DateTime<Utc>,
    ) -> CustomerFacts<'a> {
        CustomerFacts {
            customer,
            replay,
            ledger,
            as_of,
            profile: OnceCell::new(),
            invoices: OnceCell::new(),
        }
    }

    fn profile(&self) -> &(CustomerStatus, Option<NaiveDate>) {
        self.profile.get_or_init(|| {
            let tz = self.ledger.settings().timezone;
            let empty = Replay::default();
            let profile = self
                .ledger
                .profile_of(self.customer.id.as_str(), self.replay.unwrap_or(&empty));
            (
                profile.status,
                profile
                    .paid_started
                    .map(|t| t.with_timezone(&tz).date_naive()),
            )
        })
    }

    /// The customer's status at `as_of`.
    pub fn status(&self) -> CustomerStatus {
        self.profile().0
    }

    /// First day with MRR above 0, in the ledger's time zone.
    pub fn paid_started(&self) -> Option<NaiveDate> {
        self.profile().1
    }

    /// The customer's invoices.
    pub fn invoices(&self) -> &[StoredInvoice<'a>] {
        self.invoices
            .get_or_init(|| self.ledger.customer_invoices(self.customer.id.as_str()))
    }

    /// A customer attribute read from custom variables, lower-cased.
    pub fn attribute(&self, name: &str) -> Option<String> {
        self.customer.attribute(name).map(str::to_lowercase)
    }

    /// The payment method: the custom variable, else the latest invoice's
    /// at `as_of` (void invoices and invoices dated after `as_of` have not
    /// been paid with anything).
    pub fn payment_method(&self) -> Option<String> {
        let tz = self.ledger.settings().timezone;
        self.attribute("payment_method").or_else(|| {
            self.invoices()
                .iter()
                .filter(|i| i.details().payment_method.is_some() && i.counts())
                .map(|i| (i.invoice_date.instant(tz), i))
                .filter(|(date, _)| *date <= self.as_of)
                .max_by_key(|(date, i)| (*date, i.id()))
                .map(|(_, i)| i)
                .and_then(|i| i.details().payment_method.as_deref())
                .map(str::to_lowercase)
        })
    }

    /// Plans of the customer's counted subscription invoices dated by
    /// `as_of` (a future-dated invoice has not billed anything yet).
    pub fn plans_billed(&self) -> impl Iterator<Item = &'a PlanId> + '_ {
        let tz = self.ledger.settings().timezone;
        self.invoices()
            .iter()
            .filter(move |i| {
                i.kind == InvoiceType::Subscription
                    && i.counts()
                    && i.invoice_date.instant(tz) <= self.as_of
            })
            .filter_map(|i| i.record().plan_id.as_ref())
    }

    /// The plan that describes the customer best: the dearest paying
    /// subscription's plan at `as_of`, else the latest plan it had. Of
    /// subscriptions paying the same, the one whose invoice applied last
    /// wins (replays list subscriptions in that order), never the one with
    /// the greater id.
    pub fn main_plan(&self) -> Option<&'a PlanId> {
        let subs = &self.replay?.subscriptions;
        subs.iter()
            .filter(|s| s.mrr > 0)
            .max_by_key(|s| s.mrr)
            .or_else(|| subs.iter().rev().find(|s| s.plan_id.is_some()))
            .and_then(|s| s.plan_id.as_ref())
    }
}

/// The customer filters of one report request.
#[derive(Debug, Default)]
pub struct CustomerFilter {
    customers: Vec<String>,
    plans: Vec<PlanId>,
    billing_freq: Vec<Interval>,
    pricing_model: Vec<String>,
    payment_method: Vec<String>,
    statuses: Vec<CustomerStatus>,
    countries: Vec<String>,
    ages: Vec<AgeRange>,
    data_sources: Vec<String>,
    /// (custom variable, accepted lower-case values)
    attributes: Vec<(&'static str, Vec<String>)>,
}

impl CustomerFilter {
    /// Reads every customer filter parameter. `plan` takes plan ids or plan
    /// group ids (a group stands for its plans); an unknown id is an error.
    pub fn from_params(ledger: &Derived<'_>, params: &ReportParams) -> Result<CustomerFilter> {
        let q = Query::new(params);
        let mut plans = Vec::new();
        for id in q.list("plan") {
            if let Some(group) = ledger.plan_group(&id) {
                plans.extend(group.plans.iter().cloned());
            } else if ledger.plan(&id).is_some() {
                plans.push(PlanId::new(id));
            } else {
                return Err(Error::query(
                    "plan",
                    format!("`{id}` is neither a plan id nor a plan group id"),
                ));
            }
        }
        let billing_freq = q
            .choices("billing_freq", &["day", "week", "month", "year"])?
            .iter()
            .filter_map(|f| Interval::parse(f))
            .collect();
        let statuses = q.statuses()?;
        // Customers hold two-letter codes: anything else would match nobody.
        let mut countries: Vec<String> = q
            .list("country")
            .iter()
            .map(|c| {
                if c.len() == 2 && c.bytes().all(|byte| byte.is_ascii_alphabetic()) {
                    Ok(c.to_ascii_uppercase())
                } else {
                    Err(Error::query(
                        "country",
                        format!("`{c}` is not a two-letter country code (ISO 3166-1, such as DE)"),
                    ))
                }
            })
            .collect::<Result<_>>()?;
        let regions = q.list("region");
        if !regions.is_empty() {
            let in_regions = region_countries(&regions)?;
            if countries.is_empty() {
                countries = in_regions.iter().map(|c| c.to_string()).collect();
            } else {
                countries.retain(|c| in_regions.contains(&c.as_str()));
                if countries.is_empty() {
                    countries.push(String::new());
                }
            }
        }
        let mut ages = Vec::new();
        for text in q.list("age") {
            ages.push(AgeRange::parse(&text).ok_or_else(|| {
                Error::query(
                    "age",
                    format!("`{text}` is not a number of months or a range like 0-6 or 12+"),
                )
            })?);
        }
        let lower =
            |name: &str| -> Vec<String> { q.list(name).iter().map(|v| v.to_lowercase()).collect() };
        let attributes = ["industry", "size", "channel", "market"]
            .into_iter()
            .map(|name| (name, lower(name)))
            .filter(|(_, values)| !values.is_empty())
            .collect();
        Ok(CustomerFilter {
            customers: q.list("customer"),
            plans,
            billing_freq,
            pricing_model: q.choices("pricing_model", &["licensed", "metered"])?,
            payment_method: lower("payment_method"),
            statuses,
            countries,
            ages,
            data_sources: q.list("data_source"),
            attributes,
        })
    }

    /// Whether the filter keeps every customer.
    pub fn is_empty(&self) -> bool {
        self.customers.is_empty()
            && self.plans.is_empty()
            && self.billing_freq.is_empty()
            && self.pricing_model.is_empty()
            && self.payment_method.is_empty()
            && self.statuses.is_empty()
            && self.countries.is_empty()
            && self.ages.is_empty()
            && self.data_sources.is_empty()
            && self.attributes.is_empty()
    }

    /// Whether the customer passes every filter.
    pub fn matches(
        &self,
        ledger: &Derived<'_>,
        facts: &CustomerFacts,
        as_of_day: NaiveDate,
    ) -> bool {
        let customer = facts.customer;
        if !self.customers.is_empty() && !self.customers.iter().any(|c| c == customer.id.as_str()) {
            return false;
        }
        if !self.statuses.is_empty() && !self.statuses.contains(&facts.status()) {
            return false;
        }
        if !self.countries.is_empty()
            && !customer
                .country
                .as_deref()
                .is_some_and(|country| self.countries.iter().any(|k| k == country))
        {
            return false;
        }
        if !self.data_sources.is_empty()
            && !customer
                .data_source
                .as_ref()
                .is_some_and(|d| self.data_sources.iter().any(|k| k == d.as_str()))
        {
            return false;
        }
        for (name, values) in &self.attributes {
            if !facts.attribute(name).is_some_and(|v| values.contains(&v)) {
                return false;
            }
        }
        if !self.payment_method.is_empty()
            && !facts
                .payment_method()
                .is_some_and(|m| self.payment_method.contains(&m))
        {
            return false;
        }
        if !self.ages.is_empty() {
            let Some(start) = facts.paid_started() else {
                return false;
            };
            let months = months_between(start, as_of_day);
            if !self.ages.iter().any(|r| r.contains(months)) {
                return false;
            }
        }
        if !self.plans.is_empty() && !facts.plans_billed().any(|p| self.plans.contains(p)) {
            return false;
        }
        if !self.billing_freq.is_empty()
            && !facts
                .plans_billed()
                .filter_map(|p| ledger.plan(p.as_str()))
                .any(|p| self.billing_freq.contains(&p.billing_freq))
        {
            return false;
        }
        if !self.pricing_model.is_empty()
            && !facts
                .plans_billed()
                .filter_map(|p| ledger.plan(p.as_str()))
                .any(|p| {
                    self.pricing_model
                        .iter()
                        .any(|m| m == p.pricing_model.as_str())
                })
        {
            return false;
        }
        true
    }

    /// Whether the customer (with its replay at `as_of`, whose local day is
    /// `as_of_day`) passes every filter; its facts are gathered only when
    /// there is a filter to pass.
    pub fn keeps(
        &self,
        ledger: &Derived<'_>,
        customer: &Customer,
        replay: Option<&Replay>,
        as_of: DateTime<Utc>,
        as_of_day: NaiveDate,
    ) -> bool {
        self.is_empty()
            || self.matches(
                ledger,
                &CustomerFacts::gather(ledger, customer, replay, as_of),
                as_of_day,
            )
    }
}

/// A customer's value and label for a customer-level breakdown key (every
/// key of the `mrr` report's `BREAKDOWNS` except `currency` and `subtype`):
/// `unknown` when the customer has no such attribute.
pub fn breakdown_value(
    ledger: &Derived<'_>,
    key: &str,
    facts: &CustomerFacts,
    as_of_day: NaiveDate,
) -> (String, String) {
    let plan = facts.main_plan().and_then(|p| ledger.plan(p.as_str()));
    let unknown = || ("unknown".to_string(), "Unknown".to_string());
    let same = |v: String| (v.clone(), v);
    match key {
        "plan" => plan.map_or_else(unknown, |p| (p.id.to_string(), p.name.clone())),
        "billing_freq" => plan.map_or_else(unknown, |p| same(p.billing_freq.as_str().to_string())),
        "pricing_model" => {
            plan.map_or_else(unknown, |p| same(p.pricing_model.as_str().to_string()))
        }
        "payment_method" => facts.payment_method().map_or_else(unknown, same),
        "country" => facts
            .customer
            .country
            .as_deref()
            .map_or_else(unknown, |c| same(c.to_string())),
        "age" => match age_bucket(facts.paid_started(), as_of_day) {
            "unknown" => unknown(),
            bucket => (bucket.to_string(), format!("{bucket} months")),
        },
        attribute => facts.attribute(attribute).map_or_else(unknown, same),
    }
}

/// The `currency` filter: amounts in other currencies are left out.
pub fn currency_filter(params: &ReportParams) -> Result<Vec<Currency>> {
    Query::new(params)
        .list("currency")
        .iter()
        .map(|code| {
            Currency::parse(code).ok_or_else(|| {
                Error::query(
                    "currency",
                    format!("`{code}` is not a three-letter currency code"),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_parse_single_months_ranges_and_open_ends() {
        assert_eq!(
            AgeRange::parse("6"),
            Some(AgeRange {
                from: 6,
                to: Some(7)
            })
        );
        assert_eq!(
            AgeRange::parse("0-6"),
            Some(AgeRange {
                from: 0,
                to: Some(6)
            })
        );
        assert_eq!(
            AgeRange::parse("12+"),
            Some(AgeRange { from: 12, to: None })
        );
        assert_eq!(AgeRange::parse("6-0"), None);
    }

    #[test]
    fn months_between_counts_whole_months() {
        let d = |t: &str| t.parse::<NaiveDate>().unwrap();
        assert_eq!(months_between(d("2024-01-31"), d("2024-02-29")), 0);
        assert_eq!(months_between(d("2024-01-15"), d("2024-07-15")), 6);
        assert_eq!(age_bucket(Some(d("2023-01-01")), d("2024-06-01")), "12-24");
    }

    #[test]
    fn regions_expand_to_countries_and_unknown_names_are_errors() {
        let countries = region_countries(&["emea".to_string()]).unwrap();
        assert!(
            countries.contains(&"DE") && countries.contains(&"ZA") && countries.contains(&"AE")
        );
        assert_eq!(region_of("us"), "north_america");
        let err = region_countries(&["mars".to_string()])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("parameter `region`: `mars` is not one of europe"));
    }
}
