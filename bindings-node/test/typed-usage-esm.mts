// Compiled with `tsc -p test/tsconfig.esm.json` (node16 resolution) in the
// test command: the ESM entry point's types, named and default exports,
// resolved through the package's own `exports` map.
import submetrics, { Ledger, SubmetricsError, reportNames, type SummaryReport, type TableReport } from 'submetrics'

const ledger: Ledger = new submetrics.Ledger({ timezone: 'Europe/Berlin' })
const same: typeof Ledger = submetrics.Ledger
const names: string[] = submetrics.reportNames().concat(reportNames())
ledger.upsertInvoices({
  id: 'i1', customer_external_id: 'A', type: 'subscription', date: '2024-01-01',
  amount_in_cents: 100, currency: 'USD', plan_id: 'm',
})
const summary: SummaryReport = ledger.report('summary', {}, new Date('2024-02-01'))
const table: TableReport = ledger.report('mrr-table', { date: '20240101-20240229' })
const firstRow: Array<number | null> = table.rows[0].values
const error: typeof SubmetricsError = submetrics.SubmetricsError
void same
void names
void summary.summary.mrr_current
void firstRow
void error
