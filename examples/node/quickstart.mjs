// Load a few invoices and print the monthly MRR table.
// Run from a checkout once the addon is built (`scripts/test node`):
//   node examples/node/quickstart.mjs
// An application that installed the package imports from 'submetrics'.
import { Ledger } from '../../bindings-node/index.mjs'

const ledger = new Ledger({ base_currency: 'USD' })
ledger.upsertPlans([
  { id: 'basic', name: 'Basic', interval: 'month', currency: 'USD' },
  { id: 'pro', name: 'Pro', interval: 'year', currency: 'USD' },
])
ledger.upsertCustomers([{ id: 'acme', name: 'Acme' }, { id: 'globex', name: 'Globex' }])
ledger.upsertInvoices([
  ...[1, 2, 3].map((month) => ({
    id: `acme-${month}`, customer_id: 'acme', type: 'subscription', plan_id: 'basic',
    invoice_date: `2024-0${month}-01`, amount: 3000, currency: 'USD',
  })),
  { id: 'globex-1', customer_id: 'globex', type: 'subscription', plan_id: 'pro', invoice_date: '2024-02-10', amount: 60000, currency: 'USD' },
])

const report = ledger.report('mrr', { date: '20240101-20240331' }, '2024-03-31')
console.log('month'.padEnd(12) + 'MRR'.padStart(10) + 'new'.padStart(10) + 'customers'.padStart(11))
for (const p of report.result) {
  console.log(p.date.padEnd(12) + String(p.total_mrr).padStart(10) + String(p.new).padStart(10) + String(p.total_customers).padStart(11))
}
