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

module.exports = { UNSET, isUnset, refusedNames, listOptions, listFilter }
