'use strict'
// Plain JavaScript objects are read field by field by the addon: for valid
// and invalid records of every kind, the per-record results, the stored
// records and the errors are exactly those of the earlier path, which
// converted each object to a serde_json::Value first (the expected values
// below were taken from it), but for `Date`s, which that path read as empty
// objects and which are now their instants.
const test = require('node:test')
const assert = require('node:assert/strict')
const { Ledger, SubmetricsError } = require('..')

const BASE = { customer_id: 'A', type: 'subscription', plan_id: 'm', invoice_date: '2024-01-01', amount: 3000, currency: 'USD' }

class WithGetter {
  constructor() { this.id = 'classy' }
  get name() { return 'Getter' } // on the prototype, not enumerable: absent
}

/** Each step: [method, records] on one ledger, in order. */
function steps() {
  return [
    ['upsertPlans', [
      { id: 'm', name: 'Monthly', interval: 'month', currency: 'USD' },
      { id: 'y', name: 'Yearly', billing_freq: 'year', billing_freq_count: '1', currency: 'usd' },
      { id: 'bad-freq', name: 'Bad', interval: 'fortnight', currency: 'USD' },
      { id: 'bad-count', name: 'Bad', interval: 'month', interval_count: 1.5, currency: 'USD' },
      { name: 'no id', interval: 'month' },
    ]],
    ['upsertCustomers', [
      { id: 'A', name: 'Acme', custom_variables: { seats: 12, vip: true, gone: null, skipped: undefined, region: 'EU', ratio: 0.25 } },
      { id: 42, name: 'Numbered', metadata: { tier: 'gold' } },
      { id: 'B', name: 'Beta', created: '2024-01-02' },
      { id: 'dated', name: 'Dated', created: new Date('2024-01-02T00:00:00Z') },
      { id: 'nested', name: 'Nested', custom_variables: { deep: { x: 1 } } },
      { id: 2 ** 53, name: 'Too big' },
      { id: '  ', name: 'Blank' },
      Object.assign(Object.create({ name: 'Inherited' }), { id: 'proto' }),
      new WithGetter(),
      { id: 'ünï', name: 'Ünïcödé ✓ 𝄞', email: 'x'.repeat(300) },
      'not a record', 7, null, [1, 2],
    ]],
    ['upsertCustomers', { id: 'solo', name: 'Solo' }],
    ['upsertPlanGroups', [
      { name: 'All', plans: ['m', 'y'] },
      { id: 'g', name: 'G', plans: ['nope'] },
      { name: 'Text', plans: 'm' },
    ]],
    ['upsertDataSources', [{ id: 'ds', name: 'Billing' }, { id: '' }, {}]],
    ['upsertInvoices', [
      { id: 'i1', ...BASE },
      { id: 'i2', ...BASE, amount: '4000', quantity: '2', tax_amount: 100, status: 'PAID' },
      { external_id: 'i3', customer_external_id: 'B', type: 'one-time', date: '2024-02-01T10:00:00Z', amount_in_cents: 500, currency: 'eur' },
      { id: 'i4', ...BASE, lines: [{ amount: 3000, description: 'Seat', period_start: '2024-01-01', period_end: '2024-02-01' }], transactions: [{ type: 'payment', date: '2024-01-01', amount: 3000, result: 'successful' }] },
      { id: 'i5', ...BASE, amount: 1.5 },
      { id: 'i6', ...BASE, amount: 5e9 },
      { id: 'i7', ...BASE, amount: -0 },
      { id: 'i8', ...BASE, amount: 1e16 },
      { id: 'i9', ...BASE, type: 'refund', amount: 700, plan_id: null },
      { id: 'i10', ...BASE, customer_id: 'nobody' },
      { id: 'i11', ...BASE, plan_id: undefined },
      { id: 'i12', ...BASE, currency: 'dollars' },
      { id: 'i13', ...BASE, invoice_date: 1704067200 },
      { id: 'i14', ...BASE, invoice_date: new Date('2024-01-01T00:00:00Z') },
      { id: 'i15', ...BASE, period_start: '2024-02-01', period_end: '2024-01-01' },
      { id: 'i16', ...BASE, lines: [{ amount: 'lots' }] },
      { id: 'i17', ...BASE, lines: { amount: 1 } },
      { id: 'i18', ...BASE, transactions: [{ type: 'payment' }] },
      { id: 'i19', ...BASE, lines: ['line'] },
      { id: 'i20', ...BASE, quantity: 2 ** 31 },
      { id: 'i21', ...BASE, status: 'pending' },
      { id: 'i22', ...BASE, amount: [1] },
      { id: 'i23', ...BASE, amount: { cents: 1 } },
      { id: 'i24', ...BASE, amount: true },
      { id: 1.5, ...BASE },
      { id: -7, ...BASE },
      { ...BASE },
      { id: 'i1', ...BASE, amount: 3500 },
      { id: 'i25', ...BASE, description: 12, invoice_number: 1e21 },
      { id: 'i26', ...BASE, tax_amount: -1 },
      { id: 'i27', ...BASE, customer_id: 42, plan_id: 'y', amount: 2 ** 32 },
      { id: 'i28', ...BASE, discount: -2147483649, payment_date: '2024-01-03', paid_date: '2024-01-03' },
    ]],
  ]
}

