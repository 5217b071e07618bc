'use strict'
// The names of the query parameters a service call takes, for the rule the
// Client shares with the Ledger: a parameter given as undefined or null
// means its default and is left out of the query, but its name must be one
// the call takes, for a misspelt name must never pass silently. The service
// is not sent an unset name, so it cannot refuse one: the client checks such
// a query before sending it and throws the error the service answers for an
// unknown name given a value, in the same words.
//
// Where the names come from: QUERY_PARAMS (the description's) for each
// operation, and for a report its own, which the service lists at
// GET /reports (read by the caller, once).

const { QUERY_PARAMS } = require('./operations.js')
const { SubmetricsError } = require('../errors.js')

// Operations whose parameters a view of the core reads (besides as_of and
// format), by the name the service's refusal gives the view; a report's
// view is the report.
const VIEWS = { listAnalyticsCustomers: 'customers', getAnalyticsCustomer: 'customer', listMovements: 'movements' }
// Parameters of the call rather than of the view it asks for.
const CALL_PARAMS = ['as_of', 'format']

// Throws the error the service answers for the first name of `query` (given
// a value or unset) that `operation` does not take: a view's (a report's,
// the customer views', the movements') first in name order, another
// operation's first in query order, as the service checks them.
// `reportParams` resolves to a Map of every report's parameter names; it is
// called only for a report with a name its operation does not declare. An
// unknown report passes: the service answers that it has none.
async function checkNames(operation, pathParams, query, reportParams) {
  const declared = Object.hasOwn(QUERY_PARAMS, operation) ? QUERY_PARAMS[operation] : []
  const names = Object.keys(query)
  if (names.every((name) => declared.includes(name))) return
  let view
  let known
  if (operation === 'getReport') {
    view = String(pathParams.name)
    known = (await reportParams()).get(view)
    if (known === undefined) return
  } else if (Object.hasOwn(VIEWS, operation)) {
    view = VIEWS[operation]
    known = declared.filter((name) => !CALL_PARAMS.includes(name))
  } else {
    const first = names.find((name) => !declared.includes(name))
    const message = declared.length
      ? `query parameter \`${first}\`: this endpoint has no such parameter; its parameters: ${declared.join(', ')}`
      : `query parameter \`${first}\`: this endpoint takes no query parameters`
    throw new SubmetricsError(message, 'bad_request', undefined, first)
  }
  const unknown = names.sort().find((name) => !declared.includes(name) && !known.includes(name))
  if (unknown !== undefined) throw unknownParameter(view, unknown, known)
}

// The core's refusal of a parameter `view` does not read.
function unknownParameter(view, name, known) {
  const near = nearMiss(name, known)
  const hint = near === undefined ? '.' : `; did you mean \`${near}\`?`
  return new SubmetricsError(`parameter \`${name}\`: report \`${view}\` has no such parameter${hint} Its parameters: ${known.join(', ')}`,
    'invalid_query', undefined, name)
}

// A name compared loosely, as an array of code points: lower case (each
// character on its own), without `-` and `_`.
const loose = (name) => [...[...name].filter((c) => c !== '-' && c !== '_').map((c) => c.toLowerCase()).join('')]

// The known name nearest to `given` when it is a near miss, as the core
// suggests it: at most one edit away for names up to 4 characters, two for
// longer ones, ignoring case, `-` and `_` (the first of equally near names).
function nearMiss(given, known) {
  const looseGiven = loose(given)
  const allowed = looseGiven.length <= 4 ? 1 : 2
  let best
  for (const name of known) {
    const distance = editDistance(looseGiven, loose(name))
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { distance, name }
  }
  return best?.name
}

// The fewest inserted, removed or replaced characters that turn `a` into `b` (arrays of code points).
function editDistance(a, b) {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 0; i < a.length; i++) {
    const current = [i + 1]
    for (let j = 0; j < b.length; j++) {
      current[j + 1] = Math.min(previous[j] + (a[i] === b[j] ? 0 : 1), previous[j + 1] + 1, current[j] + 1)
    }
    previous = current
  }
  return previous[b.length]
}

module.exports = { checkNames }
