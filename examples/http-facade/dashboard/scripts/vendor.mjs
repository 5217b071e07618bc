// Copies the chart library from node_modules into the embedded assets
// (assets/vendor/), where the server binary includes it. Run after
// changing the uplot version in package.json: `npm install && npm run vendor`.
// The browser tests check that the vendored copy equals the installed one.
import { copyFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
export const VENDORED = [
  ['node_modules/uplot/dist/uPlot.iife.min.js', 'assets/vendor/uPlot.iife.min.js'],
  ['node_modules/uplot/dist/uPlot.min.css', 'assets/vendor/uPlot.min.css'],
  ['node_modules/uplot/LICENSE', 'assets/vendor/uPlot.LICENSE'],
]
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [from, to] of VENDORED) copyFileSync(join(root, from), join(root, to))
  console.log(`vendored ${VENDORED.length} files into assets/vendor/`)
}