/** A stored record without its null fields. */
function present(record) {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null))
}

/** What every step answered (results, or the thrown error's details). */
function run(ledger) {
  return steps().map(([method, records]) => {
    try {
      return ledger[method](records)
    } catch (error) {
      assert.ok(error instanceof SubmetricsError, error)
      const details = { code: error.code, message: error.message }
      if (error.recordId !== undefined) details.recordId = error.recordId
      if (error.field !== undefined) details.field = error.field
      return details
    }
  })
}

const EXPECTED = [
  [
    { id: 'm', import_status: 'inserted' },
    { id: 'y', import_status: 'inserted' },
    { id: 'bad-freq', import_status: 'error', import_error: 'plan bad-freq: field `interval`: `fortnight` is not one of day, week, month, year' },
    { id: 'bad-count', import_status: 'error', import_error: 'plan bad-count: field `interval_count`: must be an integer, got 1.5' },
    { id: '', import_status: 'error', import_error: 'plan ?: field `id`: is required' },
  ],
  [
    { id: 'A', import_status: 'inserted' },
    { id: '42', import_status: 'inserted' },
    { id: 'B', import_status: 'inserted' },
    { id: 'dated', import_status: 'inserted' },
    { id: 'nested', import_status: 'error', import_error: 'customer nested: field `custom_variables.deep`: must be a string, number or boolean' },
    { id: '', import_status: 'error', import_error: 'customer ?: field `id`: must be a string or a whole number of at most 9007199254740991 either way, got 9007199254740992.0' },
    { id: '  ', import_status: 'error', import_error: 'customer ?: field `id`: is required' },
    { id: 'proto', import_status: 'inserted' },
    { id: 'classy', import_status: 'error', import_error: 'customer classy: field `name`: is required' },
    { id: 'ünï', import_status: 'inserted' },
    { id: '', import_status: 'error', import_error: 'customer ?: field `(record)`: must be a JSON object' },
    { id: '', import_status: 'error', import_error: 'customer ?: field `(record)`: must be a JSON object' },
    { id: '', import_status: 'error', import_error: 'customer ?: field `(record)`: must be a JSON object' },
    { id: '', import_status: 'error', import_error: 'customer ?: field `(record)`: must be a JSON object' },
  ],
  [
    { id: 'solo', import_status: 'inserted' },
  ],
  [
    { id: 'pg_1', import_status: 'inserted' },
    { id: 'g', import_status: 'error', import_error: 'plan_group g: field `plans`: plan `nope` does not exist' },
    { id: '', import_status: 'error', import_error: 'plan_group ?: field `plans`: must be an array' },
  ],
  [
    { id: 'ds', import_status: 'inserted' },
    { id: '', import_status: 'error', import_error: 'data_source ?: field `id`: is required' },
    { id: '', import_status: 'error', import_error: 'data_source ?: field `id`: is required' },
  ],
  [
    { id: 'i1', import_status: 'inserted' },
    { id: 'i2', import_status: 'inserted' },
    { id: 'i3', import_status: 'inserted' },
    { id: 'i4', import_status: 'inserted' },
    { id: 'i5', import_status: 'error', import_error: 'invoice i5: field `amount`: must be an integer, got 1.5' },
    { id: 'i6', import_status: 'inserted' },
    { id: 'i7', import_status: 'inserted' },
    { id: 'i8', import_status: 'error', import_error: 'invoice i8: field `amount`: 10000000000000000 is out of range: at most 1000000000000 cents either way' },
    { id: 'i9', import_status: 'error', import_error: 'invoice i9: field `amount`: must be 0 or less for a refund, got 700' },
    { id: 'i10', import_status: 'error', import_error: 'invoice i10: field `customer_id`: customer `nobody` does not exist; send the customer first' },
    { id: 'i11', import_status: 'error', import_error: 'invoice i11: field `plan_id`: is required for a subscription invoice' },
    { id: 'i12', import_status: 'error', import_error: 'invoice i12: field `currency`: `dollars` is not a three-letter currency code' },
    { id: 'i13', import_status: 'error', import_error: 'invoice i13: field `invoice_date`: must be an ISO 8601 date or timestamp string in the years 1900 to 2200, got 1704067200' },
    { id: 'i14', import_status: 'inserted' },
    { id: 'i15', import_status: 'error', import_error: 'invoice i15: field `period_end`: must be after period_start' },
    { id: 'i16', import_status: 'error', import_error: 'invoice i16: field `lines[0].amount`: must be an integer, got "lots"' },
    { id: 'i17', import_status: 'error', import_error: 'invoice i17: field `lines`: must be an array' },
    { id: 'i18', import_status: 'error', import_error: 'invoice i18: field `transactions[0].date`: is required' },
    { id: 'i19', import_status: 'error', import_error: 'invoice i19: field `lines[0]`: must be a JSON object' },
    { id: 'i20', import_status: 'error', import_error: 'invoice i20: field `quantity`: must be at most 1000000000, got 2147483648' },
    { id: 'i21', import_status: 'error', import_error: 'invoice i21: field `status`: `pending` is not one of paid, open, failed, void' },
    { id: 'i22', import_status: 'error', import_error: 'invoice i22: field `amount`: must be an integer, got [1]' },
    { id: 'i23', import_status: 'error', import_error: 'invoice i23: field `amount`: must be an integer, got {"cents":1}' },
    { id: 'i24', import_status: 'error', import_error: 'invoice i24: field `amount`: must be an integer, got true' },
    { id: '', import_status: 'error', import_error: 'invoice ?: field `id`: must be a string or a whole number of at most 9007199254740991 either way, got 1.5' },
    { id: '-7', import_status: 'inserted' },
    { id: '', import_status: 'error', import_error: 'invoice ?: field `id`: is required' },
    { id: 'i1', import_status: 'inserted' },
    { id: 'i25', import_status: 'error', import_error: 'invoice i25: field `invoice_number`: must be a string or a whole number of at most 9007199254740991 either way, got 1e+21' },
    { id: 'i26', import_status: 'error', import_error: 'invoice i26: field `tax_amount`: must be from 0 to the amount, got -1' },
    { id: 'i27', import_status: 'inserted' },
    { id: 'i28', import_status: 'inserted' },
  ],
]

