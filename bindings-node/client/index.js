'use strict'
// The client of a deployed submetrics service: the Ledger's camelCase
// methods over HTTP, as promises. It needs nothing but `fetch` (Node 18+
// and browsers) and loads no native code: `require('submetrics/client')`.
// Every operation is looked up by its id in the table generated from the
// service's OpenAPI description (operations.js); the types come from the
// same description (api.d.ts). A parameter given as undefined or null means
// its default, as in the Ledger, and is left out of the request, but a name
// the call does not take is refused (params.js).

const { OPERATIONS, ANSWER_TYPES } = require('./operations.js')
const { SubmetricsError } = require('../errors.js')
const {
  UNSET, isUnset, refusedNames, listOptions, listFilter, isoInstant, instant, paramItem, listText,
} = require('./params.js')
const { parseExact } = require('./exact.js')
const { recordsText, valueText } = require('./body.js')

/** Status codes answered again after a pause. */
const RETRY_STATUSES = new Set([429, 503])
// The media type of an Arrow IPC stream, as the service answers reports.
const ARROW_STREAM = 'application/vnd.apache.arrow.stream'
/** Report parameters whose name has a dash; a key may spell it with `_`. */
const DASHED = new Set(['selected-date', 'selected-type', 'breakdown-value'])
/** The calls answering exactly, as Arrow, what an operation's JSON cannot hold. */
const EXACT_ELSEWHERE = { getReport: 'reportArrow', listMovements: 'movementsArrow' }

// The query text of parameter `key`'s value, read as the Ledger reads a
// parameter (params.js): text, a finite number, a boolean, a BigInt, a Date
// (its ISO instant) or an array of those but Dates, space-separated (a null
// in it left out). Anything else (an object, an invalid Date, NaN) is the
// Ledger's `invalid_query` error naming the parameter, before anything is
// sent: its String() would filter on text nobody wrote ("[object Object]").
function text(key, value) {
  if (value instanceof Date) return isoInstant(value, key)
  if (Array.isArray(value)) return listText(value.map((item) => paramItem(key, item)).filter((item) => item !== null))
  return String(paramItem(key, value))
}

// Report parameters as query text, undefined for one left unset (its
// default: `_send` checks its name and leaves it out); `selected_date` means
// `selected-date`, so giving both spellings a value is an error naming the
// parameter.
function queryOf(params) {
  const out = {}
  for (const [name, value] of Object.entries(params ?? {})) {
    const dashed = name.replaceAll('_', '-')
    const param = DASHED.has(dashed) ? dashed : name
    if (value === undefined || value === null) {
      if (!Object.hasOwn(out, param)) out[param] = undefined
      continue
    }
    if (out[param] !== undefined) {
      throw new SubmetricsError(`parameter \`${param}\`: is given twice (as ${dashed} and ${name.replaceAll('-', '_')}); give it once`,
        'invalid_query', undefined, param)
    }
    out[param] = text(param, value)
  }
  return out
}

// The query of a call at an instant: an `as_of` among the parameters
// stands when `asOf` is not given, and both is an error naming it, as is a
// parameter the call sets itself (`extra`: the Arrow calls' `format`).
function queryAt(params, asOf, extra = {}) {
  const query = queryOf(params)
  for (const name of Object.keys(extra)) {
    if (query[name] !== undefined) {
      throw new SubmetricsError(`parameter \`${name}\`: this call sets it to ${extra[name]}`, 'invalid_query', undefined, name)
    }
  }
  Object.assign(query, extra)
  if (asOf === undefined || asOf === null) return query
  if (query.as_of !== undefined) {
    throw new SubmetricsError('parameter `as_of`: is given twice (as the asOf argument and among the parameters); give it once',
      'invalid_query', undefined, 'as_of')
  }
  return { ...query, as_of: instant(asOf) }
}

