'use strict'
// Records and patches as the JSON text of a request body, read as the
// embedded Ledger reads them, so that a record means the same to both and
// nothing is changed on the way without a word (`JSON.stringify` writes
// NaN, the infinities and an invalid Date as null, and leaves functions and
// symbols out). An object is its enumerable string-keyed properties, own
// and inherited (as `for...in` lists them), a property holding undefined
// absent; a Date its instant as `toISOString` writes it; a BigInt within
// 64 bits its integer, digit for digit. What a record cannot hold is a
// SubmetricsError `invalid_record` naming the record and field, with the
// Ledger's words: `records[1]: field `amount`: is NaN, which is
// not a JSON number`.

const { SubmetricsError } = require('../errors.js')

// Levels of arrays and objects a record may open, itself counted.
const MAX_DEPTH = 128
const INT64_MIN = -(2n ** 63n)
const UINT64_MAX = 2n ** 64n - 1n

class Unreadable {
  constructor(reason) {
    this.reason = reason
    this.steps = [] // innermost first
  }

  at(step) {
    this.steps.push(step)
    return this
  }

  error(what) {
    const field = this.steps.reverse().reduce(
      (path, step) => (typeof step === 'number' ? `${path}[${step}]` : path ? `${path}.${step}` : step), '')
    const named = field || '(record)'
    return new SubmetricsError(`${what}: field \`${named}\`: ${this.reason}`, 'invalid_record', undefined, named)
  }
}

/** One record or an array of them as the JSON text of an array. */
function recordsText(records) {
  if (!Array.isArray(records)) return `[${valueText(records, 'the record')}]`
  return `[${records.map((record, index) => valueText(record, `records[${index}]`)).join(',')}]`
}

/**
 * A record, patch or other body as JSON text; `what` names it in errors
 * (`the patch of customer acme`).
 */
function valueText(value, what) {
  try {
    const text = write(value, MAX_DEPTH - 1)
    if (text === undefined) throw new Unreadable('is undefined')
    return text
  } catch (error) {
    if (error instanceof Unreadable) throw error.error(what)
    throw error
  }
}

// `value` as JSON text; undefined for undefined (absent in an object).
function write(value, depth) {
  switch (typeof value) {
    case 'undefined':
      return undefined
    case 'boolean':
      return String(value)
    case 'number':
      if (Number.isFinite(value)) return JSON.stringify(value)
      throw new Unreadable(`is ${value}, which is not a JSON number`)
    case 'bigint':
      if (value < INT64_MIN || value > UINT64_MAX) throw new Unreadable('is a BigInt beyond 64 bits')
      return value.toString()
    case 'string':
      return text(value)
    case 'function':
      throw new Unreadable('is a function, not a JSON value')
    case 'symbol':
      throw new Unreadable('is a symbol, not a JSON value')
  }
  if (value === null) return 'null'
  if (depth === 0) throw new Unreadable(`nests deeper than ${MAX_DEPTH} levels (or holds itself)`)
  if (Array.isArray(value)) {
    return `[${value.map((item, index) => {
      try {
        const written = write(item, depth - 1)
        if (written === undefined) throw new Unreadable('is undefined')
        return written
      } catch (error) {
        throw error instanceof Unreadable ? error.at(index) : error
      }
    }).join(',')}]`
  }
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new Unreadable('is an invalid Date')
    return JSON.stringify(value.toISOString())
  }
  const fields = []
  for (const key in value) {
    if (!key.isWellFormed()) {
      throw new Unreadable(`is a key that ${notUnicode(key)}`).at(key.replace(LONE_SURROGATE, escape))
    }
    let written
    try {
      written = write(value[key], depth - 1)
    } catch (error) {
      throw error instanceof Unreadable ? error.at(key) : error
    }
    if (written !== undefined) fields.push(`${text(key)}:${written}`)
  }
  return `{${fields.join(',')}}`
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g
const escape = (unit) => `\\u${unit.charCodeAt(0).toString(16).toUpperCase()}`

// Why a string holding a lone UTF-16 surrogate is refused: it is not
// Unicode text, and the service could only read it as another string.
function notUnicode(string) {
  return `holds a lone UTF-16 surrogate (${escape(string.match(LONE_SURROGATE)[0])}), which is not Unicode text`
}

// A string as JSON text.
function text(string) {
  if (!string.isWellFormed()) throw new Unreadable(notUnicode(string))
  return JSON.stringify(string)
}

module.exports = { recordsText, valueText }
