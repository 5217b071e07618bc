// Types of the service client, from the types generated out of the
// service's OpenAPI description (api.d.ts, by openapi-typescript).
import type { components, operations } from './api'

type Schemas = components['schemas']
export type ApiSchemas = Schemas
export type OperationId = keyof operations

export type ErrorCode =
  | Schemas['Error']['code']
  | 'invalid_argument'
  | 'timeout'
  | 'unreachable'
  | `http_${number}`

export declare class SubmetricsError extends Error {
  readonly code: ErrorCode
  readonly recordId?: string
  readonly field?: string
  /** The HTTP status of a service's error answer. */
  readonly status?: number
}

export interface ClientOptions {
  /** The service, e.g. https://analytics.example.com (default SUBMETRICS_API_URL, else http://localhost:8080). */
  baseUrl?: string
  /** The API key (default SUBMETRICS_API_KEY in Node). */
  apiKey?: string
  /** Per request; default 30000. */
  timeoutMs?: number
  /** How often a 429 or 503 is retried, waiting what Retry-After asks; default 3. */
  maxRetries?: number
  maxRetryWaitMs?: number
  fetch?: typeof fetch
  /**
   * An integer beyond 2^53 - 1 in an answer (which a number would round)
   * as a BigInt, where a field's type says number; without it, such an
   * answer is an `out_of_range` error naming the value's place.
   */
  bigints?: boolean
}

type Instant = Date | string
type Records<T> = T | T[]
/**
 * Query parameters by name. `undefined` or `null` means the parameter's
 * default, as in the Ledger, and is left out of the request; but a name the
 * call does not take (a report's own: as GET /reports lists them, read once
 * per client when first needed) is sent with a placeholder value, so the
 * service refuses it as any unknown name (`invalid_query`, or `bad_request`
 * for another operation's `call`), naming it in `field`.
 */
type Params = Record<string, string | number | boolean | Date | Array<string | number> | null | undefined>
export interface Page<T> { count: number; list: T[] }
export interface ListOptions { limit?: number; offset?: number }
export interface MovementFilters {
  customer?: string
  start?: Instant
  end?: Instant
  kinds?: Array<'new' | 'expansion' | 'contraction' | 'churn' | 'reactivation'> | string
}
export interface Settings {
  base_currency: string
  timezone: string
  first_day_of_week: number
  churn_grace_days: number
  refund_handling: string
}
type Listers = 'listCustomers' | 'listPlans' | 'listPlanGroups' | 'listInvoices' | 'listDataSources' | 'listFxRates'

export declare class Client {
  constructor(options?: ClientOptions)
  readonly baseUrl: string
  /** Runs one operation by its operationId; an unset `query` parameter is left out once its name is found to be one the operation takes. */
  call(operation: OperationId, pathParams?: Record<string, string> | null, query?: Params | null, body?: unknown): Promise<any>

