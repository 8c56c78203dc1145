// Generators and async generators.
// @program generator-basic
function* g() { const x = yield 1; yield x * 2; return "done"; }
const it = g();
[it.next(), it.next(5), it.next(), it.next()]
// @program generator-spread
function* range(n) { for (let i = 0; i < n; i++) yield i; }
[...range(4)]
// @program yield-star
function* inner() { yield "a"; return "r"; }
function* outer() { const r = yield* inner(); yield r; }
[...outer()]
// @program generator-return-finally
function* fin() { try { yield 1; yield 2; } finally { console.log("cleanup"); } }
const fi = fin();
fi.next();
fi.return("early")
// @program generator-throw
function* catcher() { try { yield 1; } catch (e) { yield "caught " + e; } }
const ct = catcher();
ct.next();
ct.throw("x").value
// @program generator-method-and-class
class Coll { *[Symbol.iterator]() { yield* [1, 2, 3]; } }
[...new Coll()]
// @program async-generator-for-await
async function* ag() { yield 1; await null; yield 2; }
const got = [];
for await (const v of ag()) got.push(v);
got
// @program async-generator-return
async function* ar() { try { yield 1; } finally { console.log("closed"); } }
const ai = ar();
await ai.next();
await ai.return(7)
// @program for-await-over-promises
const vals = [];
for await (const v of [Promise.resolve(1), 2, Promise.resolve(3)]) vals.push(v);
vals
// @program generator-as-object-method
const o = { *keys() { yield "k"; } };
[...o.keys()]
// @program generator-not-constructible
function* nc() {}
new nc();
// @program yield-as-identifier-sloppy
var yield = 5;
yield
