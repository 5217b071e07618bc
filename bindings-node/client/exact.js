'use strict'
// A JavaScript number holds integers exactly up to 2^53 - 1, and
// `JSON.parse` rounds a larger one without a word. The client reads the
// service's answers through `parseExact`: an answer holding such an integer
// (a sum beyond about 90 trillion dollars in cents, or far less in a
// currency of small units) is an `out_of_range` error naming the value's
// place, as the embedded Ledger answers, never a rounded number.

const { SubmetricsError } = require('../errors.js')

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)
// Sixteen digits in a row: text without them holds no integer beyond 2^53.
const LONG_DIGITS = /\d{16}/
const NUMBER = /-?[0-9][0-9.eE+-]*/y
const STRING = /"(?:[^"\\]|\\.)*"/y
const PLAIN_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/**
 * The JSON `text` parsed, or an `out_of_range` SubmetricsError naming the
 * first integer in it beyond `Number.MAX_SAFE_INTEGER` either way, and
 * `exactElsewhere`, the call that answers it exactly, if there is one.
 */
function parseExact(text, exactElsewhere) {
  if (LONG_DIGITS.test(text)) {
    const [found] = unsafeIntegers(text, 1)
    if (found) {
      let message = `the answer's \`${found.place}\` is ${found.digits}, beyond ${MAX_SAFE} (2^53 - 1), ` +
        'the largest integer a JavaScript number holds exactly'
      if (exactElsewhere) message += `; \`${exactElsewhere}\` answers it exactly, as a BigInt`
      throw new SubmetricsError(message, 'out_of_range', undefined, found.place)
    }
  }
  return JSON.parse(text)
}

/**
 * The integers of the JSON `text` beyond `Number.MAX_SAFE_INTEGER` either
 * way, at most `limit`, in the order they are written: each its `place` as
 * JavaScript reaches it (`result[3].mrr`, `["by plan"].total`) and its
 * `digits`. Numbers with a fraction or an exponent are floats and pass.
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
      if (isUnsafeInteger(token)) found.push({ place: place(frames), digits: token })
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
