//! The one list of reports: each report's interface name, the query
//! parameters it reads (their groups are in `params`), the columns it
//! answers (`schema`) and the function that computes it.
//!
//! A report is run only with parameters it reads: any other name is an
//! [`Error::UnknownParameter`] (code `invalid_query`) naming the parameter
//! and listing the report's parameters, with a "did you mean" for a near
//! miss (`curency` for `currency`, `selected_date` for `selected-date`).
//! The service, the CLI and both bindings all run reports through here, so
//! they accept and refuse exactly the same parameters.

use super::answer::{ReportAnswer, ReportFn};
use super::churn_scheduled::{ChurnScheduled, ChurnScheduledMovements, ChurnScheduledSummary};
use super::params::*;
use super::partial::{Body, Parts};
use super::scheduled::CmrrSummary;
use super::schema::{self, Column, ReportSchema};
use super::{
    ReportParams, cashflow, cohort, invoices, leads, movement_table, mrr, mrr_parts, scheduled,
    snapshot, summary, tables, transactions, unpaid, variables,
};
use crate::derive::Derived;
use crate::error::{Error, Result};
use crate::query::{ReportParam, check_params, days_of_instants, param};
use chrono::{DateTime, Utc};
use serde_json::Value;

/// One report of the registry.
pub struct Report {
    /// The interface name (`GET /reports/{name}`).
    pub name: &'static str,
    /// Its parameters, in groups shared between reports.
    groups: &'static [&'static [ReportParam]],
    run: ReportFn,
    /// How it is computed in parts, when it can be (`reports::partial`).
    parts: Option<Parts>,
    /// What its columns hold.
    schema: ReportSchema,
    /// The fields of its answer beside its rows (see [`Report::beside`]).
    beside: &'static [Column],
}

const fn report(
    name: &'static str,
    groups: &'static [&'static [ReportParam]],
    run: ReportFn,
) -> Report {
    Report {
        name,
        groups,
        run,
        parts: None,
        schema: ReportSchema::Rows(&[]),
        beside: &[],
    }
}

