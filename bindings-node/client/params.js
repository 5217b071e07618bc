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

module.exports = { UNSET, isUnset, refusedNames }
