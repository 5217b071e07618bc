'use strict'
// An array of records in the flat layout the addon's `upsertFlat` reads:
// one JavaScript pass over every field, so that the addon reads a million
// records with a few N-API calls instead of several per field. It only
// moves values; the addon builds the core's record trees from them and the
// core validates them.
//
// A record that is a plain object is read as `for...in` lists it (its
// enumerable string-keyed properties, own and inherited, in order). Field
// `f` of the call has the key `keys[fieldKeys[f]]` and a kind; a number's
// value is `numbers[f]`, a string's UTF-16 length is `numbers[f]` and its
// text the next piece of `text` (every string joined), unless it repeats
// the last string of the same key (kind REPEAT). Nested values
// (objects, arrays) and what JSON cannot hold (functions, symbols, BigInts)
// go to `others` in order, as does any record that is not a plain object;
// the addon reads those one by one and names the record and field of an
// error exactly as for a single object.

// Kinds of a field (the addon's `records.rs` reads the same numbers).
const UNDEFINED = 0
const NULL = 1
const FALSE = 2
const TRUE = 3
const NUMBER = 4
const STRING = 5
const OTHER = 6
const REPEAT = 7

/** Typed arrays of twice the capacity, holding what `from` held. */
function grown(from) {
  const to = new from.constructor(from.length * 2)
  to.set(from)
  return to
}

/**
 * `records` (an array) in the flat layout: `[layout, text, others]`,
 * `layout` being `{keys, ends, plain, fieldKeys, kinds, numbers}`; record `i`
 * holds the fields up to `ends[i]` and is read here when `plain[i]` is 1.
 * `undefined` when a key holds a lone UTF-16 surrogate: the layout carries
 * keys as UTF-8 text, which cannot hold one.
 */
function flatten(records) {
  const count = records.length
  let capacity = Math.max(64, count * 12)
  let fieldKeys = new Uint32Array(capacity)
  let kinds = new Uint8Array(capacity)
  let numbers = new Float64Array(capacity)
  const ends = new Uint32Array(count)
  const plain = new Uint8Array(count)
  const keys = []
  const keyIndex = new Map()
  const strings = []
  const others = []
  // Per key: the last string given to it.
  const lastStrings = []
  // The keys of the record before, and their indexes: records mostly share
  // their keys, in the same order.
  const lastKeys = []
  const lastIndex = []
  let f = 0
  for (let i = 0; i < count; i++) {
    const record = records[i]
    if (typeof record !== 'object' || record === null || Array.isArray(record)) {
      others.push(record)
      ends[i] = f
      continue
    }
    plain[i] = 1
    let j = 0
    for (const key in record) {
      if (f === capacity) {
        fieldKeys = grown(fieldKeys)
        kinds = grown(kinds)
        numbers = grown(numbers)
        capacity *= 2
      }
      let k
      if (lastKeys[j] === key) {
        k = lastIndex[j]
      } else {
        k = keyIndex.get(key)
        if (k === undefined) {
          // A key with a lone surrogate would cross as U+FFFD: such an
          // array is read record by record, which names the key.
          if (!key.isWellFormed()) return undefined
          k = keys.length
          keys.push(key)
          keyIndex.set(key, k)
        }
        lastKeys[j] = key
        lastIndex[j] = k
      }
      j++
      fieldKeys[f] = k
      const value = record[key]
      switch (typeof value) {
        case 'string':
          if (lastStrings[k] === value) {
            kinds[f] = REPEAT
          } else {
            kinds[f] = STRING
            numbers[f] = value.length
            strings.push(value)
            lastStrings[k] = value
          }
          break
        case 'number':
          kinds[f] = NUMBER
          numbers[f] = value
          break
        case 'boolean':
          kinds[f] = value ? TRUE : FALSE
          break
        case 'undefined':
          kinds[f] = UNDEFINED
          break
        default:
          if (value === null) {
            kinds[f] = NULL
          } else {
            kinds[f] = OTHER
            others.push(value)
          }
      }
      f++
    }
    ends[i] = f
  }
  const layout = {
    keys,
    ends,
    plain,
    fieldKeys: fieldKeys.subarray(0, f),
    kinds: kinds.subarray(0, f),
    numbers: numbers.subarray(0, f),
  }
  return [layout, strings.join(''), others]
}

module.exports = { flatten }
