// The temporal dead zone of let, const and class, at the top level and in blocks.
// @program read-let-before
console.log("start");
tl;
let tl = 1;
// @program read-const-before
tc;
const tc = 1;
// @program read-class-before
new TK();
class TK {}
// @program typeof-in-tdz
typeof tt;
let tt;
// @program write-let-before
tw = 2;
let tw = 1;
// @program closure-reads-before-init
function early() { return te; }
let r;
try { r = early(); } catch (e) { r = e.name; }
let te = 5;
[r, early()]
// @program tdz-in-block
{
  try { bx; } catch (e) { console.log(e.name, e.message); }
  let bx = 1;
}
// @program tdz-initializer-self-reference
let self = typeof self;
// @program tdz-destructuring-default
let [x1 = y1, y1 = 1] = [];
// @program tdz-after-failed-initializer
let broken;
try { broken = (() => { throw new Error("init"); })(); } catch (e) { console.log(e.message); }
broken
// @program tdz-left-by-failed-declaration
const fails = (() => { throw new TypeError("nope"); })();
// @program class-heritage-tdz
class Self extends Self {}
// @program tdz-in-switch-case
switch (1) {
  case 0: let sw = 0;
  case 1: sw = 1;
}
// @program tdz-function-parameter-default
function pd(a = b, b = 1) { return [a, b]; }
pd()
// @program var-hoisting-no-tdz
console.log(hv);
var hv = 1;
hv
