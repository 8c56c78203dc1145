// Closures over top-level, block and loop bindings.
// @program let-per-iteration
const fs = [];
for (let i = 0; i < 3; i++) fs.push(() => i);
fs.map((f) => f())
// @program var-shared
const gs = [];
for (var j = 0; j < 3; j++) gs.push(() => j);
gs.map((g) => g())
// @program for-of-const-per-iteration
const hs = [];
for (const x of ["a", "b"]) hs.push(() => x);
hs.map((h) => h())
// @program for-in-let-per-iteration
const ks = [];
for (let k in { p: 1, q: 2 }) ks.push(() => k);
ks.map((k) => k())
// @program closure-sees-later-assignment
let later = 1;
const read = () => later;
later = 2;
read()
// @program closure-over-top-level-const
const base = 10;
function add(n) { return base + n; }
add(5)
// @program counter
function counter() { let n = 0; return () => ++n; }
const next = counter();
next(); next();
next()
// @program closure-in-while
const ws = [];
let w = 0;
while (w < 3) { let copy = w; ws.push(() => copy); w++; }
ws.map((f) => f())
// @program iife-scope
const r = (function () { var hidden = 1; return typeof hidden; })();
[r, typeof hidden]
// @program closure-over-class
class Box { constructor(v) { this.v = v; } }
const make = (v) => new Box(v);
make(3).v
// @program closure-over-catch
let fromCatch;
try { throw 5; } catch (e) { fromCatch = () => e; }
fromCatch()
// @program loop-closure-with-continue
const cs = [];
for (let i = 0; i < 4; i++) { if (i % 2) continue; cs.push(() => i); }
cs.map((f) => f())
// @program shadowed-in-closure
let s = "top";
function shadow() { let s = "fn"; return s; }
[shadow(), s]