/** Seconds a Retry-After header asks for (delta seconds or an HTTP date). */
function retryAfter(header) {
  if (!header) return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds)) return Math.max(0, seconds)
  const when = Date.parse(header)
  return Number.isNaN(when) ? undefined : Math.max(0, (when - Date.now()) / 1000)
}

const sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000))
// A body already written as JSON text (by body.js), sent as it is.
class JsonText {
  constructor(text) { this.text = text }
}

// Records given as bytes are refused: an Arrow IPC stream goes to the
// methods that send one.
const notBytes = (records) => {
  if (records instanceof Uint8Array || records instanceof ArrayBuffer) {
    throw new SubmetricsError('records are objects (one or an array); send an Arrow IPC stream with ' +
      'upsertCustomersArrow, upsertPlansArrow, upsertInvoicesArrow or importArrow', 'invalid_argument', undefined, 'records')
  }
  return records
}
// One record or an array of them, as the Ledger reads them (body.js).
const recordsBody = (records) => new JsonText(recordsText(notBytes(records)))
const valueBody = (value, what) => new JsonText(valueText(value, what))

/** The list methods `paginate` pages through, each with its id filter (or none). */
const PAGED = {
  listCustomers: null, listPlans: 'source', listPlanGroups: null, listInvoices: 'customer', listDataSources: null, listFxRates: null,
}

const CLIENT_OPTIONS = ['baseUrl', 'apiKey', 'timeoutMs', 'maxRetries', 'maxRetryWaitMs', 'fetch', 'bigints']

// The client's options: any other name (`baseURL`, `timeout`) is an error
// naming it, the timeout (from 1), the retries and their wait (from 0) are
// whole numbers, and `bigints` is true or false.
function checkOptions(options) {
  const bad = (message, field) => new SubmetricsError(message, 'invalid_argument', undefined, field)
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw bad(`client options must be an object of ${CLIENT_OPTIONS.join(', ')}`, 'options')
  }
  for (const key of Object.keys(options)) {
    if (!CLIENT_OPTIONS.includes(key)) {
      throw bad(`unknown client option \`${key}\`; the options are ${CLIENT_OPTIONS.join(', ')}`, key)
    }
  }
  for (const [name, least] of [['timeoutMs', 1], ['maxRetries', 0], ['maxRetryWaitMs', 0]]) {
    const value = options[name]
    if (value !== undefined && value !== null && !(Number.isSafeInteger(value) && value >= least)) {
      throw bad(`${name}: \`${value}\` is not a whole number from ${least}`, name)
    }
  }
  if (options.bigints !== undefined && typeof options.bigints !== 'boolean') {
    throw bad(`bigints: \`${options.bigints}\` is not true or false`, 'bigints')
  }
}

// The path of `operation` with its parameters filled in (each escaped): an
// unknown operation, a parameter its path lacks or one of its path's
// parameters not given is an error naming it, raised before anything is sent.
function pathOf(operation, pathParams) {
  const bad = (message, field) => new SubmetricsError(message, 'invalid_argument', undefined, field)
  if (!Object.hasOwn(OPERATIONS, operation)) {
    throw bad(`no operation ${operation}: an operation is an operationId of the API description`, 'operation')
  }
  const template = OPERATIONS[operation][1]
  const wanted = [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1])
  const given = pathParams ?? {}
  for (const name of Object.keys(given)) {
    if (!wanted.includes(name)) {
      const has = wanted.length ? `its path parameters are ${wanted.join(', ')}` : 'it has no path parameters'
      throw bad(`${operation} has no path parameter \`${name}\` (${template}); ${has}`, name)
    }
  }
  let path = template
  for (const name of wanted) {
    if (given[name] === undefined || given[name] === null) {
      throw bad(`${operation} needs the path parameter \`${name}\` (${template})`, name)
    }
    path = path.replace(`{${name}}`, encodeURIComponent(String(given[name])))
  }
  return path
}

