// Hand-made addresses: a fragment that is not valid percent-encoding is
// shown as a page (an unknown customer), and the login's `next` is
// followed only to a view of the dashboard.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { dashboard } from './browser.mjs'
import { AS_OF } from './seed.mjs'
import { OWNER_KEY } from './server.mjs'

const session = dashboard()
const { open } = session

test('an id that is not valid percent-encoding is looked up as it is', async () => {
  await open('#/customers/%E0%A4%A', 'customers')
  const answer = await fetch(`${session.server.base}/customers/${encodeURIComponent('%E0%A4%A')}`, { headers: { Authorization: `Bearer ${OWNER_KEY}` } })
  assert.equal(answer.status, 404)
  assert.equal(await session.page.textContent('main .error'), (await answer.json()).error)
  session.errors = session.errors.filter((message) => !/status of 404/.test(message))
})

test('a customer whose id holds a space and a comma has its page', async () => {
  const id = 'acme corp, eu'
  const post = session.post
  await post('/data/plans', [{ id: 'spaced-m', name: 'Spaced', interval: 'month', currency: 'USD' }])
  await post('/data/customers', [{ id, name: 'Acme Corp EU' }])
  await post('/data/invoices', [{ id: 'spaced-1', customer_id: id, type: 'subscription', plan_id: 'spaced-m', invoice_date: '2024-01-01', amount: 4321, currency: 'USD' }])
  await open(`#/customers/${encodeURIComponent(id)}?as_of=${AS_OF}`, 'customers')
  await session.page.waitForSelector('#customer')
  const quoted = encodeURIComponent('"acme corp, eu"')
  const invoices = await session.api(`/reports/invoices-detail?customer=${quoted}&as_of=${AS_OF}`)
  assert.deepEqual(invoices.result.list.map((i) => i.total), [4321])
  assert.deepEqual(await session.values('#invoices'), [4321])
})

test('next is followed only to a view of the dashboard', async () => {
  const page = session.page
  for (const next of ['https://evil.example/x', '/session', '//evil.example', 'javascript:alert(1)', '#/login']) {
    await open(`#/login?next=${encodeURIComponent(next)}`, 'overview')
    const url = new URL(page.url())
    assert.equal(url.origin + url.pathname + url.hash, `${session.server.base}/app/#/overview`, next)
  }
  await open(`#/login?next=${encodeURIComponent(`#/mrr?as_of=${AS_OF}`)}`, 'mrr')
  assert.equal(new URL(page.url()).hash, `#/mrr?as_of=${AS_OF}`)
})

test('no console errors', () => {
  assert.deepEqual(session.errors, [])
})
