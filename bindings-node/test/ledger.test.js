'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const { Ledger, SubmetricsError, reportNames } = require('..')

function ledger() {
  const l = new Ledger({ base_currency: 'USD' })
  l.upsertPlans([
    { id: 'm', name: 'Monthly', interval: 'month', currency: 'USD' },
    { id: 'm2', name: 'Plus', billing_freq: 'month', currency: 'USD' },
  ])
  l.upsertCustomers([{ id: 'A', name: 'Acme', country: 'DE' }, { id: 'B', name: 'Beta' }])
  l.upsertInvoices([
    { id: 'a1', customer_id: 'A', type: 'subscription', invoice_date: '2024-01-01', amount: 3000, currency: 'USD', plan_id: 'm' },
    { id: 'a2', customer_id: 'A', type: 'subscription', invoice_date: '2024-02-01', amount: 5000, currency: 'USD', plan_id: 'm2' },
    { id: 'b1', customer_id: 'B', type: 'subscription', invoice_date: '2024-01-15', amount: 2000, currency: 'USD', plan_id: 'm' },
  ])
  return l
}

test('records: upsert results, get, list, update, delete', () => {
  const l = ledger()
  assert.deepEqual(l.upsertInvoices({ id: 'bad', customer_id: 'A', type: 'subscription', invoice_date: '2024-01-01', amount: 1, currency: 'USD' }), [
    { id: 'bad', import_status: 'error', import_error: 'invoice bad: field `plan_id`: is required for a subscription invoice' },
  ])
  assert.equal(l.getCustomer('A').name, 'Acme')
  assert.deepEqual(l.listCustomers({ limit: 1, offset: 1 }).list.map((c) => c.id), ['B'])
  assert.deepEqual(l.updateCustomer('A', { custom_variables: { industry: 'Retail' } }).custom_variables, { industry: 'Retail' })
  assert.equal(l.updatePlan('m2', { name: 'Plus+' }).name, 'Plus+')
  l.deleteCustomer('B')
  assert.equal(l.listInvoices().count, 2)
  assert.equal(l.updateSettings({ churn_grace_days: 3 }).churn_grace_days, 3)
  assert.equal(l.settings.churn_grace_days, 3)
  assert.equal(l.loadFxRates([{ date: '2024-01-01', currency: 'EUR', rate: 0.9 }]), 1)
  // A positive rate the engine cannot keep says why, not that it is not positive.
  assert.throws(() => l.loadFxRates([{ date: '2024-01-01', currency: 'EUR', rate: 1e-300 }]), (e) =>
    e.code === 'invalid_record' && e.field === 'rate' && e.message ===
      'fx_rate row 1: field `rate`: 1e-300 is below 1e-28, the smallest rate the engine keeps (rates have at most 28 decimal places)')
  assert.ok(reportNames().includes('mrr'))
})