  upsertCustomers(records: Records<Schemas['CustomerInput']>): Promise<Schemas['ImportResult'][]>
  upsertPlans(records: Records<Schemas['PlanInput']>): Promise<Schemas['ImportResult'][]>
  upsertInvoices(records: Records<Schemas['InvoiceInput']>): Promise<Schemas['ImportResult'][]>
  upsertDataSources(records: Records<Schemas['DataSourceInput']>): Promise<Schemas['ImportResult'][]>
  upsertPlanGroups(records: Records<Schemas['PlanGroupInput'] & { id?: string }>): Promise<Schemas['ImportResult'][]>
  getCustomer(id: string): Promise<Schemas['CustomerDetail']>
  getPlan(id: string): Promise<Schemas['Plan']>
  getPlanGroup(id: string): Promise<Schemas['PlanGroup']>
  getInvoice(id: string): Promise<Schemas['Invoice']>
  getDataSource(id: string): Promise<Schemas['DataSource']>
  listCustomers(options?: ListOptions): Promise<Page<Schemas['Customer']>>
  listPlans(options?: ListOptions & { source?: string }): Promise<Page<Schemas['Plan']>>
  listPlanGroups(options?: ListOptions): Promise<Page<Schemas['PlanGroup']>>
  listInvoices(options?: ListOptions & { customer?: string }): Promise<Page<Schemas['Invoice']>>
  listDataSources(options?: ListOptions): Promise<Page<Schemas['DataSource']>>
  listFxRates(options?: ListOptions): Promise<Page<Schemas['FxRate']>>
  /** Every item of a list method, page by page. */
  paginate<M extends Listers>(method: M, options?: { pageSize?: number; source?: string; customer?: string }):
    AsyncGenerator<Awaited<ReturnType<Client[M]>>['list'][number], void, undefined>
  deleteCustomer(id: string): Promise<void>
  deletePlan(id: string): Promise<void>
  deletePlanGroup(id: string): Promise<void>
  deleteInvoice(id: string): Promise<void>
  deleteDataSource(id: string): Promise<void>
  updateCustomer(id: string, patch: Schemas['CustomerPatch']): Promise<Schemas['CustomerDetail']>
  updatePlan(id: string, patch: Schemas['PlanPatch']): Promise<Schemas['Plan']>
  replaceInvoice(id: string, record: Schemas['InvoiceInput']): Promise<void>
  /** Answers the group as read back after the change (a second request). */
  updatePlanGroup(id: string, group: Schemas['PlanGroupInput']): Promise<Schemas['PlanGroup']>
  updateDataSource(id: string, patch: Schemas['DataSourcePatch']): Promise<Schemas['DataSource']>
  importRecords(source: string, collection: 'customers' | 'plans' | 'plan_groups' | 'invoices', records: Records<Record<string, unknown>>): Promise<Schemas['ImportResult'][]>
  /** Imports the rows of an Arrow IPC stream (apache-arrow's `tableToIPC`) into a data source: one write of at most 100,000 rows; the results as an Arrow IPC stream (`id`, `import_status`, `import_error`), one row per record. */
  importArrow(source: string, collection: 'customers' | 'plans' | 'plan_groups' | 'invoices', stream: Uint8Array): Promise<Buffer>
  /** Upserts the rows of an Arrow IPC stream (one write of at most 100,000 rows); the results as an Arrow IPC stream, as the Ledger's method of this name answers them. */
  upsertCustomersArrow(stream: Uint8Array): Promise<Buffer>
  upsertPlansArrow(stream: Uint8Array): Promise<Buffer>
  upsertInvoicesArrow(stream: Uint8Array): Promise<Buffer>
  loadFxRates(rows: Records<Schemas['FxRate']>): Promise<number>

  settings(): Promise<Settings>
  updateSettings(patch: Partial<Settings>): Promise<Settings>

  /** The movements; a filter left `undefined` or `null` is its default, and a name the listing does not read is refused (see `Params`). */
  movements(asOf?: Instant, filters?: MovementFilters): Promise<Schemas['Movement'][]>
  /** The movements as an Arrow IPC stream (`format=arrow`), as the Ledger's `movementsArrow` answers them. */
  movementsArrow(asOf?: Instant, filters?: MovementFilters): Promise<Buffer>
  /** Runs a report by name with its parameters (`Params`: an unset one is its default, a name the report does not take is refused). */
  report(name: 'summary', params?: Params, asOf?: Instant): Promise<Schemas['SummaryReport']>
  report(name: 'mrr', params?: Params, asOf?: Instant): Promise<Schemas['MrrReport']>
  report(name: 'movement-table', params?: Params, asOf?: Instant): Promise<Schemas['MovementTableReport']>
  report(name: `${string}-table`, params?: Params, asOf?: Instant): Promise<Schemas['TableReport']>
  report(name: string, params?: Params, asOf?: Instant): Promise<Schemas['Report']>
  /** The report's record batch as an Arrow IPC stream (`format=arrow`), as the Ledger's `reportArrow` answers it. */
  reportArrow(name: string, params?: Params, asOf?: Instant): Promise<Buffer>
  /** The analytics customer list; its parameters as `Params` says. */
  customers(params?: Params, asOf?: Instant): Promise<Schemas['AnalyticsCustomerList']>
  /** One customer's analytics view; its parameters as `Params` says. */
  customer(id: string, asOf?: Instant, params?: Params): Promise<Schemas['AnalyticsCustomerDetail']>
  resyncCustomer(id: string): Promise<string>

  health(): Promise<Schemas['Health']>
  account(): Promise<Schemas['Account']>
  updateAccount(patch: Schemas['AccountPatch']): Promise<Schemas['Account']>
  profile(): Promise<Schemas['Profile']>
  updateProfile(patch: Schemas['ProfilePatch']): Promise<Schemas['Profile']>
  billing(): Promise<Schemas['Billing']>
  team(): Promise<Schemas['TeamMember'][]>
  apiKeys(): Promise<Schemas['ApiKey'][]>
  createApiKey(options?: Schemas['ApiKeyInput']): Promise<Schemas['NewApiKey']>
  revokeApiKey(id: string): Promise<void>
  notificationSettings(): Promise<Schemas['NotificationSettings']>
  updateNotificationSettings(patch: Schemas['NotificationSettingsPatch']): Promise<Schemas['NotificationSettings']>
  paymentPlatformSettings(): Promise<Schemas['PaymentPlatformSettings']>
  crmSettings(): Promise<Schemas['CrmSettings']>
}
