//! Objects, classes, collections, dates, regexps, boxed primitives, promises, typed arrays,
//! errors, proxies and format specifiers, as Node 20 prints them.
//!
//! Spec: §7.3 (console capture).

use super::*;

#[test]
fn object_simple() {
    assert_eq!(inspect_js("({ a: 1, 'b-c': 2 })"), "{ a: 1, 'b-c': 2 }");
}

#[test]
fn object_empty() {
    assert_eq!(inspect_js("({})"), "{}");
}

#[test]
fn object_key_quoting() {
    assert_eq!(
        inspect_js("({ \"it's\": 1, 'a\"b': 2, '\\n': 3, '': 4, '1a': 5, a1: 6, $x: 7, 'ü': 8, _ok: 9 })"),
        "{\n  \"it's\": 1,\n  'a\"b': 2,\n  '\\n': 3,\n  '': 4,\n  '1a': 5,\n  a1: 6,\n  '$x': 7,\n  'ü': 8,\n  _ok: 9\n}"
    );
}

#[test]
fn object_numeric_keys_first() {
    assert_eq!(
        inspect_js("({ b: 1, 2: 'two', 1: 'one' })"),
        "{ '1': 'one', '2': 'two', b: 1 }"
    );
}

#[test]
fn object_symbol_keys() {
    assert_eq!(
        inspect_js("({ a: 1, [Symbol('x')]: 2, [Symbol()]: 3, [Symbol.iterator]: 4 })"),
        "{ a: 1, [Symbol(x)]: 2, [Symbol()]: 3, [Symbol(Symbol.iterator)]: 4 }"
    );
}

#[test]
fn object_symbol_key_is_escaped() {
    assert_eq!(
        inspect_js("({ [Symbol(\"it's\\n\")]: 1 })"),
        "{ [Symbol(it\\'s\\n)]: 1 }"
    );
}

#[test]
fn object_proto_key_is_bracketed() {
    assert_eq!(inspect_js("({ ['__proto__']: 1 })"), "{ ['__proto__']: 1 }");
}

#[test]
fn object_non_enumerable_props_hidden() {
    assert_eq!(
        inspect_js("(() => { const o = { v: 2 }; Object.defineProperty(o, 'hidden', { value: 1 }); return o; })()"),
        "{ v: 2 }"
    );
}

#[test]
fn object_inherited_props_hidden() {
    assert_eq!(inspect_js("({ __proto__: { a: 1 }, b: 2 })"), "{ b: 2 }");
}

#[test]
fn object_class_instance() {
    assert_eq!(
        inspect_js("new (class Foo { constructor() { this.x = 1; } })()"),
        "Foo { x: 1 }"
    );
}

#[test]
fn object_class_instance_empty() {
    assert_eq!(inspect_js("new (class Foo {})()"), "Foo {}");
}

#[test]
fn object_anonymous_class_instance() {
    assert_eq!(inspect_js("new (class {})()"), "{}");
}

#[test]
fn object_null_prototype_empty() {
    assert_eq!(
        inspect_js("Object.create(null)"),
        "[Object: null prototype] {}"
    );
}

#[test]
fn object_null_prototype_with_keys() {
    assert_eq!(
        inspect_js("Object.assign(Object.create(null), { a: 1 })"),
        "[Object: null prototype] { a: 1 }"
    );
}

#[test]
fn object_prototype_without_constructor() {
    assert_eq!(
        inspect_js(
            "(() => { const o = Object.create(Object.create(null)); o.a = 1; return o; })()"
        ),
        "Object <[Object: null prototype] {}> { a: 1 }"
    );
}

#[test]
fn object_getter_is_not_called() {
    assert_eq!(
        inspect_js("({ get a() { throw new Error('called'); }, b: 1 })"),
        "{ a: [Getter], b: 1 }"
    );
}

#[test]
fn object_setter_only() {
    assert_eq!(inspect_js("({ set a(v) {} })"), "{ a: [Setter] }");
}

#[test]
fn object_getter_setter() {
    assert_eq!(
        inspect_js("({ get a() { return 1; }, set a(v) {} })"),
        "{ a: [Getter/Setter] }"
    );
}

#[test]
fn object_class_prototype_getter_is_not_shown() {
    assert_eq!(
        inspect_js("new (class Foo { get x() { throw 1; } })()"),
        "Foo {}"
    );
}

#[test]
fn object_to_string_tag_from_prototype() {
    assert_eq!(
        inspect_js(
            "(() => { class Foo {} Foo.prototype[Symbol.toStringTag] = 'T'; return new Foo(); })()"
        ),
        "Foo [T] {}"
    );
}

#[test]
fn object_own_enumerable_to_string_tag_is_a_key() {
    assert_eq!(
        inspect_js("({ [Symbol.toStringTag]: 'T' })"),
        "{ [Symbol(Symbol.toStringTag)]: 'T' }"
    );
}

