// What the browser tests of single findings share: a server with the demo
// account, Chromium logged in as its owner, and the helpers that open a
// view and read its figures. `dashboard()` registers the hooks of a test
// file and returns the session; `session.errors` collects console errors
// and uncaught exceptions.

import { before, after } from 'node:test'
import assert from 'node:assert/strict'
import { chromium } from 'playwright-core'
import { startServer, OWNER_KEY } from './server.mjs'
import { seed } from './seed.mjs'

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
export const OWNER = { email: 'owner@example.test', password: 'owner password 123', name: 'Olive Owner' }

export function dashboard ({ viewport = { width: 1366, height: 900 } } = {}) {
  const session = { errors: [] }
  let browser
  before(async () => {
    session.server = await startServer()
    await seed(session.server.base, OWNER_KEY)
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync']
    })
    session.context = await browser.newContext({ viewport })
    const page = session.page = await session.context.newPage()
    page.on('console', (message) => { if (message.type() === 'error') session.errors.push(message.text()) })
    page.on('pageerror', (error) => session.errors.push(String(error)))
    await session.act(() => page.goto(session.server.setupUrl), 'invite')
    await page.getByLabel('Email').fill(OWNER.email)
    await page.getByLabel('Name').fill(OWNER.name)
    await page.getByLabel('Password', { exact: true }).fill(OWNER.password)
    await page.getByLabel('Repeat password').fill(OWNER.password)
    await session.act(() => page.getByRole('button', { name: 'Create login' }).click(), 'overview')
  })
  after(async () => {
    await browser?.close()
    session.server?.stop()
  })

  /** GET through the API with the owner key. */
  session.api = async (path) => {
    const response = await fetch(session.server.base + path, { headers: { Authorization: `Bearer ${OWNER_KEY}` } })
    assert.equal(response.status, 200, path)
    return response.json()
  }
  /** Sends a write through the API with the owner key. */
  session.write = async (method, path, body) => {
    const response = await fetch(session.server.base + path, {
      method,
      headers: { Authorization: `Bearer ${OWNER_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body)
    })
    assert.equal(response.status, 200, path)
    return response.json()
  }
  /** POSTs records through the API with the owner key; any 2xx answer. */
  session.post = async (path, body) => {
    const response = await fetch(session.server.base + path, {
      method: 'POST',
      headers: { Authorization: `Bearer ${OWNER_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body)
    })
    assert.ok(response.ok, `${path}: ${response.status}`)
  }
  /** Runs `action` and waits until the page `pageName` has rendered anew. */
  session.act = async (action, pageName) => {
    await session.page.evaluate(() => { for (const child of document.querySelector('main')?.children ?? []) child.dataset.stale = '' })
    await action()
    await session.page.waitForFunction((name) => {
      const main = document.querySelector('main')
      return main.dataset.page === name && !main.hasAttribute('aria-busy') &&
        main.children.length > 0 && ![...main.children].some((child) => 'stale' in child.dataset)
    }, pageName)
  }
  /** Opens a view (the fragment) and waits until `pageName` has rendered. */
  session.open = (fragment, pageName) => session.act(() => session.page.goto(`${session.server.base}/app/${fragment}`), pageName)
  /** The `data-value`s of the figures under `selector`, as numbers (null for none). */
  session.values = (selector) => session.page.$$eval(`${selector} .figure`,
    (nodes) => nodes.map((n) => n.dataset.value === '' ? null : Number(n.dataset.value)))
  return session
}
