// Classes: fields, private names, static blocks, super, accessors.
// @program fields
class F { a = 1; b = this.a + 1; static s = "static"; }
[new F(), F.s]
// @program private-fields-and-methods
class P { #x = 1; #inc() { return ++this.#x; } bump() { this.#inc(); return this.#x; } static has(o) { return #x in o; } }
[new P().bump(), P.has(new P()), P.has({})]
// @program private-access-on-wrong-object
class Q { #y = 1; static read(o) { return o.#y; } }
Q.read({});
// @program static-block
class S { static v; static { S.v = "set in block"; console.log("static block runs"); } }
S.v
// @program static-block-scope
class SB { static { var inside = 1; } }
typeof inside
// @program super-method
class A { hi() { return "A"; } }
class B extends A { hi() { return super.hi() + "B"; } }
new B().hi()
// @program super-constructor
class Base { constructor(x) { this.x = x; } }
class Derived extends Base { constructor() { super(7); this.y = this.x + 1; } }
new Derived()
// @program this-before-super
class Early extends Object { constructor() { this.x = 1; super(); } }
new Early();
// @program accessors
class Temp { #c = 0; get f() { return this.#c * 9 / 5 + 32; } set f(v) { this.#c = (v - 32) * 5 / 9; } }
const t = new Temp();
t.f = 212;
[t.f, Object.keys(t)]
// @program static-inheritance
class SA { static who() { return this.name; } }
class SBB extends SA {}
SBB.who()
// @program class-is-strict
class Strict { m() { undeclaredInClass = 1; } }
new Strict().m();
// @program class-call-without-new
class NoCall {}
NoCall();
// @program computed-names
const key = "dyn";
class CN { [key]() { return key; } static [key + "S"] = 1; }
[new CN().dyn(), CN.dynS]
// @program instanceof-and-prototype
class I {}
const i = new I();
[i instanceof I, Object.getPrototypeOf(i) === I.prototype, typeof I]
// @program extends-null-prototype
class N extends null {}
Object.getPrototypeOf(N.prototype)
// @program field-arrow-this
class Btn { label = "ok"; click = () => this.label; }
const { click } = new Btn();
click()
// @program private-static
class PS { static #count = 0; static inc() { return ++PS.#count; } }
PS.inc(); PS.inc()
// @program new-target
function NT() { return new.target === NT; }
[new NT() instanceof NT, NT()]