#[test]
fn object_depth_limit() {
    assert_eq!(
        inspect_js("({ a: { b: { c: { d: 1 } } } })"),
        "{ a: { b: { c: [Object] } } }"
    );
}

#[test]
fn object_depth_limit_array_and_class() {
    assert_eq!(
        inspect_js("(() => { class Foo {} return { a: { b: { arr: [1], foo: new Foo(), nul: Object.create(null), map: new Map() } } }; })()"),
        "{\n  a: {\n    b: {\n      arr: [Array],\n      foo: Foo {},\n      nul: [Object: null prototype] {},\n      map: Map(0) {}\n    }\n  }\n}"
    );
}

#[test]
fn object_depth_limit_empty_objects_still_shown() {
    assert_eq!(
        inspect_js("({ a: { b: { c: {}, d: [] } } })"),
        "{ a: { b: { c: {}, d: [] } } }"
    );
}

#[test]
fn object_circular_self() {
    assert_eq!(
        inspect_js("(() => { const o = {}; o.self = o; return o; })()"),
        "<ref *1> { self: [Circular *1] }"
    );
}

#[test]
fn object_circular_two_refs() {
    assert_eq!(
        inspect_js("(() => { const a = { name: 'a' }; const b = { name: 'b', a }; a.b = b; return { a, b }; })()"),
        "{\n  a: <ref *1> { name: 'a', b: { name: 'b', a: [Circular *1] } },\n  b: <ref *2> { name: 'b', a: <ref *1> { name: 'a', b: [Circular *2] } }\n}"
    );
}

#[test]
fn object_circular_in_array() {
    assert_eq!(
        inspect_js("(() => { const a = [1]; a.push(a); return a; })()"),
        "<ref *1> [ 1, [Circular *1] ]"
    );
}

#[test]
fn object_long_values_break_lines() {
    assert_eq!(
        inspect_js("({ alpha: 'x'.repeat(30), beta: 'y'.repeat(30), gamma: 1 })"),
        "{\n  alpha: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',\n  beta: 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy',\n  gamma: 1\n}"
    );
}

#[test]
fn object_compact_three_levels() {
    assert_eq!(
        inspect_js("({ first: [1, 2, 3], second: { inner: [1, 2, 3] } })"),
        "{ first: [ 1, 2, 3 ], second: { inner: [ 1, 2, 3 ] } }"
    );
}

#[test]
fn object_four_levels_with_compact_breaks() {
    assert_eq!(
        inspect_js("({ a: { b: { c: {} } }, d: { e: { f: 1 } } })"),
        "{ a: { b: { c: {} } }, d: { e: { f: 1 } } }"
    );
}

#[test]
fn object_nested_multiline_indentation() {
    assert_eq!(
        inspect_js("({ outer: { one: 'x'.repeat(40), two: 'y'.repeat(40) }, after: true })"),
        "{\n  outer: {\n    one: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',\n    two: 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy'\n  },\n  after: true\n}"
    );
}

#[test]
fn object_many_keys() {
    assert_eq!(
        inspect_js("Object.fromEntries(Array.from({ length: 30 }, (_, i) => ['key' + i, i]))"),
        "{\n  key0: 0,\n  key1: 1,\n  key2: 2,\n  key3: 3,\n  key4: 4,\n  key5: 5,\n  key6: 6,\n  key7: 7,\n  key8: 8,\n  key9: 9,\n  key10: 10,\n  key11: 11,\n  key12: 12,\n  key13: 13,\n  key14: 14,\n  key15: 15,\n  key16: 16,\n  key17: 17,\n  key18: 18,\n  key19: 19,\n  key20: 20,\n  key21: 21,\n  key22: 22,\n  key23: 23,\n  key24: 24,\n  key25: 25,\n  key26: 26,\n  key27: 27,\n  key28: 28,\n  key29: 29\n}"
    );
}

#[test]
fn object_with_functions() {
    assert_eq!(
        inspect_js("({ f() {}, g: () => 1, h: class {} })"),
        "{ f: [Function: f], g: [Function: g], h: [class h] }"
    );
}

#[test]
fn object_to_string_method_is_not_called() {
    assert_eq!(
        inspect_js("({ toString() { throw new Error('called'); } })"),
        "{ toString: [Function: toString] }"
    );
}

#[test]
fn object_generator_instance() {
    assert_eq!(inspect_js("(function* () {})()"), "Object [Generator] {}");
}

#[test]
fn object_array_iterator() {
    assert_eq!(
        inspect_js("[1, 2][Symbol.iterator]()"),
        "Object [Array Iterator] {}"
    );
}

#[test]
fn object_math_tag() {
    assert_eq!(
        inspect_js("({ m: Math, j: JSON })"),
        "{ m: Object [Math] {}, j: Object [JSON] {} }"
    );
}

#[test]
fn array_grouping_uses_display_width_for_cjk() {
    assert_eq!(
        inspect_js("['日本語', '中文字', 'ok', 'a', 'b', 'c', 'd', 'e']"),
        "[\n  '日本語', '中文字',\n  'ok',     'a',\n  'b',      'c',\n  'd',      'e'\n]"
    );
}

