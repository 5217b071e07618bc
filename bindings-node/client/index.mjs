// ESM entry point of `submetrics/client`: the same API as the CommonJS one.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const api = require('./index.js')

export const { Client, SubmetricsError } = api
export default api
