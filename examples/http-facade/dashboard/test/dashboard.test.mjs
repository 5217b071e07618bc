// Browser tests of the dashboard on a seeded account, in the system
// Chromium through playwright-core: set up the owner's login from the link
// the server prints, log out and in, load every page and check the figures
// it shows against the API's answers (exactly), drill down, change
// filters, invite a readonly member who logs in and cannot write, and no
// console errors anywhere. With DASHBOARD_SCREENSHOTS=DIR each page is
// saved there as PNG (docs/dashboard/ holds the committed ones).

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, mkdirSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { startServer, OWNER_KEY } from './server.mjs'
import { seed, AS_OF } from './seed.mjs'
import { VENDORED } from '../scripts/vendor.mjs'
import * as format from '../assets/format.js'
import { windowStart } from '../assets/controls.js'
import { mrrChartRanges } from '../assets/charts.js'

const here = dirname(fileURLToPath(import.meta.url))
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const SHOTS = process.env.DASHBOARD_SCREENSHOTS
const OWNER = { email: 'owner@example.test', password: 'owner password 123', name: 'Olive Owner' }
const READER = { email: 'reader@example.test', password: 'reader password 456', name: 'Rita Reader' }

let server, browser, context, page
const consoleErrors = []

before(async () => {
  server = await startServer()
  await seed(server.base, OWNER_KEY)
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
  context = await browser.newContext({ viewport: { width: 1366, height: 900 } })
  page = await context.newPage()
  page.on('console', (message) => { if (message.type() === 'error') consoleErrors.push(message.text()) })
  page.on('pageerror', (error) => consoleErrors.push(String(error)))
})

after(async () => {
  await browser?.close()
  server?.stop()
})

/** GET through the API with the owner key. */
async function api (path) {
  const response = await fetch(server.base + path, { headers: { Authorization: `Bearer ${OWNER_KEY}` } })
  assert.equal(response.status, 200, path)
  return response.json()
}

/** Opens a view and waits until its page has rendered. */
async function open (fragment, pageName) {
  await act(() => page.goto(`${server.base}/app/${fragment}`), pageName)
}

/**
 * Runs `action` and waits until the page `pageName` has rendered anew: the
 * content shown before is marked, and a render replaces all of it.
 */
async function act (action, pageName) {
  await page.evaluate(() => { for (const child of document.querySelector('main')?.children ?? []) child.dataset.stale = '' })
  await action()
  await page.waitForFunction((name) => {
    const main = document.querySelector('main')
    return main.dataset.page === name && !main.hasAttribute('aria-busy') &&
      main.children.length > 0 && ![...main.children].some((child) => 'stale' in child.dataset)
  }, pageName)
}

async function shot (name, { fullPage = true } = {}) {
  if (!SHOTS) return
  mkdirSync(SHOTS, { recursive: true })
  await page.waitForTimeout(300) // charts draw on the next frame
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage })
}

/** The `data-value`s of the figures under `selector`, as numbers (null for none). */
async function values (selector) {
  return page.$$eval(`${selector} .figure`, (nodes) => nodes.map((n) => n.dataset.value === '' ? null : Number(n.dataset.value)))
}

test('the vendored chart library is the installed npm package', () => {
  const root = join(here, '..')
  for (const [from, to] of VENDORED) {
    assert.ok(readFileSync(join(root, from)).equals(readFileSync(join(root, to))), `${to} differs from ${from}: npm run vendor`)
  }
})

test('the owner sets up the login from the link the server printed', async () => {
  await act(() => page.goto(`${server.base}/app/`), 'login')
  await shot('login', { fullPage: false })
  await act(() => page.goto(server.setupUrl), 'invite')
  await page.getByLabel('Email').fill(OWNER.email)
  await page.getByLabel('Name').fill(OWNER.name)
  await page.getByLabel('Password', { exact: true }).fill(OWNER.password)
  await page.getByLabel('Repeat password').fill(OWNER.password)
  await act(() => page.getByRole('button', { name: 'Create login' }).click(), 'overview')
  assert.match(await page.textContent('#who'), /owner@example\.test \(owner\)/)
  const team = await api('/account/team')
  assert.deepEqual(team.result.list.map((m) => [m.email, m.role, m.status]), [[OWNER.email, 'owner', 'active']])
  assert.ok(team.result.list[0].last_login)
})

test('logging out ends the session; logging in starts one', async () => {
  await act(() => page.getByRole('button', { name: 'Log out' }).click(), 'login')
  const session = await page.evaluate(() => fetch('/session').then((r) => r.json()))
  assert.equal(session.user, null)
  await page.getByLabel('Email').fill(OWNER.email)
  await page.getByLabel('Password').fill(OWNER.password)
  await act(() => page.getByRole('button', { name: 'Log in' }).click(), 'overview')
})

