'use strict'
// The service Client against a real submetrics-server: data written and
// read back, every report, paging, each kind of error, retries, and the
// same answers as an embedded Ledger on every shared scenario.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')
const { tableFromArrays, tableFromIPC, tableToIPC } = require('apache-arrow')
const { Ledger, Client, SubmetricsError, reportNames } = require('..')
const { Client: BareClient } = require('../client')
const { startService } = require('./service.js')
const { SCENARIOS, scenarioFiles } = require('./scenario-files.js')

const AS_OF = '2024-06-15'
const PLANS = [
  { id: 'm', name: 'Monthly', interval: 'month', currency: 'USD' },
  { id: 'y', name: 'Yearly', interval: 'year', currency: 'USD' },
]
const CUSTOMERS = [{ id: 'acme', name: 'Acme', country: 'DE' }, { id: 'beta', name: 'Beta', country: 'US' }]
const INVOICES = [
  { id: 'a1', customer_id: 'acme', type: 'subscription', plan_id: 'm', invoice_date: '2024-01-01', amount: 3000, currency: 'USD' },
  { id: 'a2', customer_id: 'acme', type: 'subscription', plan_id: 'm', invoice_date: '2024-02-01', amount: 5000, currency: 'USD' },
  { id: 'a3', customer_id: 'acme', type: 'subscription', plan_id: 'm', invoice_date: '2024-03-01', amount: 5000, currency: 'USD' },
  { id: 'b1', customer_id: 'beta', type: 'subscription', plan_id: 'y', invoice_date: '2024-01-10', amount: 120000, currency: 'USD' },
  { id: 'b2', customer_id: 'beta', type: 'cancellation', invoice_date: '2024-04-05', amount: 0, currency: 'USD' },
]
const SCENARIO_FILES = scenarioFiles()

let service
// One account per test that writes, one per scenario.
const ACCOUNTS = { records: 0, reports: 1, paging: 2, errors: 3, imports: 4, updates: 5, exact: 6, bodies: 7 }
const SCENARIO_ACCOUNT = 8
test.before(async () => { service = await startService(SCENARIO_ACCOUNT + SCENARIO_FILES.length) })
test.after(() => service.stop())
const clientOf = (name) => new Client({ baseUrl: service.url, apiKey: service.keys[ACCOUNTS[name]] })

async function load(target) {
  await target.upsertPlans(PLANS)
  await target.upsertCustomers(CUSTOMERS)
  await target.upsertInvoices(INVOICES)
}

test('records are written and read back', async () => {
  const client = clientOf('records')
  assert.deepEqual(await client.upsertDataSources({ id: 'stripe', name: 'Stripe', type: 'stripe' }), [{ id: 'stripe', import_status: 'inserted' }])
  const results = await client.upsertPlans([...PLANS, { id: 'bad' }])
  assert.deepEqual(results.map((r) => r.import_status), ['inserted', 'inserted', 'error'])
  assert.equal(results[2].import_error, 'plan bad: field `name`: is required')
  assert.deepEqual(await client.upsertCustomers(CUSTOMERS), [{ id: 'acme', import_status: 'inserted' }, { id: 'beta', import_status: 'inserted' }])
  assert.equal((await client.upsertInvoices(INVOICES)).length, 5)
  assert.deepEqual(await client.upsertPlanGroups({ name: 'All', plans: ['m', 'y'] }), [{ id: 'pg_1', import_status: 'inserted' }])
  assert.deepEqual(await client.getPlan('m'), {
    id: 'm', name: 'Monthly', billing_freq: 'month', billing_freq_count: 1, currency: 'USD',
    product_name: null, data_source: null, pricing_model: 'licensed',
  })
  const invoice = await client.getInvoice('b2')
  assert.deepEqual([invoice.type, invoice.amount, invoice.plan_id], ['cancellation', 0, null])
  assert.equal((await client.getPlanGroup('pg_1')).plans[1].id, 'y')
  assert.equal((await client.listInvoices({ customer: 'beta' })).count, 2)
  assert.equal((await client.updatePlan('m', { name: 'Monthly Pro' })).name, 'Monthly Pro')
  assert.equal((await client.updateCustomer('acme', { email: 'ops@acme.test' })).email, 'ops@acme.test')
  assert.deepEqual(await client.importRecords('stripe', 'customers', { id: 'gamma', name: 'Gamma' }), [{ id: 'gamma', import_status: 'inserted' }])
  assert.equal((await client.getCustomer('gamma')).data_source, 'stripe')
  assert.equal(await client.loadFxRates([{ date: '2024-01-01', currency: 'EUR', rate: 0.9 }]), 1)
  await client.deleteInvoice('a3')
  await assert.rejects(client.getInvoice('a3'), { code: 'not_found', status: 404 })
  assert.equal((await client.health()).status, 'ok')
  const reference = await client.call('getApiReference')
  assert.ok(reference.startsWith('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>submetrics API reference</title>'), reference.slice(0, 120))
  assert.equal((await client.billing()).plan, 'scale')
  assert.equal((await client.updateNotificationSettings({ slack: { channel: '#metrics' } })).slack.channel, '#metrics')
  assert.deepEqual(await client.updateSettings({ churn_grace_days: 3 }), {
    base_currency: 'USD', timezone: 'UTC', first_day_of_week: 1, churn_grace_days: 3, refund_handling: 'reduce',
  })
})

