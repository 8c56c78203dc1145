//! Programs nobody wrote: a small grammar of what agent code does with top-level state —
//! declarations of every kind over a few shared names, reads, every form of assignment,
//! shadowing blocks, closures, loops, labels, `switch`, `try`, classes, generators, `await` —
//! printed from a seed. Names are shared on purpose, so that programs also read bindings
//! before their declaration (TDZ), assign constants, and redeclare (early errors); every
//! loop is bounded. A seed always gives the same program.

use std::fmt::Write as _;

/// The names programs share.
const NAMES: [&str; 4] = ["a", "b", "c", "d"];
const FUNCTIONS: [&str; 2] = ["f", "g"];
const CLASSES: [&str; 2] = ["K", "L"];

struct Generator {
    rng: fastrand::Rng,
    /// Source of names no other statement uses (`t0`, `t1`, …).
    fresh: usize,
    /// How deep statements nest (bounds the size of a program).
    depth: usize,
    /// Inside a function or class body, where `await` is not allowed.
    in_function: bool,
}

/// The program of `seed`.
pub fn program(seed: u64) -> String {
    let mut generator = Generator {
        rng: fastrand::Rng::with_seed(seed),
        fresh: 0,
        depth: 0,
        in_function: false,
    };
    generator.top_level()
}

