// arguments, this, strict mode, function forms.
// @program arguments-in-function
function args() { return [arguments.length, arguments[1], Array.from(arguments)]; }
args(1, 2, 3)
// @program arguments-mapped-sloppy
function mapped(a) { arguments[0] = 9; return a; }
mapped(1)
// @program arguments-unmapped-strict
function unmapped(a) { "use strict"; arguments[0] = 9; return a; }
unmapped(1)
// @program arguments-at-top-level
typeof arguments
// @program arrow-has-no-arguments
function outerArgs() { return (() => arguments[0])(); }
outerArgs("outer")
// @program this-at-top-level
[this === globalThis, typeof this]
// @program this-in-sloppy-function
function sloppyThis() { return this === globalThis; }
sloppyThis()
// @program this-in-strict-function
function strictThis() { "use strict"; return this; }
strictThis()
// @program this-in-arrow-at-top-level
const arrowThis = () => this === globalThis;
arrowThis()
// @program method-this
const obj = { name: "o", get() { return this.name; } };
const { get } = obj;
[obj.get(), (() => { try { return get(); } catch (e) { return e.name; } })()]
// @program strict-directive-assign-undeclared
"use strict";
undeclaredStrict = 1;
// @program sloppy-assign-undeclared-creates-global
undeclaredSloppy = 1;
[undeclaredSloppy, "undeclaredSloppy" in globalThis]
// @program strict-directive-with-comment
// a comment first
"use strict";
typeof (function () { return this; })()
// @program not-a-directive
let x = 1;
"use strict";
undeclaredLater = 2;
undeclaredLater
// @program strict-octal-literal
"use strict";
010
// @program sloppy-octal-literal
010
// @program default-and-rest-params
function dr(a, b = a + 1, ...rest) { return [a, b, rest]; }
dr(1, undefined, 3, 4)
// @program function-name-and-length
function named(a, b) {}
const anon = function () {};
const arrow = (x) => x;
[named.name, named.length, anon.name, arrow.name]
// @program recursion
function fact(n) { return n <= 1 ? 1 : n * fact(n - 1); }
fact(10)
// @program call-apply-bind
function who(greeting) { return greeting + " " + this.n; }
[who.call({ n: "c" }, "hi"), who.apply({ n: "a" }, ["yo"]), who.bind({ n: "b" })("hey")]
// @program stack-overflow
function forever() { return forever() + 1; }
forever();
// @program callee-strict
function calleeStrict() { "use strict"; return arguments.callee; }
calleeStrict();
// @program duplicate-params-sloppy
function dup(a, a) { return a; }
dup(1, 2)
// @program function-properties
function fp() {}
fp.custom = 1;
[fp.custom, typeof fp.prototype]
// @program new-target-at-top-level
new.target
// @program new-target-in-arrow-at-top-level
const nt = () => new.target;
