// Parentheses the language gives meaning to: function names, references, chains, directives.
// @program parenthesized-target-keeps-a-function-anonymous
let pf;
(pf) = function () {};
pf.name
// @program unparenthesized-target-names-the-function
let uf;
uf = function () {};
uf.name
// @program parenthesized-target-as-last-expression
let lf;
(lf) = () => {}
// @program parenthesized-target-name-read-after
let lg;
(lg) = () => {};
[lg.name, typeof lg]
// @program parenthesized-target-class-and-arrow
let pc, pa, pk;
(pc) = class {};
(pa) = async () => {};
(pk) = class { static id = 1 };
[pc.name, pa.name, pk.name, pk.id]
// @program doubly-parenthesized-target
let dp;
((dp)) = function () {};
dp.name
// @program parenthesized-whole-assignment-names
let pw;
(pw = function () {});
pw.name
// @program parenthesized-value-still-named
let pv;
pv = (function () {});
[pv.name, (pv = (() => {})).name]
// @program sequence-value-stays-anonymous
let sv;
sv = (0, function () {});
sv.name
// @program logical-assignments-to-parenthesized-targets
let la, lo, ln = null;
la = 1; lo = 0;
(la) &&= function () {};
(lo) ||= function () {};
(ln) ??= () => {};
[la.name, lo.name, ln.name]
// @program logical-assignments-name-without-parentheses
let ma = 1, mo = 0, mn;
ma &&= function () {};
mo ||= function () {};
mn ??= () => {};
[ma.name, mo.name, mn.name]
// @program array-destructuring-default-parenthesized
// QuickJS names this function "da" (V8 and the standard give ""): the executor runs it as QuickJS does.
let da, db;
[(da) = function () {}, db = function () {}] = [];
[da.name, db.name]
// @program object-destructuring-default-parenthesized
let oa, ob;
({ x: (oa) = () => {}, y: ob = () => {} } = {});
[oa.name, ob.name]
// @program parenthesized-target-in-a-function
function assignInside() {
  let inner;
  (inner) = function () {};
  return inner.name;
}
assignInside()
// @program parenthesized-target-in-a-loop-body
const names = [];
for (let i = 0; i < 2; i++) {
  let f;
  (f) = () => i;
  names.push(f.name, f());
}
names
// @program compound-assignment-is-no-named-evaluation
let ca = "";
void ((ca) += function () {});
[typeof ca, ca.startsWith("function")]
// @program parenthesized-member-call-keeps-this
const holder = { v: 7, get() { return this === holder ? this.v : "lost"; } };
[(holder.get)(), (0, holder.get)() === "lost" || "strict"]
// @program parenthesized-optional-chain-call
const maybe = null;
const outcomes = [];
outcomes.push(maybe?.f());
try { (maybe?.f)(); outcomes.push("called"); } catch (e) { outcomes.push(e.name); }
outcomes
// @program parenthesized-optional-chain-member
const deep = null;
const seen = [];
seen.push(deep?.a.b);
try { (deep?.a).b; seen.push("read"); } catch (e) { seen.push(e.name); }
seen
// @program parenthesized-string-is-no-directive
("use strict");
sloppyGlobal = 5;
[typeof sloppyGlobal, (function () { return this === undefined; })()]
// @program directive-then-parenthesized-string
function directives() { "use strict"; ("not a directive"); return this === undefined; }
directives()
// @program parenthesized-delete-of-a-global
globalThis.gone = 1;
[delete (gone), typeof globalThis.gone]
// @program parenthesized-sequence-argument
function count() { return arguments.length; }
[count((1, 2)), count(1, 2)]
// @program parenthesized-new-callee
function Maker() { return function Made() { this.m = 1; }; }
[typeof new (Maker())(), new Maker() instanceof Function]
// @program parenthesized-exponent-base
[(-2) ** 2, (2 ** 3) ** 2, 2 ** 3 ** 2]
// @program parenthesized-let-member
var let_ = [0];
(let_)[0] = 4;
let_[0]
// @program parenthesized-in-for-initializer
const inObj = { k: 1 };
let found;
for (var fi = ("k" in inObj); ; ) { found = fi; break; }
found
// @program parenthesized-nullish-with-or
const nz = null;
[nz ?? (0 || "right"), (nz ?? 0) || "left"]
// @program parenthesized-tagged-template-this
const tagger = { tag() { return this === tagger; } };
[(tagger.tag)`x`, tagger.tag`y`]