impl Report {
    /// The report computed in parts by `compute` and `finish` (see
    /// [`Parts`]).
    const fn in_parts(
        self,
        compute: fn(&Derived<'_>, &ReportParams, DateTime<Utc>) -> Result<Body>,
        finish: fn(&Derived<'_>, &ReportParams, DateTime<Utc>, Body) -> Result<ReportAnswer>,
    ) -> Report {
        Report {
            parts: Some(Parts { compute, finish }),
            ..self
        }
    }

    /// The report with these columns.
    const fn columns(self, schema: ReportSchema) -> Report {
        Report { schema, ..self }
    }

    /// The report with these fields beside its rows.
    const fn beside_rows(self, beside: &'static [Column]) -> Report {
        Report { beside, ..self }
    }
}

/// Every report, in the order the interface lists them.
const REPORTS: &[Report] = &[
    report("summary", &[BASE_CURRENCY], summary::summary)
        .in_parts(summary::partial, summary::finish)
    .columns(schema::of::SUMMARY),
    report(
        "mrr",
        &[
            PERIODS,
            BASE_CURRENCY,
            FX,
            &[BREAKDOWN],
            MOVEMENT_FILTERS,
            CURRENCY_FILTER,
            CUSTOMER_FILTERS,
        ],
        mrr::mrr,
    )
    .in_parts(mrr_parts::mrr_partial, mrr_parts::mrr_finish)
    .columns(schema::of::MRR),
    report("cmrr-summary", SCHEDULED, scheduled::whole::<CmrrSummary>)
    .in_parts(scheduled::partial::<CmrrSummary>, scheduled::finish::<CmrrSummary>)
    .columns(schema::of::CMRR_SUMMARY),
    report(
        "cohort",
        &[
            PERIODS,
            &[param("metric", "customers or mrr (default customers)")],
            BASE_CURRENCY,
            FX,
            CURRENCY_FILTER,
            CUSTOMER_FILTERS,
        ],
        cohort::cohort,
    )
    .in_parts(cohort::partial, cohort::finish)
    .columns(schema::of::COHORT),
    report(
        "churn-scheduled",
        &[
            PERIODS,
            BASE_CURRENCY,
            FX,
            CURRENCY_FILTER,
            CUSTOMER_FILTERS,
        ],
        scheduled::whole::<ChurnScheduled>,
    )
    .in_parts(scheduled::partial::<ChurnScheduled>, scheduled::finish::<ChurnScheduled>)
    .columns(schema::of::CHURN_SCHEDULED),
    report(
        "churn-scheduled-movements",
        &[
            &[
                INTERVAL,
                SELECTED_DATE,
                param(
                    "selected-type",
                    "day_churn, week_churn, month_churn, quarter_churn or year_churn",
                ),
                BREAKDOWN,
                BREAKDOWN_VALUE,
                SORT,
                ORDER,
            ],
            BASE_CURRENCY,
            FX,
            CURRENCY_FILTER,
            CUSTOMER_FILTERS,
        ],
        scheduled::whole::<ChurnScheduledMovements>,
    )
    .in_parts(
        scheduled::partial::<ChurnScheduledMovements>,
        scheduled::finish::<ChurnScheduledMovements>,
    )
    .columns(schema::of::MOVEMENTS),
    report(
        "churn-scheduled-summary",
        &[
            &[INTERVAL],
            BASE_CURRENCY,
            FX,
            CURRENCY_FILTER,
            CUSTOMER_FILTERS,
        ],
        scheduled::whole::<ChurnScheduledSummary>,
    )
    .in_parts(
        scheduled::partial::<ChurnScheduledSummary>,
        scheduled::finish::<ChurnScheduledSummary>,
    )
    .columns(schema::of::CHURN_SCHEDULED_SUMMARY),
    report(
        "map",
        &[SNAPSHOT, BASE_CURRENCY, CURRENCY_FILTER, CUSTOMER_FILTERS],
        snapshot::map,
    )
    .in_parts(snapshot::map_partial, snapshot::map_finish)
    .columns(schema::of::MAP)
    .beside_rows(schema::of::MAP_BESIDE),
    report(
        "customer-concentration",
        &[
            SNAPSHOT,
            BASE_CURRENCY,
            PAGE,
            CURRENCY_FILTER,
            CUSTOMER_FILTERS,
        ],
        snapshot::concentration,
    )
    .in_parts(
        snapshot::concentration_partial,
        snapshot::concentration_finish,
    )
    .columns(schema::of::CONCENTRATION)
    .beside_rows(schema::of::CONCENTRATION_BESIDE),
    report(
        "custom-variables",
        &[
            SNAPSHOT,
            &[param("variable", "only this custom variable")],
            BASE_CURRENCY,
            CURRENCY_FILTER,
            CUSTOMER_FILTERS,
        ],
        variables::custom_variables,
    )
    .in_parts(variables::partial, variables::finish)
    .columns(schema::of::VARIABLES)
    .beside_rows(schema::of::VARIABLES_BESIDE),
    report(
        "movement-table",
        &[
            PERIODS,
            BASE_CURRENCY,
            FX,
            &[
                SELECTED_DATE,
                param(
                    "selected-type",
                    "new, expansion, contraction, churn or reactivation",
                ),
                BREAKDOWN,
                BREAKDOWN_VALUE,
                param("committed", "true also lists scheduled future movements"),
                SORT,
                ORDER,
            ],
            PAGE,
            CURRENCY_FILTER,
            CUSTOMER_FILTERS,
        ],
        movement_table::movement_table,
    )
    .in_parts(movement_table::partial, movement_table::finish)
    .columns(schema::of::MOVEMENTS),
    report(
        "invoices-detail",
        &[
            &[param("customer", "the invoices of these customers (ids)")],
            BASE_CURRENCY,
            PAGE,
        ],
        invoices::invoices_detail,
    )
    .in_parts(invoices::partial, invoices::finish)
    .columns(schema::of::INVOICES),
    report(
        "mrr-table",
        &[
            PERIODS,
            BASE_CURRENCY,
            FX,
            MOVEMENT_FILTERS,
            CURRENCY_FILTER,
            CUSTOMER_FILTERS,
        ],
        tables::mrr_table,
    )
    .in_parts(tables::mrr_table_partial, tables::mrr_table_finish)
    .columns(schema::of::MRR_TABLE),
    report(
        "mrr-table-subtypes",
        &[
            PERIODS,
            BASE_CURRENCY,
            FX,
            MOVEMENT_FILTERS,
            CURRENCY_FILTER,
            CUSTOMER_FILTERS,
        ],
        tables::mrr_table_subtypes,
    )
    .in_parts(
        tables::mrr_table_subtypes_partial,
        tables::mrr_table_subtypes_finish,
    )
    .columns(schema::of::MRR_TABLE_SUBTYPES),
    report("leads", FUNNEL_IN_RANGE, leads::leads)
    .in_parts(leads::leads_partial, leads::leads_finish)
    .columns(schema::of::LEADS),
    report("leads-days", FUNNEL_IN_RANGE, leads::leads_days)
        .in_parts(leads::leads_days_partial, leads::leads_days_finish)
    .columns(schema::of::LEADS_DAYS),
    report("leads-summary", FUNNEL_NOW, leads::leads_summary)
    .in_parts(leads::leads_summary_partial, leads::leads_summary_finish)
    .columns(schema::of::LEADS_SUMMARY),
    report("leads-table", FUNNEL_IN_RANGE, leads::leads_table)
    .in_parts(leads::leads_table_partial, leads::leads_table_finish)
    .columns(schema::of::LEADS_TABLE),
    report("transactions", EVENTS_IN_RANGE, transactions::transactions)
    .in_parts(transactions::transactions_partial, transactions::transactions_finish)
    .columns(schema::of::TRANSACTIONS),
    report(
        "transactions-detail",
        &[
            &[
                INTERVAL,
                SELECTED_DATE,
                SELECTED_TYPE,
                param(
                    "date",
                    "with customer and no selected-date: the range listed (default everything up to as_of)",
                ),
            ],
            BASE_CURRENCY,
            FX,
            CURRENCY_FILTER,
            CUSTOMER_FILTERS,
        ],
        transactions::transactions_detail,
    )
    .in_parts(transactions::transactions_detail_partial, transactions::transactions_detail_finish)
    .columns(schema::of::ATTEMPTS),
    report(
        "transactions-summary",
        EVENTS_NOW,
        transactions::transactions_summary,
    )
    .in_parts(transactions::transactions_summary_partial, transactions::transactions_summary_finish)
    .columns(schema::of::TRANSACTIONS_SUMMARY),
    report(
        "transactions-table",
        EVENTS_IN_RANGE,
        transactions::transactions_table,
    )
    .in_parts(transactions::transactions_table_partial, transactions::transactions_table_finish)
    .columns(schema::of::TRANSACTIONS_TABLE),
    report(
        "cashflow-failed-payments",
        EVENTS_IN_RANGE,
        cashflow::failed_payments,
    )
    .in_parts(cashflow::failed_payments_partial, cashflow::failed_payments_finish)
    .columns(schema::of::FAILED),
    report(
        "cashflow-failed-payments-detail",
        EVENTS_SELECTED,
        cashflow::failed_payments_detail,
    )
    .in_parts(cashflow::failed_payments_detail_partial, cashflow::failed_payments_detail_finish)
    .columns(schema::of::ATTEMPTS),
    report(
        "cashflow-failed-payments-summary",
        EVENTS_NOW,
        cashflow::failed_payments_summary,
    )
    .in_parts(cashflow::failed_payments_summary_partial, cashflow::failed_payments_summary_finish)
    .columns(schema::of::FAILED_SUMMARY),
    report(
        "cashflow-failed-payments-table",
        EVENTS_IN_RANGE,
        cashflow::failed_payments_table,
    )
    .in_parts(cashflow::failed_payments_table_partial, cashflow::failed_payments_table_finish)
    .columns(schema::of::FAILED_TABLE),
    report("cashflow-refunds", EVENTS_IN_RANGE, cashflow::refunds)
    .in_parts(cashflow::refunds_partial, cashflow::refunds_finish)
    .columns(schema::of::REFUNDS),
    report(
        "cashflow-refunds-detail",
        EVENTS_SELECTED,
        cashflow::refunds_detail,
    )
    .in_parts(cashflow::refunds_detail_partial, cashflow::refunds_detail_finish)
    .columns(schema::of::ATTEMPTS),
    report(
        "cashflow-refunds-table",
        EVENTS_IN_RANGE,
        cashflow::refunds_table,
    )
    .in_parts(cashflow::refunds_table_partial, cashflow::refunds_table_finish)
    .columns(schema::of::REFUNDS_TABLE),
    report(
        "cashflow-failure-rate",
        EVENTS_IN_RANGE,
        cashflow::failure_rate,
    )
    .in_parts(cashflow::failure_rate_partial, cashflow::failure_rate_finish)
    .columns(schema::of::FAILURE_RATE),
    report(
        "cashflow-failure-rate-summary",
        EVENTS_NOW,
        cashflow::failure_rate_summary,
    )
    .in_parts(cashflow::failure_rate_summary_partial, cashflow::failure_rate_summary_finish)
    .columns(schema::of::FAILURE_RATE_SUMMARY),
    report(
        "cashflow-outstanding-unpaid",
        // Owed at `as_of` and converted on its day: no periods, no fixed rate.
        &[BASE_CURRENCY, PAGE, CURRENCY_FILTER, CUSTOMER_FILTERS],
        unpaid::outstanding_unpaid,
    )
    .in_parts(
        unpaid::outstanding_unpaid_partial,
        unpaid::outstanding_unpaid_finish,
    )
    .columns(schema::of::UNPAID)
    .beside_rows(schema::of::UNPAID_BESIDE),
];

impl Report {
    /// Every report, in the order the interface lists them.
    pub fn all() -> &'static [Report] {
        REPORTS
    }

    /// The report called `name`; an unknown name is
    /// [`Error::UnknownReport`] listing the known ones.
    pub fn find(name: &str) -> Result<&'static Report> {
        REPORTS
            .iter()
            .find(|report| report.name == name)
            .ok_or_else(|| Error::UnknownReport {
                name: name.to_string(),
                known: super::report_names().join(", "),
            })
    }