#[test]
fn object_prototype_is_null_prototype() {
    assert_eq!(
        inspect_js("Object.prototype"),
        "[Object: null prototype] {}"
    );
}

#[test]
fn object_builtin_prototypes() {
    assert_eq!(
        inspect_js("[Array.prototype, Map.prototype, Promise.prototype, Symbol.prototype]"),
        "[\n  Object(0) [],\n  Object [Map] {},\n  Object [Promise] {},\n  Object [Symbol] {}\n]"
    );
}

#[test]
fn error_non_native_instance_of_error() {
    assert_eq!(inspect_js("Object.create(Error.prototype)"), "[Error]");
}

#[test]
fn error_circular_self_reference() {
    assert_eq!(
        inspect_js("(() => { const e = new Error('x'); e.stack = ''; e.self = e; return e; })()"),
        "<ref *1> [Error: x] { self: [Circular *1] }"
    );
}

#[test]
fn error_nested_props_break_lines() {
    assert_eq!(
        inspect_js("(() => { const e = new RangeError('r'); e.stack = ''; e.extra = { deep: { deeper: { deepest: 1 } } }; return e; })()"),
        "[RangeError: r] { extra: { deep: { deeper: [Object] } } }"
    );
}

#[test]
fn map_nested_values() {
    assert_eq!(
        inspect_js("new Map([['key', new Set([1, 2])], ['other', new Map([[1, new Map()]])]])"),
        "Map(2) {\n  'key' => Set(2) { 1, 2 },\n  'other' => Map(1) { 1 => Map(0) {} }\n}"
    );
}

#[test]
fn nested_mixed_structure_breaks_like_node() {
    assert_eq!(
        inspect_js("({ users: [{ id: 1, name: 'Ada Lovelace', tags: ['math', 'poetry'] }, { id: 2, name: 'Alan Turing', tags: ['logic'] }], total: 2, meta: { page: 1, of: new Map([['x', [1, 2, 3]]]) } })"),
        "{\n  users: [\n    { id: 1, name: 'Ada Lovelace', tags: [Array] },\n    { id: 2, name: 'Alan Turing', tags: [Array] }\n  ],\n  total: 2,\n  meta: { page: 1, of: Map(1) { 'x' => [Array] } }\n}"
    );
}

#[test]
fn map_with_entries() {
    assert_eq!(
        inspect_js("new Map([['a', 1], ['b', 2]])"),
        "Map(2) { 'a' => 1, 'b' => 2 }"
    );
}

#[test]
fn map_empty() {
    assert_eq!(inspect_js("new Map()"), "Map(0) {}");
}

#[test]
fn map_object_keys() {
    assert_eq!(
        inspect_js("new Map([[{ k: 1 }, [1, 2]]])"),
        "Map(1) { { k: 1 } => [ 1, 2 ] }"
    );
}

#[test]
fn map_more_than_100_entries() {
    assert_eq!(
        inspect_js("new Map(Array.from({ length: 102 }, (_, i) => [i, i]))"),
        "Map(102) {\n  0 => 0,\n  1 => 1,\n  2 => 2,\n  3 => 3,\n  4 => 4,\n  5 => 5,\n  6 => 6,\n  7 => 7,\n  8 => 8,\n  9 => 9,\n  10 => 10,\n  11 => 11,\n  12 => 12,\n  13 => 13,\n  14 => 14,\n  15 => 15,\n  16 => 16,\n  17 => 17,\n  18 => 18,\n  19 => 19,\n  20 => 20,\n  21 => 21,\n  22 => 22,\n  23 => 23,\n  24 => 24,\n  25 => 25,\n  26 => 26,\n  27 => 27,\n  28 => 28,\n  29 => 29,\n  30 => 30,\n  31 => 31,\n  32 => 32,\n  33 => 33,\n  34 => 34,\n  35 => 35,\n  36 => 36,\n  37 => 37,\n  38 => 38,\n  39 => 39,\n  40 => 40,\n  41 => 41,\n  42 => 42,\n  43 => 43,\n  44 => 44,\n  45 => 45,\n  46 => 46,\n  47 => 47,\n  48 => 48,\n  49 => 49,\n  50 => 50,\n  51 => 51,\n  52 => 52,\n  53 => 53,\n  54 => 54,\n  55 => 55,\n  56 => 56,\n  57 => 57,\n  58 => 58,\n  59 => 59,\n  60 => 60,\n  61 => 61,\n  62 => 62,\n  63 => 63,\n  64 => 64,\n  65 => 65,\n  66 => 66,\n  67 => 67,\n  68 => 68,\n  69 => 69,\n  70 => 70,\n  71 => 71,\n  72 => 72,\n  73 => 73,\n  74 => 74,\n  75 => 75,\n  76 => 76,\n  77 => 77,\n  78 => 78,\n  79 => 79,\n  80 => 80,\n  81 => 81,\n  82 => 82,\n  83 => 83,\n  84 => 84,\n  85 => 85,\n  86 => 86,\n  87 => 87,\n  88 => 88,\n  89 => 89,\n  90 => 90,\n  91 => 91,\n  92 => 92,\n  93 => 93,\n  94 => 94,\n  95 => 95,\n  96 => 96,\n  97 => 97,\n  98 => 98,\n  99 => 99,\n  ... 2 more items\n}"
    );
}

