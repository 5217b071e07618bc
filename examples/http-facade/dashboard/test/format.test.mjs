// How figures are written: a change that rounds to zero has no sign.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import * as format from '../assets/format.js'

test('a figure that rounds to zero is written without a sign', () => {
  assert.equal(format.percent(-0.0000001), '0.00%')
  assert.equal(format.percent(12.3456), '12.35%')
  assert.equal(format.percentChange(-0.0000012), '±0.00 pts')
  assert.equal(format.percentChange(-1.204), '−1.20 pts')
  assert.equal(format.percentChange(0.006), '+0.01 pts')
  assert.equal(format.ratio(-0.001), '0.00')
  assert.equal(format.ratioChange(0.004), '±0.00')
  assert.equal(format.ratioChange(-2.5), '−2.50')
})

test('an instant is written as its day in the account time zone, a date as it is', () => {
  assert.equal(format.day('2023-12-31T15:00:00Z', 'Asia/Tokyo'), '2024-01-01')
  assert.equal(format.day('2023-12-31T23:00:00Z', 'Europe/Paris'), '2024-01-01')
  assert.equal(format.day('2024-01-01T05:00:00Z', 'America/New_York'), '2024-01-01')
  assert.equal(format.day('2024-01-01', 'Asia/Tokyo'), '2024-01-01')
  assert.equal(format.day('2023-12-31T15:00:00Z'), '2023-12-31')
  assert.equal(format.day(null, 'Asia/Tokyo'), '–')
})
