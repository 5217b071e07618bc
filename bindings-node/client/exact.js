'use strict'
// A JavaScript number holds integers exactly up to 2^53 - 1, and
// `JSON.parse` rounds a larger one without a word. The client reads the
// service's answers through `parseExact`: an answer holding such an integer
// (a sum beyond about 90 trillion dollars in cents, or far less in a
// currency of small units) is an `out_of_range` error naming the value's
// place, as the embedded Ledger answers, or with the option `bigints` has
// it as a BigInt; never a rounded number. A Ledger made with `bigints`
// reads its answers through it too.

const { SubmetricsError } = require('../errors.js')

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)
// Sixteen digits in a row: text without them holds no integer beyond 2^53.
const LONG_DIGITS = /\d{16}/
const NUMBER = /-?[0-9][0-9.eE+-]*/y
const STRING = /"(?:[^"\\]|\\.)*"/y
const PLAIN_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/**
 * The JSON `text` parsed. An integer in it beyond `Number.MAX_SAFE_INTEGER`
 * either way is a BigInt with `bigints`, and otherwise an `out_of_range`
 * SubmetricsError naming the first one and `exactElsewhere`, the call that
 * answers it exactly, if there is one.
 */
function parseExact(text, exactElsewhere, bigints = false) {
  const found = LONG_DIGITS.test(text) ? unsafeIntegers(text, bigints ? Infinity : 1) : []
  if (found.length === 0) return JSON.parse(text)
  if (!bigints) throw refusal(found[0], exactElsewhere)
  let value = JSON.parse(text)
  for (const { steps, digits } of found) {
    if (steps.length === 0) {
      value = BigInt(digits)
      continue
    }
    // Defined, not assigned: a key such as `__proto__` is a plain property of a parsed answer.
    const holder = steps.slice(0, -1).reduce((at, step) => at[step], value)
    Object.defineProperty(holder, steps[steps.length - 1], { value: BigInt(digits), writable: true, enumerable: true, configurable: true })
  }
  return value
}

function refusal({ place, digits }, exactElsewhere) {
  let message = `the answer's \`${place}\` is ${digits}, beyond ${MAX_SAFE} (2^53 - 1), ` +
    'the largest integer a JavaScript number holds exactly'
  message += exactElsewhere
    ? `; \`${exactElsewhere}\` answers it exactly, as a BigInt, and so does this call with the option \`bigints: true\``
    : '; with the option `bigints: true` this call answers it as a BigInt'
  return new SubmetricsError(message, 'out_of_range', undefined, place)
}

/**
 * The integers of the JSON `text` beyond `Number.MAX_SAFE_INTEGER` either
 * way, at most `limit`, in the order they are written: each its `place` as
 * JavaScript reaches it (`result[3].mrr`, `["by plan"].total`), the keys
 * and indexes of that path (`steps`) and its `digits`. Numbers with a
 * fraction or an exponent are floats and pass.
 */
function unsafeIntegers(text, limit = Infinity) {
  const found = []
  const frames = [] // {index} in an array, {key} in an object
  let keyNext = false
  let at = 0
  while (at < text.length && found.length < limit) {
    const char = text[at]
    if (char === '"') {
      STRING.lastIndex = at
      STRING.exec(text)
      const top = frames[frames.length - 1]
      if (keyNext && top && 'key' in top) {
        top.key = JSON.parse(text.slice(at, STRING.lastIndex))
        keyNext = false
      }
      at = STRING.lastIndex
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      NUMBER.lastIndex = at
      const [token] = NUMBER.exec(text)
      if (isUnsafeInteger(token)) {
        found.push({ place: place(frames), steps: frames.map((f) => ('index' in f ? f.index : f.key)), digits: token })
      }
      at = NUMBER.lastIndex
    } else {
      if (char === '{' || char === '[') {
        frames.push(char === '{' ? { key: '' } : { index: 0 })
        keyNext = char === '{'
      } else if (char === '}' || char === ']') {
        frames.pop()
      } else if (char === ',') {
        const top = frames[frames.length - 1]
        if (top && 'index' in top) top.index++
        else if (top) keyNext = true
      }
      at++
    }
  }
  return found
}

// JSON writes no leading zeros, so seventeen digits are always too many.
function isUnsafeInteger(token) {
  const digits = token.startsWith('-') ? token.slice(1) : token
  if (digits.length < 16 || !/^\d+$/.test(digits)) return false
  return digits.length > 16 || BigInt(digits) > MAX_SAFE
}

function place(frames) {
  let out = ''
  for (const frame of frames) {
    if ('index' in frame) out += `[${frame.index}]`
    else if (PLAIN_NAME.test(frame.key)) out += (out ? '.' : '') + frame.key
    else out += `[${JSON.stringify(frame.key)}]`
  }
  return out
}

module.exports = { parseExact, unsafeIntegers }
