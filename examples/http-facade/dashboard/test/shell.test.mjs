// The shell around the pages: the skip link, logging out when the session
// has already ended or the service cannot be reached.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { dashboard, OWNER } from './browser.mjs'
import { AS_OF } from './seed.mjs'

const session = dashboard()
const { open, act } = session

async function logIn () {
  const page = session.page
  await page.getByLabel('Email').fill(OWNER.email)
  await page.getByLabel('Password').fill(OWNER.password)
  await act(() => page.getByRole('button', { name: 'Log in' }).click(), 'overview')
}

test('"Skip to content" moves the focus to the page and keeps the view', async () => {
  const view = `#/mrr?as_of=${AS_OF}&interval=quarter`
  await open(view, 'mrr')
  const page = session.page
  await page.focus('#skip')
  await page.keyboard.press('Enter')
  await page.waitForFunction(() => document.activeElement.id === 'main')
  await page.waitForTimeout(300) // a route change would render now
  assert.equal(new URL(page.url()).hash, view)
  assert.equal(await page.textContent('main h1'), 'MRR & movements')
  assert.equal(await page.evaluate(() => document.querySelector('main').dataset.page), 'mrr')
})

test('logging out of a session that has already ended shows the login', async () => {
  await open(`#/overview?as_of=${AS_OF}`, 'overview')
  const page = session.page
  const status = await page.evaluate(async () => {
    const { csrf_token: token } = await (await fetch('/session')).json()
    return (await fetch('/session', { method: 'DELETE', headers: { 'X-CSRF-Token': token } })).status
  })
  assert.equal(status, 200)
  await act(() => page.getByRole('button', { name: 'Log out' }).click(), 'login')
  assert.equal(await page.isHidden('#shell-error'), true)
  // The service's 401 to the logout is the one console error expected.
  session.errors = session.errors.filter((error) => !/status of 401/.test(error))
  await logIn()
})

test('logging out when the service cannot be reached says so and stays', async () => {
  await open(`#/overview?as_of=${AS_OF}`, 'overview')
  const page = session.page
  const unreachable = (route) => route.request().method() === 'DELETE' ? route.abort('connectionrefused') : route.continue()
  await page.route('**/session', unreachable)
  await page.getByRole('button', { name: 'Log out' }).click()
  await page.waitForSelector('#shell-error:not([hidden])')
  assert.equal(await page.textContent('#shell-error'), 'The service cannot be reached. Check the connection and try again.')
  assert.equal(await page.evaluate(() => document.querySelector('main').dataset.page), 'overview')
  await page.unroute('**/session', unreachable)
  await act(() => page.getByRole('button', { name: 'Log out' }).click(), 'login')
  assert.equal(await page.isHidden('#shell-error'), true)
  // The failed request is the one console error expected.
  session.errors = session.errors.filter((error) => !/ERR_CONNECTION_REFUSED/.test(error))
  await logIn()
})

test('no console errors', () => {
  assert.deepEqual(session.errors, [])
})