test('the overview shows the mrr report of the selected period', async () => {
  await open(`#/overview?as_of=${AS_OF}`, 'overview')
  const answer = await api(`/reports/mrr?date=last-12-months&interval=month&as_of=${AS_OF}`)
  const periods = answer.result
  const last = periods[periods.length - 1]
  const previous = periods[periods.length - 2]
  assert.ok(last.total_mrr > 0)
  // The page module needs a DOM to load, so its table of figures is repeated here.
  const kpis = [
    ['total_mrr', 'money', 'mrr_diff'], ['total_arr', 'money'], ['total_customers', 'count', 'customers_diff'], ['arpa', 'money'],
    ['customer_churn_rate', 'percent'], ['net_mrr_churn_rate', 'percent'], ['nrr', 'percent'], ['quick_ratio', 'ratio']
  ]
  const show = { money: [format.money, format.moneyChange], count: [format.count, format.countChange], percent: [format.percent, format.percentChange], ratio: [format.ratio, format.ratioChange] }
  for (const [key, kind, changeKey] of kpis) {
    const card = `.kpi[data-metric="${key}"]`
    const [value, change] = await values(card)
    assert.equal(value, last[key], key)
    assert.equal(await page.textContent(`${card} .value`), show[kind][0](last[key], answer.currency), key)
    const expected = changeKey ? last[changeKey] : (last[key] === null || previous[key] === null ? null : last[key] - previous[key])
    assert.equal(change, expected, `${key} change`)
  }
  assert.equal(await page.locator('.kpi .sparkline canvas').count(), kpis.length)
  // Each trend is drawn between every two neighbouring periods with a
  // value, and never on its canvas's top or bottom row, where a line is cut
  // away (the churn rate's months at 0% were).
  const drawings = await page.evaluate(() => [...document.querySelectorAll('.kpi')].map((card) => {
    const canvas = card.querySelector('.sparkline canvas')
    const { width, height } = canvas
    const pixels = canvas.getContext('2d').getImageData(0, 0, width, height).data
    let columns = 0
    let top = height
    let bottom = -1
    for (let x = 0; x < width; x++) {
      let painted = false
      for (let y = 0; y < height; y++) {
        if (pixels[(y * width + x) * 4 + 3] >= 128) {
          painted = true
          top = Math.min(top, y)
          bottom = Math.max(bottom, y)
        }
      }
      if (painted) columns++
    }
    return { metric: card.dataset.metric, width, height, columns, top, bottom }
  }))
  const instant = (period) => Date.parse(period.date)
  const span = instant(last) - instant(periods[0])
  for (const drawing of drawings) {
    const joined = periods.slice(1).filter((p, i) => p[drawing.metric] !== null && periods[i][drawing.metric] !== null)
    const share = joined.reduce((sum, p) => sum + instant(p) - instant(periods[periods.indexOf(p) - 1]), 0) / span
    assert.ok(drawing.columns >= 0.8 * share * drawing.width, `${drawing.metric}: ${JSON.stringify(drawing)}, ${share}`)
    assert.ok(drawing.top >= 1 && drawing.bottom <= drawing.height - 2, `${drawing.metric}: ${JSON.stringify(drawing)}`)
  }
  assert.equal(await page.locator('.chart canvas').count(), 1)
  assert.match(await page.textContent('.period'), new RegExp(`${last.date} to ${last.end_date}`))
  await shot('overview')
  // A click on a period of the chart opens its movements.
  const over = page.locator('.chart .u-over')
  const box = await over.boundingBox()
  await act(() => over.click({ position: { x: box.width - 5, y: box.height / 2 } }), 'mrr')
  assert.match(page.url(), new RegExp(`selected=${last.date}`))
  await page.waitForSelector('#drilldown')
})

