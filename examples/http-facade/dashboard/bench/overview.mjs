// The dashboard on a large account, measured in the browser: starts the
// release server on a fresh data directory, posts the generated data set
// (`generate N DIR jsonl`) in batches of 10,000 through the API, sets up
// the owner's login from the link the server printed, then in headless
// Chromium loads the overview and the MRR page several times each (a full
// navigation every time: the first after the import, then warm) and prints
// a table.
//
// "Interactive" is the first animation frame, counted from the navigation
// start, in which the page has rendered (the router's render marker, the
// signal the browser tests wait for) and every chart has drawn its canvas;
// the frame is painted right after it. The requests are the page's own
// Resource Timing entries: "server" is request start to first response
// byte (on loopback, the service's time), "total" start to end.
//
// Usage: node bench/overview.mjs [INVOICES] [--runs N]   (default 1000000, 5)
// The binaries are the release builds under $CARGO_TARGET_DIR (else the
// repository's target/): submetrics-server (or $SUBMETRICS_SERVER_BIN) and
// generate (cargo build --release -p submetrics-server -p submetrics-benches).

import { spawnSync } from 'node:child_process'
import { createReadStream, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createInterface } from 'node:readline'
import { chromium } from 'playwright-core'
import { startServer, OWNER_KEY } from '../test/server.mjs'

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..')
const release = join(process.env.CARGO_TARGET_DIR || join(repo, 'target'), 'release')
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const OWNER = { email: 'owner@example.test', password: 'owner password 123', name: 'Olive Owner' }
const BATCH = 10_000

const args = process.argv.slice(2)
const runsAt = args.indexOf('--runs')
const RUNS = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 5
const INVOICES = Number(args[0] || 1_000_000)

function binary (name, override) {
  const path = override || join(release, name)
  if (!existsSync(path)) throw new Error(`${path} is missing: cargo build --release -p submetrics-server -p submetrics-benches`)
  return path
}

/** The lines of a JSONL file in arrays of `size`: {body (a JSON array's text), count}. */
async function * batches (path, size) {
  let lines = []
  for await (const line of createInterface({ input: createReadStream(path) })) {
    if (!line) continue
    lines.push(line)
    if (lines.length === size) { yield { body: `[${lines.join(',')}]`, count: lines.length }; lines = [] }
  }
  if (lines.length) yield { body: `[${lines.join(',')}]`, count: lines.length }
}