test('invoices of one customer and plans of one data source are listed, as the client lists them', () => {
  // The client took `customer`; the ledger refused it as an unknown option.
  const l = ledger()
  const page = l.listInvoices({ customer: 'A' })
  assert.deepEqual([page.count, page.list.map((i) => i.id)], [2, ['a1', 'a2']])
  assert.deepEqual(l.listInvoices({ customer: 'A', limit: 1, offset: 1 }).list.map((i) => i.id), ['a2'])
  assert.throws(() => l.listInvoices({ customer: 'nobody' }), (e) =>
    e.code === 'not_found' && e.message === 'customer nobody not found')
  assert.throws(() => l.listCustomers({ customer: 'A' }), (e) =>
    e.code === 'invalid_argument' && e.message === 'unknown list option `customer`; the options are limit and offset')
  // And plans of one data source, as `source` of the client.
  l.upsertDataSources({ id: 'ds1', name: 'Shop' })
  l.upsertPlans({ id: 's', name: 'Shop plan', interval: 'month', currency: 'USD', data_source: 'ds1' })
  assert.deepEqual(l.listPlans({ source: 'ds1' }).list.map((p) => p.id), ['s'])
  assert.deepEqual(l.listPlans({ source: 'elsewhere' }), { count: 0, list: [] })
  assert.equal(l.listPlans().count, 3)
  assert.throws(() => l.listPlans({ source: 5 }), (e) => e.code === 'invalid_argument' && e.field === 'source')
  assert.equal(l.listPlans({ source: undefined }).count, 3)
  // An empty filter is refused as the service refuses `source=`, not read
  // as a filter nothing matches.
  for (const [call, name] of [
    [() => l.listPlans({ source: '' }), 'source'],
    [() => l.listPlans({ source: ' ' }), 'source'],
    [() => l.listInvoices({ customer: '' }), 'customer'],
  ]) {
    assert.throws(call, (e) => {
      assert.ok(e instanceof SubmetricsError)
      assert.deepEqual([e.code, e.field, e.message], ['invalid_query', name,
        `parameter \`${name}\`: is empty; give a value, or leave the parameter out for its default`])
      return true
    })
  }
})

test('errors carry the core code, recordId and field', () => {
  const l = ledger()
  const expectError = (fn, code, check) => {
    assert.throws(fn, (error) => {
      assert.ok(error instanceof SubmetricsError)
      assert.ok(error instanceof Error)
      assert.equal(error.code, code)
      if (check) check(error)
      return true
    })
  }
  expectError(() => l.getCustomer('Z'), 'not_found', (e) => assert.equal(e.recordId, 'Z'))
  expectError(() => l.updateCustomer('A', { currency: 'DOLLARS' }), 'invalid_record', (e) => {
    assert.equal(e.recordId, 'A')
    assert.equal(e.field, 'currency')
  })
  expectError(() => l.deletePlan('m'), 'conflict')
  expectError(() => l.report('nope'), 'unknown_report', (e) => assert.match(e.message, /summary/))
  expectError(() => l.report('mrr', { interval: 'hour' }), 'invalid_query', (e) => assert.equal(e.field, 'interval'))
  expectError(() => new Ledger({ timezone: 'Mars/Base' }), 'invalid_setting', (e) => assert.equal(e.field, 'timezone'))
  l.upsertPlans({ id: 'e', name: 'Euro', interval: 'month', currency: 'EUR' })
  l.upsertInvoices({ id: 'e1', customer_id: 'B', type: 'subscription', invoice_date: '2024-01-20', amount: 900, currency: 'EUR', plan_id: 'e' })
  expectError(() => l.report('summary', {}, '2024-01-25'), 'missing_fx_rate')
  expectError(() => l.upsertCustomers(42), 'invalid_record')
})

test('asOf takes a Date or ISO text; parameters take booleans, arrays and Dates', () => {
  const l = ledger()
  const byDate = l.report('summary', {}, new Date('2024-01-20T12:00:00Z'))
  const byText = l.report('summary', {}, '2024-01-20T12:00:00Z')
  assert.deepEqual(byDate, byText)
  assert.equal(byText.summary.mrr_current, 5000)
  const mrr = l.report('mrr', { date: '20240101-20240229', fix_fx: true, country: ['DE', 'FR'] }, '2024-02-15')
  assert.deepEqual(mrr.result.map((p) => p.total_mrr), [3000, 5000])
  const rows = l.report('movement-table', { date: '20240101-20240229', 'selected-date': new Date('2024-02-01'), 'selected-type': 'expansion' }, '2024-02-15')
  assert.equal(rows.result.list[0].description, 'Upgrade from Monthly to Plus')
})