test('the MRR chart draws the MRR line and the movement bars over one zero line', async () => {
  // (interval named: the next test opens the page's plain address anew)
  await open(`#/mrr?as_of=${AS_OF}&interval=month`, 'mrr')
  const periods = (await api(`/reports/mrr?date=last-12-months&interval=month&as_of=${AS_OF}`)).result
  // The extremes the axes must show, from the API's answer: the highest
  // MRR, the largest stack of gains and of losses of a period.
  const keys = ['new', 'expansion', 'reactivation', 'contraction', 'churn']
  const stack = (p, sign) => keys.reduce((sum, key) => sum + (Math.sign(p[key]) === sign ? p[key] : 0), 0)
  const highest = Math.max(...periods.map((p) => p.total_mrr))
  const gains = Math.max(...periods.map((p) => stack(p, 1)))
  const losses = Math.min(...periods.map((p) => stack(p, -1)))
  assert.ok(highest > 0 && losses < 0 && -losses < gains, `the seed gains more than it loses: ${[highest, gains, losses]}`)
  await page.waitForFunction(() => document.querySelector('main .chart')?.plot)
  const chart = await page.$eval('main .chart', (wrapper) => {
    const { scales, axes, valToPos } = wrapper.plot
    return {
      mrr: [scales.mrr.min, scales.mrr.max],
      mov: [scales.mov.min, scales.mov.max],
      zeros: [valToPos(0, 'mrr'), valToPos(0, 'mov')],
      mrrTicks: axes[1]._splits
    }
  })
  // Losses take the same share of the movement axis below zero as the MRR
  // axis gives below its zero; each axis runs a tenth past its extremes.
  const near = (actual, expected, what) => assert.ok(actual.every((v, i) => Math.abs(v - expected[i]) <= 1e-9 * Math.abs(expected[i])), `${what}: ${actual} is not ${expected}`)
  near(chart.mov, [losses * 1.1, gains * 1.1], 'movement axis')
  near(chart.mrr, [highest * 1.1 * losses / gains, highest * 1.1], 'MRR axis')
  assert.ok(Math.abs(chart.zeros[0] - chart.zeros[1]) <= 1, `zero of MRR at ${chart.zeros[0]}px, of movements at ${chart.zeros[1]}px`)
  assert.ok(chart.mrrTicks.includes(0), `a grid line at zero: ${chart.mrrTicks}`)
  // On the canvas, each period's first gain starts right above the MRR
  // axis's zero and its first loss right below it (the MRR line away).
  const probes = periods.map((p) => [format.epochSeconds(p.date), p.total_mrr])
  const drawn = await page.$eval('main .chart', (wrapper, probes) => {
    const plot = wrapper.plot
    const context = wrapper.querySelector('canvas').getContext('2d')
    const pixel = (x, y) => [...context.getImageData(Math.round(x), Math.round(y), 1, 1).data]
    const zero = plot.valToPos(0, 'mrr', true)
    return probes.map(([at, mrr]) => {
      const x = plot.valToPos(at, 'x', true)
      return { lineAway: Math.abs(plot.valToPos(mrr, 'mrr', true) - zero) > 8, above: pixel(x, zero - 2), below: pixel(x, zero + 2) }
    })
  }, probes)
  const colors = { new: '#1a7f37', expansion: '#0969da', reactivation: '#8250df', contraction: '#bc4c00', churn: '#cf222e' }
  const rgba = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).concat(255)
  // The first movement of a sign is the one drawn next to zero; a tall one
  // (3% of the axis, some 6 pixels) has its own colour 2 pixels in.
  const first = (p, sign) => keys.find((key) => Math.sign(p[key]) === sign)
  const tall = (p, key) => key && Math.abs(p[key]) >= 0.03 * (gains - losses)
  let checked = 0
  periods.forEach((p, i) => {
    const [gain, loss] = [first(p, 1), first(p, -1)]
    if (!drawn[i].lineAway || !tall(p, gain) || !tall(p, loss)) return
    assert.deepEqual(drawn[i].above, rgba(colors[gain]), `${p.date}: ${gain} above zero`)
    assert.deepEqual(drawn[i].below, rgba(colors[loss]), `${p.date}: ${loss} below zero`)
    checked++
  })
  assert.ok(checked >= 2, `only ${checked} periods have both gains and losses drawn`)
})

