// Types of the ESM entry point of `submetrics/client`.
import * as api from './index.js'

export * from './index.js'
declare const client: typeof api
export default client
