//! The fast RegExp built-ins (QuickJS patches 0610 and 0611): `split` and `replace`
//! with an ordinary RegExp are computed from the regexp's bytecode, without the spec's
//! splitter, result arrays and property reads, and must give exactly what the spec's steps
//! give. Each differential test runs the same cases twice in one run, on a plain RegExp (fast
//! path) and on one that code could observe (spec path: a subclass for `split`, whose species
//! constructor is not %RegExp%; an own `exec` that forwards to the intrinsic for `replace`),
//! and compares results and `lastIndex`; the other tests prove that anything code could
//! observe still takes the spec's path.

use crate::engine::testing::{engine_with, run_on, slowdown, FakeHost};
use crate::engine::*;

fn options() -> Options {
    Options {
        timeout_ms: 20_000 * u64::from(slowdown()),
        max_operations: u64::MAX,
        ..Options::default()
    }
}

/// The output of `code` (a string), which must run without error.
fn output(code: &str) -> String {
    let options = options();
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(&engine, code, &options);
    match report.result {
        Ok(completion) => match completion.output {
            Value::String(text) => text,
            other => panic!("{code}: not a string: {other:?}"),
        },
        Err(error) => panic!("{code}: {error:?} (logs: {})", report.logs.text),
    }
}

/// Subjects with 8-bit and 16-bit characters, surrogate pairs and lone surrogates.
const SUBJECTS: &str = r#"[
  "", " ", "a", "ab", "a b  c\td\n", "  lead and trail  ", "aXbXXc", "xxx", "abcabc",
  "\u{1F600}a\u{1F600}", "\uD83D\uDE00\uD83D", "\uDE00\uD83D\uDE00", "é ü ß", "a\u2028b c",
  "population 513275 in Lyon", "Foo-Bar_baz 42!", "12345678901 x 1234567890"
]"#;

/// Runs `cases` (JS that defines `fast(re, s)` and `spec(re, s)`, each returning a string)
/// for every pattern and subject, and returns the mismatches, or "same" and the count.
fn differential(patterns: &str, cases: &str) -> String {
    output(&format!(
        r#"
        const subjects = {SUBJECTS};
        const patterns = {patterns};
        {cases}
        const mismatches = [];
        let compared = 0;
        for (const [source, flags] of patterns) {{
          for (const s of subjects) {{
            for (const lastIndex of [0, 1, 3, 100, 1.5]) {{
              const a = new RegExp(source, flags);
              const b = new RegExp(source, flags);
              a.lastIndex = lastIndex;
              b.lastIndex = lastIndex;
              const got = fast(a, s);
              const want = spec(b, s);
              compared++;
              if (got !== want) mismatches.push(`/${{source}}/${{flags}} on ${{JSON.stringify(s)}} at ${{lastIndex}}: ${{got}} !== ${{want}}`);
            }}
          }}
        }}
        mismatches.length ? mismatches.slice(0, 20).join("\n") : `same ${{compared}}`
        "#
    ))
}

fn compared(result: &str) -> usize {
    result
        .strip_prefix("same ")
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("the paths differ:\n{result}"))
}

const SPLIT_PATTERNS: &str = r#"[
  ["\\s+", ""], ["(\\s)+", ""], ["\\s*", ""], ["", ""], ["", "u"], ["", "v"], ["x*", ""],
  ["X", "g"], ["(X)|(Y)", ""], ["(?<l>X)", ""], ["\\b", ""], ["$", ""], ["^", "m"], ["a", "y"],
  ["a|", "y"], ["(?<=a)", ""], [".", "u"], ["\\uD83D", "u"], ["\\uD83D", ""], ["[^a-z0-9]", "gi"],
  ["(?:)", "gy"], ["\\d+", "d"], ["\\p{L}", "u"], ["\\s+", "m"], ["(\\d)(\\d)?", ""]
]"#;

#[test]
fn patch_0610_split_gives_what_the_spec_path_gives() {
    let result = differential(
        SPLIT_PATTERNS,
        r#"
        class Spec extends RegExp {}
        const limits = [undefined, 0, 1, 2, 3, -1, 2 ** 32 + 1, 1.5, NaN];
        const fast = (re, s) => JSON.stringify(limits.map((limit) => s.split(re, limit))) + re.lastIndex;
        const spec = (re, s) => {
          const sub = new Spec(re.source, re.flags);
          sub.lastIndex = re.lastIndex;
          return JSON.stringify(limits.map((limit) => s.split(sub, limit))) + sub.lastIndex;
        };
        "#,
    );
    assert_eq!(compared(&result), 25 * 17 * 5);
}