class Client {
  /**
   * @param {object} options
   * @param {string} options.baseUrl   the service, e.g. https://analytics.example.com
   * @param {string} [options.apiKey]  the key; in Node, SUBMETRICS_API_KEY when absent
   * @param {number} [options.timeoutMs=30000] per request
   * @param {number} [options.maxRetries=3]    how often a 429 or 503 is retried
   * @param {number} [options.maxRetryWaitMs=30000]
   * @param {typeof fetch} [options.fetch]    another fetch implementation
   */
  constructor(options = {}) {
    checkOptions(options)
    const env = typeof process !== 'undefined' && process.env ? process.env : {}
    const baseUrl = options.baseUrl ?? env.SUBMETRICS_API_URL ?? 'http://localhost:8080'
    this.baseUrl = baseUrl.replace(/\/+$/, '')
    this.apiKey = options.apiKey ?? (env.SUBMETRICS_API_KEY || undefined)
    this.timeoutMs = options.timeoutMs ?? 30000
    this.maxRetries = options.maxRetries ?? 3
    this.maxRetryWaitMs = options.maxRetryWaitMs ?? 30000
    this._fetch = options.fetch ?? globalThis.fetch
    this.bigints = options.bigints ?? false
    this._reportParams = undefined // the report catalogue's names, read by `_reports` when first needed
    if (typeof this._fetch !== 'function') {
      throw new SubmetricsError('no fetch: use Node 18 or later, or pass options.fetch', 'invalid_argument')
    }
  }

  /**
   * Runs one operation of the description by its operationId and resolves
   * to the decoded JSON answer (an integer in it beyond 2^53 - 1, which a
   * number would round, is a BigInt with the option `bigints`, else an
   * `out_of_range` error naming its place), or to
   * the text of an operation that answers another type (the HTML of
   * `getApiReference`); rejects with a SubmetricsError carrying the
   * service's code and the HTTP status. An undefined or null in `query` is
   * left out, once its name is found to be one the operation takes.
   */
  async call(operation, pathParams, query, body) {
    const media = ANSWER_TYPES[operation]
    const answer = await this._read(await this._send(operation, pathParams, query, body, media ?? 'application/json'), 'text')
    if (media !== undefined) return answer
    return answer ? parseExact(answer, EXACT_ELSEWHERE[operation], this.bigints) : undefined
  }

