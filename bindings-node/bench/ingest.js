'use strict'
// Invoices into a ledger from Node: the generated data set (the generator's
// JSONL, `generate N DIR`) as plain JavaScript objects through
// `upsertInvoices`, and as an Arrow IPC stream (typed columns, written by
// apache-arrow) through `upsertInvoicesArrow`. Reading the files, building
// the objects and the stream, and loading plans, customers and FX rates are
// not timed. Each run starts from a fresh ledger; prints the best of the runs
// and every run, and checks that both paths store every invoice and give the
// same summary report. After each IPC load it also times `movements()` (every
// movement as objects) once the replays are computed.
//
// Usage: node bench/ingest.js DIR [--runs N]   (after a release build:
// `npm run build -- --release`)
const fs = require('node:fs')
const path = require('node:path')
const { tableToIPC, vectorFromArray, Table, Utf8, Int64, Int32, DateDay } = require('apache-arrow')
const { Ledger } = require('..')

const args = process.argv.slice(2)
const dir = args[0]
const runsAt = args.indexOf('--runs')
const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 3
if (!dir || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: node bench/ingest.js DIR [--runs N]')
  process.exit(2)
}
const AS_OF = '2025-01-01T00:00:00Z'

function jsonl(name) {
  const text = fs.readFileSync(path.join(dir, `${name}.jsonl`), 'utf8')
  return text.split('\n').filter((line) => line.length > 0).map((line) => JSON.parse(line))
}

const plans = jsonl('plans')
const customers = jsonl('customers')
const rates = jsonl('fx_rates')
const invoices = jsonl('invoices')

/** The invoices as one Arrow IPC stream: strings, day dates, integers. */
function invoiceStream() {
  const column = (name) => invoices.map((invoice) => invoice[name] ?? null)
  const day = (text) => (text === null ? null : new Date(`${text.slice(0, 10)}T00:00:00Z`))
  const strings = ['id', 'customer_id', 'type', 'plan_id', 'currency', 'status', 'refunded_invoice_id']
  const columns = {}
  for (const name of strings) columns[name] = vectorFromArray(column(name), new Utf8())
  for (const name of ['invoice_date', 'period_start', 'period_end']) {
    columns[name] = vectorFromArray(column(name).map(day), new DateDay())
  }
  columns.amount = vectorFromArray(column('amount').map((a) => (a === null ? null : BigInt(a))), new Int64())
  columns.quantity = vectorFromArray(column('quantity'), new Int32())
  return tableToIPC(new Table(columns), 'stream')
}

function ledger() {
  const l = new Ledger({ base_currency: 'USD' })
  l.upsertPlans(plans)
  l.upsertCustomers(customers)
  l.loadFxRates(rates)
  return l
}

function seconds(start) {
  return Number(process.hrtime.bigint() - start) / 1e9
}

const stream = invoiceStream()
const times = { objects: [], arrow: [], movements: [] }
let movementRows = 0
const summaries = {}
for (let run = 0; run < runs; run++) {
  let l = ledger()
  let start = process.hrtime.bigint()
  const results = l.upsertInvoices(invoices)
  times.objects.push(seconds(start))
  const rejected = results.filter((r) => r.import_status !== 'inserted').length
  if (results.length !== invoices.length || rejected > 0) throw new Error(`objects: ${rejected} rejected`)
  summaries.objects = l.report('summary', {}, AS_OF)
  l = null

  l = ledger()
  start = process.hrtime.bigint()
  l.upsertInvoicesArrow(stream)
  times.arrow.push(seconds(start))
  summaries.arrow = l.report('summary', {}, AS_OF)
  l.movements(AS_OF) // the first call replays every customer
  start = process.hrtime.bigint()
  const movements = l.movements(AS_OF)
  times.movements.push(seconds(start))
  if (movementRows && movements.length !== movementRows) throw new Error('the movements differ between runs')
  movementRows = movements.length
  l = null
}
if (JSON.stringify(summaries.objects) !== JSON.stringify(summaries.arrow)) {
  throw new Error(`the paths disagree: ${JSON.stringify(summaries)}`)
}

const count = invoices.length
console.log(`${count} invoices, ${customers.length} customers; best of ${runs} runs (node ${process.version})`)
console.log('| path | best | runs | invoices/s (best) |')
console.log('|---|---|---|---|')
for (const [name, label] of [['objects', '`upsertInvoices(array of objects)`'], ['arrow', '`upsertInvoicesArrow(ipc stream)`']]) {
  const best = Math.min(...times[name])
  const all = times[name].map((t) => t.toFixed(3)).join(', ')
  console.log(`| ${label} | ${best.toFixed(3)} s | ${all} | ${(count / best / 1e6).toFixed(2)}M |`)
}
const all = times.movements.map((t) => t.toFixed(3)).join(', ')
console.log(`| \`movements()\`, ${movementRows} objects, warm | ${Math.min(...times.movements).toFixed(3)} s | ${all} | |`)
console.log(JSON.stringify({ invoices: count, runs, seconds: times, summary: summaries.objects }))