#[test]
fn patch_0610_split_of_a_plain_regexp_keeps_captures_empty_matches_and_surrogate_pairs() {
    assert_eq!(
        output(
            r#"JSON.stringify([
              "a1b22c".split(/(\d)(x)?/),
              "abc".split(/(?:)/),
              "\u{1F600}x".split(/(?:)/u),
              "\u{1F600}x".split(/(?:)/),
              "a  b".split(/ */),
              "ab".split(/a*?/),
              "".split(/x/),
              "".split(/x*/),
              "a,b,c".split(/,/, 2),
            ])"#
        ),
        r#"[["a","1",null,"b","2",null,"","2",null,"c"],["a","b","c"],["😀","x"],["\ud83d","\ude00","x"],["a","b"],["a","b"],[""],[],["a","b"]]"#
    );
}

#[test]
fn patch_0610_split_takes_the_spec_path_when_code_could_observe_it() {
    // Each line is what the spec's steps make visible; the fast path would show none of it.
    assert_eq!(
        output(
            r#"
            const seen = [];
            const exec = RegExp.prototype.exec;
            // The splitter's exec is read from RegExp.prototype at every index tried.
            RegExp.prototype.exec = function (s) { seen.push("exec " + this.lastIndex); return exec.call(this, s); };
            "a b".split(/ /);
            RegExp.prototype.exec = exec;
            // A species constructor.
            class Loud extends RegExp { static get [Symbol.species]() { seen.push("species"); return RegExp; } }
            "a b".split(new Loud(" "));
            // The flags getter and a flag getter it reads.
            const flags = Object.getOwnPropertyDescriptor(RegExp.prototype, "flags");
            Object.defineProperty(RegExp.prototype, "flags", { get() { seen.push("flags"); return flags.get.call(this); }, configurable: true });
            "a b".split(/ /);
            Object.defineProperty(RegExp.prototype, "flags", flags);
            const sticky = Object.getOwnPropertyDescriptor(RegExp.prototype, "sticky");
            Object.defineProperty(RegExp.prototype, "sticky", { get() { seen.push("sticky"); return sticky.get.call(this); }, configurable: true });
            "a b".split(/ /);
            Object.defineProperty(RegExp.prototype, "sticky", sticky);
            // IsRegExp in the RegExp constructor reads Symbol.match.
            const re = / /;
            Object.defineProperty(re, Symbol.match, { get() { seen.push("match"); return undefined; } });
            "a b".split(re);
            // A limit whose valueOf runs after the splitter is made.
            "a b".split(/ /, { valueOf() { seen.push("limit"); RegExp.prototype.exec = function () { seen.push("patched"); return null; }; return 5; } });
            RegExp.prototype.exec = exec;
            // The constructor property: a getter, and a value that is no object.
            const own = / /;
            Object.defineProperty(own, "constructor", { get() { seen.push("constructor"); return RegExp; } });
            "a b".split(own);
            const odd = / /;
            odd.constructor = 1;
            try { "a b".split(odd); } catch (e) { seen.push(e.name); }
            seen.join()
            "#
        ),
        "exec 0,exec 1,exec 2,species,flags,sticky,match,limit,patched,patched,patched,constructor,TypeError"
    );
}

const REPLACE_PATTERNS: &str = r#"[
  ["a", ""], ["a", "g"], ["a", "y"], ["a", "gy"], ["X", "g"], ["(X)|(Y)", "g"],
  ["(?<x>X)|(?<x>b)", "g"], ["(?<first>\\w)(?<rest>\\w*)", "g"], ["x*", "g"], ["", "g"],
  ["", "gu"], ["\\uD83D", "gu"], ["\\uD83D", "g"], [".", "gu"], ["[^a-z0-9]", "g"],
  ["[^a-z0-9]", "gi"], ["\\s+", ""], ["(\\d)(\\d)(\\d)(\\d)(\\d)(\\d)(\\d)(\\d)(\\d)(\\d)(\\d)?", "g"],
  ["$", "gm"], ["(?<=a)", "g"], ["(a)?b", "g"], ["\\p{L}+", "gv"]
]"#;

#[test]
fn patch_0611_replace_gives_what_the_spec_path_gives() {
    let result = differential(
        REPLACE_PATTERNS,
        r#"
        const replacements = ["", "-", "$&", "[$1]", "$2", "$10", "$01", "$11", "$99", "$0",
          "<$<x>>", "<$<first>|$<rest>>", "$<nope>", "$<", "$<>", "$$", "$`", "$'", "$", "a$$$&b",
          "\u{1F600}$&"];
        const run = (re, s) => JSON.stringify(replacements.map((r) => {
          const out = s.replace(re, r);
          return [out, re.lastIndex];
        }));
        const fast = run;
        const spec = (re, s) => {
          // An own exec, forwarding to the intrinsic: the spec path, with the same matches.
          re.exec = function (s) { return RegExp.prototype.exec.call(this, s); };
          return run(re, s);
        };
        "#,
    );
    assert_eq!(compared(&result), 22 * 17 * 5);
}