#[test]
fn map_subclass() {
    assert_eq!(
        inspect_js("(() => { class Foo extends Map {} return new Foo([[1, 2]]); })()"),
        "Foo(1) [Map] { 1 => 2 }"
    );
}

#[test]
fn map_null_prototype() {
    assert_eq!(
        inspect_js("Object.setPrototypeOf(new Map([[1, 2]]), null)"),
        "[Map(1): null prototype] { 1 => 2 }"
    );
}

#[test]
fn map_with_extra_key() {
    assert_eq!(
        inspect_js("Object.assign(new Map([[1, 2]]), { extra: true })"),
        "Map(1) { 1 => 2, extra: true }"
    );
}

#[test]
fn set_with_one_item() {
    assert_eq!(inspect_js("new Set([1])"), "Set(1) { 1 }");
}

#[test]
fn set_empty() {
    assert_eq!(inspect_js("new Set()"), "Set(0) {}");
}

#[test]
fn set_of_strings() {
    assert_eq!(inspect_js("new Set(['a', 'b'])"), "Set(2) { 'a', 'b' }");
}

#[test]
fn set_more_than_100_items() {
    assert_eq!(
        inspect_js("new Set(Array.from({ length: 101 }, (_, i) => i))"),
        "Set(101) {\n  0,\n  1,\n  2,\n  3,\n  4,\n  5,\n  6,\n  7,\n  8,\n  9,\n  10,\n  11,\n  12,\n  13,\n  14,\n  15,\n  16,\n  17,\n  18,\n  19,\n  20,\n  21,\n  22,\n  23,\n  24,\n  25,\n  26,\n  27,\n  28,\n  29,\n  30,\n  31,\n  32,\n  33,\n  34,\n  35,\n  36,\n  37,\n  38,\n  39,\n  40,\n  41,\n  42,\n  43,\n  44,\n  45,\n  46,\n  47,\n  48,\n  49,\n  50,\n  51,\n  52,\n  53,\n  54,\n  55,\n  56,\n  57,\n  58,\n  59,\n  60,\n  61,\n  62,\n  63,\n  64,\n  65,\n  66,\n  67,\n  68,\n  69,\n  70,\n  71,\n  72,\n  73,\n  74,\n  75,\n  76,\n  77,\n  78,\n  79,\n  80,\n  81,\n  82,\n  83,\n  84,\n  85,\n  86,\n  87,\n  88,\n  89,\n  90,\n  91,\n  92,\n  93,\n  94,\n  95,\n  96,\n  97,\n  98,\n  99,\n  ... 1 more item\n}"
    );
}

#[test]
fn set_nested_beyond_depth() {
    assert_eq!(
        inspect_js("({ a: { b: { s: new Set([1]), e: new Set() } } })"),
        "{ a: { b: { s: [Set], e: Set(0) {} } } }"
    );
}

#[test]
fn weak_map_and_weak_set() {
    assert_eq!(
        inspect_js("[new WeakMap(), new WeakSet()]"),
        "[ WeakMap { <items unknown> }, WeakSet { <items unknown> } ]"
    );
}

#[test]
fn date_iso_string() {
    assert_eq!(inspect_js("new Date(0)"), "1970-01-01T00:00:00.000Z");
}

#[test]
fn date_with_milliseconds() {
    assert_eq!(
        inspect_js("new Date(Date.UTC(2024, 1, 29, 13, 5, 9, 45))"),
        "2024-02-29T13:05:09.045Z"
    );
}

#[test]
fn date_negative_year() {
    assert_eq!(
        inspect_js("new Date(-62198755200000 - 86400000 * 400)"),
        "-000003-11-27T00:00:00.000Z"
    );
}

#[test]
fn date_far_future() {
    assert_eq!(
        inspect_js("new Date(8.64e15)"),
        "+275760-09-13T00:00:00.000Z"
    );
}

#[test]
fn date_invalid() {
    assert_eq!(inspect_js("new Date(NaN)"), "Invalid Date");
}

#[test]
fn date_with_props() {
    assert_eq!(
        inspect_js("Object.assign(new Date(0), { a: 1 })"),
        "1970-01-01T00:00:00.000Z { a: 1 }"
    );
}

#[test]
fn date_subclass() {
    assert_eq!(
        inspect_js("(() => { class D extends Date {} return new D(0); })()"),
        "D 1970-01-01T00:00:00.000Z"
    );
}

#[test]
fn regexp_with_flags() {
    assert_eq!(inspect_js("/a+/gi"), "/a+/gi");
}

