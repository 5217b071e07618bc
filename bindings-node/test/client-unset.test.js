'use strict'
// A parameter a Client call leaves unset (undefined or null) means its
// default, as in the Ledger, and a name the call does not take is refused,
// unset or not, with the error the service gives that name with a value
// (the service is never sent an unset name, so it cannot refuse one itself).
const test = require('node:test')
const assert = require('node:assert/strict')
const { Ledger } = require('..')
const { Client } = require('../client')
const { startService } = require('./service.js')

const AS_OF = '2024-06-15'
const PLANS = [{ id: 'm', name: 'Monthly', interval: 'month', currency: 'USD' }]
const CUSTOMERS = [{ id: 'acme', name: 'Acme' }, { id: 'beta', name: 'Beta' }]
const INVOICES = [
  { id: 'a1', customer_id: 'acme', type: 'subscription', plan_id: 'm', invoice_date: '2024-01-01', amount: 3000, currency: 'USD' },
  { id: 'a2', customer_id: 'acme', type: 'subscription', plan_id: 'm', invoice_date: '2024-02-01', amount: 5000, currency: 'USD' },
  { id: 'b1', customer_id: 'beta', type: 'subscription', plan_id: 'm', invoice_date: '2024-01-10', amount: 1000, currency: 'USD' },
]
const MRR_PARAMS = 'date, interval, baseCurrency, fix_fx, fx_date, breakdown, category, subtype, currency, customer, plan, ' +
  'billing_freq, pricing_model, status, country, region, industry, size, channel, market, payment_method, age, data_source'
const CUSTOMERS_PARAMS = 'baseCurrency, q, currency, customer, plan, billing_freq, pricing_model, status, country, region, ' +
  'industry, size, channel, market, payment_method, age, data_source, interval, selected-date, selected-type, sort, order, limit, offset'

let service
const ledger = new Ledger()
// The path of every request a client of `counted()` sends.
const requests = []
const counted = () => new Client({
  baseUrl: service.url,
  apiKey: service.key,
  fetch: (url, init) => { requests.push(new URL(url).pathname); return fetch(url, init) },
})
const catalogueReads = () => requests.filter((path) => path.endsWith('/reports'))

test.before(async () => {
  service = await startService(1)
  for (const target of [ledger, counted()]) {
    await target.upsertPlans(PLANS)
    await target.upsertCustomers(CUSTOMERS)
    await target.upsertInvoices(INVOICES)
  }
})
test.after(() => service.stop())

// The error a call rejects or throws with.
async function refusal(call) {
  try {
    await call()
  } catch (error) {
    return error
  }
  assert.fail('no error')
}
const fields = (error) => ({ code: error.code, field: error.field, message: error.message })

test('an unset parameter a report does not take is refused as the Ledger and the service refuse it', async () => {
  const client = counted()
  const expected = {
    code: 'invalid_query', field: 'intervall',
    message: `parameter \`intervall\`: report \`mrr\` has no such parameter; did you mean \`interval\`? Its parameters: ${MRR_PARAMS}`,
  }
  // What the service answers the name with a value, and the Ledger without one.
  assert.deepEqual(fields(await refusal(() => client.report('mrr', { intervall: 'month' }, AS_OF))), expected)
  assert.deepEqual(fields(await refusal(() => ledger.report('mrr', { intervall: undefined }, AS_OF))), expected)
  // Each used to run the report with its defaults.
  const calls = {
    'report, undefined': () => client.report('mrr', { intervall: undefined }, AS_OF),
    'report, null': () => client.report('mrr', { date: '20240101-20240531', intervall: null }, AS_OF),
    reportArrow: () => client.reportArrow('mrr', { intervall: undefined }, AS_OF),
  }
  for (const [call, run] of Object.entries(calls)) assert.deepEqual(fields(await refusal(run)), expected, call)
  // Every name is checked once one is unset, the first in name order named, as the Ledger does.
  const both = { zeta: undefined, alpha: '1' }
  const first = await refusal(() => client.report('mrr', both, AS_OF))
  assert.deepEqual(fields(first), fields(await refusal(() => ledger.report('mrr', both, AS_OF))))
  assert.equal(first.field, 'alpha')
  // An unknown report is the service's to say, unset parameters or not.
  const unknown = await refusal(() => client.report('nope', { intervall: undefined }, AS_OF))
  assert.deepEqual([unknown.code, unknown.status], ['unknown_report', 404])
  assert.equal(unknown.message, (await refusal(() => ledger.report('nope', {}, AS_OF))).message)
})