test('MRR and movements: the period table, filters, breakdown and drill-down match the API', async () => {
  await open(`#/mrr?as_of=${AS_OF}`, 'mrr')
  const check = async (query) => {
    const pivot = await api(`/reports/mrr-table?date=last-12-months&interval=month&as_of=${AS_OF}${query}`)
    for (const row of pivot.rows) {
      assert.deepEqual(await values(`#mrr-table tr[data-metric="${row.metric}"]`), row.values, row.metric)
    }
    return pivot
  }
  await check('')
  await shot('mrr')
  await act(() => page.getByLabel('Interval').selectOption('quarter'), 'mrr')
  assert.match(page.url(), /interval=quarter/)
  const quarters = await api(`/reports/mrr-table?date=last-12-months&interval=quarter&as_of=${AS_OF}`)
  assert.deepEqual(await values('#mrr-table tr[data-metric="total_mrr"]'), quarters.rows.find((r) => r.metric === 'total_mrr').values)
  await act(() => page.getByLabel('Interval').selectOption('month'), 'mrr')
  await act(() => page.getByLabel('Plan').selectOption('pro'), 'mrr')
  assert.match(page.url(), /plan=pro/)
  await check('&plan=pro')
  await page.getByLabel('Country').fill('US')
  await act(() => page.getByLabel('Country').press('Enter'), 'mrr')
  await check('&plan=pro&country=US')
  await act(() => page.getByLabel('Plan').selectOption(''), 'mrr')
  await page.getByLabel('Country').fill('')
  await act(() => page.getByLabel('Country').press('Enter'), 'mrr')
  const pivot = await check('')
  // Drill into the new MRR of the first period that has some.
  const row = pivot.rows.find((r) => r.metric === 'new')
  const index = row.values.findIndex((v) => v > 0)
  const date = pivot.columns[index]
  await act(() => page.locator('#mrr-table tr[data-metric="new"] a').first().click(), 'mrr')
  await page.waitForSelector('#drilldown')
  const movements = await api(`/reports/movement-table?date=last-12-months&interval=month&as_of=${AS_OF}&selected-date=${date}&selected-type=new&sort=mrr_change&order=desc`)
  assert.ok(movements.result.count > 0)
  assert.deepEqual(await values('#movement-rows'), movements.result.list.map((m) => m.mrr_change_base_currency))
  const customers = await page.$$eval('#movement-rows tbody tr td:nth-child(2) a', (links) => links.map((a) => a.textContent))
  assert.deepEqual(customers, movements.result.list.map((m) => m.customer_name))
  await shot('mrr-drilldown')
  // A breakdown by country, and its rows drill down too.
  await act(() => page.getByLabel('Breakdown').selectOption('country'), 'mrr')
  const broken = await api(`/reports/mrr?date=last-12-months&interval=month&as_of=${AS_OF}&breakdown=country`)
  const period = broken.result.find((p) => p.date === date)
  const entries = Object.values(period.breakdown)
  const shown = await page.$$eval('#breakdown-table tbody tr', (rows) => rows.map((r) => Number(r.querySelector('.figure').dataset.value)))
  assert.deepEqual(shown, entries.map((e) => e.total_mrr))
})

test('a shortcut window ends on a given day as the service counts it', () => {
  assert.equal(windowStart('last-12-months', '2024-12-31'), '2024-01-01')
  assert.equal(windowStart('last-24-months', '2024-03-15'), '2022-04-01')
  assert.equal(windowStart('last-1-months', '2024-01-09'), '2024-01-01')
  assert.equal(windowStart('last-10-years', '2024-06-30'), '2015-01-01')
})

test('the two axes of the MRR chart have their zero at one height, for any movements', () => {
  const period = (mrr, gains = [0, 0, 0], losses = [0, 0]) => {
    const [n, expansion, reactivation] = gains
    const [contraction, churn] = losses
    return { total_mrr: mrr, new: n, expansion, reactivation, contraction, churn }
  }
  const check = (periods, expected, what) => {
    const ranges = mrrChartRanges(periods)
    for (const axis of ['mrr', 'mov']) {
      const close = ranges[axis].every((v, i) => Math.abs(v - expected[axis][i]) <= 1e-9 * Math.abs(expected[axis][i]))
      assert.ok(close && !Object.is(ranges[axis][0], -0), `${what}, ${axis}: ${ranges[axis]} is not ${expected[axis]}`)
    }
    // The share of each axis below zero is the same.
    const [mrr, mov] = [ranges.mrr, ranges.mov].map(([low, high]) => -low / (high - low))
    assert.ok(Math.abs(mrr - mov) < 1e-12, `${what}: zero at ${mrr} and ${mov} of the height`)
  }
  // More gains than losses: losses of 150 against gains of 400 put both
  // zeros at 150/550 of the height.
  check([period(1000, [300, 100, 0], [-50, -100]), period(2000, [200, 0, 0], [0, -50])],
    { mrr: [-825, 2200], mov: [-165, 440] }, 'gains and losses')
  check([period(1000, [300, 100, 0]), period(2000, [200, 0, 50])], { mrr: [0, 2200], mov: [0, 440] }, 'gains only')
  // Losses only, or more losses than gains: at most half the plot is below zero.
  check([period(1000, [0, 0, 0], [-50, -100]), period(800, [0, 0, 0], [0, -120])],
    { mrr: [-1100, 1100], mov: [-165, 165] }, 'losses only')
  check([period(1000, [100, 0, 0], [-200, -100])], { mrr: [-1100, 1100], mov: [-330, 330] }, 'more losses than gains')
  // An axis with only zeros takes the other's range; with neither, $100.00 each.
  check([period(1000), period(1000)], { mrr: [0, 1100], mov: [0, 1100] }, 'no movements')
  check([period(0, [0, 0, 0], [-50, 0])], { mrr: [-55, 55], mov: [-55, 55] }, 'no MRR left')
  check([], { mrr: [0, 11000], mov: [0, 11000] }, 'no periods')
})

