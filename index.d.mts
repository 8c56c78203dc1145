// Types of the ES module entry (index.mjs): the same exports as the CommonJS entry, named, plus
// the binding as the default export.
export * from './index.js'
import * as binding from './index.js'
export default binding
