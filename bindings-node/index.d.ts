// Types of the npm package `submetrics`. Amounts are integer cents as
// numbers (exact up to 2^53 cents). Keys are snake_case, as in the REST API.

export type ErrorCode =
  | 'invalid_record'
  | 'not_found'
  | 'conflict'
  | 'unknown_report'
  | 'invalid_query'
  | 'invalid_setting'
  | 'missing_fx_rate'
  | 'out_of_range'
  | 'invalid_argument'

export declare class SubmetricsError extends Error {
  readonly code: ErrorCode
  readonly recordId?: string
  readonly field?: string
  /** The HTTP status, for an error a service answered (see Client). */
  readonly status?: number
}

export { Client, ClientOptions } from './client/index'

export interface Settings {
  base_currency?: string
  timezone?: string
  /** 0 = Sunday, 1 = Monday. */
  first_day_of_week?: number
  churn_grace_days?: number
  refund_handling?: 'reduce' | 'ignore'
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

/**
 * A date (`YYYY-MM-DD`) or an ISO 8601 timestamp, as records carry them, or
 * a `Date`: its instant, read as `toISOString` writes it (an invalid `Date`
 * fails the call, naming the record and field).
 */
export type DateText = string | Date
/** A record id: text, or a number or a BigInt within 64 bits (stored as its text). */
export type Id = string | number | bigint
/**
 * An amount in cents: a number, exact up to 2^53 - 1, or a BigInt within
 * 64 bits (as database drivers hand out 64-bit columns).
 */
export type Cents = number | bigint
export type BillingInterval = 'day' | 'week' | 'month' | 'year'
export type InvoiceType = 'subscription' | 'one-time' | 'refund' | 'cancellation'

// ---- record inputs: the data-API shape and the import shape -------------

interface CustomerFields {
  id: Id
  name: string
  email?: string | null
  country?: string | null
  currency?: string | null
  status?: string | null
  trial_started?: DateText | null
  paid_started?: DateText | null
  trial_end_date?: DateText | null
  cancel_date?: DateText | null
  overdue_date?: DateText | null
  cancel_reason?: string | null
  data_source?: string | null
}
/** A customer in the data-API shape. */
export interface CustomerInput extends CustomerFields {
  created_date?: DateText | null
  custom_variables?: Record<string, string>
}
/** A customer in the import shape (`created`, `metadata`). */
export interface CustomerImportInput extends CustomerFields {
  created?: DateText | null
  metadata?: Record<string, string>
}

interface PlanFields {
  id: Id
  name: string
  currency: string
  product_name?: string | null
  pricing_model?: 'licensed' | 'metered'
  data_source?: string | null
}
/** A plan in the data-API shape. */
export interface PlanInput extends PlanFields {
  billing_freq: BillingInterval
  billing_freq_count?: number
}
/** A plan in the import shape (`interval`, `interval_count`). */
export interface PlanImportInput extends PlanFields {
  interval: BillingInterval
  interval_count?: number
}

/** A plan group: plan ids or `{ id }` objects; an id is assigned when absent. */
export interface PlanGroupInput {
  id?: Id
  name: string
  plans?: Array<Id | { id: Id }>
}

export interface InvoiceLineInput {
  description?: string
  amount?: Cents
  amount_in_cents?: Cents
  quantity?: number
  period_start?: DateText
  period_end?: DateText
  service_period_start?: DateText
  service_period_end?: DateText
}
export interface TransactionInput {
  id?: Id
  external_id?: Id
  type: 'payment' | 'refund'
  result: 'successful' | 'failed'
  date: DateText
  amount?: Cents
  amount_in_cents?: Cents
}
interface InvoiceFields {
  id: Id
  type: InvoiceType
  currency: string
  plan_id?: string | null
  quantity?: number
  status?: 'paid' | 'open' | 'failed' | 'void'
  due_date?: DateText | null
  payment_method?: string | null
  description?: string | null
  refunded_invoice_id?: string | null
  lines?: InvoiceLineInput[]
  line_items?: InvoiceLineInput[]
  transactions?: TransactionInput[]
}
/** An invoice in the data-API shape; amounts in cents. */
export interface InvoiceInput extends InvoiceFields {
  customer_id: Id
  invoice_date: DateText
  amount: Cents
  period_start?: DateText | null
  period_end?: DateText | null
  subscription_id?: string | null
  payment_date?: DateText | null
  invoice_number?: string | null
  tax_amount?: Cents
  discount_amount?: Cents
  data_source?: string | null
}
/** An invoice in the import shape (`customer_external_id`, `date`, `amount_in_cents`, ...). */
export interface InvoiceImportInput extends InvoiceFields {
  customer_external_id: Id
  date: DateText
  amount_in_cents: Cents
  service_period_start?: DateText | null
  service_period_end?: DateText | null
  subscription_external_id?: string | null
  paid_date?: DateText | null
  number?: string | null
  tax?: Cents
  discount?: Cents
  data_source_id?: string | null
}

export interface DataSourceInput {
  id: Id
  name?: string
  type?: string
}

/** One exchange rate: units of `currency` per one base-currency unit on `date`. */
export interface FxRateInput {
  date: DateText
  currency: string
  rate: number
}

/** One record or an array of them. */
export type Records<T = RecordInput> = T | T[]
/** Any record (fields the core does not know are ignored). */
export type RecordInput = { id?: Id; [field: string]: unknown }

// ---- stored records -----------------------------------------------------

export interface Customer {
  id: string
  name: string
  email: string | null
  created_date: string | null
  country: string | null
  currency: string | null
  status: string | null
  trial_started: string | null
  paid_started: string | null
  trial_end_date: string | null
  cancel_date: string | null
  overdue_date: string | null
  cancel_reason: string | null
  custom_variables: Record<string, string>
  data_source: string | null
}
export interface Plan {
  id: string
  name: string
  billing_freq: BillingInterval
  billing_freq_count: number
  currency: string
  product_name: string | null
  data_source: string | null
  pricing_model: 'licensed' | 'metered'
}
/** A plan group as read: its plans as objects (written with their ids). */
export interface PlanGroup {
  id: string
  name: string
  plans: PlanGroupPlan[]
}
export interface PlanGroupPlan {
  id: string
  name: string
  billing_freq: BillingInterval
  billing_freq_count: number
  product_name: string | null
  currency: string
}
export interface Invoice {
  id: string
  customer_id: string
  type: InvoiceType
  invoice_date: string
  amount: number
  currency: string
  plan_id: string | null
  period_start: string | null
  period_end: string | null
  subscription_id: string | null
  quantity: number
  status: 'paid' | 'open' | 'failed' | 'void'
  due_date: string | null
  payment_date: string | null
  payment_method: string | null
  description: string | null
  invoice_number: string | null
  tax_amount: number
  discount_amount: number
  lines: Array<Record<string, JsonValue>>
  transactions: Array<Record<string, JsonValue>>
  refunded_invoice_id: string | null
  data_source: string | null
}
export interface DataSource {
  id: string
  name: string
  type: string
}

export interface WriteResult {
  id: string
  import_status: 'inserted' | 'error'
  import_error?: string
}

/** Options of `importStripe` (docs/stripe.md). */
export interface StripeImportOptions {
  /** How `uncollectible` invoices count: as failed (default) or void. */
  uncollectible?: 'failed' | 'void'
  /** The data source every record names; `stripe` by default. */
  data_source?: string
}

/** An object or record the Stripe import could not use or store. */
export interface StripeRejection {
  object: string
  id: string
  field: string
  reason: string
}

/** What `importStripe` did. */
export interface StripeImport {
  customers: number
  plans: number
  invoices: number
  removed: number
  skipped: Array<{ object: string; id: string; reason: string }>
  rejected: StripeRejection[]
}

export interface Page<T> {
  count: number
  list: T[]
}

export interface ListOptions {
  /** Default: the core's page size, 100. */
  limit?: number
  offset?: number
}

export type MovementType = 'new' | 'expansion' | 'contraction' | 'churn' | 'reactivation'

export interface Movement {
  date: string
  customer_id: string
  type: MovementType
  subtype: string
  mrr_change: number
  mrr_change_base_currency: number
  customer_count_change: number
  quantity_change: number
  currency: string
  plans_before: string[]
  plans_after: string[]
}

export interface MovementFilters {
  customer?: string
  /** First day included: `YYYY-MM-DD`, or a Date / ISO instant meaning its day in the ledger's time zone. */
  from?: string | Date
  /** Last day included, as `from`. */
  to?: string | Date
  kinds?: MovementType[]
}

/**
 * Report query parameters: the HTTP names (`selected-date`, `fix_fx`, ...).
 * A Date value means its day in the ledger's time zone; `undefined` or
 * `null` means the parameter's default, but a name the report does not read
 * is an `invalid_query` error all the same. A bigint is its digits. A
 * string holding a lone UTF-16 surrogate, NaN or an infinity is an
 * `invalid_query` error naming the parameter.
 */
export type ReportParams = Record<string, string | number | bigint | boolean | Date | Array<string | number | bigint | boolean> | undefined | null>
export interface MrrPeriod {
  date: string
  end_date: string
  new: number
  expansion: number
  contraction: number
  churn: number
  reactivation: number
  mrr_diff: number
  customers_diff: number
  start_mrr: number
  start_customers: number
  total_mrr: number
  total_arr: number
  total_customers: number
  arpa: number
  asp: number
  quick_ratio: number | null
  customer_churn_rate: number | null
  mrr_churn_rate: number | null
  net_mrr_churn_rate: number | null
  customer_retention_rate: number | null
  mrr_retention_rate: number | null
  nrr: number | null
  customer_churn_avg: number | null
  ltv: number | null
  customer_lifetime: number | null
  fx_adjustment: number
  breakdown?: Record<string, Record<string, JsonValue>>
}

export interface MrrReport {
  currency: string
  breakdown: string | null
  result: MrrPeriod[]
}

export interface SummaryReport {
  summary: { mrr_current: number; arr_current: number; subscribers_current: number; arpa_current: number }
  currency: string
}

export interface CustomerListItem {
  id: string
  name: string
  email: string | null
  created_date: string | null
  country: string | null
  mrr: number
  trial_started: string | null
  paid_started: string | null
  cancel_date: string | null
  status: 'lead' | 'trial' | 'active' | 'cancelled'
  currency: string
}

export interface CustomerDetail extends Omit<CustomerListItem, 'mrr'> {
  current_subscriptions: Array<{
    subscription_id: string | null
    plan_id: string
    name: string
    billing_freq: 'day' | 'week' | 'month' | 'year'
    billing_freq_count: number
    currency: string
    mrr: number
    quantity: number
  }>
  converted_mrr: number
  converted_currency: string
  custom_variables: Record<string, string>
}

export interface MovementTableRow extends Omit<Movement, 'date'> {
  /** The period the movement falls in. */
  date: string
  movement_date: string
  customer_name: string
  customer_email: string | null
  description: string
}

export interface MovementTableReport {
  result: Page<MovementTableRow>
}

/** The `*-table` reports: one row per metric, one value per period column. */
export interface TableReport {
  currency: string
  interval?: string
  columns: string[]
  rows: Array<{ metric: string; label: string; type?: string; values: Array<number | null> }>
}

export interface CustomerList {
  result: Page<CustomerListItem>
}

/** Any report's result (see docs/reports.md for each one's shape). */
export type ReportResult = { [key: string]: JsonValue }

export type TableReportName =
  | 'mrr-table'
  | 'mrr-table-subtypes'
  | 'leads-table'
  | 'transactions-table'
  | 'cashflow-refunds-table'
  | 'cashflow-failed-payments-table'

export type Instant = Date | string

/** Options of a Ledger (not settings of the account). */
export interface LedgerOptions {
  /**
   * An integer beyond 2^53 - 1 in a JSON answer (which a number would
   * round) as a BigInt, where a field's type says number; without it, such
   * an answer is an `out_of_range` error naming the value's place.
   */
  bigints?: boolean
}

export declare class Ledger {
  constructor(settings?: Settings, options?: LedgerOptions)
  readonly settings: Required<Settings>
  updateSettings(patch: Settings): Required<Settings>
  loadFxRates(rows: Records<FxRateInput>): number
  upsertCustomers(records: Records<CustomerInput | CustomerImportInput>): WriteResult[]
  upsertPlans(records: Records<PlanInput | PlanImportInput>): WriteResult[]
  upsertPlanGroups(records: Records<PlanGroupInput>): WriteResult[]
  upsertInvoices(records: Records<InvoiceInput | InvoiceImportInput>): WriteResult[]
  upsertDataSources(records: Records<DataSourceInput>): WriteResult[]
  /** Imports Stripe API objects (any mix of kinds, list responses and events). */
  importStripe(objects: Records<Record<string, unknown>>, options?: StripeImportOptions): StripeImport
  /**
   * Upserts the rows of an Arrow IPC stream (as apache-arrow's `tableToIPC`
   * writes it; buffers may be LZ4- or Zstandard-compressed, to at most
   * 4 GiB together), one record per row, a column per field; answers the
   * per-record results (`id`, `import_status`, `import_error`) as an IPC
   * stream (`tableFromIPC` reads it), a batch per input batch,
   * `import_status` dictionary-encoded. Bytes that are not a readable
   * stream throw a SubmetricsError naming the problem, before anything is
   * stored.
   */
  upsertCustomersArrow(stream: Uint8Array): Buffer
  upsertPlansArrow(stream: Uint8Array): Buffer
  upsertPlanGroupsArrow(stream: Uint8Array): Buffer
  upsertInvoicesArrow(stream: Uint8Array): Buffer
  upsertDataSourcesArrow(stream: Uint8Array): Buffer
  /** Throws SubmetricsError `not_found`. */
  getCustomer(id: string): Customer
  getPlan(id: string): Plan
  getPlanGroup(id: string): PlanGroup
  getInvoice(id: string): Invoice
  getDataSource(id: string): DataSource
  listCustomers(options?: ListOptions): Page<Customer>
  /** Of one data source with `source` (an `invalid_query` error when it is empty). */
  listPlans(options?: ListOptions & { source?: string }): Page<Plan>
  listPlanGroups(options?: ListOptions): Page<PlanGroup>
  /** Of one customer with `customer` (a `not_found` error when there is none, `invalid_query` when it is empty). */
  listInvoices(options?: ListOptions & { customer?: string }): Page<Invoice>
  listDataSources(options?: ListOptions): Page<DataSource>
  deleteCustomer(id: string): void
  deletePlan(id: string): void
  deletePlanGroup(id: string): void
  deleteInvoice(id: string): void
  deleteDataSource(id: string): void
  updateCustomer(id: string, patch: Partial<CustomerInput | CustomerImportInput>): Customer
  updatePlan(id: string, patch: Partial<PlanInput | PlanImportInput>): Plan
  /** Changes the name and/or type of a data source (each a non-empty string). */
  updateDataSource(id: string, patch: { name?: string; type?: string }): DataSource
  /** Replaces a plan group's name and plans; returns the group. */
  updatePlanGroup(id: string, group: PlanGroupInput): PlanGroup
  /** Replaces (or creates) the invoice `id` with `record`, whose id, when given, is `id`. */
  replaceInvoice(id: string, record: Omit<InvoiceInput, 'id'> & { id?: string }): void
  /**
   * Every movement at `asOf`. Answers of the JSON calls (this, `report`,
   * `customers`, `customer`, ...) hold integers as numbers: one beyond
   * 2^53 - 1, which a number would round, is an `out_of_range` error naming
   * its place, or a BigInt with the option `bigints`; the Arrow calls
   * answer it exactly, as a BigInt.
   */
  movements(asOf?: Instant, filters?: MovementFilters): Movement[]
  /** `movements` as an Arrow IPC stream, one row per movement (amounts as int64), a record batch per 65,536 rows. */
  movementsArrow(asOf?: Instant, filters?: MovementFilters): Buffer
  /**
   * A report as an Arrow IPC stream: a table report one row per metric
   * (`metric`, then a column per period), a series or list one row per
   * entry, any other one row; integers as int64.
   */
  reportArrow(name: string, query?: ReportParams, asOf?: Instant): Buffer
  /** `movements` computed on the thread pool. */
  movementsAsync(asOf?: Instant, filters?: MovementFilters): Promise<Movement[]>
  report(name: 'summary', query?: ReportParams, asOf?: Instant): SummaryReport
  report(name: 'mrr', query?: ReportParams, asOf?: Instant): MrrReport
  report(name: 'movement-table', query?: ReportParams, asOf?: Instant): MovementTableReport
  report(name: TableReportName, query?: ReportParams, asOf?: Instant): TableReport
  report(name: string, query?: ReportParams, asOf?: Instant): ReportResult
  /** `report` computed on the thread pool. */
  reportAsync(name: 'summary', query?: ReportParams, asOf?: Instant): Promise<SummaryReport>
  reportAsync(name: 'mrr', query?: ReportParams, asOf?: Instant): Promise<MrrReport>
  reportAsync(name: 'movement-table', query?: ReportParams, asOf?: Instant): Promise<MovementTableReport>
  reportAsync(name: TableReportName, query?: ReportParams, asOf?: Instant): Promise<TableReport>
  reportAsync(name: string, query?: ReportParams, asOf?: Instant): Promise<ReportResult>
  customers(query?: ReportParams, asOf?: Instant): CustomerList
  /** The analytics detail of one customer at `asOf` (default now); throws `not_found`. */
  customer(id: string, asOf?: Instant, query?: ReportParams): CustomerDetail
}

export declare function reportNames(): string[]
