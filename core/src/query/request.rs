//! The list and currency parameters that several report families share,
//! read into types once: `limit`/`offset` ([`Page`]), `sort`/`order` with
//! the page ([`Sorting`], [`ListRequest`]) and `fix_fx`/`fx_date` ([`Query::fixed_fx`]).
//! Their errors are [`Query`]'s: `invalid_query` naming the parameter.

use super::{Order, Query};
use crate::derive::CustomerStatus;
use crate::error::{Error, Result};
use chrono::NaiveDate;

/// One page of a list: `offset` rows skipped, then at most `limit` listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Page {
    pub limit: usize,
    pub offset: usize,
}

impl Page {
    /// `limit` (default `default_limit`, lowered to `max_limit` when one is
    /// given) and `offset` (default 0): whole numbers of 0 or more.
    pub(crate) fn read(q: &Query, default_limit: usize, max_limit: Option<usize>) -> Result<Page> {
        Ok(Page {
            limit: q.count("limit", default_limit, max_limit)?,
            offset: q.count("offset", 0, None)?,
        })
    }

    /// Every row up to the end of the page: `offset + limit`, saturating.
    pub(crate) fn end(self) -> usize {
        self.offset.saturating_add(self.limit)
    }
}

/// What a listing report accepts and assumes for `sort`, `order`, `limit`.
pub(crate) struct ListDefaults {
    /// The accepted `sort` values.
    pub sorts: &'static [&'static str],
    /// `sort` when absent.
    pub sort: &'static str,
    /// `order` when absent.
    pub order: Order,
    /// `limit` when absent.
    pub limit: usize,
    /// The largest `limit`; a larger one is lowered to it.
    pub max_limit: Option<usize>,
}

/// How a listing report orders its rows: `sort` and `order`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sorting {
    /// One of the report's [`ListDefaults::sorts`].
    pub by: &'static str,
    pub order: Order,
}

impl Sorting {
    /// Reads `sort` and `order`, in that order.
    pub(crate) fn read(q: &Query, defaults: &ListDefaults) -> Result<Sorting> {
        Ok(Sorting {
            by: q.choice("sort", defaults.sorts, defaults.sort)?,
            order: q.order(defaults.order)?,
        })
    }
}

/// How a listing report orders and pages its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListRequest {
    pub sorting: Sorting,
    pub page: Page,
}

impl ListRequest {
    /// Reads `sort`, `order`, `limit` and `offset`, in that order.
    pub(crate) fn read(q: &Query, defaults: &ListDefaults) -> Result<ListRequest> {
        Ok(ListRequest {
            sorting: Sorting::read(q, defaults)?,
            page: Page::read(q, defaults.limit, defaults.max_limit)?,
        })
    }
}

/// The `status` values: a customer status each, and `all` for every one.
const STATUSES: &[&str] = &["active", "cancelled", "trial", "lead", "all"];

/// The status a `status` value names; `None` for `all`.
fn status_named(name: &str) -> Option<CustomerStatus> {
    match name {
        "active" => Some(CustomerStatus::Active),
        "cancelled" => Some(CustomerStatus::Cancelled),
        "trial" => Some(CustomerStatus::Trial),
        "lead" => Some(CustomerStatus::Lead),
        _ => None,
    }
}

