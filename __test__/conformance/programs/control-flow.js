// Labels, break and continue, switch, try/finally and their completion.
// @program labelled-block-break
const log = [];
block: { log.push(1); if (log.length) break block; log.push(2); }
log
// @program labelled-loops
const pairs = [];
outer: for (let i = 0; i < 3; i++) {
  for (let j = 0; j < 3; j++) {
    if (j === 1) continue outer;
    if (i === 2) break outer;
    pairs.push([i, j]);
  }
}
pairs
// @program labelled-while-do
let n = 0;
loop: while (true) { do { n++; if (n > 4) break loop; } while (n % 2); }
n
// @program switch-fallthrough
function sw(x) { const out = []; switch (x) { case 1: out.push(1); case 2: out.push(2); break; default: out.push("d"); case 3: out.push(3); } return out; }
[sw(1), sw(2), sw(3), sw(9)]
// @program switch-lexical-scope
switch (2) { case 1: let inCase = "one"; break; case 2: inCase = "two"; console.log(inCase); }
// @program switch-block-scope-leaks-not
switch (0) { case 0: { let blocky = 1; } }
typeof blocky
// @program try-finally-order
const order = [];
try { order.push("try"); throw new Error("x"); } catch (e) { order.push("catch"); } finally { order.push("finally"); }
order
// @program finally-overrides-return
function f() { try { return "try"; } finally { return "finally"; } }
f()
// @program finally-runs-on-break
const seen = [];
for (const x of [1, 2]) { try { if (x === 1) continue; seen.push(x); break; } finally { seen.push("f" + x); } }
seen
// @program rethrow-from-catch
try { throw new Error("inner"); } catch (e) { throw new RangeError("outer: " + e.message); }
// @program throw-non-error
throw { code: 42 };
// @program throw-string
throw "just a string";
// @program nested-try
let trace = "";
try { try { throw 1; } finally { trace += "a"; } } catch (v) { trace += "b" + v; }
trace
// @program switch-then-expression
let sv;
switch (3) { case 3: sv = "three"; }
sv
// @program if-else-chain
const kind = (n) => { if (n < 0) return "neg"; else if (n === 0) return "zero"; else return "pos"; };
[kind(-1), kind(0), kind(1)]
// @program comma-and-conditional
let cc = (1, 2, 3);
cc > 2 ? "big" : "small"
// @program break-out-of-try-in-loop
let count = 0;
while (true) { try { count++; if (count >= 3) break; } finally { count += 10; } }
count
// @program do-while-continue
let dw = 0, runs = 0;
do { runs++; if (dw++ < 2) continue; } while (dw < 4);
[dw, runs]