test('a From date alone runs to the as-of date, a To date alone ends the default twelve months', async () => {
  await open(`#/mrr?as_of=${AS_OF}`, 'mrr')
  const shown = () => values('#mrr-table tr[data-metric="total_mrr"]')
  const expected = async (date) => {
    const pivot = await api(`/reports/mrr-table?date=${date}&interval=month&as_of=${AS_OF}`)
    return pivot.rows.find((r) => r.metric === 'total_mrr').values
  }
  const from = page.getByLabel('From', { exact: true })
  const to = page.getByLabel('To', { exact: true })
  await act(() => from.fill('2024-03-01'), 'mrr')
  assert.match(page.url(), /from=2024-03-01/)
  const fromMarch = await shown()
  assert.equal(fromMarch.length, 10)
  assert.deepEqual(fromMarch, await expected('20240301-20241231'))
  await act(() => from.fill(''), 'mrr')
  await act(() => to.fill('2024-06-30'), 'mrr')
  assert.doesNotMatch(page.url(), /from=/)
  const toJune = await shown()
  assert.equal(toJune.length, 12)
  assert.deepEqual(toJune, await expected('20230701-20240630'))
  await act(() => from.fill('2024-02-01'), 'mrr')
  assert.deepEqual(await shown(), await expected('20240201-20240630'))
  assert.equal((await shown()).length, 5)
})

test('customers: search, sort and a customer page match the API', async () => {
  await open(`#/customers?as_of=${AS_OF}`, 'customers')
  const list = await api(`/customers?status=active&sort=mrr&order=desc&limit=50&offset=0&as_of=${AS_OF}`)
  assert.deepEqual(await page.$$eval('#customer-list tbody tr', (rows) => rows.map((r) => r.dataset.id)), list.result.list.map((c) => c.id))
  assert.deepEqual(await values('#customer-list'), list.result.list.map((c) => c.mrr))
  await shot('customers')
  await page.getByLabel('Search').fill('acme')
  await act(() => page.getByRole('button', { name: 'Search' }).click(), 'customers')
  const found = await api(`/customers?q=acme&status=active&sort=mrr&order=desc&limit=50&offset=0&as_of=${AS_OF}`)
  assert.ok(found.result.count > 0)
  assert.deepEqual(await page.$$eval('#customer-list tbody tr', (rows) => rows.map((r) => r.dataset.id)), found.result.list.map((c) => c.id))
  await act(() => page.getByRole('link', { name: 'Name' }).click(), 'customers')
  assert.match(page.url(), /sort=name/)
  const byName = await api(`/customers?q=acme&status=active&sort=name&order=desc&limit=50&offset=0&as_of=${AS_OF}`)
  assert.deepEqual(await page.$$eval('#customer-list tbody tr', (rows) => rows.map((r) => r.dataset.id)), byName.result.list.map((c) => c.id))
  const id = byName.result.list[0].id
  await act(() => page.locator(`#customer-list tr[data-id="${id}"] a`).click(), 'customers')
  await page.waitForSelector('#customer')
  const detail = await api(`/customers/${id}?as_of=${AS_OF}`)
  assert.deepEqual(await values('[data-metric="converted_mrr"]'), [detail.converted_mrr])
  const invoices = await api(`/reports/invoices-detail?customer=${id}&as_of=${AS_OF}`)
  assert.deepEqual(await values('#invoices'), invoices.result.list.map((i) => i.total))
  const movements = await api(`/reports/movement-table?customer=${id}&date=last-10-years&as_of=${AS_OF}&sort=date&order=desc`)
  assert.deepEqual(await values('#movements'), movements.result.list.map((m) => m.mrr_change_base_currency))
  assert.deepEqual(await values('#subscriptions'), detail.current_subscriptions.map((s) => s.mrr))
  await shot('customer')
})