test('an Arrow IPC stream is imported into a data source with the results of objects, as an Arrow stream', async () => {
  const client = clientOf('imports')
  // The per-record results of an Arrow answer, one plain object a row.
  const results = (stream) => tableFromIPC(stream).toArray().map((row) => ({ ...row.toJSON() }))
  await client.upsertDataSources({ id: 'files', name: 'Files', type: 'stripe' })
  await client.upsertPlans(PLANS)
  const customers = tableToIPC(tableFromArrays({ id: ['acme', 'beta'], name: ['Acme', 'Beta'] }))
  assert.deepEqual(results(await client.importArrow('files', 'customers', customers)), [
    { id: 'acme', import_status: 'inserted', import_error: null }, { id: 'beta', import_status: 'inserted', import_error: null },
  ])
  const rows = [...INVOICES, { ...INVOICES[0], id: 'bad', type: 'refund', plan_id: null, amount: 700 }]
  const column = (name) => rows.map((row) => row[name] ?? null)
  const names = ['id', 'customer_id', 'type', 'plan_id', 'invoice_date', 'amount', 'currency']
  const invoices = tableToIPC(tableFromArrays(Object.fromEntries(names.map((name) => [name, column(name)]))))
  assert.deepEqual(results(await client.importArrow('files', 'invoices', invoices)), [
    ...INVOICES.map((invoice) => ({ id: invoice.id, import_status: 'inserted', import_error: null })),
    { id: 'bad', import_status: 'error', import_error: 'invoice bad: field `amount`: must be 0 or less for a refund, got 700' },
  ])
  assert.equal((await client.getInvoice('a2')).data_source, 'files')
  const ledger = new Ledger()
  await load(ledger)
  assert.deepEqual(await client.movements(AS_OF), ledger.movements(AS_OF))
  // Upserts of Arrow streams, named as the Ledger's and answering as they do, with no data source.
  const plans = tableToIPC(tableFromArrays({ id: ['w'], name: ['Weekly'], interval: ['week'], currency: ['USD'] }))
  assert.deepEqual(results(await client.upsertPlansArrow(plans)), results(ledger.upsertPlansArrow(plans)))
  assert.deepEqual(results(await client.upsertPlansArrow(plans)), [{ id: 'w', import_status: 'inserted', import_error: null }])
  const more = tableToIPC(tableFromArrays({ id: ['gamma'], name: ['Gamma'] }))
  assert.deepEqual(results(await client.upsertCustomersArrow(more)), results(ledger.upsertCustomersArrow(more)))
  assert.deepEqual(results(await client.upsertInvoicesArrow(invoices)), results(ledger.upsertInvoicesArrow(invoices)))
  assert.deepEqual(
    results(await client.upsertInvoicesArrow(invoices)).map(({ import_error, ...rest }) => (import_error === null ? rest : { ...rest, import_error })),
    await client.upsertInvoices(rows))
  assert.equal((await client.getInvoice('a2')).data_source, null)
  assert.equal((await client.getCustomer('gamma')).data_source, null)
  await assert.rejects(client.importArrow('nowhere', 'customers', customers), { code: 'not_found', status: 404 })
  await assert.rejects(client.importRecords('files', 'customers', customers), { code: 'invalid_argument', field: 'records' })
  await assert.rejects(client.upsertInvoices(invoices), { code: 'invalid_argument', field: 'records' })
  await assert.rejects(client.importArrow('files', 'customers', [{ id: 'x' }]), { code: 'invalid_argument', field: 'stream' })
})

