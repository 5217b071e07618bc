// A page whose reports fail keeps its controls, to change what was asked
// for, and shows the error in its content; a service that cannot be
// reached is named as such.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { dashboard } from './browser.mjs'
import { AS_OF } from './seed.mjs'
import { OWNER_KEY } from './server.mjs'

const session = dashboard()
const { open, act } = session

test('an error of the service leaves the controls to correct the range', async () => {
  const page = session.page
  const answer = await fetch(`${session.server.base}/reports/mrr?date=20241201-20240101&interval=month&as_of=${AS_OF}`,
    { headers: { Authorization: `Bearer ${OWNER_KEY}` } })
  assert.equal(answer.status, 400)
  const { error } = await answer.json()
  await open(`#/mrr?as_of=${AS_OF}&from=2024-12-01&to=2024-01-01&plan=pro`, 'mrr')
  assert.equal(await page.textContent('main .error'), error)
  assert.equal(await page.getByLabel('From', { exact: true }).inputValue(), '2024-12-01')
  assert.equal(await page.getByLabel('To', { exact: true }).inputValue(), '2024-01-01')
  assert.equal(await page.getByLabel('Plan').inputValue(), 'pro')
  await act(() => page.getByLabel('To', { exact: true }).fill('2024-12-31'), 'mrr')
  assert.equal(await page.locator('main .error').count(), 0)
  assert.equal(await page.locator('#mrr-table tr[data-metric="total_mrr"] .figure').count(), 1)
  // The page's request of the failed reports is the console error expected.
  session.errors = session.errors.filter((message) => !/status of 400/.test(message))
})

test('a service that cannot be reached is named, and the controls stay', async () => {
  const page = session.page
  const unreachable = (route) => route.abort('connectionrefused')
  await page.route('**/reports/**', unreachable)
  await open(`#/overview?as_of=${AS_OF}&interval=quarter`, 'overview')
  assert.equal(await page.textContent('main .error'), 'The service cannot be reached. Check the connection and try again.')
  assert.equal(await page.getByLabel('Interval').inputValue(), 'quarter')
  await page.unroute('**/reports/**', unreachable)
  await act(() => page.getByLabel('Interval').selectOption('month'), 'overview')
  assert.equal(await page.locator('main .error').count(), 0)
  session.errors = session.errors.filter((message) => !/ERR_CONNECTION_REFUSED/.test(message))
})

test('no console errors', () => {
  assert.deepEqual(session.errors, [])
})
