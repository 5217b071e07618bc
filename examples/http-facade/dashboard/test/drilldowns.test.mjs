// A drill-down lists what the figure clicked counts, no more: the count
// and total of its rows are the figure's, also when the page's range
// starts or ends inside the period clicked.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { dashboard } from './browser.mjs'
import { AS_OF } from './seed.mjs'
import * as format from '../assets/format.js'

const session = dashboard()
const { api, open, act } = session
const sum = (values) => values.reduce((total, value) => total + value, 0)

test('a cash-flow drill-down lists the failed payments of the days in the range', async () => {
  await open(`#/cashflow?as_of=${AS_OF}&from=2024-10-20&to=2024-12-31`, 'cashflow')
  const failed = await api(`/reports/cashflow-failed-payments?date=20241020-20241231&interval=month&as_of=${AS_OF}`)
  const october = failed.result[0]
  const whole = await api(`/reports/cashflow-failed-payments-detail?interval=month&as_of=${AS_OF}&selected-date=2024-10-01`)
  assert.ok(october.failed_count > 0 && whole.result.count > october.failed_count, 'the seed has failed payments in October before and after the 20th')
  await act(() => session.page.locator('#cashflow-table a[href*="detail=failed"][href*="selected=2024-10-01"]').click(), 'cashflow')
  assert.equal(await session.page.textContent('#drilldown-title'), 'Failed payments from 2024-10-20 to 2024-10-31')
  assert.equal(await session.page.textContent('#detail-rows caption'),
    `${format.counted(october.failed_count, 'row')}, total ${format.money(october.failed, failed.currency)}`)
  const amounts = await session.values('#detail-rows')
  assert.equal(amounts.length, october.failed_count)
  assert.equal(sum(amounts), october.failed)
})

test('a leads count links to the customers it counts, of its interval and of the days in the range', async () => {
  await open(`#/leads?as_of=${AS_OF}&interval=quarter`, 'leads')
  const quarters = await api(`/reports/leads?date=last-12-months&interval=quarter&as_of=${AS_OF}`)
  const first = quarters.result[0]
  await act(() => session.page.getByRole('link', { name: `leads of ${format.periodLabel(first.date, 'quarter')}: customers` }).click(), 'customers')
  assert.equal(await session.page.textContent('#customer-list caption'), `Customers (${first.leads}), MRR in USD`)
  assert.equal(await session.page.locator('#customer-list tbody tr').count(), first.leads)
  assert.equal(await session.page.textContent('#step-note'), `Only the leads of the quarter of ${first.date}. Show all`)

  await open(`#/leads?as_of=${AS_OF}&interval=quarter&from=2024-02-15`, 'leads')
  const cut = (await api(`/reports/leads?date=20240215-20241231&interval=quarter&as_of=${AS_OF}`)).result[0]
  assert.ok(cut.leads < first.leads, 'the seed has leads in the quarter before February 15')
  await act(() => session.page.getByRole('link', { name: `leads of ${format.periodLabel(cut.date, 'quarter')}: customers` }).click(), 'customers')
  assert.equal(await session.page.textContent('#customer-list caption'), `Customers (${cut.leads}), MRR in USD`)
  assert.equal(await session.page.locator('#customer-list tbody tr').count(), cut.leads)
  assert.equal(await session.page.textContent('#step-note'), 'Only the leads from 2024-02-15 to 2024-03-31. Show all')

  await act(() => session.page.goBack(), 'leads')
  await act(() => session.page.getByRole('link', { name: `conversions of ${format.periodLabel(cut.date, 'quarter')}: customers` }).click(), 'customers')
  assert.equal(await session.page.textContent('#customer-list caption'), `Customers (${cut.conversions}), MRR in USD`)
  assert.equal(await session.page.textContent('#step-note'), 'Only the conversions from 2024-02-15 to 2024-03-31. Show all')
})

test('a drill-down counts the days of the account time zone', async () => {
  // Midnight in Tokyo is the day before in UTC: the failed payment of
  // October 21 is at 2024-10-20T15:00:00Z.
  await session.write('PUT', '/account', { timezone: 'Asia/Tokyo' })
  try {
    await open(`#/cashflow?as_of=${AS_OF}&from=2024-10-21&to=2024-12-31`, 'cashflow')
    const failed = await api(`/reports/cashflow-failed-payments?date=20241021-20241231&interval=month&as_of=${AS_OF}`)
    const october = failed.result[0]
    assert.ok(october.failed_count > 0, 'the seed has a failed payment on October 21')
    await act(() => session.page.locator('#cashflow-table a[href*="detail=failed"][href*="selected=2024-10-01"]').click(), 'cashflow')
    assert.equal(await session.page.textContent('#detail-rows caption'),
      `${format.counted(october.failed_count, 'row')}, total ${format.money(october.failed, failed.currency)}`)
    const days = await session.page.$$eval('#detail-rows tbody tr td:first-child', (cells) => cells.map((c) => c.textContent))
    assert.ok(days.every((day) => day >= '2024-10-21' && day <= '2024-10-31'), days.join())
  } finally {
    await session.write('PUT', '/account', { timezone: 'UTC' })
  }
})

test('another breakdown or interval closes the drill-down into a value or period of the old one', async () => {
  const page = session.page
  await open(`#/mrr?as_of=${AS_OF}&breakdown=plan&selected=2024-12-01&bvalue=basic`, 'mrr')
  assert.match(await page.textContent('#drilldown-title'), /^All movements, plan basic in the month of 2024-12-01$/)
  await act(() => page.getByLabel('Breakdown', { exact: true }).selectOption('country'), 'mrr')
  assert.doesNotMatch(page.url(), /bvalue=/)
  const all = await api(`/reports/movement-table?date=last-12-months&interval=month&as_of=${AS_OF}&selected-date=2024-12-01&sort=mrr_change&order=desc`)
  assert.equal(await page.textContent('#drilldown-title'), 'All movements in the month of 2024-12-01')
  assert.deepEqual(await session.values('#movement-rows'), all.result.list.map((m) => m.mrr_change_base_currency))
  await act(() => page.getByLabel('Interval').selectOption('quarter'), 'mrr')
  assert.doesNotMatch(page.url(), /selected=/)
  assert.equal(await page.locator('#drilldown').count(), 0)
})

test('no console errors', () => {
  assert.deepEqual(session.errors, [])
})
