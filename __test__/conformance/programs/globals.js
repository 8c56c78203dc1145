// Which bindings are properties of the global object.
// @program let-is-not-a-global-property
let lg = 1;
["lg" in globalThis, globalThis.lg, Object.getOwnPropertyDescriptor(globalThis, "lg")]
// @program const-is-not-a-global-property
const cg = 1;
[Object.hasOwn(globalThis, "cg"), this.cg]
// @program class-is-not-a-global-property
class KG {}
["KG" in globalThis, typeof globalThis.KG]
// @program var-is-a-global-property
var vg = 1;
[Object.getOwnPropertyDescriptor(globalThis, "vg"), delete globalThis.vg]
// @program function-is-a-global-property
function fg() {}
[typeof globalThis.fg, Object.getOwnPropertyDescriptor(globalThis, "fg").configurable]
// @program global-property-then-let-shadows
globalThis.shadowed = "property";
let shadowed = "lexical";
[shadowed, globalThis.shadowed]
// @program lexical-shadows-global-builtin
let Array2 = 1;
const parseInt = (s) => "mine " + s;
parseInt("1")
// @program assignment-to-lexical-does-not-touch-global
let al = 1;
al = 2;
[al, globalThis.al]
// @program undeclared-read-throws
notDeclaredAnywhere;
// @program typeof-undeclared
typeof notDeclaredEither
// @program global-this-property-read
globalThis.viaProperty = 3;
viaProperty
// @program var-and-globalThis-agree
var agree = 1;
globalThis.agree = 2;
agree
// @program let-and-globalThis-differ
let differ = 1;
globalThis.differ = 2;
[differ, globalThis.differ]
// @program delete-var-fails
var dv = 1;
[delete globalThis.dv, typeof dv]
// @program delete-implicit-global
implicitGlobal = 1;
[delete globalThis.implicitGlobal, typeof implicitGlobal]
// @program keys-of-declared
var kv1 = 1;
let kl1 = 2;
Object.keys(globalThis).filter((k) => k === "kv1" || k === "kl1")
// @program global-object-frozen-names
undefined = 5;
typeof undefined
// @program strict-write-to-readonly-global
"use strict";
NaN = 1;