const STORED = {
  customers: [
    { id: 'A', name: 'Acme', custom_variables: { seats: '12', vip: 'true', region: 'EU', ratio: '0.25' } },
    { id: '42', name: 'Numbered', custom_variables: { tier: 'gold' } },
    { id: 'B', name: 'Beta', created_date: '2024-01-02', custom_variables: {} },
    { id: 'proto', name: 'Inherited', custom_variables: {} },
    { id: 'ünï', name: 'Ünïcödé ✓ 𝄞', email: 'x'.repeat(300), custom_variables: {} },
    { id: 'solo', name: 'Solo', custom_variables: {} },
  ],
  invoices: [
    { id: 'i1', customer_id: 'A', type: 'subscription', invoice_date: '2024-01-01', amount: 3500, currency: 'USD', plan_id: 'm', quantity: 1, status: 'paid', tax_amount: 0, discount_amount: 0, lines: [], transactions: [] },
    { id: 'i2', customer_id: 'A', type: 'subscription', invoice_date: '2024-01-01', amount: 4000, currency: 'USD', plan_id: 'm', quantity: 2, status: 'paid', tax_amount: 100, discount_amount: 0, lines: [], transactions: [] },
    { id: 'i3', customer_id: 'B', type: 'one-time', invoice_date: '2024-02-01T10:00:00Z', amount: 500, currency: 'EUR', quantity: 1, status: 'paid', tax_amount: 0, discount_amount: 0, lines: [], transactions: [] },
    { id: 'i4', customer_id: 'A', type: 'subscription', invoice_date: '2024-01-01', amount: 3000, currency: 'USD', plan_id: 'm', quantity: 1, status: 'paid', tax_amount: 0, discount_amount: 0, lines: [{ description: 'Seat', amount: 3000, quantity: 1, period_start: '2024-01-01', period_end: '2024-02-01' }], transactions: [{ id: 'i4-t1', type: 'payment', date: '2024-01-01', result: 'successful', amount: 3000 }] },
    { id: 'i6', customer_id: 'A', type: 'subscription', invoice_date: '2024-01-01', amount: 5000000000, currency: 'USD', plan_id: 'm', quantity: 1, status: 'paid', tax_amount: 0, discount_amount: 0, lines: [], transactions: [] },
    { id: 'i7', customer_id: 'A', type: 'subscription', invoice_date: '2024-01-01', amount: 0, currency: 'USD', plan_id: 'm', quantity: 1, status: 'paid', tax_amount: 0, discount_amount: 0, lines: [], transactions: [] },
    { id: '-7', customer_id: 'A', type: 'subscription', invoice_date: '2024-01-01', amount: 3000, currency: 'USD', plan_id: 'm', quantity: 1, status: 'paid', tax_amount: 0, discount_amount: 0, lines: [], transactions: [] },
    { id: 'i27', customer_id: '42', type: 'subscription', invoice_date: '2024-01-01', amount: 4294967296, currency: 'USD', plan_id: 'y', quantity: 1, status: 'paid', tax_amount: 0, discount_amount: 0, lines: [], transactions: [] },
    { id: 'i28', customer_id: 'A', type: 'subscription', invoice_date: '2024-01-01', amount: 3000, currency: 'USD', plan_id: 'm', quantity: 1, status: 'paid', payment_date: '2024-01-03', tax_amount: 0, discount_amount: -2147483649, lines: [], transactions: [] },
  ],
  plan: { id: 'y', name: 'Yearly', billing_freq: 'year', billing_freq_count: 1, currency: 'USD', pricing_model: 'licensed' },
  planGroup: {
    id: 'pg_1',
    name: 'All',
    plans: [
      { id: 'm', name: 'Monthly', billing_freq: 'month', billing_freq_count: 1, product_name: null, currency: 'USD' },
      { id: 'y', name: 'Yearly', billing_freq: 'year', billing_freq_count: 1, product_name: null, currency: 'USD' },
    ],
  },
}