test('retention: rates, cohorts, committed MRR and scheduled churn match the API', async () => {
  await open(`#/retention?as_of=${AS_OF}`, 'retention')
  const rates = await api(`/reports/mrr?date=last-12-months&interval=month&as_of=${AS_OF}`)
  const firstRow = await values('#rates tbody tr:first-child')
  const p = rates.result[0]
  assert.deepEqual(firstRow, [p.customer_churn_rate, p.mrr_churn_rate, p.net_mrr_churn_rate, p.customer_retention_rate, p.mrr_retention_rate, p.nrr])
  // A monthly series is ticked at its months (uPlot's own steps put ticks
  // at 1/16, 1/31, 2/15).
  const ticks = await page.$eval('#rates', (table) => table.closest('section').querySelector('.chart').plot.axes[0]._splits)
  assert.ok(ticks.length >= 6, `${ticks}`)
  for (const tick of ticks) {
    const at = new Date(tick * 1000)
    assert.deepEqual([at.getUTCDate(), at.getUTCHours(), at.getUTCMinutes()], [1, 0, 0], at.toISOString())
  }
  const cohorts = await api(`/reports/cohort?date=last-12-months&interval=month&metric=customers&as_of=${AS_OF}`)
  const shown = await page.$$eval('#cohorts tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('.figure')].map((f) => Number(f.dataset.value))))
  assert.deepEqual(shown, cohorts.result.map((c) => [c.new_customers, ...c.periods.map((x) => x.percent)]))
  const cmrr = await api(`/reports/cmrr-summary?as_of=${AS_OF}`)
  assert.deepEqual(await values('[data-metric="cmrr"]'), [cmrr.summary.cmrr])
  const scheduled = await api(`/reports/churn-scheduled-movements?as_of=${AS_OF}&sort=date&order=asc`)
  assert.ok(scheduled.result.list.length > 0)
  assert.deepEqual(await values('#scheduled-churn'), scheduled.result.list.map((r) => r.mrr_change_base_currency))
  await shot('retention')
  await act(() => page.getByLabel('Cohort metric').selectOption('mrr'), 'retention')
  const byMrr = await api(`/reports/cohort?date=last-12-months&interval=month&metric=mrr&as_of=${AS_OF}`)
  const first = await page.$$eval('#cohorts tbody tr:first-child .figure', (f) => f.map((x) => Number(x.dataset.value)))
  assert.deepEqual(first, [byMrr.result[0].new_customers, ...byMrr.result[0].periods.map((x) => x.percent)])
})

test('leads and trials: the funnel matches the API and links to its customers', async () => {
  await open(`#/leads?as_of=${AS_OF}`, 'leads')
  const funnel = await api(`/reports/leads?date=last-12-months&interval=month&as_of=${AS_OF}`)
  const rows = await page.$$eval('#funnel tbody tr', (trs) => trs.map((r) => [...r.querySelectorAll('.figure')].map((f) => f.dataset.value === '' ? null : Number(f.dataset.value))))
  assert.deepEqual(rows, funnel.result.map((p) => [p.leads, p.trials, p.conversions, p.lead_to_paid_rate, p.trial_to_paid_rate]))
  const summary = await api(`/reports/leads-summary?interval=month&as_of=${AS_OF}`)
  assert.deepEqual(await values('[data-metric="leads"]'), [summary.current.leads, summary.change.leads])
  await shot('leads')
  const period = funnel.result.find((p) => p.leads > 0)
  await act(() => page.getByRole('link', { name: `leads of ${format.periodLabel(period.date, 'month')}: customers` }).click(), 'customers')
  assert.equal(await page.locator('#customer-list tbody tr').count(), period.leads)
})

test('cash flow: transactions, failures, refunds and unpaid invoices match the API', async () => {
  await open(`#/cashflow?as_of=${AS_OF}`, 'cashflow')
  const q = `date=last-12-months&interval=month&as_of=${AS_OF}`
  const [transactions, failed, rate, refunds, unpaid] = await Promise.all([
    api(`/reports/transactions?${q}`), api(`/reports/cashflow-failed-payments?${q}`), api(`/reports/cashflow-failure-rate?${q}`),
    api(`/reports/cashflow-refunds?${q}`), api(`/reports/cashflow-outstanding-unpaid?as_of=${AS_OF}&limit=100`)
  ])
  const rows = await page.$$eval('#cashflow-table tbody tr', (trs) => trs.map((r) => [...r.querySelectorAll('.figure')].map((f) => f.dataset.value === '' ? null : Number(f.dataset.value))))
  assert.deepEqual(rows, transactions.result.map((p, i) => [p.net, p.payments, p.payments_count, refunds.result[i].refunds, failed.result[i].failed, failed.result[i].failed_count, rate.result[i].failure_rate]))
  assert.ok(failed.result.some((p) => p.failed_count > 0), 'the seed has failed payments')
  assert.deepEqual(await values('[data-metric="unpaid_total"]'), [unpaid.total.amount])
  assert.deepEqual(await values('#unpaid'), unpaid.result.list.map((r) => r.amount_base_currency))
  // Counts name their noun in the singular for one ("1 invoices" before).
  const bucketCounts = await page.$$eval('[data-metric^="unpaid_"] p:last-child', (ps) => ps.map((p) => p.textContent))
  assert.deepEqual(bucketCounts, [unpaid.total, ...unpaid.buckets].map((b) => `${b.count} ${b.count === 1 ? 'invoice' : 'invoices'}`))
  assert.ok(unpaid.buckets.some((b) => b.count === 1), 'the seed has a bucket of one invoice')
  await shot('cashflow')
  const month = failed.result.find((p) => p.failed > 0)
  await act(() => page.locator(`#cashflow-table a[href*="detail=failed"][href*="selected=${month.date}"]`).click(), 'cashflow')
  const detail = await api(`/reports/cashflow-failed-payments-detail?interval=month&as_of=${AS_OF}&selected-date=${month.date}`)
  assert.deepEqual(await values('#detail-rows'), detail.result.list.map((r) => r.amount_base_currency))
})

test('settings: an owner changes a setting and invites a readonly member, who logs in and cannot write', async () => {
  // A first day of week set through the API is shown, and kept by a save
  // of another setting (the form offered Sunday and Monday only, and saved
  // Sunday for any other day).
  const put = await fetch(`${server.base}/account`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${OWNER_KEY}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ first_day_of_week: 3 })
  })
  assert.equal(put.status, 200)
  await open(`#/settings?as_of=${AS_OF}`, 'settings')
  const weekStart = page.getByLabel('First day of week')
  assert.equal(await weekStart.inputValue(), '3')
  assert.equal(await weekStart.locator('option:checked').textContent(), 'Wednesday')
  await page.getByLabel('Churn grace (days)').fill('3')
  await act(() => page.getByRole('button', { name: 'Save settings' }).click(), 'settings')
  const saved = await api('/account')
  assert.deepEqual([saved.churn_grace_days, saved.first_day_of_week], [3, 3])
  // An emptied grace is not saved (it used to be sent as 0).
  await page.getByLabel('Churn grace (days)').fill('')
  await page.getByRole('button', { name: 'Save settings' }).click()
  assert.equal(await page.locator('#account-form input[name="churn_grace_days"]:invalid').count(), 1)
  assert.equal((await api('/account')).churn_grace_days, 3)
  await page.getByLabel('Churn grace (days)').fill('0')
  await page.getByLabel('First day of week').selectOption('1')
  await act(() => page.getByRole('button', { name: 'Save settings' }).click(), 'settings')
  const restored = await api('/account')
  assert.deepEqual([restored.churn_grace_days, restored.first_day_of_week], [0, 1])
  assert.equal(await page.textContent('#data-sources td.empty'), 'No data sources yet.')
  await page.locator('form[aria-label="Invite"]').getByLabel('Email').fill(READER.email)
  await page.locator('form[aria-label="Invite"]').getByLabel('Role').selectOption('readonly')
  await page.getByRole('button', { name: 'Invite', exact: true }).click()
  const message = page.locator('form[aria-label="Invite"] .form-message')
  await message.locator('input, span, :scope.error').first().waitFor().catch(() => {})
  assert.equal(await message.getAttribute('class'), 'form-message', await message.textContent())
  const link = await page.locator('#invite-link').inputValue()
  assert.match(link, /\/app\/#\/invite\/inv_[0-9a-f]{64}$/)
  const team = await api('/account/team')
  assert.deepEqual(team.result.list.map((m) => [m.email, m.role, m.status]), [[OWNER.email, 'owner', 'active'], [READER.email, 'readonly', 'pending']])
  await shot('settings')
  // Of more FX rates than the page shows, the latest are shown, and the
  // caption says how many of how many.
  const yen = Array.from({ length: 1001 }, (_, i) => ({ date: new Date(Date.UTC(2020, 0, 1 + i)).toISOString().slice(0, 10), currency: 'JPY', rate: 150 + i / 1000 }))
  const posted = await fetch(`${server.base}/data/fx-rates`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${OWNER_KEY}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(yen)
  })
  assert.equal(posted.status, 200)
  await act(() => page.reload(), 'settings')
  assert.match(await page.textContent('#fx-rates caption'), /^Units of each currency per unit of the FX pivot, .*; the latest 1000 of 1003$/)
  const shownRates = await page.$$eval('#fx-rates tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)))
  assert.equal(shownRates.length, 1000)
  assert.deepEqual(shownRates[0].slice(1), ['JPY', '150.003'])
  assert.deepEqual(shownRates.slice(-2).map((r) => r.slice(1)), [['EUR', '0.92'], ['EUR', '0.9']])
  await act(() => page.getByRole('button', { name: 'Log out' }).click(), 'login')
  await act(() => page.goto(link), 'invite')
  await page.getByLabel('Name').fill(READER.name)
  await page.getByLabel('Password', { exact: true }).fill(READER.password)
  await page.getByLabel('Repeat password').fill(READER.password)
  await act(() => page.getByRole('button', { name: 'Create login' }).click(), 'overview')
  assert.match(await page.textContent('#who'), /reader@example\.test \(readonly\)/)
  await open(`#/settings?as_of=${AS_OF}`, 'settings')
  await page.waitForSelector('#readonly-note')
  assert.equal(await page.locator('form').count(), 0)
  // The API refuses the readonly session's writes, CSRF token and all.
  const session = await (await page.request.get(`${server.base}/session`)).json()
  assert.equal(session.user.role, 'readonly')
  const write = await page.request.post(`${server.base}/data/plans`, {
    headers: { 'X-CSRF-Token': session.csrf_token, 'Content-Type': 'application/json' },
    data: { id: 'x', name: 'X', interval: 'month', currency: 'USD' }
  })
  assert.equal(write.status(), 403)
  const reads = await page.request.get(`${server.base}/reports/summary?as_of=${AS_OF}`)
  assert.equal(reads.status(), 200)
  const members = (await api('/account/team')).result.list
  assert.deepEqual(members.map((m) => [m.email, m.status]), [[OWNER.email, 'active'], [READER.email, 'active']])
  assert.ok(members[1].last_login)
})

