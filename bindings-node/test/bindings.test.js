'use strict'
// The Node layer's own promises: the customer(id, asOf?, query?) signature,
// async work off the main thread, Dates as ledger-time-zone days, every
// error a SubmetricsError with a code, and the README example.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { Ledger, SubmetricsError } = require('..')

const PLAN = { id: 'm', name: 'Monthly', interval: 'month', currency: 'USD' }
const invoice = (id, customer, date, amount) =>
  ({ id, customer_id: customer, type: 'subscription', invoice_date: date, amount, currency: 'USD', plan_id: 'm' })

function ledger(settings) {
  const l = new Ledger({ base_currency: 'USD', ...settings })
  l.upsertPlans(PLAN)
  l.upsertCustomers([{ id: 'A', name: 'Acme' }, { id: 'B', name: 'Beta' }])
  l.upsertInvoices([invoice('a1', 'A', '2024-01-01', 3000), invoice('a2', 'A', '2024-02-01', 5000), invoice('b1', 'B', '2024-01-15', 2000)])
  return l
}

function expectError(fn, code, check) {
  assert.throws(fn, (error) => {
    assert.ok(error instanceof SubmetricsError, `${error}`)
    assert.equal(error.code, code)
    if (check) check(error)
    return true
  })
}

test('customer(id, asOf) uses that instant; a query may follow', () => {
  const l = ledger()
  const january = l.customer('A', new Date('2024-01-20T00:00:00Z'))
  assert.equal(january.converted_mrr, 3000)
  assert.deepEqual(january.current_subscriptions.map((s) => [s.plan_id, s.mrr]), [['m', 3000]])
  const february = l.customer('A', '2024-02-10')
  assert.equal(february.converted_mrr, 5000)
  assert.deepEqual(l.customer('A', new Date('2024-02-10T00:00:00Z'), {}), february)
  assert.deepEqual(l.customer('A', {}, '2024-02-10'), february, 'the older (id, query, asOf) order')
  expectError(() => l.customer('Z', '2024-02-10'), 'not_found', (e) => assert.equal(e.recordId, 'Z'))
})

test('reportAsync runs off the main thread: timers tick while it computes', async () => {
  const l = new Ledger()
  l.upsertPlans(PLAN)
  const N = 5000
  const customers = []
  const invoices = []
  for (let i = 0; i < N; i++) {
    customers.push({ id: `c${i}`, name: `c${i}` })
    for (let k = 1; k <= 6; k++) invoices.push(invoice(`i${i}-${k}`, `c${i}`, `2024-0${k}-01`, 1000))
  }
  l.upsertCustomers(customers)
  l.upsertInvoices(invoices)
  let ticks = 0
  const timer = setInterval(() => { ticks++ }, 1)
  const pending = l.reportAsync('mrr', { date: '20240101-20240630', interval: 'day' }, '2024-06-15')
  const report = await pending
  clearInterval(timer)
  assert.equal(report.result.length, 182)
  assert.equal(report.result[0].total_mrr, N * 1000)
  assert.equal(report.result[181].total_mrr, N * 1000)
  assert.equal(report.result[0].new, N * 1000)
  assert.ok(ticks > 0, `the event loop ran ${ticks} timer ticks during the report`)
})

test('Dates in parameters and filters are days in the ledger time zone', () => {
  const l = ledger({ timezone: 'Asia/Tokyo' })
  // 2024-01-31 20:00 UTC is Feb 1 in Tokyo.
  const late = new Date('2024-01-31T20:00:00Z')
  const byDate = l.report('movement-table', { date: '20240101-20240229', 'selected-date': late }, '2024-03-01')
  const byDay = l.report('movement-table', { date: '20240101-20240229', 'selected-date': '2024-02-01' }, '2024-03-01')
  assert.deepEqual(byDate, byDay)
  assert.deepEqual(byDay.result.list.map((r) => [r.customer_id, r.type]), [['B', 'churn'], ['A', 'expansion']])
  assert.deepEqual(l.movements('2024-02-10', { from: late }).map((m) => [m.date, m.type]), [['2024-02-01', 'expansion']])
  // Its UTC day (Jan 31) would leave out the expansion on Feb 1.
  assert.deepEqual(l.movements('2024-02-10', { to: late }).map((m) => m.type), ['new', 'new', 'expansion'])
})

test('invalid Dates are invalid_query errors', async () => {
  const l = ledger()
  const bad = new Date('not a date')
  expectError(() => l.report('summary', {}, bad), 'invalid_query', (e) => assert.equal(e.field, 'as_of'))
  expectError(() => l.report('mrr', { 'start-date': bad }), 'invalid_query', (e) => assert.equal(e.field, 'start-date'))
  expectError(() => l.movements(undefined, { from: bad }), 'invalid_query', (e) => assert.equal(e.field, 'from'))
  expectError(() => l.customer('A', bad), 'invalid_query')
  expectError(() => l.movements('2024-02-01', { to: 'soon' }), 'invalid_query', (e) => assert.equal(e.field, 'to'))
  await assert.rejects(l.movementsAsync('2024-02-01', { kinds: ['upsell'] }), (e) => e instanceof SubmetricsError && e.code === 'invalid_query' && e.field === 'kinds')
})

