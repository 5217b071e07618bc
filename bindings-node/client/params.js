'use strict'
// Parameters left unset, for the rule the Client shares with the Ledger: a
// parameter given as undefined or null means its default and is left out of
// the query, but its name must be one the call takes, for a misspelt name
// must never pass silently.
//
// The service refuses a name it does not take by the name alone, whatever
// the value, so an unset name the call does not take is sent with a
// placeholder value (UNSET) and the service answers the error it gives that
// name with any value, in its own words. The names a call takes come from
// QUERY_PARAMS (the description's) and, for a report, from the report's
// own, which the service lists at GET /reports (read by the caller, once,
// and only for a report given a name its operation does not declare).

const { QUERY_PARAMS } = require('./operations.js')
const { SubmetricsError } = require('../errors.js')

// The value an unset name the call does not take is sent with: the service
// refuses the name before it reads a value.
const UNSET = 'unset'

const isUnset = (value) => value === undefined || value === null

// The names of `query` left unset that `operation` does not take, in query
// order. `reportParams` resolves to a Map of every report's parameter
// names. An unknown report takes every name: the service answers that it
// has no such report.
async function refusedNames(operation, pathParams, query, reportParams) {
  const declared = Object.hasOwn(QUERY_PARAMS, operation) ? QUERY_PARAMS[operation] : []
  let names = Object.entries(query).filter(([name, value]) => isUnset(value) && !declared.includes(name)).map(([name]) => name)
  if (names.length && operation === 'getReport') {
    const known = (await reportParams()).get(String(pathParams.name))
    names = names.filter((name) => known !== undefined && !known.includes(name))
  }
  return names
}

// A list's options as the Ledger and the Client both read them: the names
// `known` (`limit` and `offset`, and a list's id filter) and no other (any
// other is an `invalid_argument` error naming it, for a misspelt filter
// must not answer the whole list), `limit` and `offset` whole numbers from 0
// to 2^32 - 1. Answers [limit, offset], undefined for one not given.
function listOptions(options, known = ['limit', 'offset']) {
  if (options === undefined || options === null) return [undefined, undefined]
  const names = known.join(', ').replace(/, ([^,]*)$/, ' and $1')
  const bad = (message, field) => new SubmetricsError(message, 'invalid_argument', undefined, field)
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw bad(`list options must be an object of ${names}`, 'options')
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw bad(`unknown list option \`${key}\`; the options are ${names}`, key)
    }
  }
  const whole = (name) => {
    const value = options[name]
    if (value === undefined || value === null) return undefined
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
      throw bad(`${name}: \`${value}\` is not a whole number from 0 to 4294967295`, name)
    }
    return value
  }
  return [whole('limit'), whole('offset')]
}

// The id filter `by` of list options (`customer`, `source`): text, or
// undefined when not given; anything else is an error naming it.
function listFilter(options, by) {
  const id = options?.[by]
  if (id === undefined || id === null) return undefined
  if (typeof id !== 'string') {
    throw new SubmetricsError(`${by}: must be an id, got ${JSON.stringify(id)}`, 'invalid_argument', undefined, by)
  }
  return id
}

// Report parameter values, as the Ledger reads them and the Client sends
// them (so both accept and refuse the same values, in the same words).

function invalidQuery(message, field) {
  return new SubmetricsError(message, 'invalid_query', undefined, field)
}

/**
 * Refuses a string holding a lone UTF-16 surrogate, naming `field`: it is
 * not Unicode text, and the addon would read it as U+FFFD, making two
 * different strings one.
 */
function wellFormed(text, field, code, what = field) {
  if (text.isWellFormed()) return text
  const escape = escapeLone(text.match(LONE_SURROGATE)[0])
  throw new SubmetricsError(`${what}: holds a lone UTF-16 surrogate (${escape}), which is not Unicode text`, code, undefined, field)
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

// `text` with each lone surrogate written as its `\uXXXX` escape.
function escapeLone(text) {
  return text.replace(LONE_SURROGATE, (unit) => `\\u${unit.charCodeAt(0).toString(16).toUpperCase()}`)
}

// A Date as its ISO instant; the core makes it a day in the ledger's time zone.
function isoInstant(value, field) {
  if (Number.isNaN(value.getTime())) throw invalidQuery(`${field} is an invalid Date`, field)
  return value.toISOString()
}

function instant(asOf) {
  if (asOf === undefined || asOf === null) return undefined
  if (asOf instanceof Date) return isoInstant(asOf, 'as_of')
  if (typeof asOf === 'string') return asOf
  throw invalidQuery(`asOf must be a Date or an ISO string, got ${typeof asOf}`, 'as_of')
}

/**
 * One value of parameter `key` as the addon reads it: text, a finite
 * number, a boolean or null (in an array, left out), a BigInt as its
 * digits. Anything else (an object, a Date in an array, a function, a
 * symbol, NaN or an infinity) is an `invalid_query` error naming the
 * parameter, in the words the addon uses for an object.
 */
function paramItem(key, item) {
  if (typeof item === 'string') return wellFormed(item, key, 'invalid_query', `parameter \`${key}\``)
  if (typeof item === 'bigint') return String(item)
  if (typeof item === 'number' && !Number.isFinite(item)) {
    throw invalidQuery(`parameter \`${key}\`: ${item} is not a finite number`, key)
  }
  if (item === undefined || item === null || typeof item === 'number' || typeof item === 'boolean') return item ?? null
  throw invalidQuery(`parameter \`${key}\`: a parameter value is text, a number, a boolean, a Date or an array of those`, key)
}

/**
 * Items of a multi-value parameter space-separated, as the service reads
 * them: one holding a space or comma, or starting with a quote, in double
 * quotes with its quotes doubled (`"acme corp"`), as the addon writes it.
 */
function listText(items) {
  const written = (item) => {
    const text = String(item)
    return /[ ,]/.test(text) || text.startsWith('"') ? `"${text.replaceAll('"', '""')}"` : text
  }
  return items.map(written).join(' ')
}

module.exports = {
  UNSET, isUnset, refusedNames, listOptions, listFilter,
  invalidQuery, wellFormed, escapeLone, isoInstant, instant, paramItem, listText,
}