impl Query<'_> {
    /// `status` with one value (the customer list), default `default`:
    /// `None` is `all`.
    pub(crate) fn status(&self, default: &'static str) -> Result<Option<CustomerStatus>> {
        Ok(status_named(self.choice("status", STATUSES, default)?))
    }

    /// `status` with several values (the shared customer filter): the
    /// statuses kept, none (everyone) when absent or when one is `all`.
    pub(crate) fn statuses(&self) -> Result<Vec<CustomerStatus>> {
        let names = self.choices("status", STATUSES)?;
        if names.iter().any(|name| name == "all") {
            return Ok(Vec::new());
        }
        Ok(names.iter().filter_map(|name| status_named(name)).collect())
    }

    /// A single value among `accepted`, or `None` when absent.
    pub(crate) fn optional_choice(
        &self,
        name: &str,
        accepted: &[&'static str],
    ) -> Result<Option<&'static str>> {
        match self.text(name) {
            None => Ok(None),
            Some(_) => self.choice(name, accepted, "").map(Some),
        }
    }

    /// The day of a fixed FX rate: `None` without `fix_fx=true`, else
    /// `fx_date` or `default_day`. A malformed `fx_date` is an error, and so
    /// is an `fx_date` without `fix_fx=true`, which it would not change.
    pub(crate) fn fixed_fx(&self, default_day: NaiveDate) -> Result<Option<NaiveDate>> {
        let fix = self.flag("fix_fx")?;
        let fx_date = self.date("fx_date")?;
        if fx_date.is_some() && !fix {
            return Err(Error::query(
                "fx_date",
                "applies only with fix_fx=true (each day's rate is used otherwise)",
            ));
        }
        Ok(fix.then_some(fx_date.unwrap_or(default_day)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{ReportParams, params};

    const DEFAULTS: ListDefaults = ListDefaults {
        sorts: &["date", "mrr"],
        sort: "date",
        order: Order::Desc,
        limit: 50,
        max_limit: Some(100),
    };

    #[test]
    fn lists_read_sort_order_and_a_capped_page() {
        let p = params(&[
            ("sort", "mrr"),
            ("order", "asc"),
            ("limit", "500"),
            ("offset", "3"),
        ]);
        let list = ListRequest::read(&Query::new(&p), &DEFAULTS).unwrap();
        let page = Page {
            limit: 100,
            offset: 3,
        };
        let sorting = Sorting {
            by: "mrr",
            order: Order::Asc,
        };
        assert_eq!(list, ListRequest { sorting, page });
        assert_eq!(page.end(), 103);
        let list = ListRequest::read(&Query::new(&ReportParams::new()), &DEFAULTS).unwrap();
        let page = Page {
            limit: 50,
            offset: 0,
        };
        let sorting = Sorting {
            by: "date",
            order: Order::Desc,
        };
        assert_eq!(list, ListRequest { sorting, page });
        let p = params(&[("offset", "-1")]);
        let error = ListRequest::read(&Query::new(&p), &DEFAULTS).unwrap_err();
        assert_eq!(
            error.to_string(),
            "parameter `offset`: `-1` is not a whole number of 0 or more"
        );
        let p = params(&[("sort", "size")]);
        let error = ListRequest::read(&Query::new(&p), &DEFAULTS).unwrap_err();
        assert_eq!(
            error.to_string(),
            "parameter `sort`: `size` is not one of date, mrr"
        );
    }

    #[test]
    fn statuses_are_read_into_customer_statuses() {
        let read = |value: &str| Query::new(&params(&[("status", value)])).statuses();
        assert_eq!(
            read("trial,lead").unwrap(),
            vec![CustomerStatus::Trial, CustomerStatus::Lead]
        );
        assert_eq!(read("active all").unwrap(), vec![]);
        let none = ReportParams::new();
        assert_eq!(
            Query::new(&none).status("active").unwrap(),
            Some(CustomerStatus::Active)
        );
        let all = params(&[("status", "all")]);
        assert_eq!(Query::new(&all).status("active").unwrap(), None);
        assert_eq!(
            read("paused").unwrap_err().to_string(),
            "parameter `status`: `paused` is not one of active, cancelled, trial, lead, all"
        );
    }

    #[test]
    fn a_fixed_rate_is_on_fx_date_or_the_default_day() {
        let day: NaiveDate = "2024-03-01".parse().unwrap();
        let fixed = |pairs: &[(&str, &str)]| Query::new(&params(pairs)).fixed_fx(day);
        assert_eq!(fixed(&[]).unwrap(), None);
        assert_eq!(fixed(&[("fix_fx", "true")]).unwrap(), Some(day));
        assert_eq!(
            fixed(&[("fix_fx", "true"), ("fx_date", "20240115")]).unwrap(),
            Some("2024-01-15".parse().unwrap())
        );
        let error = fixed(&[("fx_date", "soon")]).unwrap_err();
        assert_eq!(error.field(), Some("fx_date"));
        // Without `fix_fx=true` a date would change nothing.
        for flag in [&[][..], &[("fix_fx", "false")][..]] {
            let mut pairs = flag.to_vec();
            pairs.push(("fx_date", "20240115"));
            assert_eq!(
                fixed(&pairs).unwrap_err().to_string(),
                "parameter `fx_date`: applies only with fix_fx=true (each day's rate is used otherwise)"
            );
        }
    }
}