test('objects are read field by field with the results and errors of the earlier path', () => {
  const ledger = new Ledger({ base_currency: 'USD' })
  assert.deepEqual(run(ledger), EXPECTED)
  const stored = {
    customers: ['A', '42', 'B', 'proto', 'ünï', 'solo'].map((id) => present(ledger.getCustomer(id))),
    invoices: ['i1', 'i2', 'i3', 'i4', 'i6', 'i7', '-7', 'i27', 'i28'].map((id) => present(ledger.getInvoice(id))),
    plan: present(ledger.getPlan('y')),
    planGroup: present(ledger.getPlanGroup('pg_1')),
  }
  assert.deepEqual(stored, STORED)
})

test('FX rates are read field by field with the results and errors of the earlier path', () => {
  const ledger = new Ledger({ base_currency: 'USD' })
  assert.equal(ledger.loadFxRates([{ date: '2024-01-01', currency: 'EUR', rate: 0.9 }, { date: '2024-02-01', currency: 'gbp', rate: '0.8' }]), 2)
  assert.equal(ledger.loadFxRates({ date: '2024-03-01', currency: 'EUR', rate: 0.95 }), 1)
  const error = (rows) => {
    try {
      ledger.loadFxRates(rows)
    } catch (e) {
      return { code: e.code, message: e.message, recordId: e.recordId, field: e.field }
    }
    assert.fail('no error')
  }
  assert.deepEqual(error([{ date: '2024-01-01', currency: 'EUR', rate: 0.9 }, { date: '2024-01-01', currency: 'EUR' }]),
    { code: 'invalid_record', message: 'fx_rate row 2: field `rate`: must be a positive number', recordId: 'row 2', field: 'rate' })
  assert.deepEqual(error([{ date: 'soon', currency: 'EUR', rate: 1 }]),
    { code: 'invalid_record', message: 'fx_rate row 1: field `date`: must be an ISO 8601 date or timestamp string in the years 1900 to 2200, got "soon"', recordId: 'row 1', field: 'date' })
  assert.deepEqual(error('x'),
    { code: 'invalid_record', message: 'expected a record object or an array of records', recordId: undefined, field: '(record)' })
})