async function post (base, path, body) {
  const response = await fetch(base + path, {
    method: 'POST',
    headers: { Authorization: `Bearer ${OWNER_KEY}`, 'Content-Type': 'application/json' },
    body
  })
  const answer = await response.json()
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(answer).slice(0, 300)}`)
  const rows = Array.isArray(answer.result) ? answer.result : []
  const rejected = rows.filter((row) => row.import_status && row.import_status !== 'inserted' && row.import_status !== 'updated')
  if (rejected.length) throw new Error(`POST ${path}: ${rejected.length} rejected, e.g. ${JSON.stringify(rejected[0])}`)
}

/** Posts the generated files; returns the invoices posted and the import's seconds. */
async function load (base, dir) {
  const started = performance.now()
  for await (const { body } of batches(join(dir, 'fx_rates.jsonl'), 1e9)) await post(base, '/data/fx-rates', body)
  for await (const { body } of batches(join(dir, 'plans.jsonl'), 1e9)) await post(base, '/data/plans', body)
  for await (const { body } of batches(join(dir, 'customers.jsonl'), BATCH)) await post(base, '/data/customers', body)
  let invoices = 0
  for await (const { body, count } of batches(join(dir, 'invoices.jsonl'), BATCH)) {
    await post(base, '/data/invoices', body)
    invoices += count
  }
  return { invoices, seconds: (performance.now() - started) / 1000 }
}

/** Set in the page before its scripts: the first frame in which it is interactive. */
function watchInteractive () {
  const check = () => {
    const main = document.querySelector('main')
    const charts = main ? [...main.querySelectorAll('.chart, .sparkline')] : []
    if (main && main.dataset.render && !main.hasAttribute('aria-busy') && main.dataset.page !== 'login' &&
      charts.length > 0 && charts.every((chart) => chart.querySelector('canvas'))) {
      window.interactiveAt = performance.now()
      window.interactivePage = main.dataset.page
      return
    }
    requestAnimationFrame(check)
  }
  requestAnimationFrame(check)
}

/** One full navigation to `fragment`: interactive time and the API requests. */
async function measure (page, base, fragment, name) {
  await page.goto('about:blank')
  await page.goto(`${base}/app/${fragment}`)
  await page.waitForFunction(() => window.interactiveAt !== undefined, null, { timeout: 120_000 })
  return page.evaluate(() => ({
    page: window.interactivePage,
    interactive: window.interactiveAt,
    requests: performance.getEntriesByType('resource')
      .filter((entry) => entry.initiatorType === 'fetch')
      .map((entry) => {
        const url = new URL(entry.name)
        return {
          path: url.pathname,
          query: url.search,
          start: entry.startTime,
          server: entry.responseStart - entry.requestStart,
          total: entry.responseEnd - entry.startTime,
          end: entry.responseEnd
        }
      })
  })).then((result) => {
    if (result.page !== name) throw new Error(`expected the ${name} page, got ${result.page}`)
    return result
  })
}

const ms = (value) => `${value.toFixed(0)} ms`

function row (cells) { return `| ${cells.join(' | ')} |` }

async function main () {
  const server = binary('submetrics-server', process.env.SUBMETRICS_SERVER_BIN)
  const generate = binary('generate')
  const dir = mkdtempSync(join(tmpdir(), 'submetrics-dashboard-bench-'))
  let running = null
  let browser = null
  try {
    const generated = spawnSync(generate, [String(INVOICES), dir, 'jsonl'], { encoding: 'utf8' })
    if (generated.status !== 0) throw new Error(`generate: ${generated.stderr}`)
    const asOf = generated.stdout.match(/--as-of (\d{4}-\d{2}-\d{2})/)[1]
    running = await startServer(server)
    const { base } = running

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync']
    })
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } })
    const page = await context.newPage()
    const errors = []
    page.on('pageerror', (error) => errors.push(String(error)))
    page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()) })
    // The owner's login, as the browser tests set it up, before the data
    // (it lands on the overview): the first navigation measured below is
    // the first report read after the import.
    await page.goto(running.setupUrl)
    await page.getByLabel('Email').fill(OWNER.email)
    await page.getByLabel('Name').fill(OWNER.name)
    await page.getByLabel('Password', { exact: true }).fill(OWNER.password)
    await page.getByLabel('Repeat password').fill(OWNER.password)
    await page.getByRole('button', { name: 'Create login' }).click()
    await page.waitForFunction(() => document.querySelector('main')?.dataset.page === 'overview' &&
      !document.querySelector('main').hasAttribute('aria-busy'), null, { timeout: 120_000 })
    const loaded = await load(base, dir)
    const count = loaded.invoices
    console.log(`${count} invoices posted in batches of ${BATCH} in ${loaded.seconds.toFixed(1)} s (${(count / loaded.seconds / 1000).toFixed(0)}k/s); as_of ${asOf}`)
    await page.addInitScript(watchInteractive)

    const results = []
    for (const [name, fragment] of [['overview', `#/overview?as_of=${asOf}`], ['mrr', `#/mrr?as_of=${asOf}`]]) {
      for (let run = 1; run <= RUNS; run++) results.push({ name, run, ...(await measure(page, base, fragment, name)) })
    }
    if (errors.length) throw new Error(`errors in the page: ${errors.join('; ')}`)

    console.log(`\n${count} invoices, as_of ${asOf}; from navigation start, ${RUNS} full navigations per page\n`)
    console.log(row(['page', 'run', 'interactive', 'API requests (server / total)', 'slowest request']))
    console.log(row(['---', '---', '---', '---', '---']))
    for (const r of results) {
      const api = r.requests.filter((q) => !q.path.startsWith('/app/'))
      const slowest = api.reduce((a, b) => (b.total > a.total ? b : a), api[0])
      console.log(row([
        r.name,
        r.run,
        ms(r.interactive),
        api.map((q) => `${q.path} ${q.server.toFixed(1)} / ${q.total.toFixed(1)}`).join(', '),
        slowest ? `${slowest.path}${slowest.query} ${ms(slowest.total)}, answered at ${ms(slowest.end)}` : ''
      ]))
    }
    console.log('')
    for (const name of ['overview', 'mrr']) {
      const times = results.filter((r) => r.name === name).map((r) => r.interactive)
      const warm = times.slice(1).sort((a, b) => a - b)
      const median = warm.length ? warm[Math.floor(warm.length / 2)] : NaN
      console.log(`${name}: first ${ms(times[0])}, warm median ${ms(median)} (${ms(warm[0])}-${ms(warm[warm.length - 1])})`)
    }
  } finally {
    await browser?.close()
    running?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error) => { console.error(error); process.exit(1) })