#[test]
fn regexp_all_flags() {
    assert_eq!(inspect_js("/x/dgimsy"), "/x/dgimsy");
}

#[test]
fn regexp_escaped_slash() {
    assert_eq!(inspect_js("new RegExp('a/b')"), "/a\\/b/");
}

#[test]
fn regexp_empty() {
    assert_eq!(inspect_js("new RegExp('')"), "/(?:)/");
}

#[test]
fn regexp_with_props() {
    assert_eq!(inspect_js("Object.assign(/a/, { x: 1 })"), "/a/ { x: 1 }");
}

#[test]
fn boxed_number() {
    assert_eq!(inspect_js("new Number(3)"), "[Number: 3]");
}

#[test]
fn boxed_negative_zero() {
    assert_eq!(inspect_js("new Number(-0)"), "[Number: -0]");
}

#[test]
fn boxed_string() {
    assert_eq!(inspect_js("new String('x')"), "[String: 'x']");
}

#[test]
fn boxed_string_with_prop() {
    assert_eq!(
        inspect_js("Object.assign(new String('ab'), { x: 1 })"),
        "[String: 'ab'] { x: 1 }"
    );
}

#[test]
fn boxed_boolean() {
    assert_eq!(inspect_js("new Boolean(false)"), "[Boolean: false]");
}

#[test]
fn boxed_bigint() {
    assert_eq!(inspect_js("Object(1n)"), "[BigInt: 1n]");
}

#[test]
fn boxed_symbol() {
    assert_eq!(inspect_js("Object(Symbol('x'))"), "[Symbol: Symbol(x)]");
}

#[test]
fn promise_resolved() {
    assert_eq!(inspect_js("Promise.resolve(1)"), "Promise { 1 }");
}

#[test]
fn promise_pending() {
    assert_eq!(inspect_js("new Promise(() => {})"), "Promise { <pending> }");
}

#[test]
fn promise_rejected() {
    assert_eq!(
        inspect_js("Promise.reject(42)"),
        "Promise { <rejected> 42 }"
    );
}

#[test]
fn promise_resolved_with_object() {
    assert_eq!(
        inspect_js("Promise.resolve({ a: [1, 2] })"),
        "Promise { { a: [ 1, 2 ] } }"
    );
}

#[test]
fn promise_with_extra_key() {
    assert_eq!(
        inspect_js("Object.assign(Promise.resolve(1), { x: 2 })"),
        "Promise { 1, x: 2 }"
    );
}

#[test]
fn typed_array_uint8() {
    assert_eq!(
        inspect_js("new Uint8Array([1, 2, 3])"),
        "Uint8Array(3) [ 1, 2, 3 ]"
    );
}

#[test]
fn typed_array_empty() {
    assert_eq!(inspect_js("new Uint8Array(0)"), "Uint8Array(0) []");
}

#[test]
fn typed_array_float64_specials() {
    assert_eq!(
        inspect_js("new Float64Array([1.5, -0, NaN, Infinity])"),
        "Float64Array(4) [ 1.5, -0, NaN, Infinity ]"
    );
}

#[test]
fn typed_array_float32() {
    assert_eq!(
        inspect_js("new Float32Array([0.1, 2.5])"),
        "Float32Array(2) [ 0.10000000149011612, 2.5 ]"
    );
}

#[test]
fn typed_array_signed_ints() {
    assert_eq!(
        inspect_js("[new Int8Array([-1, 127]), new Int16Array([-300]), new Int32Array([-70000]), new Uint32Array([4294967295])]"),
        "[\n  Int8Array(2) [ -1, 127 ],\n  Int16Array(1) [ -300 ],\n  Int32Array(1) [ -70000 ],\n  Uint32Array(1) [ 4294967295 ]\n]"
    );
}

#[test]
fn typed_array_bigint() {
    assert_eq!(
        inspect_js("[new BigInt64Array([1n, -2n]), new BigUint64Array([18446744073709551615n])]"),
        "[\n  BigInt64Array(2) [ 1n, -2n ],\n  BigUint64Array(1) [ 18446744073709551615n ]\n]"
    );
}

#[test]
fn typed_array_uint8_clamped() {
    assert_eq!(
        inspect_js("new Uint8ClampedArray([300, -5])"),
        "Uint8ClampedArray(2) [ 255, 0 ]"
    );
}

#[test]
fn typed_array_more_than_100_items_grouped() {
    assert_eq!(
        inspect_js("new Uint8Array(200).map((_, i) => i)"),
        "Uint8Array(200) [\n   0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11,\n  12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,\n  24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n  36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,\n  48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,\n  60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n  72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83,\n  84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,\n  96, 97, 98, 99,\n  ... 100 more items\n]"
    );
}

#[test]
fn typed_array_view_offset() {
    assert_eq!(
        inspect_js("new Uint16Array(new Uint8Array([1, 0, 2, 0, 3, 0]).buffer, 2, 2)"),
        "Uint16Array(2) [ 2, 3 ]"
    );
}

