// Top-level await, promises and the order of jobs.
// @program await-value
const v = await 5;
v + 1
// @program await-promise
const p = await new Promise((resolve) => resolve("resolved"));
p
// @program await-rejection-caught
let msg;
try { await Promise.reject(new Error("rejected")); } catch (e) { msg = e.message; }
msg
// @program await-rejection-uncaught
await Promise.reject(new TypeError("uncaught rejection"));
// @program await-rejection-non-error
await Promise.reject("plain reason");
// @program job-order
const order = [];
Promise.resolve().then(() => order.push("then"));
order.push("sync");
await null;
order.push("after await");
order
// @program then-after-script-end
Promise.resolve().then(() => console.log("late then"));
console.log("script end");
// @program async-function-and-await-in-loop
async function double(x) { await null; return x * 2; }
const results = [];
for (const n of [1, 2, 3]) results.push(await double(n));
results
// @program promise-all
await Promise.all([1, Promise.resolve(2), (async () => 3)()])
// @program promise-allsettled
(await Promise.allSettled([Promise.reject(new Error("no")), 1])).map((r) => r.status)
// @program await-thenable
await { then(resolve) { resolve("thenable"); } }
// @program never-settles
await new Promise(() => {});
// @program queue-microtask
const q = [];
queueMicrotask(() => q.push("micro"));
await null;
q
// @program await-in-declaration-keeps-tdz
console.log(typeof later);
const later = await 1;
later
// @program async-arrow-this
const at = async () => this === globalThis;
await at()
// @program await-in-block-and-switch
let sw;
switch (await 2) { case 2: { const inner = await "two"; sw = inner; } }
sw
// @program unhandled-rejection-ignored
Promise.reject(new Error("nobody listens"));
"done"
// @program promise-executor-throws
await new Promise(() => { throw new RangeError("executor"); });
