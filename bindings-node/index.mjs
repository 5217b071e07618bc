// ESM entry point: the same API as the CommonJS one.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const api = require('./index.js')

export const { Ledger, Client, SubmetricsError, reportNames } = api
export default api