#[test]
fn typed_array_extra_key() {
    assert_eq!(
        inspect_js("Object.assign(new Uint8Array(2), { x: 1 })"),
        "Uint8Array(2) [ 0, 0, x: 1 ]"
    );
}

#[test]
fn typed_array_subclass() {
    assert_eq!(
        inspect_js("(() => { class Bytes extends Uint8Array {} return new Bytes(2); })()"),
        "Bytes(2) [Uint8Array] [ 0, 0 ]"
    );
}

#[test]
fn array_buffer() {
    assert_eq!(
        inspect_js("new Uint8Array([1, 2]).buffer"),
        "ArrayBuffer { [Uint8Contents]: <01 02>, byteLength: 2 }"
    );
}

#[test]
fn array_buffer_empty() {
    assert_eq!(
        inspect_js("new ArrayBuffer(0)"),
        "ArrayBuffer { [Uint8Contents]: <>, byteLength: 0 }"
    );
}

#[test]
fn array_buffer_more_than_100_bytes() {
    assert_eq!(
        inspect_js("new Uint8Array(120).fill(255).buffer"),
        "ArrayBuffer {\n  [Uint8Contents]: <ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ... 20 more bytes>,\n  byteLength: 120\n}"
    );
}

#[test]
fn data_view() {
    assert_eq!(
        inspect_js("new DataView(new ArrayBuffer(2))"),
        "DataView {\n  byteLength: 2,\n  byteOffset: 0,\n  buffer: ArrayBuffer { [Uint8Contents]: <00 00>, byteLength: 2 }\n}"
    );
}

#[test]
fn error_without_stack_is_bracketed() {
    assert_eq!(
        inspect_js("(() => { const e = new Error('x'); e.stack = ''; return e; })()"),
        "[Error: x]"
    );
}

#[test]
fn error_nested_without_stack_is_bracketed() {
    assert_eq!(
        inspect_js("(() => { const e = new Error('x'); e.stack = ''; return { e }; })()"),
        "{ e: [Error: x] }"
    );
}

#[test]
fn error_without_message() {
    assert_eq!(
        inspect_js("(() => { const e = new Error(); e.stack = ''; return e; })()"),
        "[Error]"
    );
}

#[test]
fn error_type_error() {
    assert_eq!(
        inspect_js("(() => { const e = new TypeError('t'); e.stack = ''; return e; })()"),
        "[TypeError: t]"
    );
}

#[test]
fn error_own_props_appended() {
    assert_eq!(
        inspect_js(
            "(() => { const e = new Error('x'); e.stack = ''; e.code = 'E'; return { e }; })()"
        ),
        "{ e: [Error: x] { code: 'E' } }"
    );
}

#[test]
fn error_subclass_shows_constructor() {
    assert_eq!(
        inspect_js("(() => { class MyErr extends Error {} const e = new MyErr('m'); e.stack = ''; return e; })()"),
        "[MyErr [Error]: m]"
    );
}

#[test]
fn error_name_set_in_constructor() {
    assert_eq!(
        inspect_js("(() => { class ValidationError extends Error { constructor(m) { super(m); this.name = 'ValidationError'; } } const e = new ValidationError('bad'); e.stack = ''; return e; })()"),
        "[ValidationError: bad]"
    );
}

#[test]
fn error_with_cause() {
    assert_eq!(
        inspect_js(
            "(() => { const e = new Error('x', { cause: 'c' }); e.stack = ''; return e; })()"
        ),
        "[Error: x] { [cause]: 'c' }"
    );
}

#[test]
fn error_aggregate() {
    assert_eq!(
        inspect_js("(() => { const e = new AggregateError([1], 'm'); e.stack = ''; return e; })()"),
        "[AggregateError: m] { [errors]: [ 1 ] }"
    );
}

#[test]
fn error_custom_stack_string() {
    assert_eq!(
        inspect_js("(() => { const e = new Error('x'); e.stack = 'custom'; return e; })()"),
        "[custom]"
    );
}

#[test]
fn error_v8_style_stack_is_indented() {
    assert_eq!(
        inspect_js("(() => { const e = new Error('x'); e.stack = 'Error: x\\n    at foo (a.js:1:1)'; return { a: e }; })()"),
        "{\n  a: Error: x\n      at foo (a.js:1:1)\n}"
    );
}

#[test]
fn error_name_property_shown_when_not_in_stack() {
    assert_eq!(
        inspect_js("(() => { const e = new Error('x'); e.stack = 'Error: x'; e.name = 'Foo'; return e; })()"),
        "[Error: x] { name: 'Foo' }"
    );
}

#[test]
fn proxy_shows_target() {
    assert_eq!(inspect_js("new Proxy([1, 2], {})"), "[ 1, 2 ]");
}

#[test]
fn proxy_revoked() {
    assert_eq!(
        inspect_js("(() => { const p = Proxy.revocable({}, {}); p.revoke(); return p.proxy; })()"),
        "<Revoked Proxy>"
    );
}