test('movements, customer views and async calls', async () => {
  const l = ledger()
  assert.deepEqual(l.movements('2024-02-15').map((m) => m.type), ['new', 'new', 'expansion'])
  assert.equal(l.movements('2024-02-15', { customer: 'A' }).length, 2)
  assert.equal(l.movements('2024-02-15', { from: '2024-01-10', to: '2024-01-31' }).length, 1)
  // A filter the listing does not read is refused, not ignored.
  assert.throws(() => l.movements('2024-02-15', { kind: 'new' }), (error) => {
    assert.equal(error.message, 'parameter `kind`: report `movements` has no such parameter; did you mean `kinds`? Its parameters: customer, from, to, start, end, kinds')
    assert.equal(error.code, 'invalid_query')
    return true
  })
  assert.deepEqual(l.customers({}, '2024-02-15').result.list.map((c) => c.id), ['A', 'B'])
  assert.equal(l.customer('A', {}, '2024-02-15').converted_mrr, 5000)
  const [report, moves] = await Promise.all([
    l.reportAsync('mrr', { date: '20240101-20240229' }, '2024-03-01'),
    l.movementsAsync('2024-03-01'),
  ])
  assert.deepEqual(report, l.report('mrr', { date: '20240101-20240229' }, '2024-03-01'))
  assert.deepEqual(moves.map((m) => m.type), ['new', 'new', 'expansion', 'churn'])
  await assert.rejects(l.reportAsync('mrr', { interval: 'hour' }), (e) => e instanceof SubmetricsError && e.code === 'invalid_query')
})

test('answers of more than a million values arrive whole', () => {
  // 80,000 customers, each new on its own day: 80,000 movements of 13
  // values each, more than napi's conversion of a JSON value takes.
  const l = new Ledger({ base_currency: 'USD' })
  l.upsertPlans([{ id: 'm', name: 'Monthly', interval: 'month', currency: 'USD' }])
  const count = 80_000
  const ids = Array.from({ length: count }, (_, i) => `c${i}`)
  l.upsertCustomers(ids.map((id) => ({ id, name: id })))
  const day = (i) => new Date(Date.UTC(2020, 0, 1) + (i % 1000) * 86_400_000).toISOString().slice(0, 10)
  const results = l.upsertInvoices(ids.map((id, i) => ({
    id: `i${i}`, customer_id: id, type: 'subscription', invoice_date: day(i), amount: 100, currency: 'USD', plan_id: 'm',
  })))
  assert.equal(results.filter((r) => r.import_status !== 'inserted').length, 0)
  const moves = l.movements('2020-01-01T12:00:00Z')
  assert.equal(moves.length, 80)
  const all = l.movements('2022-10-01')
  assert.equal(all.filter((m) => m.type === 'new').length, count)
  assert.equal(all.filter((m) => m.type === 'new').reduce((sum, m) => sum + m.mrr_change, 0), count * 100)
  const listed = l.listInvoices({ limit: count })
  assert.equal(listed.list.length, count)
  assert.equal(listed.list[count - 1].id, `i${count - 1}`)
})

test('the ESM entry point exposes the same API', async () => {
  const esm = await import('../index.mjs')
  assert.equal(esm.Ledger, Ledger)
  assert.equal(esm.default.reportNames, reportNames)
})

test('a report parameter the report does not take is refused with a near miss', () => {
  const l = ledger()
  assert.throws(
    () => l.report('summary', { curency: 'EUR' }, '2024-01-20'),
    (e) => {
      assert.ok(e instanceof SubmetricsError)
      assert.equal(e.code, 'invalid_query')
      assert.equal(e.field, 'curency')
      assert.equal(e.message, 'parameter `curency`: report `summary` has no such parameter. Its parameters: baseCurrency')
      return true
    },
  )
  assert.throws(
    () => l.report('churn-scheduled-summary', { intervall: 'month' }),
    (e) => {
      assert.equal(e.code, 'invalid_query')
      assert.equal(e.field, 'intervall')
      assert.equal(
        e.message,
        'parameter `intervall`: report `churn-scheduled-summary` has no such parameter; did you mean `interval`? ' +
          'Its parameters: interval, baseCurrency, fix_fx, fx_date, currency, customer, plan, billing_freq, ' +
          'pricing_model, status, country, region, industry, size, channel, market, payment_method, age, data_source',
      )
      return true
    },
  )
})

