// Dates on the pages are the account's days: the service answers a record's
// date as the instant its day starts, which in Tokyo is the day before in UTC.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { dashboard } from './browser.mjs'
import { AS_OF } from './seed.mjs'

const session = dashboard()

test('a customer of a Tokyo account shows its days in Tokyo', async () => {
  await session.write('PUT', '/account', { timezone: 'Asia/Tokyo' })
  await session.post('/data/plans', [{ id: 'tokyo-m', name: 'Tokyo', interval: 'month', currency: 'USD' }])
  await session.post('/data/customers', [{ id: 'tokyo', name: 'Tokyo KK', created_date: '2024-01-01' }])
  await session.post('/data/invoices', [{ id: 'tokyo-1', customer_id: 'tokyo', type: 'subscription', plan_id: 'tokyo-m', invoice_date: '2024-01-01', amount: 1200, currency: 'USD' }])
  const detail = await session.api(`/customers/tokyo?as_of=${AS_OF}`)
  assert.equal(detail.created_date, '2023-12-31T15:00:00Z')
  await session.open(`#/customers/tokyo?as_of=${AS_OF}`, 'customers')
  await session.page.waitForSelector('#customer')
  const facts = await session.page.$$eval('#customer .facts dd', (cells) => cells.map((c) => c.textContent))
  // Created, first paid, and cancelled when the month paid for ran out.
  assert.deepEqual(facts.slice(-3), ['2024-01-01', '2024-01-01', '2024-02-01'])
  assert.deepEqual(await session.page.$$eval('#invoices tbody tr td:first-child', (cells) => cells.map((c) => c.textContent)), ['2024-01-01'])
  await session.open(`#/customers?as_of=${AS_OF}&q=tokyo&status=all`, 'customers')
  const row = await session.page.$$eval('#customer-list tr[data-id="tokyo"] td', (cells) => cells.map((c) => c.textContent))
  assert.deepEqual(row.slice(4, 6), ['2024-01-01', '2024-01-01'])
})

test('no console errors', () => {
  assert.deepEqual(session.errors, [])
})