test('a value JSON cannot hold fails the call, naming the record and the field', () => {
  const ledger = new Ledger({ base_currency: 'USD' })
  const error = (records) => {
    try {
      ledger.upsertCustomers(records)
    } catch (e) {
      assert.ok(e instanceof SubmetricsError)
      return [e.code, e.message, e.field]
    }
    assert.fail('no error')
  }
  const cyclic = { id: 'c', name: 'C' }
  cyclic.custom_variables = { self: cyclic }
  assert.deepEqual(error([{ id: 'a', name: 'A', f: () => 1 }]),
    ['invalid_record', 'records[0]: field `f`: is a function, not a JSON value', 'f'])
  assert.deepEqual(error([{ id: 'a', name: 'A' }, undefined]),
    ['invalid_record', 'records[1]: field `(record)`: is undefined', '(record)'])
  assert.deepEqual(error([{ id: 'a', name: 'A', custom_variables: { n: [1, NaN] } }]),
    ['invalid_record', 'records[0]: field `custom_variables.n[1]`: is NaN, which is not a JSON number', 'custom_variables.n[1]'])
  assert.deepEqual(error({ id: -Infinity }),
    ['invalid_record', 'the record: field `id`: is -Infinity, which is not a JSON number', 'id'])
  assert.deepEqual(error([{ id: 'a', name: 'A' }, { id: 'b', name: 'B', custom_variables: { n: 2n ** 64n } }]),
    ['invalid_record', 'records[1]: field `custom_variables.n`: is a BigInt beyond 64 bits', 'custom_variables.n'])
  assert.deepEqual(error({ id: -(2n ** 63n) - 1n }),
    ['invalid_record', 'the record: field `id`: is a BigInt beyond 64 bits', 'id'])
  assert.deepEqual(error([{ id: Symbol('s') }]),
    ['invalid_record', 'records[0]: field `id`: is a symbol, not a JSON value', 'id'])
  // A Map or Set holds its entries outside its properties: refused, not read as {}.
  assert.deepEqual(error({ id: 'a', name: 'A', custom_variables: new Map([['industry', 'saas']]) }),
    ['invalid_record', 'the record: field `custom_variables`: is a Map, which JSON cannot hold; give Object.fromEntries(map)', 'custom_variables'])
  assert.deepEqual(error([{ id: 'a', name: 'A', custom_variables: { tags: new Set(['x']) } }]),
    ['invalid_record', 'records[0]: field `custom_variables.tags`: is a Set, which JSON cannot hold; give [...set]', 'custom_variables.tags'])
  assert.deepEqual(error(new Map([['id', 'a']])),
    ['invalid_record', 'the record: field `(record)`: is a Map, which JSON cannot hold; give Object.fromEntries(map)', '(record)'])
  const [code, message, field] = error([cyclic])
  assert.equal(code, 'invalid_record')
  assert.equal(field, 'custom_variables' + '.self.custom_variables'.repeat(63))
  assert.equal(message, `records[0]: field \`${field}\`: nests deeper than 128 levels (or holds itself)`)
  for (const records of [undefined, null, 'x', 7]) {
    assert.deepEqual(error(records), ['invalid_record', 'expected a record object or an array of records', '(record)'])
  }
  assert.equal(ledger.listCustomers().count, 0)
})

test('a Date is its instant, as toISOString writes it, at any depth', () => {
  const ledger = new Ledger({ base_currency: 'USD' })
  ledger.upsertPlans([{ id: 'm', name: 'Monthly', interval: 'month', currency: 'USD' }])
  const created = new Date(Date.UTC(2023, 4, 1))
  assert.deepEqual(ledger.upsertCustomers([
    { id: 'A', name: 'Acme', created, custom_variables: { since: new Date(0) } },
  ]), [{ id: 'A', import_status: 'inserted' }])
  const customer = ledger.getCustomer('A')
  assert.equal(customer.created_date, '2023-05-01T00:00:00Z')
  assert.deepEqual(customer.custom_variables, { since: '1970-01-01T00:00:00.000Z' })
  // The same invoices with Dates and with their text give the same MRR.
  const dated = [1, 2].map((month) => ({ ...BASE, id: `d${month}`, invoice_date: new Date(Date.UTC(2024, month - 1, 1, 12)) }))
  const texted = [1, 2].map((month) => ({ ...BASE, id: `t${month}`, customer_id: 'B', invoice_date: `2024-0${month}-01T12:00:00Z` }))
  ledger.upsertCustomers([{ id: 'B', name: 'Beta' }])
  assert.deepEqual(ledger.upsertInvoices([...dated, ...texted]).map((r) => r.import_status), ['inserted', 'inserted', 'inserted', 'inserted'])
  assert.equal(ledger.getInvoice('d2').invoice_date, '2024-02-01T12:00:00Z')
  assert.equal(ledger.report('summary', {}, '2024-02-15').summary.mrr_current, 6000)
  // Outside the years records take, the Date's text is named.
  assert.deepEqual(ledger.upsertInvoices([{ ...BASE, id: 'old', invoice_date: new Date(Date.UTC(1800, 0, 1)) }]), [{
    id: 'old',
    import_status: 'error',
    import_error: 'invoice old: field `invoice_date`: must be an ISO 8601 date or timestamp string in the years 1900 to 2200, got "1800-01-01T00:00:00.000Z"',
  }])
  assert.throws(() => ledger.upsertInvoices([{ ...BASE, id: 'bad', invoice_date: new Date(NaN) }]), (e) =>
    e instanceof SubmetricsError && e.field === 'invoice_date' &&
      e.message === 'records[0]: field `invoice_date`: is an invalid Date')
  assert.throws(() => ledger.getInvoice('bad'), SubmetricsError)
})

