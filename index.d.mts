// Types of the ES module entry (index.mjs): the same exports as the CommonJS entry, named, plus
// the whole entry as the default export.
export * from './index.js'
import * as entry from './index.js'
export default entry
