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
