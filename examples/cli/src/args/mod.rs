//! The command line.

mod params;
mod placement;

pub use params::{not_blank, pairs};
pub use placement::{hoist_globals, local_options_first, repeated_global};

use crate::output::Format;
use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "submetrics",
    version,
    about = "The submetrics client: reports, customers and data from the REST API, or offline from exported files",
    after_help = "The API key comes from --api-key, else SUBMETRICS_API_KEY, else `api_key` in ~/.submetrics.json."
)]
pub struct Cli {
    /// API key (else SUBMETRICS_API_KEY, else `api_key` in ~/.submetrics.json).
    #[arg(long, global = true)]
    pub api_key: Option<String>,
    /// Service address (else SUBMETRICS_API_URL, else `api_url` in ~/.submetrics.json, else http://localhost:8080).
    #[arg(long, global = true)]
    pub api_url: Option<String>,
    /// Output format: a table on a terminal, JSON when piped, unless given.
    #[arg(long, value_enum, default_value = "auto", global = true)]
    pub format: Format,
    /// No colors in tables.
    #[arg(long, global = true)]
    pub no_color: bool,
    /// Log the HTTP traffic with the service to stderr (the key masked);
    /// refused by local and stripe export, which have none.
    #[arg(long, global = true)]
    pub verbose: bool,
    /// The instant to compute at (ISO 8601 instant, or a date meaning its
    /// end; default now): for reports, customers, exports movements and
    /// local, before or after the command.
    #[arg(long, global = true)]
    pub as_of: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run a report: `reports mrr --date 20240101-20241231 --interval month`.
    /// Every other `--name value` is a parameter of the report (--date,
    /// --interval, --currency, --region, --plan, --country, --data-source,
    /// --breakdown, ...); one the report does not take is an error.
    #[command(after_help = report_list())]
    Reports {
        /// The report (listed below).
        name: String,
        /// The report's parameters, as `--name value` pairs (`--interval month`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        params: Vec<String>,
    },
    /// Analytics customers.
    Customers {
        #[command(subcommand)]
        action: CustomersAction,
    },
    /// Plans.
    Plans {
        #[command(subcommand)]
        action: PlansAction,
    },
    /// Records of the data API.
    Data {
        /// The kind of records.
        #[arg(value_enum)]
        resource: Resource,
        #[command(subcommand)]
        action: DataAction,
    },
    /// Everything of one kind on stdout: CSV, or with --format json one
    /// JSON array (--format table, a table).
    Exports {
        /// The kind of records, or the movements.
        #[arg(value_enum)]
        what: Export,
        /// For movements: query parameters of movement-table (`--date ...`);
        /// for records, those of their list besides paging (`--customer`
        /// of invoices, `--source` of plans).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        params: Vec<String>,
    },
    /// Send records from files to the service, in batches, into a data
    /// source or not: `import invoices --source billing 'exports/invoices-*.parquet'`.
    /// Files as `local` reads them (.json, .jsonl, .csv, .parquet; the text
    /// formats also .gz or .zst); each rejected record is printed on stderr with its file and line (row in Parquet).
    Import(ImportArgs),
    /// Notification settings.
    Settings {
        #[command(subcommand)]
        action: Option<SettingsAction>,
    },
    /// Payment-platform and CRM connections.
    Integrations,
    /// The account.
    Account {
        #[command(subcommand)]
        action: Option<AccountAction>,
    },
    /// Any request: `api GET /reports/mrr interval=week`, `api POST /data/plans --body @plans.json`.
    Api {
        /// The HTTP method (GET, POST, PUT, DELETE, ...).
        method: String,
        /// The path under /v1, e.g. /reports/mrr.
        path: String,
        /// key=value pairs: query parameters for GET and DELETE, body fields otherwise.
        pairs: Vec<String>,
        /// JSON body, @file, or - for stdin.
        #[arg(long)]
        body: Option<String>,
    },
    /// Offline: load exported files and compute with the engine, no server.
    Local(Box<LocalArgs>),
    /// Stripe: `stripe export --to DIR --api-key sk_...` downloads the
    /// objects `local --stripe DIR` reads.
    Stripe {
        #[command(subcommand)]
        action: StripeAction,
    },
}