#[test]
fn patch_0611_replace_of_a_plain_regexp_expands_every_substitution() {
    assert_eq!(
        output(
            r#"JSON.stringify([
              "John Smith".replace(/(?<first>\w+)\s(?<last>\w+)/, "$<last>, $<first> ($2 $1) [$&] $$"),
              "aXbXc".replace(/X/g, "[$`|$']"),
              "Hello, World!".toLowerCase().replace(/[^a-z0-9]/g, ""),
              "\u{1F600}\u{1F600}".replace(/(?:)/gu, "-"),
              "\u{1F600}".replace(/(?:)/g, "-").length,
              "abc".replace(/(?<x>a)|(?<x>c)/g, "<$<x>>"),
              "a1".replace(/(a)(1)/, "$01$02$3$10"),
            ])"#
        ),
        r#"["Smith, John (Smith John) [John Smith] $","a[a|bXc]b[aXb|c]c","helloworld","-😀-😀-",5,"<a>b<c>","a1$3a0"]"#
    );
}

#[test]
fn patch_0611_replace_sets_last_index_as_exec_does() {
    assert_eq!(
        output(
            r#"
            const out = [];
            const g = /a/g; g.lastIndex = 7; "aba".replace(g, "x"); out.push(g.lastIndex);
            const y = /a/y; y.lastIndex = 2; out.push("aba".replace(y, "x"), y.lastIndex);
            y.lastIndex = 1; out.push("aba".replace(y, "x"), y.lastIndex);
            y.lastIndex = 9; out.push("aba".replace(y, "x"), y.lastIndex);
            const plain = /a/; plain.lastIndex = 2.5; out.push("aba".replace(plain, "x"), plain.lastIndex);
            JSON.stringify(out)
            "#
        ),
        r#"[0,"abx",3,"aba",0,"aba",0,"xba",2.5]"#
    );
}

#[test]
fn patch_0611_replace_takes_the_spec_path_when_code_could_observe_it() {
    assert_eq!(
        output(
            r#"
            const seen = [];
            const exec = RegExp.prototype.exec;
            RegExp.prototype.exec = function (s) { seen.push("exec " + this.lastIndex); return exec.call(this, s); };
            "aXbXc".replace(/X/g, "-");
            RegExp.prototype.exec = exec;
            const global = Object.getOwnPropertyDescriptor(RegExp.prototype, "global");
            Object.defineProperty(RegExp.prototype, "global", { get() { seen.push("global"); return global.get.call(this); }, configurable: true });
            "aXb".replace(/X/g, "-");
            Object.defineProperty(RegExp.prototype, "global", global);
            const dotAll = Object.getOwnPropertyDescriptor(RegExp.prototype, "dotAll");
            Object.defineProperty(RegExp.prototype, "dotAll", { get() { seen.push("dotAll"); return dotAll.get.call(this); }, configurable: true });
            "aXb".replace(/X/g, "-");
            Object.defineProperty(RegExp.prototype, "dotAll", dotAll);
            // A lastIndex that is an object: the spec's exec reads it with ToLength.
            const plain = /X/;
            plain.lastIndex = { valueOf() { seen.push("valueOf"); return 0; } };
            "aXb".replace(plain, "-");
            // A lastIndex that cannot be written.
            const frozen = /X/g;
            Object.defineProperty(frozen, "lastIndex", { writable: false });
            try { "aXb".replace(frozen, "-"); } catch (e) { seen.push(e.name); }
            // A subclass that overrides exec.
            class Mine extends RegExp { exec(s) { seen.push("mine"); return super.exec(s); } }
            seen.push("aXb".replace(new Mine("X"), "-"));
            // A function replacement sees each match.
            seen.push("aXb".replace(/X/g, (m, i) => `${m}@${i}`));
            seen.join()
            "#
        ),
        "exec 0,exec 2,exec 4,global,dotAll,valueOf,TypeError,mine,a-b,aX@1b"
    );
}