    /// The parameters the report reads, each once, in registry order.
    pub fn params(&self) -> impl Iterator<Item = &'static ReportParam> {
        self.groups.iter().flat_map(|group| group.iter())
    }

    /// How the report is computed in parts; `None` when it cannot be yet.
    pub fn parts(&self) -> Option<Parts> {
        self.parts
    }

    /// What the report's columns hold.
    pub fn schema(&self) -> ReportSchema {
        self.schema
    }

    /// The fields of the report's answer beside the list its rows come from
    /// (`result` or `result.list`): totals, buckets and the like, which a
    /// table of its rows leaves out; empty for most reports. The query's
    /// echoes beside them (`currency`, `interval`, `metric`, `as_of`,
    /// `breakdown`) are not among them.
    pub fn beside(&self) -> &'static [Column] {
        self.beside
    }

    /// The groups of parameters the report reads.
    pub(crate) fn groups(&self) -> &'static [&'static [ReportParam]] {
        self.groups
    }

    /// Whether the report reads the parameter `name`.
    pub fn takes(&self, name: &str) -> bool {
        self.params().any(|p| p.name == name)
    }

    /// Refuses a parameter the report does not read (the first in name
    /// order), naming it, suggesting the nearest parameter it does read
    /// and listing them all.
    pub fn check(&self, params: &ReportParams) -> Result<()> {
        check_params(self.name, self.groups, params)
    }

    /// Runs the report after [`Report::check`]ing its parameters.
    pub(crate) fn run(
        &self,
        ledger: &Derived<'_>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
    ) -> Result<ReportAnswer> {
        self.check(params)?;
        let params = days_of_instants(params, ledger.settings())?;
        self.run_unchecked(ledger, &params, as_of)
            .map_err(|error| error.in_report(self.name))
    }

    fn run_unchecked(
        &self,
        ledger: &Derived<'_>,
        params: &ReportParams,
        as_of: DateTime<Utc>,
    ) -> Result<ReportAnswer> {
        (self.run)(ledger, params, as_of)
    }

    /// The report, its parameters and its columns as JSON: `{name,
    /// parameters: [{name, accepts}], columns: {shape, columns}}` (what
    /// `GET /reports` lists; see [`ReportSchema::describe`]).
    pub fn describe(&self) -> Value {
        serde_json::json!({
            "name": self.name,
            "parameters": self.params().collect::<Vec<_>>(),
            "columns": self.schema.describe(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ledger;
    use crate::model::Settings;
    use crate::query::{params, recorded_reads};
    use serde_json::json;
    use std::collections::BTreeSet;

    #[test]
    fn an_unknown_parameter_names_itself_the_suggestion_and_the_report_parameters() {
        let mrr = Report::find("mrr").unwrap();
        let err = mrr.check(&params(&[("curency", "EUR")])).unwrap_err();
        assert_eq!(err.code(), "invalid_query");
        assert_eq!(err.field(), Some("curency"));
        assert_eq!(
            err.to_string(),
            format!(
                "parameter `curency`: report `mrr` has no such parameter; did you mean `currency`? Its parameters: {}",
                mrr.params().map(|p| p.name).collect::<Vec<_>>().join(", ")
            )
        );
        let summary = Report::find("summary").unwrap();
        assert_eq!(
            summary
                .check(&params(&[("curency", "EUR")]))
                .unwrap_err()
                .to_string(),
            "parameter `curency`: report `summary` has no such parameter. Its parameters: baseCurrency"
        );
        assert!(summary.check(&params(&[("baseCurrency", "EUR")])).is_ok());
    }

    #[test]
    fn no_report_lists_a_parameter_twice() {
        for report in Report::all() {
            let names: Vec<&str> = report.params().map(|p| p.name).collect();
            let unique: BTreeSet<&str> = names.iter().copied().collect();
            assert_eq!(names.len(), unique.len(), "{}", report.name);
        }
    }

    /// Runs every report's function directly (unchecked) over several
    /// parameter sets and compares the names it read with the registry:
    /// the registry lists exactly what the reports read.
    #[test]
    fn the_registry_lists_exactly_the_parameters_each_report_reads() {
        let mut ledger = Ledger::new(Settings::default());
        ledger.upsert_plans(&[json!({"id": "m", "name": "Monthly", "interval": "month", "interval_count": 1, "currency": "USD"})]);
        ledger.upsert_customers(&[json!({"id": "c1", "name": "Acme"})]);
        ledger.upsert_invoices(&[json!({
            "id": "i1", "customer_id": "c1", "type": "subscription", "plan_id": "m",
            "invoice_date": "2024-01-15", "amount": 1000, "currency": "USD"
        })]);
        let ledger = ledger.derived();
        let as_of = "2024-06-01T00:00:00Z".parse().unwrap();
        let variants = [
            params(&[]),
            params(&[("selected-date", "2024-01-01"), ("fix_fx", "true")]),
            params(&[("customer", "c1"), ("fix_fx", "true")]),
            params(&[
                ("selected-date", "2024-01-01"),
                ("customer", "c1"),
                ("breakdown", "plan"),
            ]),
        ];
        for report in Report::all() {
            let mut read = BTreeSet::new();
            for variant in &variants {
                let (_, names) = recorded_reads(|| {
                    report
                        .run_unchecked(&ledger, variant, as_of)
                        .map(ReportAnswer::into_json)
                });
                read.extend(names);
            }
            let listed: BTreeSet<String> = report.params().map(|p| p.name.to_string()).collect();
            assert_eq!(read, listed, "report {}", report.name);
        }
    }
}