test('updates and replaces answer as the ledger does', async () => {
  const client = clientOf('updates')
  const ledger = new Ledger()
  for (const target of [ledger, client]) {
    await load(target)
    await target.upsertDataSources({ id: 's', name: 'Billing', type: 'api' })
    await target.upsertPlanGroups({ name: 'All', plans: ['m'] })
  }
  const expected = { id: 's', name: 'Billing', type: 'stripe' }
  assert.deepEqual(ledger.updateDataSource('s', { kind: 'stripe' }), expected)
  assert.deepEqual(await client.updateDataSource('s', { kind: 'stripe' }), expected)
  // A plan group answers as the interface reads it: its plans as objects.
  const everyPlan = {
    id: 'pg_1',
    name: 'Every plan',
    plans: [
      { id: 'm', name: 'Monthly', billing_freq: 'month', billing_freq_count: 1, product_name: null, currency: 'USD' },
      { id: 'y', name: 'Yearly', billing_freq: 'year', billing_freq_count: 1, product_name: null, currency: 'USD' },
    ],
  }
  assert.deepEqual(ledger.updatePlanGroup('pg_1', { name: 'Every plan', plans: ['m', 'y'] }), everyPlan)
  assert.deepEqual(await client.updatePlanGroup('pg_1', { name: 'Every plan', plans: ['m', 'y'] }), everyPlan)
  assert.deepEqual(ledger.getPlanGroup('pg_1'), everyPlan)
  assert.deepEqual(await client.getPlanGroup('pg_1'), everyPlan)
  assert.deepEqual(ledger.listPlanGroups(), { count: 1, list: [everyPlan] })
  const changed = { ...INVOICES[1], amount: 6000 }
  assert.equal(ledger.replaceInvoice('a2', changed), undefined)
  await client.replaceInvoice('a2', changed)
  assert.deepEqual(await client.movements(AS_OF), ledger.movements(AS_OF))
  assert.equal((await client.getInvoice('a2')).amount, 6000)
  const refusals = [
    [(t) => t.updateDataSource('s', { name: '' }), 'data_source s: field `name`: must be a non-empty string'],
    [(t) => t.replaceInvoice('a2', { ...changed, id: 'a9' }), 'invoice a2: field `id`: cannot be changed by a replace (this invoice is `a2`)'],
    [(t) => t.updatePlanGroup('pg_1', { name: 'X', plans: ['nope'] }), 'plan_group pg_1: field `plans`: plan `nope` does not exist']
  ]
  for (const [call, message] of refusals) {
    assert.throws(() => call(ledger), { code: 'invalid_record', message })
    await assert.rejects(async () => call(client), { code: 'invalid_record', message })
  }
  assert.throws(() => ledger.updatePlanGroup('pg_9', { name: 'X', plans: [] }), { code: 'not_found' })
  await assert.rejects(client.updatePlanGroup('pg_9', { name: 'X', plans: [] }), { code: 'not_found' })
})

test('movements and every report match an embedded ledger', async () => {
  const client = clientOf('reports')
  const ledger = new Ledger()
  await load(client)
  await load(ledger)
  assert.deepEqual(await client.movements(AS_OF), ledger.movements(AS_OF))
  assert.deepEqual((await client.movements(AS_OF, { customer: 'acme' })).map((m) => m.mrr_change), [3000, 2000, -5000])
  for (const name of reportNames()) {
    const params = { date: '20240101-20240531', 'selected-date': '2024-02-01' }
    let local
    try {
      local = ledger.report(name, params, AS_OF)
    } catch (error) {
      await assert.rejects(client.report(name, params, AS_OF), { code: error.code, message: error.message })
      continue
    }
    assert.deepEqual(await client.report(name, params, AS_OF), local, name)
    const remoteTable = tableFromIPC(await client.reportArrow(name, params, AS_OF))
    const localTable = tableFromIPC(ledger.reportArrow(name, params, AS_OF))
    const fields = (table) => table.schema.fields.map((field) => [field.name, String(field.type)])
    assert.deepEqual(fields(remoteTable), fields(localTable), name)
    const rows = (table) => JSON.stringify(table.toArray(), (_, value) => (typeof value === 'bigint' ? `${value}n` : value))
    assert.equal(rows(remoteTable), rows(localTable), name)
  }
  const mrr = await client.report('mrr', { date: '20240101-20240531' }, new Date('2024-06-15T12:00:00Z'))
  assert.deepEqual(mrr.result.map((p) => p.total_mrr), [13000, 15000, 15000, 0, 0])
  const mrrTable = tableFromIPC(await client.reportArrow('mrr', { date: '20240101-20240531' }, AS_OF))
  assert.deepEqual([...mrrTable.getChild('total_mrr')], [13000n, 15000n, 15000n, 0n, 0n])
  await assert.rejects(client.reportArrow('nope'), { code: 'unknown_report', status: 404 })
  const moves = tableFromIPC(await client.movementsArrow(AS_OF, { customer: 'acme' }))
  assert.deepEqual([...moves.getChild('mrr_change')], [3000n, 2000n, -5000n])
  const rows = (table) => JSON.stringify(table.toArray(), (_, value) => (typeof value === 'bigint' ? `${value}n` : value))
  assert.equal(rows(tableFromIPC(await client.movementsArrow(AS_OF))), rows(tableFromIPC(ledger.movementsArrow(AS_OF))))
  assert.deepEqual(await client.customer('acme', AS_OF), ledger.customer('acme', AS_OF))
})