/// Patterns of every first-element kind the search prefilter reads (a character, a
/// case-insensitive one, classes reaching or not reaching past Latin-1, `^`) and of kinds it
/// leaves to the matcher.
const SEARCH_PATTERNS: &str = r#"[
  ["abc", ""], ["b", ""], ["\u00e9", ""], ["\u4e2d", ""], ["k", "iu"], ["k", "i"], ["s", "iu"],
  ["\u00c9", "i"], ["[a-c]d", ""], ["[^a-c]", ""], ["\\s+", ""], ["[^a-z0-9]", "g"],
  ["[\u00e0-\u00ff]", ""], ["[\u00e0-\u0150]", ""], ["[j-l]", "iu"], ["[a-c]", "i"], ["^a", ""],
  ["^a", "m"], ["a$", "m"], ["\\u{1F600}", "u"], ["[\\u{1F600}-\\u{1F64F}]", "u"],
  ["\\uDE00", "u"], ["\\uDE00", ""], ["\\uD83D", "u"], [".", "u"], ["\\bfoo", ""],
  ["(?<=a)b", ""], ["a*b", ""], ["(a|b)c", ""], ["(a)q|b", ""], ["a{0,2}b", ""],
  ["(?:ab){0,3}c", ""], ["a{2}", ""], ["(a){0,1}b", ""], ["[a-c]", "i"], ["\u00e9", "i"]
]"#;

#[test]
fn patch_0612_a_search_finds_what_sticky_attempts_at_each_index_find() {
    // The spec's leftmost match is the first index, stepping by code points under u, where a
    // sticky match succeeds: sticky regexps do not take the prefilter.
    let result = output(&format!(
        r#"
        const patterns = {SEARCH_PATTERNS};
        const subjects = [
          "", "abc", "xxabcd", "ab cd\tef", "aaaaab", "aaaaab\u4e2d", "b\na", "b\u2028a", "a foo",
          "xab", "ab cb", "xK", "x\u212a", "x\u017f", "xS", "\u00c9\u00e9", "AB\u00ff\u0100",
          "\u{{1F600}}\u{{1F601}}x", "a\uDE00\uD83D", "\uD83D\uDE00\uDE00", "Foo-Bar_baz 42!",
          "b\u0130a", "xyK", "\u0150\u0151",
        ];
        const mismatches = [];
        let compared = 0;
        for (const [source, flags] of patterns) {{
          const unicode = /[uv]/.test(flags);
          for (const s of subjects) {{
            for (const from of [0, 1, 2]) {{
              const search = new RegExp(source, flags.replace("g", "") + "g");
              search.lastIndex = from;
              const found = search.exec(s);
              const got = found ? `${{found.index}}:${{found[0]}}:${{found.slice(1)}}` : "null";
              let want = "null";
              const sticky = new RegExp(source, flags.replace("g", "") + "y");
              for (let i = from; i <= s.length; ) {{
                sticky.lastIndex = i;
                const r = sticky.exec(s);
                if (r) {{ want = `${{r.index}}:${{r[0]}}:${{r.slice(1)}}`; break; }}
                const c = s.codePointAt(i);
                i += unicode && c > 0xffff ? 2 : 1;
              }}
              compared++;
              if (got !== want) mismatches.push(`/${{source}}/${{flags}} on ${{JSON.stringify(s)}} from ${{from}}: ${{got}} !== ${{want}}`);
            }}
          }}
        }}
        mismatches.length ? mismatches.slice(0, 20).join("\n") : `same ${{compared}}`
        "#
    ));
    assert_eq!(compared(&result), 36 * 24 * 3);
}

#[test]
fn patch_0612_a_search_keeps_the_corner_cases_of_case_folding_anchors_and_surrogates() {
    assert_eq!(
        output(
            r#"
            const m = (re, s) => { const r = re.exec(s); return r === null ? "null" : r.index + ":" + r[0]; };
            JSON.stringify([
              m(/k/iu, "x\u212a"), m(/k/i, "x\u212a"), m(/s/iu, "x\u017f"), m(/[r-t]/iu, "xy\u017f"),
              m(/[\u00e0-\u00ff]/, "AB\u0100"), m(/[\u00e0-\u0150]/, "AB\u0100"),
              m(/^a/, "b\na"), m(/^a/m, "b\na"), m(/^a/m, "b\u2028a"),
              m(/\ude00/u, "\u{1F600}"), m(/\ude00/, "\u{1F600}"), m(/\ude00/u, "a\ude00"),
              m(/\u{1F600}x/u, "\u{1F600}\u{1F600}x"), m(/(?<=a)b/, "xab"),
              m(/\u4e2d/, "abc"), m(/[\u0100-\u0200]/, "aaaaab"),
              (() => { const re = /^a/g; re.lastIndex = 1; return re.exec("aa"); })(),
              (() => { const re = /(a)q|b/; const r = re.exec("ab"); return [r.index, r[1]]; })(),
              "abcb".split(/b/), "Kelvin".replace(/k/giu, "K"), "aXbXc".split(/x/i),
            ]).replace(/[^\x20-\x7e]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"))
            "#
        ),
        r#"["1:\u212a","null","1:\u017f","2:\u017f","null","2:\u0100","null","2:a","2:a","null","1:\ude00","1:\ude00","2:\ud83d\ude00x","2:b","null","null",null,[1,null],["a","c",""],"Kelvin",["a","b","c"]]"#
    );
}
