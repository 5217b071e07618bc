'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const { execFileSync } = require('node:child_process')
const path = require('node:path')

test('the quickstart runs from the checkout as the README says', () => {
  const root = path.join(__dirname, '..', '..')
  const out = execFileSync(process.execPath, ['examples/node/quickstart.mjs'], { cwd: root, encoding: 'utf8' })
  assert.match(out, /2024-03-01\s+8000/)
})
