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
  | 'invalid_argument'

export declare class SubmetricsError extends Error {
  readonly code: ErrorCode
  readonly recordId?: string
  readonly field?: string
}

export interface Settings {
  base_currency?: string
  timezone?: string
  /** 0 = Sunday, 1 = Monday. */
  first_day_of_week?: number
  churn_grace_days?: number
  refund_handling?: 'reduce' | 'ignore'
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }
export type RecordInput = { id?: string | number; [field: string]: unknown }
export type Records = RecordInput | RecordInput[]

export interface WriteResult {
  id: string
  import_status: 'inserted' | 'error'
  import_error?: string
}

export interface Page<T> {
  count: number
  list: T[]
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
  /** First day included (YYYY-MM-DD). */
  from?: string
  /** Last day included (YYYY-MM-DD). */
  to?: string
  kinds?: MovementType[]
}

/** Report query parameters: the HTTP names (`selected-date`, `fix_fx`, ...). */
export type ReportParams = Record<string, string | number | boolean | Date | string[] | undefined | null>

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

export type Instant = Date | string

export declare class Ledger {
  constructor(settings?: Settings)
  readonly settings: Required<Settings>
  updateSettings(patch: Settings): Required<Settings>
  loadFxRates(rows: Array<{ date: string; currency: string; rate: number }>): number
  upsertCustomers(records: Records): WriteResult[]
  upsertPlans(records: Records): WriteResult[]
  upsertPlanGroups(records: Records): WriteResult[]
  upsertInvoices(records: Records): WriteResult[]
  upsertDataSources(records: Records): WriteResult[]
  getCustomer(id: string): Record<string, JsonValue>
  getPlan(id: string): Record<string, JsonValue>
  getPlanGroup(id: string): Record<string, JsonValue>
  getInvoice(id: string): Record<string, JsonValue>
  getDataSource(id: string): Record<string, JsonValue>
  listCustomers(options?: { limit?: number; offset?: number }): Page<Record<string, JsonValue>>
  listPlans(options?: { limit?: number; offset?: number }): Page<Record<string, JsonValue>>
  listPlanGroups(options?: { limit?: number; offset?: number }): Page<Record<string, JsonValue>>
  listInvoices(options?: { limit?: number; offset?: number }): Page<Record<string, JsonValue>>
  listDataSources(options?: { limit?: number; offset?: number }): Page<Record<string, JsonValue>>
  deleteCustomer(id: string): void
  deletePlan(id: string): void
  deletePlanGroup(id: string): void
  deleteInvoice(id: string): void
  deleteDataSource(id: string): void
  updateCustomer(id: string, patch: Record<string, unknown>): Record<string, JsonValue>
  updatePlan(id: string, patch: Record<string, unknown>): Record<string, JsonValue>
  movements(asOf?: Instant, filters?: MovementFilters): Movement[]
  movementsAsync(asOf?: Instant, filters?: MovementFilters): Promise<Movement[]>
  report(name: 'mrr', query?: ReportParams, asOf?: Instant): MrrReport
  report(name: 'summary', query?: ReportParams, asOf?: Instant): SummaryReport
  report(name: string, query?: ReportParams, asOf?: Instant): any
  reportAsync(name: 'mrr', query?: ReportParams, asOf?: Instant): Promise<MrrReport>
  reportAsync(name: string, query?: ReportParams, asOf?: Instant): Promise<any>
  customers(query?: ReportParams, asOf?: Instant): { result: Page<CustomerListItem> }
  customer(id: string, query?: ReportParams, asOf?: Instant): CustomerDetail
}

export declare function reportNames(): string[]