test('an answer with an integer beyond 2^53 is refused naming its place; Arrow answers it exactly', async () => {
  const client = clientOf('exact')
  const AT = '2024-01-15T00:00:00Z'
  await client.updateSettings({ base_currency: 'USD' })
  // 10^10 cents of gold a month at 10^-6 gold per dollar: 10^16 US cents.
  await client.loadFxRates([{ date: '2024-01-01', currency: 'XAU', rate: '0.000001' }])
  await client.upsertPlans([{ id: 'gold', name: 'Gold', interval: 'month', currency: 'XAU' }])
  await client.upsertCustomers([{ id: 'G1', name: 'Gold' }])
  await client.upsertInvoices([{ id: 'g1', customer_id: 'G1', type: 'subscription', invoice_date: '2024-01-01',
    currency: 'XAU', plan_id: 'gold', amount: 1e10 }])
  const beyond = 'beyond 9007199254740991 (2^53 - 1), the largest integer a JavaScript number holds exactly'
  await assert.rejects(client.report('summary', {}, AT), {
    code: 'out_of_range', field: 'summary.mrr_current',
    message: `the answer's \`summary.mrr_current\` is 10000000000000000, ${beyond}; \`reportArrow\` answers it exactly, as a BigInt, and so does this call with the option \`bigints: true\``,
  })
  await assert.rejects(client.movements(AT), {
    code: 'out_of_range', field: 'result[0].mrr_change_base_currency',
    message: `the answer's \`result[0].mrr_change_base_currency\` is 10000000000000000, ${beyond}; \`movementsArrow\` answers it exactly, as a BigInt, and so does this call with the option \`bigints: true\``,
  })
  await assert.rejects(client.customer('G1', AT), {
    code: 'out_of_range', message: `the answer's \`converted_mrr\` is 10000000000000000, ${beyond}; with the option \`bigints: true\` this call answers it as a BigInt`,
  })
  const summary = tableFromIPC(await client.reportArrow('summary', {}, AT)).get(0).summary
  assert.equal(summary.mrr_current, 10000000000000000n)
  const movements = tableFromIPC(await client.movementsArrow(AT))
  assert.deepEqual([...movements.getChild('mrr_change_base_currency')], [10000000000000000n])
  // With the option bigints, as a BigInt where a number would round it.
  const exact = new Client({ baseUrl: service.url, apiKey: service.keys[ACCOUNTS.exact], bigints: true })
  assert.deepEqual((await exact.report('summary', {}, AT)).summary,
    { mrr_current: 10000000000000000n, arr_current: 120000000000000000n, subscribers_current: 1, arpa_current: 10000000000000000n })
  assert.deepEqual((await exact.movements(AT)).map((m) => [m.mrr_change, m.mrr_change_base_currency]), [[10000000000, 10000000000000000n]])
  assert.equal((await exact.customer('G1', AT)).converted_mrr, 10000000000000000n)
  assert.throws(() => new Client({ bigints: 1 }), { code: 'invalid_argument', field: 'bigints', message: 'bigints: `1` is not true or false' })
})

test('records and patches are read as the Ledger reads them: what JSON would change is refused by name, a BigInt is its integer', async () => {
  const client = clientOf('bodies')
  const ledger = new Ledger()
  await load(client)
  load(ledger)
  const invoice = { id: 'c1', customer_id: 'acme', type: 'one-time', invoice_date: new Date('2024-04-02T00:00:00Z'),
    amount: 700n, tax_amount: 0n, currency: 'USD' }
  for (const target of [client, ledger]) {
    assert.deepEqual(await target.upsertInvoices([invoice]), [{ id: 'c1', import_status: 'inserted' }])
    await target.replaceInvoice('c1', { ...invoice, amount: 10n ** 12n })
    await target.updateCustomer('acme', { custom_variables: { seats: 4n, gone: undefined } })
  }
  assert.deepEqual(await client.getInvoice('c1'), ledger.getInvoice('c1'))
  assert.equal((await client.getCustomer('acme')).custom_variables.seats, '4')
  const cyclic = { id: 'x', name: 'X', custom_variables: {} }
  cyclic.custom_variables.self = cyclic
  const refusals = [
    (t) => t.upsertInvoices([invoice, { ...invoice, id: 'c2', amount: NaN }]),
    (t) => t.upsertCustomers({ id: 'f', name: 'F', custom_variables: { f: () => 1 } }),
    (t) => t.upsertCustomers([{ id: 's', name: Symbol('s') }]),
    (t) => t.upsertCustomers([{ id: 'a', name: 'A', custom_variables: { n: [1, undefined] } }]),
    (t) => t.upsertCustomers([{ id: 'a', name: 'A' }, undefined]),
    (t) => t.upsertInvoices([{ ...invoice, invoice_date: new Date(NaN) }]),
    (t) => t.upsertInvoices([{ ...invoice, amount: 2n ** 64n }]),
    (t) => t.upsertCustomers([cyclic]),
    (t) => t.upsertCustomers([{ id: 'a', name: 'A\uD800' }]),
    (t) => t.upsertCustomers([{ id: 'a', name: 'A', custom_variables: { ['k\uDFFF']: 'v' } }]),
    (t) => t.loadFxRates([{ date: '2024-01-01', currency: 'EUR', rate: Infinity }]),
    (t) => t.updateCustomer('acme', { email: -Infinity }),
    (t) => t.replaceInvoice('c1', { ...invoice, amount: NaN }),
    (t) => t.updatePlan('m', { name: () => 'x' }),
    (t) => t.updateDataSource('s', { name: Symbol('n') }),
  ]
  for (const refuse of refusals) {
    let expected
    try {
      refuse(ledger)
    } catch (error) {
      expected = { name: 'SubmetricsError', code: error.code, field: error.field, message: error.message }
    }
    assert.ok(expected, String(refuse))
    await assert.rejects(refuse(client), expected)
  }
  assert.equal((await client.listInvoices()).count, ledger.listInvoices().count)
})

