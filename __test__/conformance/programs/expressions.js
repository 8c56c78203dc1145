// Getters and setters, tagged templates, optional chaining, spread, destructuring details.
// @program object-accessors
let backing = 1;
const o = { get v() { return backing * 2; }, set v(x) { backing = x; } };
o.v = 5;
[o.v, backing]
// @program defineProperty-accessor
const d = {};
Object.defineProperty(d, "x", { get() { return "got"; }, enumerable: false });
[d.x, Object.keys(d)]
// @program getter-throws
const bad = { get boom() { throw new Error("getter"); } };
bad.boom
// @program tagged-template
function tag(strings, ...values) { return strings.raw.join("|") + ":" + values.join(","); }
tag`a${1}b${2}c\n`
// @program tagged-template-identity
const seen = [];
const t = (s) => { seen.push(s); return s; };
for (let i = 0; i < 2; i++) t`same`;
seen[0] === seen[1]
// @program template-literal
const who = "world";
`hello ${who} ${1 + 1}`
// @program optional-chaining
const maybe = { a: { b: null, f() { return "called"; } } };
[maybe?.a?.b?.c, maybe.a?.f?.(), maybe.x?.y.z, maybe.a.g?.()]
// @program optional-call-on-undefined-throws-without
const m2 = {};
m2.missing();
// @program nullish
[null ?? "d", 0 ?? "d", undefined ?? null ?? "last"]
// @program spread
const arr = [1, ...[2, 3], ..."ab"];
const obj = { ...{ a: 1 }, b: 2, ...null };
[arr, obj, Math.max(...arr.filter(Number.isFinite))]
// @program destructuring-defaults-and-holes
const [, second = "def", ...rest] = [1, undefined, 3, 4];
const { p: { q = "deep" } = {} } = {};
[second, rest, q]
// @program destructuring-null-throws
const { z } = null;
// @program exponent-and-bigint
[2 ** 10, 10n ** 20n, typeof 1n, 5n / 2n]
// @program number-formatting
[0.1 + 0.2, 1e21, -0, 1 / 0, (123.456).toFixed(1), Number("0x10")]
// @program string-methods
["abc".at(-1), "a-b-c".replaceAll("-", "+"), " x ".trim(), "abc".padStart(5, "*")]
// @program regexp
const re = /(?<y>\d{4})-(?<m>\d{2})/u;
const match = "2024-05".match(re);
[match.groups.y, match.groups.m, "aXbX".split(/x/i), /a/g.flags]
// @program array-methods
[[3, 1, 2].toSorted(), [1, 2, 3].findLast((x) => x < 3), [[1], [2, [3]]].flat(Infinity), Array.from({ length: 3 }, (_, i) => i * i)]
// @program object-methods
const src = { b: 2, a: 1 };
[Object.entries(src), Object.fromEntries([["x", 1]]), Object.groupBy([1, 2, 3], (n) => (n % 2 ? "odd" : "even"))]
// @program json
const text = JSON.stringify({ a: [1, { b: undefined }], c: "s" });
[text, JSON.parse(text).a[1]]
// @program map-set
const map = new Map([["k", 1]]);
map.set("j", 2);
const set = new Set([1, 1, 2]);
[map, set, [...map.keys()], set.has(2)]
// @program date-utc
new Date(Date.UTC(2020, 0, 2)).toISOString()
// @program symbol-description
const sym = Symbol("desc");
[sym.description, typeof sym, sym.toString()]
// @program typeof-everything
[typeof undefined, typeof null, typeof 1, typeof "", typeof {}, typeof [], typeof (() => 1), typeof Symbol(), typeof 1n]
// @program in-and-instanceof
[("a" in { a: 1 }), [] instanceof Array, null instanceof Object]
// @program void-and-comma
[void 0, (1, 2)]
// @program delete-property
const dp = { a: 1, b: 2 };
delete dp.a;
dp
// @program getter-on-class-static
class G { static get now() { return "static getter"; } }
G.now
// @program anonymous-functions-in-sequences-stay-anonymous
const anonymous = (0, function () {});
[anonymous.name, ((x) => x).name]
