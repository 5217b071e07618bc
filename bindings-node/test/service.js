'use strict'
// Starts a real submetrics-server for the client tests: SUBMETRICS_SERVER_BIN,
// else the workspace's debug build, on a free port with a fresh data directory.
const { spawn, execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const readline = require('node:readline')

const ROOT = path.join(__dirname, '..', '..')

function binary() {
  if (process.env.SUBMETRICS_SERVER_BIN) return process.env.SUBMETRICS_SERVER_BIN
  const built = path.join(process.env.CARGO_TARGET_DIR ?? path.join(ROOT, 'target'), 'debug', 'submetrics-server')
  if (!fs.existsSync(built)) throw new Error(`no server binary at ${built}: run cargo build -p submetrics-server or set SUBMETRICS_SERVER_BIN`)
  return built
}

/** Starts a server with `accounts` accounts made before it (their owner keys in `keys`, the first as `key`). */
async function startService(accounts = 1) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'submetrics-node-client-'))
  const keys = []
  for (let i = 0; i < accounts; i++) {
    const out = execFileSync(binary(), ['accounts', 'create', `account ${i}`, '--data-dir', dir], { encoding: 'utf8' })
    keys.push(out.trim().split(' ').pop())
  }
  const child = spawn(binary(), ['--listen', '127.0.0.1:0', '--data-dir', dir], { stdio: ['ignore', 'pipe', 'inherit'] })
  const lines = readline.createInterface({ input: child.stdout })
  const url = await new Promise((resolve, reject) => {
    lines.on('line', (line) => { if (line.startsWith('listening on ')) resolve(line.split(' ')[2].trim()) })
    child.on('exit', () => reject(new Error('the server stopped before it listened')))
  })
  return {
    url,
    key: keys[0],
    keys,
    stop() {
      child.kill()
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}

module.exports = { startService }
