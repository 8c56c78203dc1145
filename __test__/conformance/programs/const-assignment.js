// Assigning a const in every assignment form must throw TypeError, at the top level, in
// functions and in later statements.
// @program plain
const ca = 1;
ca = 2;
// @program value-kept-after-failed-assignment
const ck = 1;
try { ck = 2; } catch (e) { console.log(e.name, e.message); }
ck
// @program compound
const cc = 1;
cc += 1;
// @program logical-assignment
const cl = 0;
cl ||= 5;
// @program nullish-assignment-short-circuits
const cn = 0;
cn ??= 5;
cn
// @program increment
const ci = 1;
ci++;
// @program prefix-decrement
const cd = 1;
--cd;
// @program array-destructuring
const cy = 1;
[cy] = [5];
// @program object-destructuring
const co = 1;
({ co } = { co: 2 });
// @program nested-destructuring
const cz = 1;
({ p: [cz] } = { p: [3] });
// @program for-of-head
const cf = 0;
for (cf of [1, 2]) {}
// @program for-in-head
const cx = "";
for (cx in { a: 1 }) {}
// @program in-function
const cg = 1;
function assign() { cg = 3; }
assign();
// @program in-arrow-caught
const ch = 1;
const tryIt = () => { try { ch = 2; return "assigned"; } catch (e) { return e.name; } };
[tryIt(), ch]
// @program in-block
const cb = 1;
{ cb = 2; }
// @program class-binding-inside-class-is-const
class CC { static m() { CC = 1; } }
CC.m();
// @program class-binding-outside-is-mutable
class CM {}
CM = 5;
CM
// @program const-object-contents-mutable
const cobj = { n: 1 };
cobj.n = 2;
cobj
// @program strict-const-assignment
"use strict";
const cs = 1;
cs = 2;
// @program const-in-for-of-per-iteration
const seen = [];
for (const v of [1, 2, 3]) seen.push(v);
seen
// @program const-in-classic-for-throws-on-update
const out = [];
for (const i = 0; i < 2; i++) out.push(i);
// @program delete-const
const cdel = 1;
[delete cdel, cdel]
// @program const-typeof-after-assignment-attempt
const ct = "x";
try { ct = "y"; } catch {}
typeof ct + ct
