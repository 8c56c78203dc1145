//! Strings, numbers, BigInts, symbols, functions and arrays, as Node 20 prints them.
//!
//! Spec: §7.3 (console capture).

use super::*;

#[test]
fn number_to_string_matches_ecmascript() {
    let cases = [
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (-1.5e-9, "-1.5e-9"),
        (0.1, "0.1"),
        (123456.789, "123456.789"),
        (f64::MAX, "1.7976931348623157e+308"),
        (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
        (4.35, "4.35"),
        (-0.0, "0"),
    ];
    for (n, expected) in cases {
        assert_eq!(number_to_js_string(n), expected, "{n:e}");
    }
}

// The expected strings below were produced by Node 20's `util.inspect(value)` and
// `util.format(...args)` for the same source.

#[test]
fn string_uses_single_quotes() {
    assert_eq!(inspect_js("'hello'"), "'hello'");
}

#[test]
fn string_with_single_quote_uses_double_quotes() {
    assert_eq!(inspect_js("\"it's\""), "\"it's\"");
}

#[test]
fn string_with_single_and_double_quotes_uses_backticks() {
    assert_eq!(inspect_js("'it\\'s \"x\"'"), "`it's \"x\"`");
}

#[test]
fn string_with_all_quote_kinds_escapes_single_quotes() {
    assert_eq!(inspect_js("'a\"b\\'c`d'"), "'a\"b\\'c`d'");
}

#[test]
fn string_with_dollar_brace_avoids_backticks() {
    assert_eq!(inspect_js("'a\"\\'${x}'"), "'a\"\\'${x}'");
}

#[test]
fn string_control_chars_are_escaped() {
    assert_eq!(
        inspect_js("'a\\nb\\tc\\x1B\\x00\\x7f\\x9f\\\\ \\u00a0'"),
        "'a\\nb\\tc\\x1B\\x00\\x7F\\x9F\\\\  '"
    );
}

#[test]
fn string_lone_surrogate_is_escaped() {
    assert_eq!(inspect_js("'\\ud800x\\udc00'"), "'\\ud800x\\udc00'");
}

#[test]
fn string_astral_char_is_kept() {
    assert_eq!(inspect_js("'\\ud83d\\ude00 ü'"), "'😀 ü'");
}

#[test]
fn string_empty() {
    assert_eq!(inspect_js("''"), "''");
}

#[test]
fn string_long_multiline_is_split_on_newlines() {
    assert_eq!(
        inspect_js("'line one is here\\nline two is also here and it is long enough to exceed the limit\\nend'"),
        "'line one is here\\n' +\n  'line two is also here and it is long enough to exceed the limit\\n' +\n  'end'"
    );
}

#[test]
fn string_long_multiline_nested_is_indented() {
    assert_eq!(
        inspect_js("({ key: 'first line of a long value\\nsecond line of a long value that is long enough\\n' })"),
        "{\n  key: 'first line of a long value\\n' +\n    'second line of a long value that is long enough\\n'\n}"
    );
}

#[test]
fn string_long_single_line_is_not_split() {
    assert_eq!(
        inspect_js("'x'.repeat(90)"),
        "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'"
    );
}

#[test]
fn number_negative_zero() {
    assert_eq!(inspect_js("-0"), "-0");
}

#[test]
fn number_integers_and_decimals() {
    assert_eq!(
        inspect_js("[0, 1, -1, 1.5, 123.456, 0.1 + 0.2, 2 ** 53, -(2 ** 31)]"),
        "[\n  0,\n  1,\n  -1,\n  1.5,\n  123.456,\n  0.30000000000000004,\n  9007199254740992,\n  -2147483648\n]"
    );
}

#[test]
fn number_exponent_forms() {
    assert_eq!(
        inspect_js("[1e21, 1e-7, 1.5e-10, 5e-324, 1.7976931348623157e308, 123e20, 0.000001]"),
        "[\n  1e+21,\n  1e-7,\n  1.5e-10,\n  5e-324,\n  1.7976931348623157e+308,\n  1.23e+22,\n  0.000001\n]"
    );
}

#[test]
fn number_nan_and_infinities() {
    assert_eq!(
        inspect_js("[NaN, Infinity, -Infinity]"),
        "[ NaN, Infinity, -Infinity ]"
    );
}

#[test]
fn bigint_small() {
    assert_eq!(inspect_js("1n"), "1n");
}

#[test]
fn bigint_large_negative() {
    assert_eq!(
        inspect_js("-123456789012345678901234567890n"),
        "-123456789012345678901234567890n"
    );
}

#[test]
fn booleans_null_undefined() {
    assert_eq!(
        inspect_js("[true, false, null, undefined]"),
        "[ true, false, null, undefined ]"
    );
}

#[test]
fn symbol_with_description() {
    assert_eq!(inspect_js("Symbol('desc')"), "Symbol(desc)");
}

#[test]
fn symbol_without_description() {
    assert_eq!(inspect_js("Symbol()"), "Symbol()");
}

#[test]
fn symbol_well_known() {
    assert_eq!(inspect_js("Symbol.iterator"), "Symbol(Symbol.iterator)");
}

#[test]
fn symbol_description_is_not_escaped_at_top_level() {
    assert_eq!(inspect_js("Symbol('a\\nb')"), "Symbol(a\nb)");
}

#[test]
fn function_named() {
    assert_eq!(inspect_js("function foo() {}"), "[Function: foo]");
}

#[test]
fn function_anonymous() {
    assert_eq!(inspect_js("(0, function () {})"), "[Function (anonymous)]");
}

#[test]
fn function_arrow_named_by_binding() {
    assert_eq!(
        inspect_js("(() => { const f = () => 1; return f; })()"),
        "[Function: f]"
    );
}

#[test]
fn function_async() {
    assert_eq!(inspect_js("async function f() {}"), "[AsyncFunction: f]");
}

#[test]
fn function_async_arrow_anonymous() {
    assert_eq!(
        inspect_js("(0, async () => {})"),
        "[AsyncFunction (anonymous)]"
    );
}

#[test]
fn function_generator() {
    assert_eq!(inspect_js("function* g() {}"), "[GeneratorFunction: g]");
}

#[test]
fn function_async_generator() {
    assert_eq!(
        inspect_js("async function* g() {}"),
        "[AsyncGeneratorFunction: g]"
    );
}

#[test]
fn function_class() {
    assert_eq!(inspect_js("class A {}"), "[class A]");
}

#[test]
fn function_class_anonymous() {
    assert_eq!(inspect_js("(0, class {})"), "[class (anonymous)]");
}

#[test]
fn function_class_extends() {
    assert_eq!(
        inspect_js("(() => { class A {} return class B extends A {}; })()"),
        "[class B extends A]"
    );
}

#[test]
fn function_class_with_static_field() {
    assert_eq!(inspect_js("class A { static x = 1 }"), "[class A] { x: 1 }");
}

#[test]
fn function_with_own_props() {
    assert_eq!(
        inspect_js("Object.assign(function f() {}, { a: 1 })"),
        "[Function: f] { a: 1 }"
    );
}

#[test]
fn function_bound() {
    assert_eq!(
        inspect_js("(function f() {}).bind(null)"),
        "[Function: bound f]"
    );
}

#[test]
fn function_builtin() {
    assert_eq!(
        inspect_js("[Math.max, Map, parseInt]"),
        "[ [Function: max], [Function: Map], [Function: parseInt] ]"
    );
}

#[test]
fn function_null_prototype() {
    assert_eq!(
        inspect_js(
            "(() => { const f = function () {}; Object.setPrototypeOf(f, null); return f; })()"
        ),
        "[Function (null prototype): f]"
    );
}

#[test]
fn function_method_shorthand() {
    assert_eq!(inspect_js("({ m() {} }).m"), "[Function: m]");
}

#[test]
fn array_simple() {
    assert_eq!(inspect_js("[1, 2, 3]"), "[ 1, 2, 3 ]");
}

#[test]
fn array_empty() {
    assert_eq!(inspect_js("[]"), "[]");
}

#[test]
fn array_leading_hole() {
    assert_eq!(inspect_js("[, 1]"), "[ <1 empty item>, 1 ]");
}

#[test]
fn array_multiple_holes() {
    assert_eq!(
        inspect_js("[1, , , 2, , ]"),
        "[ 1, <2 empty items>, 2, <1 empty item> ]"
    );
}

#[test]
fn array_only_holes() {
    assert_eq!(inspect_js("new Array(5)"), "[ <5 empty items> ]");
}

#[test]
fn array_sparse_huge_length() {
    assert_eq!(
        inspect_js("(() => { const a = []; a[5] = 'x'; a.length = 1e9; return a; })()"),
        "[ <5 empty items>, 'x', <999999994 empty items> ]"
    );
}

#[test]
fn array_more_than_100_items() {
    assert_eq!(
        inspect_js("Array.from({ length: 101 }, (_, i) => i)"),
        "[\n   0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11,\n  12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,\n  24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n  36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,\n  48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,\n  60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n  72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83,\n  84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,\n  96, 97, 98, 99,\n  ... 1 more item\n]"
    );
}

#[test]
fn array_more_than_100_items_plural() {
    assert_eq!(
        inspect_js("Array.from({ length: 150 }, (_, i) => i * 3)"),
        "[\n    0,   3,   6,   9,  12,  15,  18,  21,  24,  27,  30,  33,\n   36,  39,  42,  45,  48,  51,  54,  57,  60,  63,  66,  69,\n   72,  75,  78,  81,  84,  87,  90,  93,  96,  99, 102, 105,\n  108, 111, 114, 117, 120, 123, 126, 129, 132, 135, 138, 141,\n  144, 147, 150, 153, 156, 159, 162, 165, 168, 171, 174, 177,\n  180, 183, 186, 189, 192, 195, 198, 201, 204, 207, 210, 213,\n  216, 219, 222, 225, 228, 231, 234, 237, 240, 243, 246, 249,\n  252, 255, 258, 261, 264, 267, 270, 273, 276, 279, 282, 285,\n  288, 291, 294, 297,\n  ... 50 more items\n]"
    );
}

#[test]
fn array_extra_keys() {
    assert_eq!(inspect_js("Object.assign([1], { a: 2 })"), "[ 1, a: 2 ]");
}

#[test]
fn array_extra_symbol_and_string_keys() {
    assert_eq!(
        inspect_js("(() => { const a = [1, 2]; a[Symbol('q')] = 3; a.x = 4; return a; })()"),
        "[ 1, 2, x: 4, [Symbol(q)]: 3 ]"
    );
}

#[test]
fn array_grouping_of_30_numbers() {
    assert_eq!(
        inspect_js("Array.from({ length: 30 }, (_, i) => i)"),
        "[\n   0,  1,  2,  3,  4,  5,  6,  7,  8,\n   9, 10, 11, 12, 13, 14, 15, 16, 17,\n  18, 19, 20, 21, 22, 23, 24, 25, 26,\n  27, 28, 29\n]"
    );
}

#[test]
fn array_grouping_of_short_strings() {
    assert_eq!(
        inspect_js("Array.from({ length: 26 }, (_, i) => String.fromCharCode(97 + i).repeat(i % 4 + 1))"),
        "[\n  'a', 'bb', 'ccc', 'dddd',\n  'e', 'ff', 'ggg', 'hhhh',\n  'i', 'jj', 'kkk', 'llll',\n  'm', 'nn', 'ooo', 'pppp',\n  'q', 'rr', 'sss', 'tttt',\n  'u', 'vv', 'www', 'xxxx',\n  'y', 'zz'\n]"
    );
}

#[test]
fn array_grouping_of_mixed_values() {
    assert_eq!(
        inspect_js("[1, 'two', 3, 'four', 5, 'six', 7, null, undefined, true]"),
        "[\n  1,         'two',\n  3,         'four',\n  5,         'six',\n  7,         null,\n  undefined, true\n]"
    );
}

#[test]
fn array_grouping_numbers_right_aligned() {
    assert_eq!(
        inspect_js("[1, 22, 333, 4444, 55555, 666666, 7, 88, 999]"),
        "[\n     1,    22,    333,\n  4444, 55555, 666666,\n     7,    88,    999\n]"
    );
}

#[test]
fn array_seven_long_strings_not_grouped() {
    assert_eq!(
        inspect_js("['aaaaaaaaaaaaaaaaaaaaaaaaa', 'b', 'c', 'd', 'e', 'f', 'g']"),
        "[ 'aaaaaaaaaaaaaaaaaaaaaaaaa', 'b', 'c', 'd', 'e', 'f', 'g' ]"
    );
}

#[test]
fn array_nested_beyond_depth() {
    assert_eq!(
        inspect_js("[[[[1]]], [[{ a: 1 }]]]"),
        "[ [ [ [Array] ] ], [ [ [Object] ] ] ]"
    );
}

#[test]
fn array_of_objects_breaks_lines() {
    assert_eq!(
        inspect_js("[{ name: 'alpha', value: 1 }, { name: 'beta', value: 2 }, { name: 'gamma', value: 3 }]"),
        "[\n  { name: 'alpha', value: 1 },\n  { name: 'beta', value: 2 },\n  { name: 'gamma', value: 3 }\n]"
    );
}

#[test]
fn array_subclass() {
    assert_eq!(
        inspect_js("(() => { class Foo extends Array {} return Foo.from([1, 2]); })()"),
        "Foo(2) [ 1, 2 ]"
    );
}

#[test]
fn array_null_prototype() {
    assert_eq!(
        inspect_js("Object.setPrototypeOf([1], null)"),
        "[Array(1): null prototype] [ 1 ]"
    );
}

#[test]
fn array_sparse_then_more_than_100() {
    assert_eq!(
        inspect_js("(() => { const a = Array.from({ length: 120 }, (_, i) => i); delete a[2]; return a; })()"),
        "[\n  0,  1,  <1 empty item>, 3,  4,\n  5,  6,  7,              8,  9,\n  10, 11, 12,             13, 14,\n  15, 16, 17,             18, 19,\n  20, 21, 22,             23, 24,\n  25, 26, 27,             28, 29,\n  30, 31, 32,             33, 34,\n  35, 36, 37,             38, 39,\n  40, 41, 42,             43, 44,\n  45, 46, 47,             48, 49,\n  50, 51, 52,             53, 54,\n  55, 56, 57,             58, 59,\n  60, 61, 62,             63, 64,\n  65, 66, 67,             68, 69,\n  70, 71, 72,             73, 74,\n  75, 76, 77,             78, 79,\n  80, 81, 82,             83, 84,\n  85, 86, 87,             88, 89,\n  90, 91, 92,             93, 94,\n  95, 96, 97,             98, 99,\n  ... 20 more items\n]"
    );
}

#[test]
fn array_accessor_element() {
    assert_eq!(
        inspect_js("Object.defineProperty([1, 2], 0, { get() { throw new Error('x'); } })"),
        "[ [Getter], 2 ]"
    );
}

#[test]
fn arguments_object() {
    assert_eq!(
        inspect_js("(function () { return arguments; })(1, 2)"),
        "[Arguments] { '0': 1, '1': 2 }"
    );
}
