// Every declaration kind, at the top level and in blocks.
// @program var
var v1 = 1;
var v1;
console.log(v1, typeof v1);
v1
// @program let
let l1 = 1;
l1 = l1 + 1;
l1
// @program let-without-initializer
let l2;
console.log(l2);
l2 = 3;
l2
// @program const
const c1 = { n: 1 };
c1.n++;
c1
// @program function
function f1() { return "f1"; }
f1()
// @program function-redeclared
function f2() { return 1; }
function f2() { return 2; }
f2()
// @program class
class C1 { m() { return "m"; } }
new C1().m()
// @program class-expression-binding
const C2 = class Named { who() { return Named.name; } };
[new C2().who(), typeof Named]
// @program destructuring-declarations
const { a: d1, b: [d2, d3 = 9] = [] } = { a: 1, b: [2] };
let [d4, ...d5] = [4, 5, 6];
var { d6 = "default" } = {};
[d1, d2, d3, d4, d5, d6]
// @program block-let-const-class
{
  let bl = 1;
  const bc = 2;
  class BK {}
  console.log(bl, bc, typeof BK);
}
[typeof bl, typeof bc, typeof BK]
// @program block-shadows-top-level
let sh = "outer";
{
  let sh = "inner";
  console.log(sh);
}
sh
// @program block-function-sloppy
{
  function inBlock() { return "annex b"; }
}
typeof inBlock
// @program block-function-strict
"use strict";
{
  function inBlockStrict() { return 1; }
}
typeof inBlockStrict
// @program var-in-block-is-global
{
  var vb = 7;
}
[vb, "vb" in globalThis]
// @program many-declarators
let m1 = 1, m2 = m1 + 1, m3 = m2 * 2;
var m4 = 1, m5;
[m1, m2, m3, m4, m5]
// @program let-as-identifier-sloppy
var let_ = 1;
let_
// @program declaration-in-for-heads
for (var fv = 0; fv < 2; fv++) {}
for (let fl = 0; fl < 2; fl++) {}
[fv, typeof fl]
// @program for-in-declarations
const keys = [];
for (const k in { x: 1, y: 2 }) keys.push(k);
for (var kv in { z: 3 }) keys.push(kv);
[keys, kv]
// @program for-of-declarations
const vals = [];
for (const [i, v] of [[1, "a"], [2, "b"]]) vals.push(i + v);
vals
// @program catch-parameter
let caught;
try { throw new Error("boom"); } catch ({ message }) { caught = message; }
caught
// @program catch-without-binding
let reached = false;
try { null.x; } catch { reached = true; }
reached
// @program redeclare-let-early-error
let dup = 1;
let dup = 2;
dup
// @program let-then-var-early-error
let lv = 1;
var lv = 2;
// @program const-without-initializer-early-error
const ci;
// @program function-then-let-early-error
function fl2() {}
let fl2 = 1;
// @program class-then-var-early-error
class CV {}
var CV = 1;
// @program var-then-function
var vf = 1;
function vf() {}
typeof vf
// @program using-in-block
let disposed = false;
{
  using r = { [Symbol.dispose]() { disposed = true; } };
}
disposed
// @program using-at-top-level-early-error
using top = null;
