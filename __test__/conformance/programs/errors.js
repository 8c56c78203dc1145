// Errors: kinds, messages, causes, and what catch sees.
// @program reference-error
missing + 1;
// @program type-error-call
const notFn = 1;
notFn();
// @program type-error-property-of-undefined
let u;
u.prop;
// @program range-error
new Array(-1);
// @program syntax-error-from-json
JSON.parse("{bad json");
// @program error-cause
const e = new Error("outer", { cause: new Error("inner") });
[e.message, e.cause.message]
// @program custom-error-class
class MyError extends Error { constructor(m) { super(m); this.name = "MyError"; } }
throw new MyError("custom");
// @program error-fields
const err = new TypeError("t");
[err.name, err.message, err instanceof Error, Object.prototype.toString.call(err)]
// @program aggregate-error
try { await Promise.any([Promise.reject(1), Promise.reject(2)]); } catch (a) { console.log(a.name, a.errors); }
// @program error-to-string
String(new RangeError("r"))
// @program throw-in-finally-replaces
try { throw new Error("first"); } finally { throw new Error("second"); }
// @program error-thrown-from-nested-function
function deep() { throw new EvalError("deep"); }
function mid() { deep(); }
mid();
// @program catch-rethrow-keeps-identity
const original = new Error("same");
let same;
try { try { throw original; } catch (x) { throw x; } } catch (y) { same = y === original; }
same
// @program throw-null
throw null;
// @program throw-undefined
throw undefined;
// @program error-message-of-getter-on-null
const n = null;
n.field;
