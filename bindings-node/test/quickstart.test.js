'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const { execFileSync } = require('node:child_process')
const path = require('node:path')
const fs = require('node:fs')
const os = require('node:os')

test('the quickstart runs against the built package', () => {
  // Resolve `submetrics` to this package through a temporary node_modules link.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'submetrics-quickstart-'))
  fs.mkdirSync(path.join(dir, 'node_modules'))
  fs.symlinkSync(path.join(__dirname, '..'), path.join(dir, 'node_modules', 'submetrics'), 'dir')
  const script = path.join(dir, 'quickstart.mjs')
  fs.copyFileSync(path.join(__dirname, '..', '..', 'examples', 'node', 'quickstart.mjs'), script)
  const out = execFileSync(process.execPath, [script], { encoding: 'utf8' })
  assert.match(out, /2024-03-01\s+8000/)
  fs.rmSync(dir, { recursive: true, force: true })
})
