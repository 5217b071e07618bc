// Starts the built submetrics-server on a free port with a fresh data
// directory and reads what it prints: the address and the first login link.

import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createInterface } from 'node:readline'

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..')

/** The server binary: SUBMETRICS_SERVER_BIN, else the debug build's. */
export function serverBinary () {
  if (process.env.SUBMETRICS_SERVER_BIN) return process.env.SUBMETRICS_SERVER_BIN
  const target = process.env.CARGO_TARGET_DIR || join(repo, 'target')
  const binary = join(target, 'debug', 'submetrics-server')
  if (!existsSync(binary)) throw new Error(`${binary} is missing: cargo build -p submetrics-server`)
  return binary
}

export const OWNER_KEY = 'owner-key-of-the-browser-tests-0123456789'

/** Starts a server (the given binary, else `serverBinary()`); resolves to {base, setupUrl, stop}. */
export function startServer (binary = serverBinary()) {
  const dir = mkdtempSync(join(tmpdir(), 'submetrics-dashboard-'))
  const child = spawn(binary, ['--listen', '127.0.0.1:0', '--data-dir', dir], {
    env: { ...process.env, SUBMETRICS_OWNER_KEY: OWNER_KEY },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  return new Promise((resolve, reject) => {
    let base = null
    const lines = createInterface({ input: child.stdout })
    child.on('exit', (code) => reject(new Error(`the server stopped with ${code}`)))
    lines.on('line', (line) => {
      const listening = line.match(/^listening on (\S+)/)
      if (listening) base = listening[1]
      const setup = line.match(/^first login: open (\S+)/)
      if (setup && base) {
        resolve({
          base,
          setupUrl: setup[1],
          stop: () => {
            child.kill('SIGTERM')
            rmSync(dir, { recursive: true, force: true })
          }
        })
      }
    })
  })
}