test('the pages work on a phone', async () => {
  await page.setViewportSize({ width: 390, height: 844 })
  await open(`#/overview?as_of=${AS_OF}`, 'overview')
  const width = await page.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(width <= 390, `the overview is ${width}px wide on a 390px screen`)
  await shot('overview-phone')
  await page.setViewportSize({ width: 1366, height: 900 })
})

test('an owner imports files of records into a data source from the settings', async () => {
  // The readonly member logs out (the service refused that once).
  await act(() => page.getByRole('button', { name: 'Log out' }).click(), 'login')
  await page.getByLabel('Email').fill(OWNER.email)
  await page.getByLabel('Password').fill(OWNER.password)
  await act(() => page.getByRole('button', { name: 'Log in' }).click(), 'overview')
  await open(`#/settings?as_of=${AS_OF}`, 'settings')
  const form = page.locator('form[aria-label="Import"]')
  const importing = async (collection, name, text) => {
    await page.evaluate(() => document.querySelector('form[aria-label="Import"] .form-message').replaceChildren())
    await form.getByLabel('Records').selectOption(collection)
    await form.getByLabel('File').setInputFiles({ name, mimeType: 'application/octet-stream', buffer: Buffer.from(text) })
    await form.getByRole('button', { name: 'Import' }).click()
    await page.waitForFunction(() => document.querySelector('form[aria-label="Import"] .form-message').textContent !== '')
    return page.textContent('form[aria-label="Import"] .form-message')
  }
  // Without a data source, records go to their upsert.
  assert.equal(await form.getByLabel('Data source').inputValue(), '')
  assert.equal(await importing('customers', 'customers.csv', 'id,name,country\nimp-1,Imported One,FR\nimp-2,Imported Two,DE\n'),
    '2 of 2 records stored.')
  const customer = await api('/data/customers/imp-1')
  assert.deepEqual([customer.name, customer.country, customer.data_source], ['Imported One', 'FR', null])
  assert.equal(await importing('plan_groups', 'groups.json', '[]'), 'Plan groups are imported into a data source: choose one.')
  const addSource = page.locator('form[aria-label="Add data source"]')
  await addSource.getByLabel('Id').fill('sheet')
  await addSource.getByLabel('Name').fill('Spreadsheet')
  await act(() => addSource.getByRole('button', { name: 'Add data source' }).click(), 'settings')
  await form.getByLabel('Data source').selectOption('sheet')
  const invoices = [
    { id: 'imp-i1', customer_id: 'imp-1', type: 'subscription', plan_id: 'basic', invoice_date: '2024-05-01', amount: 4900, currency: 'USD' },
    { id: 'imp-bad', customer_id: 'imp-1', type: 'refund', invoice_date: '2024-05-03', amount: 700, currency: 'USD' }
  ]
  assert.equal(await importing('invoices', 'invoices.jsonl', invoices.map((i) => JSON.stringify(i)).join('\n')),
    '1 of 2 records stored; 1 rejected:invoice imp-bad: field `amount`: must be 0 or less for a refund, got 700')
  assert.deepEqual(await page.$$eval('#import-rejected li', (items) => items.map((i) => i.textContent)),
    ['invoice imp-bad: field `amount`: must be 0 or less for a refund, got 700'])
  assert.equal((await api('/data/invoices/imp-i1')).data_source, 'sheet')
  // A file the import cannot read is refused in the page, naming it.
  assert.equal(await importing('customers', 'customers.xlsx', 'PK'),
    'customers.xlsx: import reads .csv, .jsonl, .ndjson or .json files')
  assert.equal(await page.getAttribute('form[aria-label="Import"] .form-message', 'class'), 'form-message error')
})

test('no console errors on any page', () => {
  assert.deepEqual(consoleErrors, [])
})
