'use strict'
// The shared scenario corpus (testdata/scenarios, format SCENARIOS.md).
const fs = require('node:fs')
const path = require('node:path')

const SCENARIOS = path.join(__dirname, '..', '..', 'testdata', 'scenarios')

// Every scenario file under SCENARIOS, in its folders to any depth: the
// paths relative to it, '/'-separated, sorted (each names a test case).
function scenarioFiles() {
  return fs
    .readdirSync(SCENARIOS, { recursive: true })
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.split(path.sep).join('/'))
    .sort()
}

module.exports = { SCENARIOS, scenarioFiles }