test('a BigInt within 64 bits is its integer, as a database driver hands out a 64-bit column', () => {
  const ledger = new Ledger({ base_currency: 'USD' })
  ledger.upsertPlans([{ id: 'm', name: 'Monthly', interval: 'month', currency: 'USD' }])
  assert.deepEqual(ledger.upsertCustomers([
    { id: 7n, name: 'Seven', custom_variables: { seats: 5n, most: 2n ** 64n - 1n, least: -(2n ** 63n) } },
  ]), [{ id: '7', import_status: 'inserted' }])
  assert.deepEqual(ledger.getCustomer('7').custom_variables,
    { seats: '5', most: '18446744073709551615', least: '-9223372036854775808' })
  // The same invoices with BigInt amounts and with numbers store alike.
  const big = { ...BASE, id: 'big', customer_id: 7n, amount: 3000n, tax_amount: 0n }
  const plain = { ...BASE, id: 'plain', customer_id: '7', amount: 3000, tax_amount: 0 }
  assert.deepEqual(ledger.upsertInvoices([big]), [{ id: 'big', import_status: 'inserted' }])
  ledger.upsertInvoices(plain)
  assert.deepEqual({ ...ledger.getInvoice('big'), id: 'plain' }, ledger.getInvoice('plain'))
  assert.equal(ledger.getInvoice('big').amount, 3000)
})

test('one call takes any number of records', () => {
  // More than the million values napi-rs converts into serde_json in one call.
  const ledger = new Ledger({ base_currency: 'USD' })
  const customers = Array.from({ length: 250_001 }, (_, i) => ({ id: `c${i}`, name: `Customer ${i}`, email: `c${i}@example.com` }))
  const results = ledger.upsertCustomers(customers)
  assert.equal(results.length, 250_001)
  assert.ok(results.every((r, i) => r.id === `c${i}` && r.import_status === 'inserted'))
  assert.equal(ledger.getCustomer('c250000').email, 'c250000@example.com')
})

test('a lone surrogate in a string is an error naming the record and field, never U+FFFD', () => {
  // Read as U+FFFD, 's\uD800' and 's\uDBFF' would be one id. Python refuses it too.
  const ledger = new Ledger({ base_currency: 'USD' })
  const refused = (call, message, field) => assert.throws(call, (e) => {
    assert.ok(e instanceof SubmetricsError)
    assert.deepEqual([e.code, e.field, e.message], ['invalid_record', field, message])
    return true
  })
  const surrogate = (unit) => `holds a lone UTF-16 surrogate (\\u${unit}), which is not Unicode text`
  // In an array (its strings joined for the addon), in one record, nested.
  refused(() => ledger.upsertCustomers([{ id: 'a', name: 'A' }, { id: 's\uD800', name: 'S' }]),
    `records[1]: field \`id\`: ${surrogate('D800')}`, 'id')
  refused(() => ledger.upsertCustomers([{ id: 'a', name: '\uDC00bñ' }]),
    `records[0]: field \`name\`: ${surrogate('DC00')}`, 'name')
  refused(() => ledger.upsertCustomers({ id: 'u', name: 'U', email: 'a\uD800' }),
    `the record: field \`email\`: ${surrogate('D800')}`, 'email')
  refused(() => ledger.upsertCustomers([{ id: 'u', name: 'U', custom_variables: { k: 'x\uD800' } }]),
    `records[0]: field \`custom_variables.k\`: ${surrogate('D800')}`, 'custom_variables.k')
  // A key: an array with one is read record by record, which names it.
  refused(() => ledger.upsertCustomers([{ id: 'u', name: 'U', custom_variables: { ['k\uDFFF']: 'x' } }]),
    `records[0]: field \`custom_variables.k\\uDFFF\`: is a key that ${surrogate('DFFF')}`, 'custom_variables.k\\uDFFF')
  refused(() => ledger.upsertCustomers([{ id: 'u', name: 'U' }, { id: 'v', name: 'V', ['x\uD800']: 1 }]),
    `records[1]: field \`x\\uD800\`: is a key that ${surrogate('D800')}`, 'x\\uD800')
  // Nothing of a refused call is written.
  assert.deepEqual(ledger.listCustomers().count, 0)
  // Updates and replacements read their values the same way.
  ledger.upsertCustomers({ id: 'c', name: 'C' })
  refused(() => ledger.updateCustomer('c', { name: 'C\uD800' }),
    `the patch of customer c: field \`name\`: ${surrogate('D800')}`, 'name')
  refused(() => ledger.updatePlanGroup('g', { name: 'G', plans: ['m\uD800'] }),
    `plan group g: field \`plans[0]\`: ${surrogate('D800')}`, 'plans[0]')
  // An id argument or a parameter is refused too, naming it.
  assert.throws(() => ledger.getCustomer('c\uD800'), (e) =>
    e.code === 'invalid_argument' && e.field === 'id' && e.message === `id: ${surrogate('D800')}`)
  assert.throws(() => ledger.listInvoices({ customer: 'c\uD800' }), (e) =>
    e.code === 'invalid_argument' && e.field === 'customer')
  assert.throws(() => ledger.report('mrr', { customer: ['c', 'c\uDC00'] }), (e) =>
    e.code === 'invalid_query' && e.field === 'customer' && e.message === `parameter \`customer\`: ${surrogate('DC00')}`)
  assert.throws(() => ledger.movements(undefined, { customer: '\uD800' }), (e) => e.field === 'customer')
  // A parameter's name too, escaped (read as U+FFFD, it was refused as an unknown name that does not say why).
  assert.throws(() => ledger.report('mrr', { ['inter\uD800val']: 'month' }), (e) =>
    e.code === 'invalid_query' && e.field === 'inter\\uD800val' &&
    e.message === `parameter name \`inter\\uD800val\`: ${surrogate('D800')}`)
  // A real U+FFFD and a well-formed pair are text.
  assert.deepEqual(ledger.upsertCustomers([{ id: 'r\uFFFD', name: '\uD83D\uDE00' }]).map((r) => r.id), ['r\uFFFD'])
  assert.equal(ledger.getCustomer('r\uFFFD').name, '\u{1F600}')
})