test('pages and paging', async () => {
  const client = clientOf('paging')
  const ids = Array.from({ length: 250 }, (_, i) => `c${String(i).padStart(3, '0')}`)
  await client.upsertCustomers(ids.map((id) => ({ id, name: id })))
  const page = await client.listCustomers({ limit: 100, offset: 200 })
  assert.equal(page.count, 250)
  assert.deepEqual(page.list.map((c) => c.id), ids.slice(200))
  const all = []
  for await (const customer of client.paginate('listCustomers', { pageSize: 60 })) all.push(customer.id)
  assert.deepEqual(all, ids)
})

test('each kind of error carries the service code and status', async () => {
  const client = clientOf('errors')
  await load(client)
  await assert.rejects(new Client({ baseUrl: service.url, apiKey: 'sm_not_a_key' }).listPlans(),
    (error) => error instanceof SubmetricsError && error.code === 'unauthorized' && error.status === 401)
  const readonly = await client.createApiKey({ name: 'reader', role: 'readonly' })
  const reader = new BareClient({ baseUrl: service.url, apiKey: readonly.key })
  assert.equal((await reader.getPlan('m')).id, 'm')
  await assert.rejects(reader.upsertPlans(PLANS), { code: 'forbidden', status: 403 })
  await assert.rejects(client.getPlan('nobody'), { code: 'not_found', status: 404 })
  await assert.rejects(client.report('nope'), { code: 'unknown_report', status: 404 })
  await assert.rejects(client.report('mrr', { interval: 'hour' }), {
    code: 'invalid_query', status: 400, field: 'interval',
    message: 'parameter `interval`: `hour` is not one of day, week, month, quarter, year',
  })
  await assert.rejects(client.deletePlan('m'), { code: 'conflict', status: 409 })
  await assert.rejects(client.upsertInvoices(Array(100001).fill({})), {
    code: 'payload_too_large', status: 413, message: '100001 records in one request; the limit is 100000',
  })
})

