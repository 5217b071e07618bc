'use strict'
// Every shared scenario file (testdata/scenarios, format SCENARIOS.md)
// through the Node API, with the subset matching of the Rust runner and its
// reports expected to fail (`error`: the error's code and message); each
// file is a test named by its path under testdata/scenarios. An expected
// integer beyond 2^53 - 1, which a JavaScript number cannot hold, is
// checked digit for digit in the error that refuses the answer holding it.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { Ledger, SubmetricsError } = require('..')
const { SCENARIOS, scenarioFiles } = require('./scenario-files.js')
const { unsafeIntegers } = require('../client/exact.js')

const UPSERT = {
  data_sources: 'upsertDataSources',
  customers: 'upsertCustomers',
  plans: 'upsertPlans',
  plan_groups: 'upsertPlanGroups',
  invoices: 'upsertInvoices',
}
const DELETE = {
  data_sources: 'deleteDataSource',
  customers: 'deleteCustomer',
  plans: 'deletePlan',
  plan_groups: 'deletePlanGroup',
  invoices: 'deleteInvoice',
}

function subsetDifference(expected, actual, at) {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      return `${at}: expected ${expected.length} items, got ${JSON.stringify(actual)}`
    }
    for (let i = 0; i < expected.length; i++) {
      const diff = subsetDifference(expected[i], actual[i], `${at}[${i}]`)
      if (diff) return diff
    }
    return null
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
      return `${at}: expected an object, got ${JSON.stringify(actual)}`
    }
    for (const [key, value] of Object.entries(expected)) {
      if (!(key in actual)) return `${at}.${key}: missing`
      const diff = subsetDifference(value, actual[key], `${at}.${key}`)
      if (diff) return diff
    }
    return null
  }
  if (typeof expected === 'number' && typeof actual === 'number') {
    return Math.abs(expected - actual) <= 1e-6 ? null : `${at}: expected ${expected}, got ${actual}`
  }
  return expected === actual ? null : `${at}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`
}

// The difference, or null, between what the scenario expects at `at` and
// an answer refused for holding an integer JavaScript cannot hold exactly:
// the scenario must expect an integer at the place the error names, and
// the error must give its digits (`exact`: the scenario's own, read from
// its text); any other error is rethrown.
function refusedDifference(error, exact, at) {
  if (!(error instanceof SubmetricsError) || error.code !== 'out_of_range' || !error.message.startsWith("the answer's")) {
    throw error
  }
  const place = error.field.startsWith('[') ? `${at}${error.field}` : `${at}.${error.field}`
  const expected = exact.find((integer) => `$.${integer.place}` === place)
  if (!expected) return `${place}: the answer is refused for an integer the scenario does not expect there: ${error.message}`
  return error.message.includes(`\`${error.field}\` is ${expected.digits},`)
    ? null
    : `${place}: expected ${expected.digits}, got ${error.message}`
}

function run(file) {
  const text = fs.readFileSync(path.join(SCENARIOS, file), 'utf8')
  const scenario = JSON.parse(text)
  const exact = unsafeIntegers(text)
  const ledger = new Ledger(scenario.config ?? {})
  const rejections = []
  const upsert = (collection, records) => {
    for (const result of ledger[UPSERT[collection]](records)) {
      if (result.import_status === 'error') rejections.push([collection, result.id, result.import_error])
    }
  }
  if (scenario.fx_rates) ledger.loadFxRates(scenario.fx_rates)
  for (const collection of Object.keys(UPSERT)) {
    if (scenario[collection]) upsert(collection, scenario[collection])
  }
  for (const step of scenario.steps ?? []) {
    if (step.upsert) upsert(step.upsert, step.records ?? [])
    else if (step.delete) {
      try {
        ledger[DELETE[step.delete]](step.id)
      } catch (error) {
        if (!(error instanceof SubmetricsError)) throw error
        rejections.push([step.delete, step.id, error.message])
      }
    } else if (step.config) ledger.updateSettings(step.config)
  }
  const failures = []
  const unknown = []
  const expect = scenario.expect ?? {}
  if (expect.movements) {
    let diff
    try {
      diff = subsetDifference(expect.movements, ledger.movements(scenario.as_of), '$.expect.movements')
    } catch (error) {
      diff = refusedDifference(error, exact, '$.expect.movements')
    }
    if (diff) failures.push(diff)
  }
  const errors = expect.errors ?? []
  errors.forEach((e, i) => {
    if (!rejections.some(([c, id, text]) => c === e.record && id === e.id && text.includes(e.contains))) {
      failures.push(`$.expect.errors[${i}]: no rejection like ${JSON.stringify(e)}; got ${JSON.stringify(rejections)}`)
    }
  })
  if (rejections.length > errors.length) failures.push(`unexpected rejections ${JSON.stringify(rejections)}`)
  ;(expect.reports ?? []).forEach((report, i) => {
    const params = { ...(report.params ?? {}) }
    let actual
    try {
      if (report.name === 'customers') actual = ledger.customers(params, scenario.as_of)
      else if (report.name === 'customer') {
        const id = params.id
        delete params.id
        actual = ledger.customer(id, scenario.as_of, params)
      } else actual = ledger.report(report.name, params, scenario.as_of)
    } catch (error) {
      if (error instanceof SubmetricsError && error.code === 'unknown_report') {
        unknown.push(report.name)
        return
      }
      if (!report.error) {
        const diff = refusedDifference(error, exact, `$.expect.reports[${i}].result`)
        if (diff) failures.push(`report ${report.name}: ${diff}`)
        return
      }
      if (!(error instanceof SubmetricsError)) throw error
      const got = { code: error.code, message: error.message }
      const diff = subsetDifference(report.error, got, `$.expect.reports[${i}].error`)
      if (diff) failures.push(`report ${report.name}: ${diff}`)
      return
    }
    if (report.error) {
      failures.push(`report ${report.name}: answered, expected the error ${JSON.stringify(report.error)}`)
      return
    }
    const diff = subsetDifference(report.result, actual, `$.expect.reports[${i}].result`)
    if (diff) failures.push(`report ${report.name}: ${diff}`)
  })
  return { failures, unknown }
}

const files = scenarioFiles()

test('there are scenario files', () => {
  assert.ok(files.length > 60)
})

for (const file of files) {
  test(file, () => {
    const { failures, unknown } = run(file)
    assert.deepEqual(failures, [])
    assert.deepEqual(unknown, [], `reports the core does not know: ${unknown.join(', ')}`)
  })
}