test('records of different keys, key orders and repeated values in one array', () => {
  const ledger = new Ledger({ base_currency: 'USD' })
  ledger.upsertPlans([{ id: 'm', name: 'Monthly', interval: 'month', currency: 'USD' }])
  ledger.upsertCustomers([{ id: 'A', name: 'A' }, { name: 'B', id: 'B' }])
  const results = ledger.upsertInvoices([
    { id: 'r1', ...BASE },
    { currency: 'USD', amount: 3000, invoice_date: '2024-02-01', plan_id: 'm', type: 'subscription', customer_id: 'A', id: 'r2' },
    { id: 'r3', ...BASE, customer_id: 'B', invoice_date: '2024-03-01' },
    { id: 'r4', ...BASE, customer_id: 'B', invoice_date: '2024-03-01', status: 'void' },
    { id: 'r5', ...BASE, customer_id: 'B', invoice_date: '2024-03-01', status: 'void', amount: 'x' },
  ])
  assert.deepEqual(results, [
    { id: 'r1', import_status: 'inserted' },
    { id: 'r2', import_status: 'inserted' },
    { id: 'r3', import_status: 'inserted' },
    { id: 'r4', import_status: 'inserted' },
    { id: 'r5', import_status: 'error', import_error: 'invoice r5: field `amount`: must be an integer, got "x"' },
  ])
  assert.deepEqual(['r1', 'r2', 'r3', 'r4'].map((id) => {
    const invoice = ledger.getInvoice(id)
    return [invoice.customer_id, invoice.invoice_date, invoice.status]
  }), [['A', '2024-01-01', 'paid'], ['A', '2024-02-01', 'paid'], ['B', '2024-03-01', 'paid'], ['B', '2024-03-01', 'void']])
})

test('a getter that throws fails the call with its own error', () => {
  const ledger = new Ledger({ base_currency: 'USD' })
  const record = { id: 'g', name: 'G' }
  Object.defineProperty(record, 'email', { enumerable: true, get() { throw new RangeError('no email') } })
  assert.throws(() => ledger.upsertCustomers([{ id: 'a', name: 'A' }, record]), { name: 'RangeError', message: 'no email' })
  assert.throws(() => ledger.upsertCustomers(record), { name: 'RangeError', message: 'no email' })
  assert.equal(ledger.listCustomers().count, 0)
})