test('429 and 503 are retried as Retry-After asks', async () => {
  const answers = [503, 429]
  const server = http.createServer((request, response) => {
    const status = answers.shift() ?? 200
    response.writeHead(status, { 'content-type': 'application/json', 'retry-after': '0' })
    response.end(JSON.stringify(status === 200 ? { status: 'ok' } : { error: 'busy', code: 'unavailable' }))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const baseUrl = `http://127.0.0.1:${server.address().port}`
  try {
    assert.deepEqual(await new Client({ baseUrl }).health(), { status: 'ok' })
    answers.push(503, 503)
    await assert.rejects(new Client({ baseUrl, maxRetries: 1 }).health(), { code: 'unavailable', status: 503 })
  } finally {
    server.close()
  }
})

function mapped(params, groupIds) {
  const out = {}
  for (const [name, value] of Object.entries(params)) {
    out[name] = typeof value === 'string' && Object.keys(groupIds).some((g) => value.includes(g))
      ? value.replaceAll(',', ' ').split(/\s+/).map((part) => groupIds[part] ?? part).join(' ')
      : value
  }
  return out
}

async function loadScenario(target, scenario) {
  const groupIds = {}
  const upsert = async (collection, records) => {
    if (collection === 'plan_groups') {
      for (const { id, ...group } of records) {
        const [result] = await target.upsertPlanGroups(group)
        if (id && result.import_status === 'inserted') groupIds[id] = result.id
      }
      return
    }
    const method = { data_sources: 'upsertDataSources', customers: 'upsertCustomers', plans: 'upsertPlans', invoices: 'upsertInvoices' }[collection]
    await target[method](records)
  }
  if (scenario.fx_rates) await target.loadFxRates(scenario.fx_rates)
  for (const collection of ['data_sources', 'customers', 'plans', 'plan_groups', 'invoices']) {
    if (scenario[collection]) await upsert(collection, scenario[collection])
  }
  for (const step of scenario.steps ?? []) {
    if (step.upsert) await upsert(step.upsert, step.records ?? [])
    else if (step.delete) {
      const method = 'delete' + step.delete.replace(/s$/, '').split('_').map((w) => w[0].toUpperCase() + w.slice(1)).join('')
      try { await target[method](step.id) } catch (error) { if (!(error instanceof SubmetricsError)) throw error }
    } else if (step.config) await target.updateSettings(step.config)
  }
  return groupIds
}

test('the scenarios hold reports to compare', () => {
  const reports = SCENARIO_FILES.reduce((n, file) => {
    const scenario = JSON.parse(fs.readFileSync(path.join(SCENARIOS, file), 'utf8'))
    return n + (scenario.expect?.reports ?? []).length
  }, 0)
  assert.ok(reports > 300, `${reports} reports`)
})

// The answer of `call`, or the code of the SubmetricsError it throws.
async function outcome(call) {
  try {
    return await call()
  } catch (error) {
    if (!(error instanceof SubmetricsError)) throw error
    return { refused: error.code }
  }
}

for (const [i, file] of SCENARIO_FILES.entries()) {
  test(`Client and Ledger answer alike on ${file}`, async () => {
    const scenario = JSON.parse(fs.readFileSync(path.join(SCENARIOS, file), 'utf8'))
    const ledger = new Ledger(scenario.config ?? {})
    const client = new Client({ baseUrl: service.url, apiKey: service.keys[SCENARIO_ACCOUNT + i] })
    if (scenario.config) await client.updateSettings(scenario.config)
    const groupIds = await loadScenario(ledger, scenario)
    assert.deepEqual(await loadScenario(client, scenario), groupIds)
    const asOf = scenario.as_of
    assert.deepEqual(await outcome(() => client.movements(asOf)), await outcome(() => ledger.movements(asOf)))
    for (const report of scenario.expect?.reports ?? []) {
      const params = mapped({ ...(report.params ?? {}) }, groupIds)
      let remote, local
      if (report.name === 'customers') {
        [remote, local] = [await client.customers(params, asOf), ledger.customers(params, asOf)]
      } else if (report.name === 'customer') {
        const { id, ...rest } = params;
        [remote, local] = [await client.customer(id, asOf, rest), ledger.customer(id, asOf, rest)]
      } else {
        try {
          local = ledger.report(report.name, params, asOf)
        } catch (error) {
          await assert.rejects(client.report(report.name, params, asOf), { code: error.code })
          continue
        }
        remote = await client.report(report.name, params, asOf)
      }
      assert.deepEqual(remote, local, report.name)
    }
  })
}

test('a client option it does not know, or a wait that is not a whole number, is refused by name', () => {
  const refused = (options, field, message) => assert.throws(() => new Client(options), (e) => {
    assert.equal(e.code, 'invalid_argument')
    assert.equal(e.field, field)
    assert.equal(e.message, message)
    return true
  })
  const options = 'baseUrl, apiKey, timeoutMs, maxRetries, maxRetryWaitMs, fetch, bigints'
  // `baseURL` used to leave the client on http://localhost:8080.
  refused({ baseURL: 'https://analytics.example.com' }, 'baseURL', `unknown client option \`baseURL\`; the options are ${options}`)
  refused({ timeout: 5000 }, 'timeout', `unknown client option \`timeout\`; the options are ${options}`)
  refused({ timeoutMs: '5s' }, 'timeoutMs', 'timeoutMs: `5s` is not a whole number from 1')
  refused({ timeoutMs: 0 }, 'timeoutMs', 'timeoutMs: `0` is not a whole number from 1')
  refused({ maxRetries: -1 }, 'maxRetries', 'maxRetries: `-1` is not a whole number from 0')
  refused('https://analytics.example.com', 'options', `client options must be an object of ${options}`)
  const client = new Client({ baseUrl: 'https://analytics.example.com/', timeoutMs: 1, maxRetries: null })
  assert.equal(client.baseUrl, 'https://analytics.example.com')
  assert.equal(client.timeoutMs, 1)
  assert.equal(client.maxRetries, 3)
})

test('an operation or path parameter the description lacks is refused before anything is sent', async () => {
  const paths = []
  const fetch = async (url) => {
    paths.push(new URL(url).pathname)
    return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } })
  }
  const client = new Client({ baseUrl: 'http://service.test', fetch })
  const refused = (args, field, message) => assert.rejects(client.call(...args), (e) => {
    assert.equal(e.code, 'invalid_argument')
    assert.equal(e.field, field)
    assert.equal(e.message, message)
    return true
  })
  await refused(['listPlan'], 'operation', 'no operation listPlan: an operation is an operationId of the API description')
  await refused(['toString'], 'operation', 'no operation toString: an operation is an operationId of the API description')
  await refused(['getCustomer'], 'id', 'getCustomer needs the path parameter `id` (/data/customers/{id})')
  await refused(['getCustomer', { id: null }], 'id', 'getCustomer needs the path parameter `id` (/data/customers/{id})')
  // A misspelt name used to leave `{id}` in the path it sent.
  await refused(['getCustomer', { ID: 'c1' }], 'ID', 'getCustomer has no path parameter `ID` (/data/customers/{id}); its path parameters are id')
  await refused(['listPlans', { id: 'p1' }], 'id', 'listPlans has no path parameter `id` (/data/plans); it has no path parameters')
  assert.deepEqual(paths, [])
  await client.call('getCustomer', { id: 'c 1/2' })
  assert.deepEqual(paths, ['/data/customers/c%201%2F2'])
})

