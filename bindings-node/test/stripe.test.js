'use strict'
// Ledger.importStripe: Stripe API objects in, the core's mapping
// (docs/stripe.md) behind it.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { Ledger, SubmetricsError } = require('..')

const STRIPE = path.join(__dirname, '..', '..', 'testdata', 'stripe')
const fixture = (name) => JSON.parse(fs.readFileSync(path.join(STRIPE, name), 'utf8'))

test('importStripe: an upgrade with proration lines is one expansion', () => {
  const l = new Ledger()
  const report = l.importStripe(fixture('04-upgrade-proration.json').stripe)
  assert.deepEqual([report.customers, report.plans, report.invoices, report.rejected], [1, 2, 3, []])
  const moves = l.movements('2024-02-15T00:00:00Z').map((m) => [m.date, m.type, m.subtype, m.mrr_change])
  assert.deepEqual(moves, [
    ['2024-01-01', 'new', 'new', 3100],
    ['2024-01-16', 'expansion', 'upgrade', 3100],
  ])
  assert.equal(l.getInvoice('in_U2').amount, 3200)
})

test('importStripe: rejections name the Stripe object and field; bad options throw', () => {
  const l = new Ledger()
  const report = l.importStripe([{ id: 'in_x', object: 'invoice', status: 'paid' }])
  assert.deepEqual(report.rejected, [{ object: 'invoice', id: 'in_x', field: 'customer', reason: 'is required' }])
  assert.throws(() => l.importStripe([], { uncollectible: 'sometimes' }), SubmetricsError)
  // null or undefined means an option's default; an unknown option is refused all the same.
  const customer = { id: 'cus_n', object: 'customer', name: 'N', created: 1704067200 }
  assert.equal(l.importStripe([customer], { data_source: null, uncollectible: undefined }).customers, 1)
  assert.equal(l.getCustomer('cus_n').data_source, 'stripe')
  assert.throws(() => l.importStripe([], { bogus: null }), (e) => e.code === 'invalid_query' && e.field === 'bogus' &&
    e.message === 'parameter `bogus`: is not an option of the Stripe import (uncollectible, data_source)')
})

test('importStripe takes an export of more than a million values', () => {
  // 60,000 customers of 25 values each, more than napi's conversion of a
  // JSON value takes.
  const metadata = Object.fromEntries(Array.from({ length: 16 }, (_, k) => [`key${k}`, `value${k}`]))
  const customers = Array.from({ length: 60_000 }, (_, i) => ({
    id: `cus_${i}`, object: 'customer', name: `Customer ${i}`, email: `c${i}@example.test`,
    created: 1701388800, currency: 'usd', livemode: false, metadata,
  }))
  const l = new Ledger()
  const report = l.importStripe([{ object: 'list', data: customers }])
  assert.deepEqual([report.customers, report.rejected], [60_000, []])
  assert.equal(l.getCustomer('cus_59999').name, 'Customer 59999')
})

test('a Stripe object JSON cannot hold is an invalid_record naming the field', () => {
  const l = new Ledger()
  for (const [created, message] of [
    [NaN, 'Stripe objects: field `created`: is NaN, which is not a JSON number'],
    [1n, 'Stripe objects: field `created`: is a BigInt, which is not a JSON number'],
  ]) {
    assert.throws(() => l.importStripe([{ object: 'customer', id: 'cus_1', name: 'X', created }]), (e) => {
      assert.ok(e instanceof SubmetricsError)
      assert.equal(e.code, 'invalid_record')
      assert.equal(e.message, message)
      assert.equal(e.field, 'created')
      return true
    })
  }
  assert.equal(l.listCustomers().count, 0)
})