test('an update or a replace reads its object as a record is: a Date is its instant, NaN an error naming the field', () => {
  const l = new Ledger()
  l.upsertPlans([{ id: 'm', name: 'Monthly', interval: 'month', currency: 'USD' }])
  l.upsertCustomers([{ id: 'acme', name: 'Acme' }])
  const updated = l.updateCustomer('acme', { created_date: new Date('2023-12-01T00:00:00Z') })
  assert.equal(updated.created_date, '2023-12-01T00:00:00Z')
  l.replaceInvoice('i3', { customer_id: 'acme', type: 'subscription', invoice_date: new Date('2024-03-15T00:00:00Z'), amount: 5000, currency: 'USD', plan_id: 'm' })
  assert.equal(l.getInvoice('i3').invoice_date, '2024-03-15T00:00:00Z')
  assert.throws(() => l.updateCustomer('acme', { custom_variables: { score: NaN } }), (e) => {
    assert.ok(e instanceof SubmetricsError)
    assert.equal(e.code, 'invalid_record')
    assert.equal(e.message, 'the patch of customer acme: field `custom_variables.score`: is NaN, which is not a JSON number')
    return true
  })
})

test('a wrong JavaScript type is a SubmetricsError on every path, async ones included', async () => {
  const l = new Ledger()
  assert.throws(() => l.upsertInvoicesArrow('abc'), (e) => {
    assert.ok(e instanceof SubmetricsError)
    assert.equal(e.code, 'invalid_record')
    assert.equal(e.message, 'expected an Arrow IPC stream as a Uint8Array or Buffer')
    return true
  })
  await assert.rejects(l.reportAsync(5), (e) => {
    assert.ok(e instanceof SubmetricsError)
    assert.equal(e.code, 'invalid_query')
    return true
  })
})

test('an object as a report parameter is refused naming it, not sent as its JSON text', () => {
  const l = new Ledger()
  assert.throws(() => l.report('mrr', { customer: { id: 'acme' } }, '2024-06-01'), (e) => {
    assert.ok(e instanceof SubmetricsError)
    assert.equal(e.code, 'invalid_query')
    assert.equal(e.field, 'customer')
    assert.equal(e.message, 'parameter `customer`: a parameter value is text, a number, a boolean, a Date or an array of those')
    return true
  })
  assert.equal(l.report('mrr', { interval: 'month', date: ['20240101-20240131'] }, '2024-06-01').result.length, 1)
})

test('a parameter, setting or option JSON cannot hold is refused naming it; a BigInt parameter is its digits', async () => {
  const refused = (fn, code, message, field) => assert.throws(fn, (e) => {
    assert.ok(e instanceof SubmetricsError)
    assert.deepEqual([e.code, e.message, e.field], [code, message, field])
    return true
  })
  const value = 'a parameter value is text, a number, a boolean, a Date or an array of those'
  const l = new Ledger()
  refused(() => l.report('mrr', { interval: () => 'month' }, '2024-06-01'), 'invalid_query', `parameter \`interval\`: ${value}`, 'interval')
  refused(() => l.report('mrr', { interval: Symbol('month') }, '2024-06-01'), 'invalid_query', `parameter \`interval\`: ${value}`, 'interval')
  refused(() => l.report('mrr', { date: [new Date('2024-01-01')] }, '2024-06-01'), 'invalid_query', `parameter \`date\`: ${value}`, 'date')
  refused(() => l.customers({ limit: Infinity }, '2024-06-01'), 'invalid_query', 'parameter `limit`: Infinity is not a finite number', 'limit')
  refused(() => l.movements('2024-06-01', { customer: NaN }), 'invalid_query', 'parameter `customer`: NaN is not a finite number', 'customer')
  await assert.rejects(l.reportAsync('mrr', { interval: () => 'month' }, '2024-06-01'), (e) => e.field === 'interval' && e.code === 'invalid_query')
  refused(() => new Ledger({ base_currency: () => 'USD' }), 'invalid_setting', 'the settings: field `base_currency`: is a function, not a JSON value', 'base_currency')
  refused(() => new Ledger({ churn_grace_days: NaN }), 'invalid_setting', 'the settings: field `churn_grace_days`: is NaN, which is not a JSON number', 'churn_grace_days')
  refused(() => l.updateSettings({ timezone: Symbol('UTC') }), 'invalid_setting', 'the settings: field `timezone`: is a symbol, not a JSON value', 'timezone')
  refused(() => l.importStripe([], { data_source: () => 'stripe' }), 'invalid_query', 'the Stripe options: field `data_source`: is a function, not a JSON value', 'data_source')
  assert.equal(l.customers({ limit: 10n }, '2024-06-01').result.count, 0)
  assert.deepEqual(l.report('mrr', { interval: 'month', date: '20240101-20240131' }, '2024-06-01'),
    l.report('mrr', { interval: 'month', date: ['20240101-20240131'], fix_fx: [false] }, '2024-06-01'))
})