test('a report parameter given twice (two spellings, as_of both ways, format to an Arrow call) is refused before sending', async () => {
  const queries = []
  const fetch = async (url) => {
    queries.push(Object.fromEntries(new URL(url).searchParams))
    return new Response('{"result": []}', { status: 200, headers: { 'content-type': 'application/json' } })
  }
  const client = new Client({ baseUrl: 'http://service.test', fetch })
  const refused = (promise, field, message) => assert.rejects(promise, (e) => {
    assert.equal(e.code, 'invalid_query')
    assert.equal(e.field, field)
    assert.equal(e.message, message)
    return true
  })
  await refused(client.report('movement-table', { selected_date: '2024-01-01', 'selected-date': '2024-02-01' }),
    'selected-date', 'parameter `selected-date`: is given twice (as selected-date and selected_date); give it once')
  // The asOf argument used to replace the parameter's as_of, even when undefined.
  await refused(client.report('mrr', { as_of: '2024-01-01' }, '2024-02-01'),
    'as_of', 'parameter `as_of`: is given twice (as the asOf argument and among the parameters); give it once')
  await refused(client.reportArrow('mrr', { format: 'csv' }), 'format', 'parameter `format`: this call sets it to arrow')
  assert.deepEqual(queries, [])
  await client.report('mrr', { as_of: '2024-01-01', interval: 'month' })
  await client.customers({ status: 'active' }, '2024-03-01')
  assert.deepEqual(queries, [{ as_of: '2024-01-01', interval: 'month' }, { status: 'active', as_of: '2024-03-01' }])
})

test('list and paginate options it does not know are refused by name before sending, as the Ledger refuses them', async () => {
  const urls = []
  const fetch = async (url) => {
    urls.push(url)
    return new Response('{"result": {"count": 0, "list": []}}', { status: 200, headers: { 'content-type': 'application/json' } })
  }
  const client = new Client({ baseUrl: 'http://service.test', fetch })
  const refused = (promise, field, message) => assert.rejects(promise, (e) => {
    assert.ok(e instanceof SubmetricsError)
    assert.equal(e.code, 'invalid_argument')
    assert.equal(e.field, field)
    assert.equal(e.message, message)
    return true
  })
  const drain = async (generator) => { for await (const _ of generator); }
  // Each of these used to answer a page as if the option were not there.
  await refused(client.listInvoices({ limit: 1, custmer: 'c1' }), 'custmer',
    'unknown list option `custmer`; the options are limit, offset and customer')
  await refused(client.listCustomers({ lmit: 2 }), 'lmit', 'unknown list option `lmit`; the options are limit and offset')
  await refused(client.listCustomers({ customer: 'c1' }), 'customer', 'unknown list option `customer`; the options are limit and offset')
  await refused(client.listPlans({ customer: 'c1' }), 'customer', 'unknown list option `customer`; the options are limit, offset and source')
  await refused(client.listInvoices({ customer: 5 }), 'customer', 'customer: must be an id, got 5')
  await refused(client.listCustomers(5), 'options', 'list options must be an object of limit and offset')
  await refused(drain(client.paginate('listCustomers', { pageSize: 3, customer: 'c1' })), 'customer',
    'unknown paginate option `customer`; the options are pageSize')
  await refused(drain(client.paginate('listInvoices', { limit: 3 })), 'limit',
    'unknown paginate option `limit`; the options are pageSize and customer')
  await refused(drain(client.paginate('listCustomer')), 'method',
    'paginate: `listCustomer` is not a list method; the list methods are listCustomers, listPlans, listPlanGroups, listInvoices, listDataSources, listFxRates')
  assert.deepEqual(urls, [])
  // The same options as the Ledger's: refused by both in the same words.
  const ledger = new Ledger()
  assert.throws(() => ledger.listInvoices({ limit: 1, custmer: 'c1' }), {
    code: 'invalid_argument', field: 'custmer', message: 'unknown list option `custmer`; the options are limit, offset and customer',
  })
  await client.listInvoices({ customer: 'c1', limit: 2, offset: null })
  await drain(client.paginate('listPlans', { pageSize: 3, source: 'ds1' }))
  await drain(client.paginate('listCustomers'))
  assert.deepEqual(urls.map((url) => new URL(url).search), ['?limit=2&customer=c1', '?limit=3&offset=0&source=ds1', '?limit=1000&offset=0'])
})

