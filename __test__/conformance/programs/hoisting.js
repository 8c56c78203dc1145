// Hoisting of var and function declarations, before any statement runs.
// @program function-called-before-declaration
const early = hoisted();
function hoisted() { return "hoisted"; }
early
// @program var-is-undefined-before
const before = typeof hv;
var hv = 1;
[before, hv]
// @program function-overrides-var-value
var fv;
function fv() {}
typeof fv
// @program var-initializer-overrides-function
var fo = 1;
function fo() {}
typeof fo
// @program nested-function-hoisting
function outer() { return inner(); function inner() { return "inner"; } }
outer()
// @program var-in-function-is-local
function local() { var lv = 1; return lv; }
[local(), typeof lv]
// @program var-in-loop-hoisted
for (var i = 0; i < 3; i++) {}
i
// @program annex-b-function-in-if
if (true) { function inIf() { return "if"; } }
inIf()
// @program annex-b-function-not-reached
if (false) { function never() {} }
typeof never
// @program var-declaration-does-not-reset
var keep = 1;
var keep;
keep
// @program function-declared-twice-last-wins
function twice() { return 1; }
const first = twice();
function twice() { return 2; }
[first, twice()]
// @program generator-hoisted
const it = gen();
function* gen() { yield 1; }
it.next().value
// @program async-function-hoisted
const p = af();
async function af() { return 1; }
await p