  /**
   * Runs one operation asking for `accept` and resolves to the successful
   * response, its body unread; retries and rejects as `call` does. `body`
   * is sent as JSON, or as it is under `contentType` when it is bytes.
   */
  async _send(operation, pathParams, query, body, accept, contentType = 'application/json') {
    const method = OPERATIONS[operation]?.[0]
    const path = pathOf(operation, pathParams)
    const refused = Object.values(query ?? {}).some(isUnset)
      ? await refusedNames(operation, pathParams, query, () => this._reports())
      : []
    const search = new URLSearchParams()
    for (const [name, value] of Object.entries(query ?? {})) {
      if (!isUnset(value)) search.set(name, text(name, value))
      else if (refused.includes(name)) search.set(name, UNSET)
    }
    const url = this.baseUrl + path + (search.size ? `?${search}` : '')
    const headers = { accept }
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`
    if (body !== undefined) headers['content-type'] = contentType
    const payload = body === undefined || body instanceof Uint8Array ? body
      : body instanceof JsonText ? body.text : JSON.stringify(body)
    for (let attempt = 0; ; attempt++) {
      let response
      try {
        response = await this._fetch(url, {
          method,
          headers,
          body: payload,
          signal: AbortSignal.timeout(this.timeoutMs),
        })
      } catch (error) {
        throw this._failed(error)
      }
      if (response.ok) return response
      const answer = await this._read(response, 'text')
      if (RETRY_STATUSES.has(response.status) && attempt < this.maxRetries) {
        const wait = retryAfter(response.headers.get('retry-after')) ?? 0.5 * 2 ** attempt
        await sleep(Math.min(wait, this.maxRetryWaitMs / 1000))
        continue
      }
      let details
      try {
        details = JSON.parse(answer)
      } catch {
        details = undefined
      }
      if (!details || typeof details.code !== 'string') {
        throw new SubmetricsError(`the service answered ${response.status}: ${answer.slice(0, 200)}`,
          `http_${response.status}`, undefined, undefined, response.status)
      }
      throw new SubmetricsError(details.error, details.code, details.id, details.field, response.status)
    }
  }

  // The error of a request that failed on the way: `timeout` when the
  // request's time ran out (waiting for the answer or reading its body),
  // else `unreachable`.
  _failed(error) {
    const timedOut = error?.name === 'TimeoutError'
    return new SubmetricsError(
      timedOut
        ? `the service at ${this.baseUrl} did not answer within ${this.timeoutMs} ms`
        : `the service at ${this.baseUrl} could not be reached: ${error?.cause?.code ?? error?.message}`,
      timedOut ? 'timeout' : 'unreachable',
    )
  }

  // The body of `response` as `read` ('text' or 'arrayBuffer') reads it: the
  // request's timeout running out while it downloads, or the connection
  // failing, is the error `_failed` gives, not a bare DOMException.
  async _read(response, read) {
    try {
      return await response[read]()
    } catch (error) {
      throw this._failed(error)
    }
  }

  // Each report's parameter names (a Map), from the service's catalogue
  // (GET /reports), read once per client; a failed read is tried again.
  _reports() {
    this._reportParams ??= this.call('listReports').then(
      ({ reports }) => new Map(reports.map((report) => [report.name, report.parameters.map((param) => param.name)])),
      (error) => {
        this._reportParams = undefined
        throw error
      })
    return this._reportParams
  }

  // Records: the Ledger's methods and answers.
  async upsertCustomers(records) { return (await this.call('upsertCustomers', null, null, recordsBody(records))).result.list }
  async upsertPlans(records) { return (await this.call('upsertPlans', null, null, recordsBody(records))).result }
  async upsertInvoices(records) { return (await this.call('upsertInvoices', null, null, recordsBody(records))).result }
  async upsertDataSources(records) { return (await this.call('upsertDataSources', null, null, recordsBody(records))).result }

  /** One request per group; the service assigns each id (pg_1, ...); a refused group is an error result. */
  async upsertPlanGroups(records) {
    const list = Array.isArray(notBytes(records)) ? records : [records]
    // Every group is read before the first is sent, as the Ledger reads them.
    const bodies = Array.isArray(records)
      ? list.map((record, index) => valueBody(record, `records[${index}]`))
      : [valueBody(records, 'the record')]
    const results = []
    for (const [index, record] of list.entries()) {
      try {
        const { id } = await this.call('createPlanGroup', null, null, bodies[index])
        results.push({ id, import_status: 'inserted' })
      } catch (error) {
        if (!(error instanceof SubmetricsError) || error.status !== 400) throw error
        results.push({ id: String(record.id ?? ''), import_status: 'error', import_error: error.message })
      }
    }
    return results
  }

  getCustomer(id) { return this.call('getCustomer', { id }) }
  getPlan(id) { return this.call('getPlan', { id }) }
  getPlanGroup(id) { return this.call('getPlanGroup', { id }) }
  getInvoice(id) { return this.call('getInvoice', { id }) }
  getDataSource(id) { return this.call('getDataSource', { id }) }

  // A page of a list: its options read as the Ledger reads them (params.js:
  // `limit` and `offset`, and the list's id filter `by` when it has one; any
  // other name is an error naming it), before anything is sent.
  async _list(operation, options, by) {
    const [limit, offset] = listOptions(options, by ? ['limit', 'offset', by] : ['limit', 'offset'])
    const query = { limit, offset }
    if (by) query[by] = listFilter(options, by)
    return (await this.call(operation, null, query)).result
  }

  listCustomers(options) { return this._list('listCustomers', options) }
  listPlans(options) { return this._list('listPlans', options, 'source') }
  listPlanGroups(options) { return this._list('listPlanGroups', options) }
  listInvoices(options) { return this._list('listInvoices', options, 'customer') }
  listDataSources(options) { return this._list('listDataSources', options) }
  listFxRates(options) { return this._list('listFxRates', options) }

  /**
   * Every item of a list method, `pageSize` at a time: `for await (const c
   * of client.paginate('listCustomers'))`. The options are `pageSize` (a
   * whole number from 1, else an `invalid_query` error naming it) and the list's id filter (`customer` of
   * listInvoices, `source` of listPlans); any other is an error naming it,
   * raised before anything is sent.
   */
  async * paginate(method, options) {
    if (!Object.hasOwn(PAGED, method)) {
      throw new SubmetricsError(`paginate: \`${method}\` is not a list method; the list methods are ${Object.keys(PAGED).join(', ')}`,
        'invalid_argument', undefined, 'method')
    }
    const by = PAGED[method]
    const known = by ? ['pageSize', by] : ['pageSize']
    const names = known.join(' and ')
    if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
      throw new SubmetricsError(`paginate options must be an object of ${names}`, 'invalid_argument', undefined, 'options')
    }
    for (const key of Object.keys(options ?? {})) {
      if (!known.includes(key)) {
        throw new SubmetricsError(`unknown paginate option \`${key}\`; the options are ${names}`, 'invalid_argument', undefined, key)
      }
    }
    const pageSize = options?.pageSize ?? 1000
    // 0 would page through nothing, as Python's iter_* say.
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
      const shown = typeof pageSize === 'bigint' ? `${pageSize}n` : JSON.stringify(pageSize) ?? String(pageSize)
      throw new SubmetricsError(`pageSize: must be a whole number of at least 1, got ${shown}`, 'invalid_query', undefined, 'pageSize')
    }
    const filters = by ? { [by]: options?.[by] } : {}
    let offset = 0
    for (;;) {
      const page = await this[method]({ ...filters, limit: pageSize, offset })
      yield * page.list
      offset += page.list.length
      if (page.list.length === 0 || offset >= page.count) return
    }
  }

  async deleteCustomer(id) { await this.call('deleteCustomer', { id }) }
  async deletePlan(id) { await this.call('deletePlan', { id }) }
  async deletePlanGroup(id) { await this.call('deletePlanGroup', { id }) }
  async deleteInvoice(id) { await this.call('deleteInvoice', { id }) }
  async deleteDataSource(id) { await this.call('deleteDataSource', { id }) }

  async updateCustomer(id, patch) { return (await this.call('updateCustomer', { id }, null, valueBody(patch, `the patch of customer ${id}`))).result }
  /** Changes a plan; resolves to the plan as read back after the change (a second request). */
  async updatePlan(id, patch) {
    await this.call('updatePlan', { id }, null, valueBody(patch, `the patch of plan ${id}`))
    return this.getPlan(id)
  }
  async replaceInvoice(id, record) { await this.call('replaceInvoice', { id }, null, valueBody(record, `invoice ${id}`)) }
  async updatePlanGroup(id, group) {
    await this.call('updatePlanGroup', { id }, null, valueBody(group, `plan group ${id}`))
    return this.getPlanGroup(id)
  }
  async updateDataSource(id, patch) { return this.call('updateDataSource', { id }, null, valueBody(patch, `the patch of data source ${id}`)) }
  async importRecords(source, collection, records) {
    return (await this.call('importRecords', { source, collection }, null, recordsBody(records))).result
  }
  // Arrow in, Arrow out: each sends the rows of an Arrow IPC stream (as
  // apache-arrow's `tableToIPC` writes it; one write of at most 100,000
  // rows) and resolves to the per-record results as an Arrow IPC stream
  // (`id`, `import_status`, `import_error`), as the Ledger's methods of
  // these names answer them. `importArrow` writes into a data source.
  importArrow(source, collection, stream) {
    return this._sendArrow('importArrow', 'importRecords', { source, collection }, stream)
  }
  upsertCustomersArrow(stream) { return this._sendArrow('upsertCustomersArrow', 'upsertCustomers', null, stream) }
  upsertPlansArrow(stream) { return this._sendArrow('upsertPlansArrow', 'upsertPlans', null, stream) }
  upsertInvoicesArrow(stream) { return this._sendArrow('upsertInvoicesArrow', 'upsertInvoices', null, stream) }

  /** Sends an Arrow IPC stream body to `operation`; resolves to the Arrow stream of its results. */
  async _sendArrow(method, operation, pathParams, stream) {
    if (!(stream instanceof Uint8Array)) {
      throw new SubmetricsError(`${method} takes an Arrow IPC stream as a Uint8Array or Buffer`,
        'invalid_argument', undefined, 'stream')
    }
    const response = await this._send(operation, pathParams, { format: 'arrow' }, stream, ARROW_STREAM, ARROW_STREAM)
    return Buffer.from(await this._read(response, 'arrayBuffer'))
  }
  async loadFxRates(rows) { return (await this.call('loadFxRates', null, null, recordsBody(rows))).loaded }

  // Settings: the Ledger's, as a promise (the service keeps the FX pivot to itself).
  async settings() { return settingsOf(await this.account()) }
  async updateSettings(patch) { return settingsOf(await this.updateAccount(patch)) }

  // Analytics.
  async movements(asOf, filters) {
    return (await this.call('listMovements', null, queryAt(filters, asOf))).result
  }
  // The movements as an Arrow IPC stream, as the Ledger's movementsArrow answers them.
  async movementsArrow(asOf, filters) {
    const query = queryAt(filters, asOf, { format: 'arrow' })
    const response = await this._send('listMovements', null, query, undefined, ARROW_STREAM)
    return Buffer.from(await this._read(response, 'arrayBuffer'))
  }
  async report(name, params, asOf) { return this.call('getReport', { name }, queryAt(params, asOf)) }
  // The report's record batch as an Arrow IPC stream, as the Ledger's reportArrow answers it.
  async reportArrow(name, params, asOf) {
    const query = queryAt(params, asOf, { format: 'arrow' })
    const response = await this._send('getReport', { name }, query, undefined, ARROW_STREAM)
    return Buffer.from(await this._read(response, 'arrayBuffer'))
  }
  async customers(params, asOf) { return this.call('listAnalyticsCustomers', null, queryAt(params, asOf)) }
  async customer(id, asOf, params) { return this.call('getAnalyticsCustomer', { id }, queryAt(params, asOf)) }
  async resyncCustomer(id) { return (await this.call('resyncCustomer', { id })).message }

  // Only a service has these.
  health() { return this.call('getHealth') }
  account() { return this.call('getAccount') }
  updateAccount(patch) { return this.call('updateAccount', null, null, patch) }
  profile() { return this.call('getProfile') }
  updateProfile(patch) { return this.call('updateProfile', null, null, patch) }
  billing() { return this.call('getBilling') }
  async team() { return (await this.call('listTeamMembers')).result.list }
  async apiKeys() { return (await this.call('listApiKeys')).result.list }
  createApiKey(options = {}) { return this.call('createApiKey', null, null, options) }
  async revokeApiKey(id) { await this.call('revokeApiKey', { id }) }
  notificationSettings() { return this.call('getNotificationSettings') }
  updateNotificationSettings(patch) { return this.call('updateNotificationSettings', null, null, patch) }
  paymentPlatformSettings() { return this.call('getPaymentPlatformSettings') }
  crmSettings() { return this.call('getCrmSettings') }
}

const SETTINGS = ['base_currency', 'timezone', 'first_day_of_week', 'churn_grace_days', 'refund_handling']
function settingsOf(account) {
  return Object.fromEntries(SETTINGS.map((name) => [name, account[name]]))
}

module.exports = { Client, SubmetricsError }