test('an unknown parameter given undefined or null is refused as with a value', async () => {
  const l = ledger()
  let valued
  assert.throws(() => l.report('mrr', { bogus: 'x' }, '2024-02-15'), (e) => { valued = e; return true })
  assert.match(valued.message, /^parameter `bogus`: report `mrr` has no such parameter\. Its parameters: date, /)
  const same = (e) => {
    assert.ok(e instanceof SubmetricsError)
    assert.deepEqual([e.code, e.field, e.message], ['invalid_query', 'bogus', valued.message])
    return true
  }
  assert.throws(() => l.report('mrr', { bogus: undefined }, '2024-02-15'), same)
  assert.throws(() => l.report('mrr', { bogus: null }, '2024-02-15'), same)
  assert.throws(() => l.reportArrow('mrr', { bogus: undefined }, '2024-02-15'), same)
  await assert.rejects(l.reportAsync('mrr', { bogus: null }, '2024-02-15'), same)
  const movements = 'parameter `kind`: report `movements` has no such parameter; did you mean `kinds`? Its parameters: customer, from, to, start, end, kinds'
  for (const call of [
    () => l.movements('2024-02-15', { kind: undefined }),
    () => l.movementsArrow('2024-02-15', { kind: null }),
  ]) assert.throws(call, (e) => e.message === movements && e.field === 'kind')
  await assert.rejects(l.movementsAsync('2024-02-15', { kind: undefined }), (e) => e.message === movements)
  assert.throws(() => l.customers({ qq: undefined }, '2024-02-15'), (e) => e.field === 'qq' && e.code === 'invalid_query')
  assert.throws(() => l.customer('A', '2024-02-15', { bogus: null }),
    (e) => e.message === 'parameter `bogus`: report `customer` has no such parameter. Its parameters: baseCurrency')
  // undefined or null for a parameter the report takes still means its default.
  assert.deepEqual(
    l.report('mrr', { date: '20240101-20240229', interval: undefined, breakdown: null }, '2024-02-15'),
    l.report('mrr', { date: '20240101-20240229' }, '2024-02-15'))
  assert.equal(l.movements('2024-02-15', { customer: undefined, kinds: null }).length, 3)
})

test('reportAsync refuses an unknown parameter the same way', async () => {
  const l = ledger()
  await assert.rejects(
    l.reportAsync('mrr', { intervall: 'month' }),
    (e) => e instanceof SubmetricsError && e.code === 'invalid_query' && e.field === 'intervall' && /did you mean `interval`\?/.test(e.message),
  )
})

test('an array item holding a space is one value, quoted as the service reads it', () => {
  const { listText } = require('../client/params.js')
  const l = new Ledger({ base_currency: 'USD' })
  l.upsertPlans([{ id: 'm', name: 'Monthly', interval: 'month', currency: 'USD' }])
  l.upsertCustomers([{ id: 'acme corp', name: 'Acme' }, { id: 'beta', name: 'Beta' }, { id: 'acme', name: 'A' }])
  l.upsertInvoices([['acme corp', 3000], ['beta', 5000], ['acme', 700]].map(([customer, amount], n) => (
    { id: `i${n}`, customer_id: customer, type: 'subscription', plan_id: 'm', invoice_date: '2024-01-01', amount, currency: 'USD' })))
  const total = (customer) => l.report('mrr', { date: '20240101-20240131', customer }, '2024-01-15').result[0].total_mrr
  assert.equal(total(['acme corp', 'beta']), 8000)
  assert.equal(total(listText(['acme corp', 'beta'])), 8000)
  assert.equal(listText(['acme corp', 'say "hi"', '"q', 'plain']), '"acme corp" "say ""hi""" """q" plain')
})