test('a parameter value no query holds, or an invalid Date, is the Ledger\'s invalid_query error before sending', async () => {
  const urls = []
  const fetch = async (url) => {
    urls.push(url)
    return new Response('{"result": []}', { status: 200, headers: { 'content-type': 'application/json' } })
  }
  const client = new Client({ baseUrl: 'http://service.test', fetch })
  const ledger = new Ledger()
  const kinds = 'a parameter value is text, a number, a boolean, a Date or an array of those'
  const cases = [
    // These used to be sent as "[object Object]", "NaN", "c1 [object Object]" and "2024-...Z"; an
    // invalid Date threw a bare RangeError.
    [(t) => t.report('mrr', { customer: { a: 1 } }, AS_OF), 'customer', `parameter \`customer\`: ${kinds}`],
    [(t) => t.report('mrr', { limit: NaN }, AS_OF), 'limit', 'parameter `limit`: NaN is not a finite number'],
    [(t) => t.customers({ plan: ['c1', { a: 1 }] }, AS_OF), 'plan', `parameter \`plan\`: ${kinds}`],
    [(t) => t.movements(AS_OF, { kinds: [['new']] }), 'kinds', `parameter \`kinds\`: ${kinds}`],
    [(t) => t.report('mrr', { date: [new Date('2024-01-01')] }, AS_OF), 'date', `parameter \`date\`: ${kinds}`],
    [(t) => t.report('mrr', { fx_date: new Date('nope') }, AS_OF), 'fx_date', 'fx_date is an invalid Date'],
    [(t) => t.report('mrr', {}, new Date('nope')), 'as_of', 'as_of is an invalid Date'],
    [(t) => t.movements(new Date('nope')), 'as_of', 'as_of is an invalid Date'],
    [(t) => t.report('mrr', {}, 20240101), 'as_of', 'asOf must be a Date or an ISO string, got number'],
  ]
  for (const [run, field, message] of cases) {
    const check = (e) => {
      assert.ok(e instanceof SubmetricsError, `${message}: ${e}`)
      assert.deepEqual([e.code, e.field, e.message], ['invalid_query', field, message])
      return true
    }
    assert.throws(() => run(ledger), check)
    await assert.rejects(run(client), check)
  }
  assert.deepEqual(urls, [])
  await client.report('mrr', { customer: ['a', null, 'b'], limit: 5n, cumulative: true, as_of: new Date(Date.UTC(2024, 0, 2)) })
  assert.deepEqual(urls.map((url) => new URL(url).search),
    ['?customer=a+b&limit=5&cumulative=true&as_of=2024-01-02T00%3A00%3A00.000Z'])
})

test('a timeout while the body downloads is the timeout error, as one waiting for the answer is', async () => {
  // The service answers the headers and a part of the body, then stalls.
  const server = http.createServer((request, response) => {
    const arrow = request.url.includes('format=arrow')
    response.writeHead(200, { 'content-type': arrow ? 'application/vnd.apache.arrow.stream' : 'application/json' })
    response.write(arrow ? 'ARROW1' : '{"status": ')
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const baseUrl = `http://127.0.0.1:${server.address().port}`
  const client = new Client({ baseUrl, timeoutMs: 200 })
  const timedOut = (e) => {
    // These used to escape as a DOMException (TimeoutError).
    assert.ok(e instanceof SubmetricsError, String(e))
    assert.deepEqual([e.code, e.message], ['timeout', `the service at ${baseUrl} did not answer within 200 ms`])
    return true
  }
  try {
    await assert.rejects(client.health(), timedOut)
    await assert.rejects(client.reportArrow('mrr'), timedOut)
    await assert.rejects(client.movementsArrow(), timedOut)
  } finally {
    server.closeAllConnections()
    server.close()
  }
})

test('paginate refuses a pageSize below 1 by name before sending, as Python\'s iter_* refuse page_size', async () => {
  const urls = []
  const fetch = async (url) => {
    urls.push(url)
    return new Response('{"result": {"count": 1, "list": [{"id": "c1"}]}}', { status: 200, headers: { 'content-type': 'application/json' } })
  }
  const client = new Client({ baseUrl: 'http://service.test', fetch })
  const all = async (options) => {
    const items = []
    for await (const item of client.paginate('listCustomers', options)) items.push(item.id)
    return items
  }
  for (const [pageSize, shown] of [[0, '0'], [-5, '-5'], [1.5, '1.5'], ['10', '"10"']]) {
    // pageSize 0 used to page through nothing, as if the list were empty.
    await assert.rejects(all({ pageSize }), {
      name: 'SubmetricsError', code: 'invalid_query', field: 'pageSize',
      message: `pageSize: must be a whole number of at least 1, got ${shown}`,
    })
  }
  assert.deepEqual(urls, [])
  assert.deepEqual(await all({ pageSize: 1 }), ['c1'])
  assert.deepEqual(await all({ pageSize: null }), ['c1'])
})