#[derive(Subcommand)]
pub enum StripeAction {
    /// Download customers, products, prices, subscriptions, invoices (with
    /// all their lines), credit notes, refunds and charges into DIR, one
    /// list response per kind (`customers.json`, ...). The Stripe key is
    /// --api-key, else STRIPE_API_KEY.
    Export {
        /// The directory to write (created if missing).
        #[arg(long)]
        to: std::path::PathBuf,
        /// Base URL of the Stripe API.
        #[arg(long, default_value = "https://api.stripe.com")]
        api_base: String,
    },
}

#[derive(Subcommand)]
pub enum CustomersAction {
    /// The customer list (`--status`, `--q`, ... pass through).
    List {
        /// Rows per page (the service's default 100, at most 10,000).
        #[arg(long)]
        limit: Option<usize>,
        /// Rows to skip before the page.
        #[arg(long)]
        offset: Option<usize>,
        /// Filters and sorting as `--name value` pairs (`--status active`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        params: Vec<String>,
    },
    /// One customer's detail.
    Get {
        /// The customer's id.
        id: String,
    },
    /// Recalculate one customer.
    Resync {
        /// The customer's id.
        id: String,
    },
}

#[derive(Subcommand)]
pub enum PlansAction {
    /// A page of plans.
    List {
        /// Rows per page (the service's default 100, at most 10,000).
        #[arg(long)]
        limit: Option<usize>,
        /// Rows to skip before the page.
        #[arg(long)]
        offset: Option<usize>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Resource {
    Customers,
    Plans,
    PlanGroups,
    DataSources,
    Invoices,
}

impl Resource {
    pub fn path(&self) -> &'static str {
        match self {
            Resource::Customers => "/data/customers",
            Resource::Plans => "/data/plans",
            Resource::PlanGroups => "/data/plan-groups",
            Resource::DataSources => "/data/data-sources",
            Resource::Invoices => "/data/invoices",
        }
    }
}

#[derive(Subcommand)]
pub enum DataAction {
    /// A page of records.
    List {
        /// Rows per page (the service's default 100, at most 10,000).
        #[arg(long)]
        limit: Option<usize>,
        /// Rows to skip before the page.
        #[arg(long)]
        offset: Option<usize>,
        /// Invoices: those of this customer only.
        #[arg(long)]
        customer: Option<String>,
        /// Plans: those of this data source only.
        #[arg(long)]
        source: Option<String>,
    },
    /// One record.
    Get {
        /// The record's id.
        id: String,
    },
    /// Create (or replace) records: --body '{...}' | '[...]' | @file | - (stdin).
    Create {
        /// The records: JSON, @file, or - for stdin.
        #[arg(long)]
        body: Option<String>,
    },
    /// Change fields of one record.
    Update {
        /// The record's id.
        id: String,
        /// The fields to change: JSON, @file, or - for stdin.
        #[arg(long)]
        body: Option<String>,
    },
    /// Delete one record.
    Delete {
        /// The record's id.
        id: String,
    },
}

#[derive(Args)]
pub struct ImportArgs {
    /// The kind of the records.
    #[arg(value_enum)]
    pub collection: ImportCollection,
    /// The data source the records go to (it must exist: `data data-sources
    /// create`); without it, customers, plans and invoices go to the data
    /// API's upserts, with no data source.
    #[arg(long)]
    pub source: Option<String>,
    /// Records per request (each request is one write).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub batch: u32,
    /// Exit 1 if any record is rejected.
    #[arg(long)]
    pub strict: bool,
    /// The files: a file, a directory (every file under it), or a quoted
    /// glob such as 'exports/invoices-*.parquet'.
    #[arg(required = true, value_name = "PATH")]
    pub files: Vec<String>,
}

/// The kinds of records a data source imports.
#[derive(Clone, Copy, ValueEnum)]
pub enum ImportCollection {
    Customers,
    Plans,
    PlanGroups,
    Invoices,
}

impl ImportCollection {
    /// The collection's name in the import path and in record files.
    pub fn name(self) -> &'static str {
        match self {
            ImportCollection::Customers => "customers",
            ImportCollection::Plans => "plans",
            ImportCollection::PlanGroups => "plan_groups",
            ImportCollection::Invoices => "invoices",
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Export {
    Customers,
    Plans,
    Invoices,
    Movements,
}

#[derive(Subcommand)]
pub enum SettingsAction {
    /// The notification settings (the default).
    Show,
    /// Change parts of the notification settings.
    Update {
        /// The settings to change: JSON, @file, or - for stdin.
        #[arg(long)]
        body: Option<String>,
    },
}

#[derive(Subcommand)]
pub enum AccountAction {
    /// The account: its name and ledger settings (the default).
    Show,
    /// The account's plan, limits and usage.
    Billing,
    /// The team's members and pending invitations.
    Team,
    /// The API keys: id, name, role, creation and whether revoked (never the key).
    ApiKeys,
    /// Change the name or ledger settings.
    Update {
        /// The fields to change: JSON, @file, or - for stdin.
        #[arg(long)]
        body: Option<String>,
    },
}

#[derive(Args)]
pub struct LocalArgs {
    /// Directory of customers.*, plans.*, invoices.* (and plan_groups.*,
    /// fx_rates.*, data_sources.*) as .json, .jsonl, .csv or .parquet (the
    /// first three also compressed, as .gz or .zst after them); a
    /// collection may be split over files such as invoices-1.parquet,
    /// invoices-2.parquet or be a directory invoices/ of them (a part in
    /// two forms, invoices.jsonl beside invoices.parquet, is an error); one given by
    /// its own option (--invoices, ...) is read from there instead. A file
    /// or directory named near a collection (invoice.jsonl, customer/) is an
    /// error, and so is a collection's file of no format (invoices.txt;
    /// extensions are read in any case); other files of records are noted
    /// as not read. An FX
    /// rate is units of its currency per one unit of the base currency.
    #[arg(long, required_unless_present_any = ["stripe", "customers", "plans", "plan_groups", "invoices", "fx_rates", "data_sources"])]
    pub data: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub collections: CollectionFiles,
    /// Directory of Stripe API objects: customers, products, prices, plans,
    /// subscriptions, invoices, credit_notes, refunds, charges, events (each
    /// .json, a list response or an array, or .jsonl), as `stripe export`
    /// writes it; mapped as docs/stripe.md says. With --data, both load.
    #[arg(long)]
    pub stripe: Option<std::path::PathBuf>,
    /// How --stripe counts an uncollectible invoice: `failed` (past due:
    /// its subscription keeps MRR until it lapses) or `void` (it never
    /// counts), as the service's Stripe connection option [default: failed]
    #[arg(long, value_name = "failed|void", requires = "stripe")]
    pub stripe_uncollectible: Option<String>,
    /// Currency every report converts to, a three-letter code [default: USD]
    #[arg(long)]
    pub base_currency: Option<String>,
    /// IANA time zone of the daily grid and of bare dates in records, e.g.
    /// Europe/Paris [default: UTC]
    #[arg(long)]
    pub timezone: Option<String>,
    /// First day of a reporting week: 0 = Sunday, 1 = Monday, ... 6 =
    /// Saturday [default: 1]
    #[arg(long)]
    pub first_day_of_week: Option<u32>,
    /// Days after the end of a service period before a missing renewal is
    /// churn [default: 7]
    #[arg(long)]
    pub churn_grace_days: Option<u32>,
    /// `reduce`: a refund reduces its subscription's MRR proportionally;
    /// `ignore`: refunds are cash flow only [default: reduce]
    #[arg(long)]
    pub refund_handling: Option<String>,
    /// Exit 1 if any record is rejected.
    #[arg(long)]
    pub strict: bool,
    /// Print the load and compute times on stderr.
    #[arg(long)]
    pub timing: bool,
    #[command(subcommand)]
    pub command: LocalCommand,
}

/// Where a collection's records are, when not in the `--data` directory:
/// each option takes a file, a directory (every file under it), or a glob
/// pattern in quotes (see `record_files::files_matching`), and may be repeated. A
/// collection given here is read from these files only, not from `--data`.
#[derive(Args, Default)]
pub struct CollectionFiles {
    /// Customer files: a file, a directory (every file under it; names
    /// starting with `.` or `_` passed over), or a quoted glob such as
    /// 'exports/customers-*.parquet' (`**` for any depth); repeatable.
    #[arg(long, value_name = "PATH")]
    pub customers: Vec<String>,
    /// Plan files (as --customers).
    #[arg(long, value_name = "PATH")]
    pub plans: Vec<String>,
    /// Plan group files (as --customers).
    #[arg(long, value_name = "PATH")]
    pub plan_groups: Vec<String>,
    /// Invoice files (as --customers), e.g. a Spark or DuckDB output
    /// directory, or 'lake/invoices/**/*.parquet'.
    #[arg(long, value_name = "PATH")]
    pub invoices: Vec<String>,
    /// FX rate files (as --customers).
    #[arg(long, value_name = "PATH")]
    pub fx_rates: Vec<String>,
    /// Data source files (as --customers).
    #[arg(long, value_name = "PATH")]
    pub data_sources: Vec<String>,
}

impl CollectionFiles {
    /// The option of each collection (as `--data` names its files) and
    /// the paths it was given, in the order collections load: FX rates
    /// first, each record kind before those that refer to it.
    pub fn options(&self) -> [(&'static str, &'static str, &[String]); 6] {
        [
            ("fx_rates", "--fx-rates", &self.fx_rates),
            ("data_sources", "--data-sources", &self.data_sources),
            ("customers", "--customers", &self.customers),
            ("plans", "--plans", &self.plans),
            ("plan_groups", "--plan-groups", &self.plan_groups),
            ("invoices", "--invoices", &self.invoices),
        ]
    }
}

/// The report names, for `reports --help`.
fn report_list() -> String {
    format!(
        "Reports: {}.\nGET /reports on the service lists each report's parameters.",
        submetrics::reports::report_names().join(", ")
    )
}

#[derive(Subcommand)]
pub enum LocalCommand {
    /// Run a report on the loaded records: `reports mrr --interval month`
    /// (parameters as the online `reports`).
    #[command(after_help = report_list())]
    Reports {
        /// The report (listed below).
        name: String,
        /// The report's parameters, as `--name value` pairs (`--interval month`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        params: Vec<String>,
    },
    /// Analytics customers of the loaded records.
    Customers {
        #[command(subcommand)]
        action: LocalCustomers,
    },
    /// Every movement, oldest first, filtered by the options.
    Movements {
        /// Only this customer's movements.
        #[arg(long)]
        customer: Option<String>,
        /// First day (YYYY-MM-DD).
        #[arg(long)]
        from: Option<String>,
        /// Last day (YYYY-MM-DD).
        #[arg(long)]
        to: Option<String>,
        /// Types, comma-separated: new, expansion, contraction, churn, reactivation.
        #[arg(long)]
        kinds: Option<String>,
    },
}

#[derive(Subcommand)]
pub enum LocalCustomers {
    /// The customer list (`--status`, `--q`, `--limit`, ... as the online list).
    List {
        /// Filters, sorting and paging as `--name value` pairs.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        params: Vec<String>,
    },
    /// One customer's detail.
    Get {
        /// The customer's id.
        id: String,
    },
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// The commands and options in `command` (and under it) that `--help`
    /// would list without a word on what they do.
    fn undescribed(command: &clap::Command, path: &str, found: &mut Vec<String>) {
        for arg in command.get_arguments() {
            let builtin = matches!(arg.get_id().as_str(), "help" | "version");
            if !builtin && arg.get_help().is_none() && arg.get_long_help().is_none() {
                found.push(format!("{path} {}", arg.get_id()));
            }
        }
        for sub in command.get_subcommands() {
            let sub_path = format!("{path} {}", sub.get_name());
            if sub.get_name() != "help" && sub.get_about().is_none() {
                found.push(sub_path.clone());
            }
            undescribed(sub, &sub_path, found);
        }
    }

    #[test]
    fn every_command_and_option_says_what_it_is() {
        let mut found = Vec::new();
        undescribed(&Cli::command(), "submetrics", &mut found);
        assert_eq!(found, Vec::<String>::new());
    }
}
