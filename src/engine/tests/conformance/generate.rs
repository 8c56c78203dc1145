//! Programs nobody wrote: a small grammar of what agent code does with top-level state —
//! declarations of every kind over a few shared names, reads, every form of assignment,
//! shadowing blocks, closures, loops, labels, `switch`, `try`, classes, generators, `await` —
//! printed from a seed. Names are shared on purpose: programs mostly use names declared above
//! (so that most of them run far), and sometimes read bindings before their declaration (TDZ),
//! assign constants, and redeclare (early errors); every loop is bounded. A seed always gives
//! the same program.
//!
//! docs/contract.md "Script semantics first" (a run of the suite over programs nobody wrote).

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
    /// The names declared at the top level so far.
    declared: Vec<&'static str>,
}

/// The program of `seed`.
pub fn program(seed: u64) -> String {
    let mut generator = Generator {
        rng: fastrand::Rng::with_seed(seed),
        fresh: 0,
        depth: 0,
        in_function: false,
        declared: Vec::new(),
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

    /// A name to use: mostly one declared above, sometimes any (undeclared, or in its TDZ).
    fn name(&mut self) -> &'static str {
        self.known(&NAMES).unwrap_or_else(|| self.pick(&NAMES))
    }

    /// One of `names` declared above, mostly; now and then any of them (undeclared, or in its
    /// TDZ); `None` when none is declared and the dice say so (the caller uses a literal).
    fn known(&mut self, names: &[&'static str]) -> Option<&'static str> {
        let declared: Vec<&'static str> = names
            .iter()
            .copied()
            .filter(|name| self.declared.contains(name))
            .collect();
        if self.chance(12) {
            Some(self.pick(names))
        } else if declared.is_empty() {
            None
        } else {
            Some(self.pick(&declared))
        }
    }

    /// A name to declare: at the top level mostly one not declared yet (a name declared twice
    /// is an early error), and noted as declared.
    fn declare(&mut self, names: &[&'static str]) -> &'static str {
        let free: Vec<&'static str> = names
            .iter()
            .copied()
            .filter(|name| !self.declared.contains(name))
            .collect();
        let name = if !free.is_empty() && self.chance(85) {
            self.pick(&free)
        } else {
            self.pick(names)
        };
        if self.depth == 0 && !self.in_function {
            self.declared.push(name);
        }
        name
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
            } else if self.chance(35) {
                // So that a failing statement does not end the program.
                let statement = self.statement();
                format!("try {{ {statement} }} catch (e) {{ console.log(e.name, e.message); }}")
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
        // The initializer first: it mostly uses names declared before this declaration.
        let (first, second) = (self.expression(), self.expression());
        let name = self.declare(&NAMES);
        match self.rng.u8(..12) {
            0 => format!("var {name} = {first};"),
            1 | 2 => format!("let {name} = {first};"),
            3 | 4 => format!("const {name} = {first};"),
            5 => format!("let {name};"),
            6 => format!("var {name};"),
            7 => {
                let other = self.declare(&NAMES);
                format!("let [{name}, {other}] = [{first}, {second}];")
            }
            8 => format!("const {{ p: {name} }} = {{ p: {first} }};"),
            9 => {
                let outer = std::mem::replace(&mut self.in_function, true);
                let body = self.block_body();
                let result = self.expression();
                self.in_function = outer;
                let function = self.declare(&FUNCTIONS);
                format!("function {function}(x) {{ {body} return {result}; }}")
            }
            10 => self.class(),
            _ => {
                let outer = std::mem::replace(&mut self.in_function, true);
                let values = [
                    self.expression(),
                    self.expression(),
                    self.expression(),
                    self.expression(),
                ];
                self.in_function = outer;
                let function = self.declare(&FUNCTIONS);
                let [a, b, c, d] = values;
                format!("function* {function}() {{ yield {a}; yield* [{b}, {c}]; return {d}; }}")
            }
        }
    }

    fn class(&mut self) -> String {
        // The body first (it mostly uses what is declared before the class), then the name.
        let outer = std::mem::replace(&mut self.in_function, true);
        let parts = [self.expression(), self.expression(), self.expression()];
        self.in_function = outer;
        let extends = self.declared.contains(&"K") && self.chance(40);
        let class = if extends {
            self.declared.push("L");
            "L"
        } else {
            self.declare(&CLASSES)
        };
        let [first, second, third] = parts;
        if extends {
            return format!(
                "class L extends K {{ constructor() {{ super(); this.own = {first}; }} m() {{ return [super.m(), this.own]; }} static {{ console.log(\"static L\", typeof K); }} }}"
            );
        }
        format!(
            "class {class} {{ #p = {first}; static s = {second}; get v() {{ return this.#p; }} set v(x) {{ this.#p = x; }} m() {{ return {third}; }} static {{ console.log(\"static\", this.s); }} }}"
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
            9 => match self.known(&FUNCTIONS) {
                Some(function) => format!("{function}()"),
                None => self.atom(),
            },
            10 => match self.known(&FUNCTIONS) {
                Some(function) => format!("[...{function}()]"),
                None => self.atom(),
            },
            11 => match self.known(&CLASSES) {
                Some(class) => format!("new {class}().m()"),
                None => self.atom(),
            },
            12 if !self.in_function => format!("(await {})", self.atom()),
            _ => format!("{} ? {} : {}", self.atom(), self.atom(), self.atom()),
        };
        self.depth -= 1;
        expression
    }

    fn atom(&mut self) -> String {
        match self.rng.u8(..10) {
            0..=3 => match self.known(&NAMES) {
                Some(name) => name.to_owned(),
                None => self.rng.u8(..4).to_string(),
            },
            4 => self.rng.u8(..4).to_string(),
            5 => format!("\"{}\"", self.pick(&["x", "", "ab"])),
            6 => self.pick(&["null", "undefined", "true"]).to_owned(),
            7 => format!("typeof {}", self.name()),
            8 => {
                let mut text = String::from("`t");
                let _ = write!(text, "${{{}}}`", self.name());
                text
            }
            _ => match self.known(&CLASSES) {
                Some(class) => format!("new {class}().v"),
                None => "null".to_owned(),
            },
        }
    }
}