impl Generator {
    fn pick<'s>(&mut self, items: &[&'s str]) -> &'s str {
        items[self.rng.usize(..items.len())]
    }

    fn chance(&mut self, percent: u8) -> bool {
        self.rng.u8(..100) < percent
    }

    fn fresh(&mut self) -> String {
        self.fresh += 1;
        format!("t{}", self.fresh)
    }

    fn name(&mut self) -> &'static str {
        self.pick(&NAMES)
    }

    fn top_level(&mut self) -> String {
        let mut code = String::new();
        if self.chance(15) {
            code.push_str("\"use strict\";\n");
        }
        let count = self.rng.usize(2..9);
        for _ in 0..count {
            let statement = if self.chance(45) {
                self.declaration()
            } else {
                self.statement()
            };
            code.push_str(&statement);
            code.push('\n');
        }
        if self.chance(75) {
            let last = self.final_expression();
            code.push_str(&last);
            code.push('\n');
        }
        code
    }

    /// What the program ends with, so that its output is compared too.
    fn final_expression(&mut self) -> String {
        match self.rng.u8(..5) {
            0 => format!("[{}]", self.typeofs()),
            1 => {
                let name = self.name();
                name.to_owned()
            }
            2 => format!("{};", self.expression()),
            3 => format!(
                "[\"{0}\" in globalThis, typeof globalThis.{0}]",
                self.name()
            ),
            _ => self.expression(),
        }
    }

    /// `typeof a, typeof b, …`: never throws for an undeclared name, does for one in its TDZ.
    fn typeofs(&mut self) -> String {
        NAMES
            .iter()
            .map(|name| format!("typeof {name}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn declaration(&mut self) -> String {
        let outer = self.in_function;
        let declaration = self.declaration_kind();
        self.in_function = outer;
        declaration
    }

    fn declaration_kind(&mut self) -> String {
        let name = self.name();
        match self.rng.u8(..12) {
            0 => format!("var {name} = {};", self.expression()),
            1 | 2 => format!("let {name} = {};", self.expression()),
            3 | 4 => format!("const {name} = {};", self.expression()),
            5 => format!("let {name};"),
            6 => format!("var {name};"),
            7 => {
                let other = self.name();
                format!(
                    "let [{name}, {other}] = [{}, {}];",
                    self.expression(),
                    self.expression()
                )
            }
            8 => format!("const {{ p: {name} }} = {{ p: {} }};", self.expression()),
            9 => {
                let function = self.pick(&FUNCTIONS);
                self.in_function = true;
                let body = self.block_body();
                format!(
                    "function {function}(x) {{ {body} return {}; }}",
                    self.expression()
                )
            }
            10 => {
                self.in_function = true;
                self.class()
            }
            _ => {
                let function = self.pick(&FUNCTIONS);
                self.in_function = true;
                format!(
                    "function* {function}() {{ yield {}; yield* [{}, {}]; return {}; }}",
                    self.expression(),
                    self.expression(),
                    self.expression(),
                    self.expression()
                )
            }
        }
    }

    fn class(&mut self) -> String {
        let class = self.pick(&CLASSES);
        if class == "L" && self.chance(50) {
            return format!(
                "class L extends K {{ constructor() {{ super(); this.own = {}; }} m() {{ return [super.m(), this.own]; }} static {{ console.log(\"static L\", typeof K); }} }}",
                self.expression()
            );
        }
        format!(
            "class {class} {{ #p = {}; static s = {}; get v() {{ return this.#p; }} set v(x) {{ this.#p = x; }} m() {{ return {}; }} static {{ console.log(\"static\", this.s); }} }}",
            self.expression(),
            self.expression(),
            self.expression()
        )
    }

    fn block_body(&mut self) -> String {
        if self.depth > 2 {
            return String::new();
        }
        self.depth += 1;
        let count = self.rng.usize(0..3);
        let mut body = String::new();
        for _ in 0..count {
            let statement = if self.chance(30) {
                self.declaration()
            } else {
                self.statement()
            };
            body.push_str(&statement);
            body.push(' ');
        }
        self.depth -= 1;
        body
    }

    fn assignment(&mut self) -> String {
        let name = self.name();
        match self.rng.u8(..11) {
            0 | 1 => format!("{name} = {};", self.expression()),
            2 => format!("{name} += {};", self.expression()),
            3 => format!("{name}++;"),
            4 => format!("--{name};"),
            5 => format!("[{name}] = [{}];", self.expression()),
            6 => format!("({{ p: {name} }} = {{ p: {} }});", self.expression()),
            7 => format!("{name} ??= {};", self.expression()),
            8 => format!(
                "for ({name} of [{}, {}]) console.log({name});",
                self.expression(),
                self.expression()
            ),
            9 => format!("for ({name} in {{ x: 1, y: 2 }}) console.log({name});"),
            _ => format!("{name} ||= {};", self.expression()),
        }
    }

    fn statement(&mut self) -> String {
        if self.depth > 2 {
            return format!("console.log({});", self.expression());
        }
        match self.rng.u8(..24) {
            0..=3 => self.assignment(),
            4 | 5 => format!("console.log({});", self.expression()),
            6 => format!("console.log({});", self.typeofs()),
            7 => {
                let body = self.block_body();
                format!("{{ {body} }}")
            }
            8 => {
                let condition = self.expression();
                let yes = self.block_body();
                let no = self.block_body();
                format!("if ({condition}) {{ {yes} }} else {{ {no} }}")
            }
            9 | 10 => {
                let body = self.block_body();
                let finally = if self.chance(50) {
                    " finally { console.log(\"finally\"); }"
                } else {
                    ""
                };
                format!("try {{ {body} }} catch (e) {{ console.log(e.name, e.message); }}{finally}")
            }
            11 => {
                let fs = self.fresh();
                let kind = self.pick(&["let", "var"]);
                format!(
                    "const {fs} = []; for ({kind} i = 0; i < 3; i++) {{ {fs}.push(() => i + {}); }} console.log({fs}.map((h) => h()));",
                    self.name()
                )
            }
            12 => {
                let label = self.fresh();
                let body = self.block_body();
                format!(
                    "{label}: {{ console.log(\"in\"); if ({}) break {label}; {body} console.log(\"out\"); }}",
                    self.expression()
                )
            }
            13 => format!(
                "outer: for (const x of [1, 2, 3]) {{ for (const y of [1, 2]) {{ if (y === {}) continue outer; if (x === 3) break outer; console.log(x, y); }} }}",
                self.expression()
            ),
            14 => {
                let name = self.name();
                let inner = self.fresh();
                format!(
                    "switch ({}) {{ case 1: let {inner} = {}; console.log({inner}); break; case 2: console.log(typeof {name}); default: console.log(\"default\"); }}",
                    self.expression(),
                    self.expression()
                )
            }
            15 => {
                let closure = self.fresh();
                let outer = std::mem::replace(&mut self.in_function, true);
                let body = self.expression();
                self.in_function = outer;
                format!("const {closure} = () => {body}; console.log({closure}());")
            }
            16 | 17 if self.in_function => format!("console.log({});", self.expression()),
            16 => {
                let value = self.fresh();
                format!(
                    "const {value} = await Promise.resolve({}); console.log({value});",
                    self.expression()
                )
            }
            17 => format!(
                "for await (const x of (async function* () {{ yield {}; yield 2; }})()) console.log(x);",
                self.expression()
            ),
            18 => format!(
                "console.log(this === globalThis, \"{0}\" in globalThis, typeof this.{0});",
                self.name()
            ),
            19 => {
                let object = self.fresh();
                let name = self.name();
                format!(
                    "const {object} = {{ get x() {{ return {name}; }}, set x(v) {{ {name} = v; }} }}; {object}.x = {}; console.log({object}.x);",
                    self.expression()
                )
            }
            20 => format!(
                "console.log(((s, ...v) => s.raw.join(\"|\") + v.join(\",\"))`a${{{}}}b${{{}}}`);",
                self.expression(),
                self.expression()
            ),
            21 => {
                let counter = self.fresh();
                let body = self.block_body();
                format!("let {counter} = 0; do {{ {counter}++; {body} }} while ({counter} < 2);")
            }
            22 => format!("console.log(delete {});", self.name()),
            _ => {
                let name = self.name();
                format!("console.log({name}?.p, {name}?.[0], typeof arguments);")
            }
        }
    }

    fn expression(&mut self) -> String {
        if self.depth > 3 {
            return self.atom();
        }
        self.depth += 1;
        let expression = match self.rng.u8(..14) {
            0..=4 => self.atom(),
            5 => format!("{} + {}", self.atom(), self.atom()),
            6 => format!("[{}, {}]", self.atom(), self.atom()),
            7 => format!("{{ p: {} }}", self.atom()),
            8 => format!("(() => {})()", self.atom()),
            9 => format!("{}()", self.pick(&FUNCTIONS)),
            10 => format!("[...{}()]", self.pick(&FUNCTIONS)),
            11 => format!("new {}().m()", self.pick(&CLASSES)),
            12 if !self.in_function => format!("(await {})", self.atom()),
            _ => format!("{} ? {} : {}", self.atom(), self.atom(), self.atom()),
        };
        self.depth -= 1;
        expression
    }

    fn atom(&mut self) -> String {
        match self.rng.u8(..10) {
            0..=3 => self.name().to_owned(),
            4 => self.rng.u8(..4).to_string(),
            5 => format!("\"{}\"", self.pick(&["x", "", "ab"])),
            6 => self.pick(&["null", "undefined", "true"]).to_owned(),
            7 => format!("typeof {}", self.name()),
            8 => {
                let mut text = String::from("`t");
                let _ = write!(text, "${{{}}}`", self.name());
                text
            }
            _ => format!("{}.v", self.pick(&["new K()", "new L()"])),
        }
    }
}