test('missing_fx_rate carries no record id or field', () => {
  const l = ledger()
  l.upsertPlans({ id: 'e', name: 'Euro', interval: 'month', currency: 'EUR' })
  l.upsertInvoices({ id: 'e1', customer_id: 'B', type: 'subscription', invoice_date: '2024-01-20', amount: 900, currency: 'EUR', plan_id: 'e' })
  expectError(() => l.report('summary', {}, '2024-01-25'), 'missing_fx_rate', (e) => {
    assert.equal(e.recordId, undefined)
    assert.equal(e.field, undefined)
    assert.equal(e.message, 'no exchange rate for EUR on or before 2024-01-20')
  })
})

test('arguments of the wrong JavaScript type are SubmetricsErrors with a code', () => {
  const l = ledger()
  expectError(() => l.report(42), 'invalid_query')
  expectError(() => l.report('mrr', 'interval=month'), 'invalid_query', (e) => assert.equal(e.field, 'params'))
  expectError(() => l.upsertCustomers('A'), 'invalid_record')
  expectError(() => l.upsertCustomers(42), 'invalid_record')
  expectError(() => l.getCustomer(42), 'invalid_argument')
  expectError(() => l.listCustomers({ limit: 'ten' }), 'invalid_argument')
})

test('list options are limit and offset, whole numbers from 0, and nothing else', () => {
  const l = ledger()
  const refused = (options, field, message) => expectError(() => l.listCustomers(options), 'invalid_argument', (e) => {
    assert.equal(e.field, field)
    assert.equal(e.message, message)
  })
  // Each of these used to answer a page: the whole list, or none.
  refused({ limt: 1 }, 'limt', 'unknown list option `limt`; the options are limit and offset')
  refused({ limit: -1 }, 'limit', 'limit: `-1` is not a whole number from 0 to 4294967295')
  refused({ limit: 1.5 }, 'limit', 'limit: `1.5` is not a whole number from 0 to 4294967295')
  refused({ limit: 2 ** 33 }, 'limit', 'limit: `8589934592` is not a whole number from 0 to 4294967295')
  refused({ offset: -1 }, 'offset', 'offset: `-1` is not a whole number from 0 to 4294967295')
  refused(5, 'options', 'list options must be an object of limit and offset')
  assert.deepEqual(l.listCustomers({ limit: 1, offset: 1 }).list.map((c) => c.id), ['B'])
  assert.equal(l.listCustomers({ limit: null }).list.length, l.listCustomers().list.length)
  expectError(() => l.customer({ id: 'A' }), 'invalid_query')
})

test('gets and lists delegate to the core: not_found names the kind, default page size', () => {
  const l = ledger()
  expectError(() => l.getPlanGroup('G9'), 'not_found', (e) => {
    assert.equal(e.message, 'plan_group G9 not found')
    assert.equal(e.recordId, 'G9')
  })
  const many = Array.from({ length: 120 }, (_, i) => ({ id: `x${i}`, name: `x${i}` }))
  l.upsertCustomers(many)
  const page = l.listCustomers()
  assert.equal(page.count, 122)
  assert.equal(page.list.length, 100)
  assert.equal(l.listCustomers({ offset: 120 }).list.map((c) => c.id).join(), 'x118,x119')
})

test('both record shapes of customers and invoices', () => {
  const l = new Ledger()
  l.upsertPlans(PLAN)
  l.upsertCustomers({ id: 'A', name: 'Acme', created: '2023-12-01', metadata: { tier: 'gold' } })
  const customer = l.getCustomer('A')
  assert.deepEqual([customer.created_date, customer.custom_variables], ['2023-12-01', { tier: 'gold' }])
  l.upsertInvoices({ id: 'i1', customer_external_id: 'A', type: 'subscription', date: '2024-01-05', amount_in_cents: 4200, currency: 'usd', plan_id: 'm' })
  const stored = l.getInvoice('i1')
  assert.deepEqual([stored.customer_id, stored.invoice_date, stored.amount, stored.currency], ['A', '2024-01-05', 4200, 'USD'])
  assert.equal(l.report('summary', {}, '2024-01-10').summary.mrr_current, 4200)
})

test('the README Node example runs as written', () => {
  const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8')
  const section = readme.split('\n## Node\n')[1].split('\n## ')[0]
  const blocks = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1])
  assert.equal(blocks.length, 1)
  assert.ok(!blocks[0].includes('...'))
  const code = blocks[0].replace("require('submetrics')", `require(${JSON.stringify(path.join(__dirname, '..'))})`)
  const out = execFileSync(process.execPath, ['-e', code], { encoding: 'utf8' }).trim()
  const expected = blocks[0].match(/\/\/\s*(\[.*?\])/)
  assert.ok(expected)
  assert.equal(out, expected[1])
})
