// A funnel step narrowed to the days of a cut period reads the whole
// customer list, page after page: more customers than one page holds are
// all counted.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { dashboard } from './browser.mjs'
import { AS_OF } from './seed.mjs'
import * as format from '../assets/format.js'

const session = dashboard()

test('more leads than one page of the customer list are all listed', async () => {
  // 10,050 leads on March 1, past the 10,000 customers one page holds.
  for (let batch = 0; batch < 3; batch++) {
    const leads = Array.from({ length: 3350 }, (_, n) => ({ id: `lead-${batch}-${n}`, name: `Lead ${batch} ${n}`, created_date: '2024-03-01' }))
    await session.post('/data/customers', leads)
  }
  await session.open(`#/leads?as_of=${AS_OF}&interval=quarter&from=2024-02-15`, 'leads')
  const cut = (await session.api(`/reports/leads?date=20240215-20241231&interval=quarter&as_of=${AS_OF}`)).result[0]
  assert.ok(cut.leads > 10050, `${cut.leads}`)
  await session.act(() => session.page.getByRole('link', { name: /^leads of .*: customers$/ }).first().click(), 'customers')
  assert.equal(await session.page.textContent('#customer-list caption'), `Customers (${format.count(cut.leads)}), MRR in USD`)
})

test('no console errors', () => {
  assert.deepEqual(session.errors, [])
})
