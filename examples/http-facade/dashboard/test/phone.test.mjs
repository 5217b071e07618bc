// The overview on a phone holds figures of any size: its cards shrink and
// their figures wrap rather than push the page past the screen.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { dashboard } from './browser.mjs'
import { AS_OF } from './seed.mjs'

const session = dashboard({ viewport: { width: 375, height: 740 } })

test('the overview fits a phone with figures in the billions', async () => {
  const post = session.post
  await post('/data/plans', [{ id: 'huge-m', name: 'Huge', interval: 'month', currency: 'USD' }])
  await post('/data/customers', [{ id: 'huge', name: 'Huge Corp' }])
  await post('/data/invoices', [{ id: 'huge-1', customer_id: 'huge', type: 'subscription', plan_id: 'huge-m', invoice_date: AS_OF.slice(0, 8) + '01', amount: 999999999999, currency: 'USD' }])
  await session.open(`#/overview?as_of=${AS_OF}`, 'overview')
  const arr = await session.api(`/reports/summary?as_of=${AS_OF}`)
  assert.ok(arr.summary.arr_current > 1e13, `${arr.summary.arr_current}`)
  const width = await session.page.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(width <= 375, `the overview is ${width}px wide on a 375px screen`)
})

test('no console errors', () => {
  assert.deepEqual(session.errors, [])
})
