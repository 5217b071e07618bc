// Types of the ESM entry point (index.mjs): the same named exports as the
// CommonJS one, and a default export holding all of them.
import * as api from './index.js'

export * from './index.js'
declare const submetrics: typeof api
export default submetrics