#[test]
fn proxy_traps_are_not_run() {
    assert_eq!(
        inspect_js("({ a: new Proxy({ b: 1 }, { get() { throw 1; }, ownKeys() { throw 1; }, getOwnPropertyDescriptor() { throw 1; }, getPrototypeOf() { throw 1; } }) })"),
        "{ a: { b: 1 } }"
    );
}

#[test]
fn proxy_of_function() {
    assert_eq!(
        inspect_js("new Proxy(function f() {}, {})"),
        "[Function: f]"
    );
}

#[test]
fn hostile_huge_dense_array_is_cut_at_100() {
    assert_eq!(
        inspect_js("new Array(1e6).fill(0)"),
        "[\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0,\n  ... 999900 more items\n]"
    );
}

#[test]
fn hostile_huge_typed_array_is_cut_at_100() {
    assert_eq!(
        inspect_js("new Float64Array(1e7)"),
        "Float64Array(10000000) [\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0,\n  ... 9999900 more items\n]"
    );
}

#[test]
fn hostile_huge_array_buffer_is_cut_at_100_bytes() {
    assert_eq!(
        inspect_js("new ArrayBuffer(1e7)"),
        "ArrayBuffer {\n  [Uint8Contents]: <00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 ... 9999900 more bytes>,\n  byteLength: 10000000\n}"
    );
}

#[test]
fn hostile_deep_nesting_stops_at_depth() {
    assert_eq!(
        inspect_js(
            "(() => { let o = {}; for (let i = 0; i < 100000; i++) o = { a: o }; return o; })()"
        ),
        "{ a: { a: { a: [Object] } } }"
    );
}

#[test]
fn hostile_long_prototype_chain() {
    assert_eq!(
        inspect_js("(() => { let o = {}; for (let i = 0; i < 500; i++) o = Object.create(o); o.x = 1; return o; })()"),
        "{ x: 1 }"
    );
}

#[test]
fn hostile_huge_set_is_cut_at_100() {
    assert_eq!(
        inspect_js("new Set(Array.from({ length: 100000 }, (_, i) => i))"),
        "Set(100000) {\n  0,\n  1,\n  2,\n  3,\n  4,\n  5,\n  6,\n  7,\n  8,\n  9,\n  10,\n  11,\n  12,\n  13,\n  14,\n  15,\n  16,\n  17,\n  18,\n  19,\n  20,\n  21,\n  22,\n  23,\n  24,\n  25,\n  26,\n  27,\n  28,\n  29,\n  30,\n  31,\n  32,\n  33,\n  34,\n  35,\n  36,\n  37,\n  38,\n  39,\n  40,\n  41,\n  42,\n  43,\n  44,\n  45,\n  46,\n  47,\n  48,\n  49,\n  50,\n  51,\n  52,\n  53,\n  54,\n  55,\n  56,\n  57,\n  58,\n  59,\n  60,\n  61,\n  62,\n  63,\n  64,\n  65,\n  66,\n  67,\n  68,\n  69,\n  70,\n  71,\n  72,\n  73,\n  74,\n  75,\n  76,\n  77,\n  78,\n  79,\n  80,\n  81,\n  82,\n  83,\n  84,\n  85,\n  86,\n  87,\n  88,\n  89,\n  90,\n  91,\n  92,\n  93,\n  94,\n  95,\n  96,\n  97,\n  98,\n  99,\n  ... 99900 more items\n}"
    );
}

#[test]
fn format_single_string_is_raw() {
    assert_eq!(format_js("['hello\\nworld']"), "hello\nworld");
}

#[test]
fn format_strings_are_joined_raw() {
    assert_eq!(
        format_js("['a', 'b', 1, { x: 1 }, 'c d']"),
        "a b 1 { x: 1 } c d"
    );
}

#[test]
fn format_non_string_first_argument() {
    assert_eq!(format_js("[1, 'a', [2]]"), "1 a [ 2 ]");
}

#[test]
fn format_no_arguments() {
    assert_eq!(format_js("[]"), "");
}

#[test]
fn format_percent_s_string() {
    assert_eq!(format_js("['%s!', 'str']"), "str!");
}

#[test]
fn format_percent_s_numbers() {
    assert_eq!(
        format_js("['%s %s %s %s', 42, -0, 1.5e21, 1n]"),
        "42 -0 1.5e+21 1n"
    );
}

#[test]
fn format_percent_s_primitives() {
    assert_eq!(
        format_js("['%s %s %s %s', null, undefined, true, Symbol('s')]"),
        "null undefined true Symbol(s)"
    );
}

#[test]
fn format_percent_s_object_uses_depth_zero() {
    assert_eq!(
        format_js("['%s', { a: { b: 1 }, c: [1] }]"),
        "{ a: [Object], c: [Array] }"
    );
}

#[test]
fn format_percent_s_array() {
    assert_eq!(format_js("['%s', [1, [2, [3]]]]"), "[ 1, [Array] ]");
}

