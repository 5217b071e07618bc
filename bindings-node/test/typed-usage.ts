// Compiled with `tsc --noEmit` in the test command: the declarations must
// describe a typed use of the package.
import { Client,
  Ledger, SubmetricsError, reportNames,
  type MrrReport, type Movement, type Customer, type Invoice, type MovementTableReport,
  type CustomerDetail, type CustomerList, type ReportResult, type SummaryReport, type FxRateInput,
} from '..'

const ledger = new Ledger({ base_currency: 'USD', first_day_of_week: 1 })
const exact = new Ledger({ base_currency: 'USD' }, { bigints: true })
const exactMrr: number | bigint = exact.report('summary').summary.mrr_current
const results = ledger.upsertPlans({ id: 'm', name: 'Monthly', interval: 'month', currency: 'USD' })
ledger.upsertPlans([{ id: 'y', name: 'Yearly', billing_freq: 'year', billing_freq_count: 1, currency: 'USD' }])
ledger.upsertCustomers([
  { id: 'A', name: 'Acme', created_date: '2024-01-01', custom_variables: { tier: 'gold' } },
  { id: 'B', name: 'Beta', created: '2024-01-02', metadata: { tier: 'silver' } },
])
ledger.upsertPlanGroups({ name: 'All', plans: ['m', { id: 'y' }] })
ledger.upsertDataSources({ id: 'stripe', name: 'Stripe' })
ledger.upsertInvoices([
  { id: 'i1', customer_id: 'A', type: 'subscription', invoice_date: '2024-01-01', amount: 3000, currency: 'USD', plan_id: 'm' },
  { id: 'i2', customer_external_id: 'B', type: 'subscription', date: '2024-01-02', amount_in_cents: 2000, currency: 'USD', plan_id: 'm' },
  { id: 3n, customer_id: 'A', type: 'one-time', invoice_date: '2024-01-03', amount: 500n, tax_amount: 0n, currency: 'USD' },
])
const rates: FxRateInput[] = [{ date: '2024-01-01', currency: 'EUR', rate: 0.9 }]
const loaded: number = ledger.loadFxRates(rates)
const inserted: boolean = results[0].import_status === 'inserted'
const customer: Customer = ledger.getCustomer('A')
const invoices: Invoice[] = ledger.listInvoices({ limit: 10 }).list
const mrr: MrrReport = ledger.report('mrr', { date: '20240101-20240331', fix_fx: true }, new Date('2024-04-01'))
const totals: number[] = mrr.result.map((p) => p.total_mrr)
const summary: SummaryReport = ledger.report('summary')
const table: MovementTableReport = ledger.report('movement-table', { 'selected-date': new Date('2024-02-01') })
const other: ReportResult = ledger.report('cohort', {})
const moves: Movement[] = ledger.movements('2024-04-01', { kinds: ['new'], from: new Date('2024-01-01'), to: '2024-03-31' })
const list: CustomerList = ledger.customers({ status: 'all' }, '2024-04-01')
const detail: CustomerDetail = ledger.customer('A', new Date('2024-04-01'))
const detailWithQuery: CustomerDetail = ledger.customer('A', '2024-04-01', { currency: 'EUR' })
async function later(): Promise<number> {
  const report = await ledger.reportAsync('mrr', {}, '2024-04-01')
  const async: SummaryReport = await ledger.reportAsync('summary')
  return report.result.length + async.summary.mrr_current
}
try {
  ledger.getPlan('missing')
} catch (error) {
  if (error instanceof SubmetricsError) {
    const code: string = error.code
    void code
  }
}
void [loaded, inserted, customer, invoices, totals, summary, table.result.list[0]?.description, other]
void [moves, list.result.count, detail.converted_mrr, detailWithQuery, later]
void reportNames().length

// The service client: the same names, as promises, typed from the description.
async function clientUsage(): Promise<void> {
  const client = new Client({ baseUrl: 'http://localhost:8080', apiKey: 'sm_x' })
  const plan = await client.getPlan('m')
  const interval: 'day' | 'week' | 'month' | 'year' = plan.billing_freq
  const summary = await client.report('summary', {}, '2024-06-01')
  const current: number = summary.summary.mrr_current
  const mrr = await client.report('mrr', { date: '20240101-20240531' })
  const total: number = mrr.result[0].total_mrr
  const stream: Buffer = await client.reportArrow('mrr', { date: '20240101-20240531' }, '2024-06-01')
  const moves: Buffer = await client.movementsArrow('2024-06-01', { customer: 'acme' })
  const imported: Buffer = await client.importArrow('stripe', 'invoices', stream)
  for await (const customer of client.paginate('listCustomers', { pageSize: 500 })) {
    const id: string = customer.id
    void id
  }
  void [interval, current, total, stream, moves, imported]
}
void clientUsage