test('an unset parameter a customer view or the movements do not take is refused as the Ledger refuses it', async () => {
  const client = counted()
  const listing = `parameter \`intervall\`: report \`customers\` has no such parameter; did you mean \`interval\`? Its parameters: ${CUSTOMERS_PARAMS}`
  const one = 'parameter `intervall`: report `customer` has no such parameter. Its parameters: baseCurrency'
  const moves = 'parameter `kind`: report `movements` has no such parameter; did you mean `kinds`? Its parameters: customer, from, to, start, end, kinds'
  const cases = [
    [() => client.customers({ intervall: undefined }, AS_OF), () => ledger.customers({ intervall: undefined }, AS_OF), listing, 'intervall'],
    [() => client.customers({ intervall: null }, AS_OF), () => client.customers({ intervall: 'month' }, AS_OF), listing, 'intervall'],
    [() => client.customer('acme', AS_OF, { intervall: null }), () => ledger.customer('acme', AS_OF, { intervall: null }), one, 'intervall'],
    [() => client.customer('acme', AS_OF, { intervall: undefined }), () => client.customer('acme', AS_OF, { intervall: '1' }), one, 'intervall'],
    // The names are checked before the customer is looked up, by the Ledger and the service alike.
    [() => client.customer('nobody', AS_OF, { intervall: undefined }), () => ledger.customer('nobody', AS_OF, { intervall: undefined }), one, 'intervall'],
    [() => client.movements(AS_OF, { kind: undefined }), () => ledger.movements(AS_OF, { kind: undefined }), moves, 'kind'],
    [() => client.movementsArrow(AS_OF, { kind: null }), () => client.movements(AS_OF, { kind: 'churn' }), moves, 'kind'],
  ]
  for (const [call, reference, message, field] of cases) {
    const expected = { code: 'invalid_query', field, message }
    assert.deepEqual(fields(await refusal(reference)), expected)
    assert.deepEqual(fields(await refusal(call)), expected)
  }
})

test('an unset query parameter of the generic call is checked against the operation', async () => {
  const client = counted()
  const cases = [
    ['listPlans', 'sourse', 'query parameter `sourse`: this endpoint has no such parameter; its parameters: source, limit, offset'],
    ['getAccount', 'verbose', 'query parameter `verbose`: this endpoint takes no query parameters'],
  ]
  for (const [operation, name, message] of cases) {
    const expected = { code: 'bad_request', field: name, message }
    assert.deepEqual(fields(await refusal(() => client.call(operation, null, { [name]: '1' }))), expected)
    assert.deepEqual(fields(await refusal(() => client.call(operation, null, { [name]: undefined }))), expected)
  }
  const report = await refusal(() => client.call('getReport', { name: 'mrr' }, { intervall: null }))
  assert.ok(report.message.startsWith('parameter `intervall`: report `mrr` has no such parameter; did you mean `interval`?'), report.message)
  assert.equal((await client.call('listPlans', null, { source: undefined, limit: null })).result.count, 1)
})

test('an unset known parameter is its default, and the catalogue is read only for one', async () => {
  const client = counted()
  requests.length = 0
  // No parameter unset: no catalogue, whatever the call.
  const mrr = await client.report('mrr', { date: '20240101-20240531' }, AS_OF)
  const table = await client.reportArrow('mrr', { date: '20240101-20240531' }, AS_OF)
  const customers = await client.customers({}, '2024-02-15')
  const acme = await client.customer('acme', AS_OF)
  const moves = await client.movements(AS_OF, { customer: 'acme' })
  const plans = await client.listPlans()
  assert.equal(requests.length, 6)
  assert.deepEqual(catalogueReads(), [])
  // Unset: the same answers as leaving the names out, the catalogue read
  // once for the first report with an unset name it must look up.
  assert.deepEqual(await client.report('mrr', { date: '20240101-20240531', interval: undefined, fix_fx: null }, AS_OF), mrr)
  assert.deepEqual(mrr, ledger.report('mrr', { date: '20240101-20240531' }, AS_OF))
  assert.deepEqual(await client.report('mrr', { date: '20240101-20240531', baseCurrency: null }, AS_OF), mrr)
  assert.deepEqual(await client.reportArrow('mrr', { date: '20240101-20240531', interval: undefined }, AS_OF), table)
  assert.deepEqual(await client.report('mrr', { date: '20240101-20240531', as_of: undefined, format: null }, AS_OF), mrr)
  assert.deepEqual(await client.customers({ status: undefined, selected_date: null, limit: undefined }, '2024-02-15'), customers)
  assert.equal(customers.result.count, 2)
  assert.deepEqual(await client.customer('acme', AS_OF, { baseCurrency: undefined }), acme)
  assert.equal(acme.id, 'acme')
  assert.deepEqual(await client.movements(AS_OF, { customer: 'acme', kinds: undefined }), moves)
  assert.deepEqual(moves, ledger.movements(AS_OF, { customer: 'acme' }))
  assert.deepEqual(await client.listPlans({ limit: undefined }), plans)
  assert.equal(catalogueReads().length, 1)
  assert.equal(requests.length, 6 + 8 + 1)
})