#[test]
fn format_percent_s_class_instance() {
    assert_eq!(
        format_js("['%s', new (class Foo { constructor() { this.a = 1; } })()]"),
        "Foo { a: 1 }"
    );
}

#[test]
fn format_percent_s_own_to_string_is_used() {
    assert_eq!(
        format_js("['%s', new (class Foo { toString() { return 'custom'; } })()]"),
        "custom"
    );
}

#[test]
fn format_percent_s_date() {
    assert_eq!(format_js("['%s', new Date(0)]"), "1970-01-01T00:00:00.000Z");
}

#[test]
fn format_percent_s_function_prints_source() {
    assert_eq!(
        format_js("['%s', function f() { return 1; }]"),
        "function f() { return 1; }"
    );
}

#[test]
fn format_percent_d() {
    assert_eq!(
        format_js("['%d %d %d %d %d', '42', 1.5, -0, 5n, '0x10']"),
        "42 1.5 -0 5n 16"
    );
}

#[test]
fn format_percent_d_non_numbers() {
    assert_eq!(
        format_js("['%d %d %d %d', {}, 'abc', null, Symbol('s')]"),
        "NaN NaN 0 NaN"
    );
}

#[test]
fn format_percent_i() {
    assert_eq!(
        format_js("['%i %i %i %i %i', '42.9px', 1e21, -0, '0x1F', 7n]"),
        "42 1 0 31 7n"
    );
}

#[test]
fn format_percent_i_non_numbers() {
    assert_eq!(format_js("['%i %i %i', 'abc', null, {}]"), "NaN NaN NaN");
}

#[test]
fn format_percent_f() {
    assert_eq!(
        format_js("['%f %f %f %f %f', '3.25abc', '-0', '.5', '1e3x', 'Infinityx']"),
        "3.25 -0 0.5 1000 Infinity"
    );
}

#[test]
fn format_percent_f_non_numbers() {
    assert_eq!(format_js("['%f %f', 'abc', Symbol('s')]"), "NaN NaN");
}

#[test]
fn format_percent_j() {
    assert_eq!(
        format_js("['%j', { a: [1, 'x'], b: undefined }]"),
        "{\"a\":[1,\"x\"]}"
    );
}

#[test]
fn format_percent_j_circular() {
    assert_eq!(
        format_js("(() => { const o = {}; o.o = o; return ['%j', o]; })()"),
        "[Circular]"
    );
}

#[test]
fn format_percent_j_undefined() {
    assert_eq!(format_js("['%j', undefined]"), "undefined");
}

#[test]
fn format_percent_j_calls_to_json() {
    assert_eq!(format_js("['%j', { toJSON() { return 'J'; } }]"), "\"J\"");
}

#[test]
fn format_percent_upper_o() {
    assert_eq!(
        format_js("['%O', { a: { b: { c: { d: 1 } } } }]"),
        "{ a: { b: { c: [Object] } } }"
    );
}

#[test]
fn format_percent_lower_o_shows_hidden() {
    assert_eq!(format_js("['%o', [1, 2]]"), "[ 1, 2, [length]: 2 ]");
}

#[test]
fn format_percent_lower_o_depth_four() {
    assert_eq!(
        format_js("['%o', { a: { b: { c: { d: { e: { f: 1 } } } } } }]"),
        "{\n  a: {\n    b: { c: { d: { e: [Object] } } }\n  }\n}"
    );
}

#[test]
fn format_percent_lower_o_shows_proxy() {
    assert_eq!(
        format_js("['%o', new Proxy({ a: 1 }, {})]"),
        "Proxy [ { a: 1 }, {} ]"
    );
}

#[test]
fn format_percent_c_is_consumed() {
    assert_eq!(format_js("['%cstyled', 'color: red']"), "styled");
}

#[test]
fn format_percent_percent() {
    assert_eq!(format_js("['100%% sure', 1]"), "100% sure 1");
}

#[test]
fn format_percent_percent_without_args() {
    assert_eq!(format_js("['100%% sure']"), "100%% sure");
}

#[test]
fn format_missing_args_leave_specifier() {
    assert_eq!(format_js("['%s and %s', 'a']"), "a and %s");
}

#[test]
fn format_unknown_specifier_is_kept() {
    assert_eq!(format_js("['%x %s', 1]"), "%x 1");
}

#[test]
fn format_extra_args_appended() {
    assert_eq!(
        format_js("['%s:%s', 'a', 'b', 'c', { d: 1 }]"),
        "a:b c { d: 1 }"
    );
}

#[test]
fn format_trailing_percent() {
    assert_eq!(format_js("['50%', 1]"), "50% 1");
}

#[test]
fn format_specifier_at_end() {
    assert_eq!(format_js("['a%s', 'b']"), "ab");
}

#[test]
fn format_object_then_string() {
    assert_eq!(format_js("[{ a: 1 }, 'str']"), "{ a: 1 } str");
}
