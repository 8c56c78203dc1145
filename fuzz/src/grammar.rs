//! Agent-shaped JavaScript built from fuzz bytes: a small grammar whose every node derives
//! `Arbitrary`, printed with parentheses around compound expressions. Most programs it prints
//! parse (so the rewriter, not the parser, gets the fuzzer's attention); some do not (`break`
//! outside a loop, `yield` outside a generator, a tool's name redeclared), which exercises the
//! rules on the way.

use std::fmt::{self, Display, Formatter, Write};

use arbitrary::Arbitrary;

/// A whole run's code.
#[derive(Arbitrary, Debug)]
pub struct Program {
    pub strict: bool,
    pub body: Vec<Stmt>,
}

/// The names code uses: ordinary ones, a tool, the executor's own and some JavaScript treats
/// specially.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Ident {
    A,
    B,
    I,
    X,
    Search,
    FinalAnswer,
    Arguments,
    Eval,
    Let,
    Yield,
    Await,
    Async,
    Of,
    Guard,
    Constructor,
    Proto,
}

/// Loop labels.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Label {
    Outer,
    Inner,
    Main,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum DeclKind {
    Var,
    Let,
    Const,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum FnKind {
    Plain,
    Async,
    Generator,
    AsyncGenerator,
}

#[derive(Arbitrary, Debug)]
pub enum Stmt {
    Expr(Expr),
    Decl(DeclKind, Ident, Option<Expr>),
    Destructure(DeclKind, Vec<Ident>, Expr),
    Typed(DeclKind, Ident, TsType, Expr),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    Block(Vec<Stmt>),
    While(Expr, Box<Stmt>),
    DoWhile(Box<Stmt>, Expr),
    For(Option<Box<Stmt>>, Option<Expr>, Option<Expr>, Box<Stmt>),
    ForIn(Option<DeclKind>, Ident, Expr, Box<Stmt>),
    ForOf(bool, Option<DeclKind>, Ident, Expr, Box<Stmt>),
    Labeled(Label, Box<Stmt>),
    Break(Option<Label>),
    Continue(Option<Label>),
    Return(Option<Expr>),
    Throw(Expr),
    Try(
        Vec<Stmt>,
        Option<(Option<Ident>, Vec<Stmt>)>,
        Option<Vec<Stmt>>,
    ),
    Switch(Expr, Vec<(Option<Expr>, Vec<Stmt>)>),
    Function(FnKind, Ident, Vec<Ident>, Vec<Stmt>),
    Class(Ident, Vec<Member>),
    Enum(Ident, Vec<Ident>),
    With(Expr, Box<Stmt>),
    Empty,
}

#[derive(Arbitrary, Debug)]
pub enum Member {
    Method(FnKind, bool, Ident, Vec<Ident>, Vec<Stmt>),
    Field(bool, Ident, Option<Expr>),
    StaticBlock(Vec<Stmt>),
    Getter(Ident, Vec<Stmt>),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum TsType {
    Number,
    String,
    Any,
    NumberArray,
    Union,
}

#[derive(Arbitrary, Debug)]
pub enum Expr {
    Number(u16),
    Float(i8),
    String(Text),
    Ident(Ident),
    Bool(bool),
    Null,
    Undefined,
    This,
    Array(Vec<Option<Expr>>),
    Object(Vec<(Ident, Expr)>),
    Binary(Box<Expr>, BinOp, Box<Expr>),
    Unary(UnOp, Box<Expr>),
    Update(bool, Ident),
    Assign(Ident, AssignOp, Box<Expr>),
    Call(Box<Expr>, Vec<Expr>),
    OptionalCall(Box<Expr>, Vec<Expr>),
    Member(Box<Expr>, Ident),
    Index(Box<Expr>, Box<Expr>),
    New(Box<Expr>, Vec<Expr>),
    Arrow(bool, Vec<Ident>, ArrowBody),
    Function(FnKind, Vec<Ident>, Vec<Stmt>),
    Await(Box<Expr>),
    Yield(bool, Box<Expr>),
    Conditional(Box<Expr>, Box<Expr>, Box<Expr>),
    Template(Vec<Expr>),
    Import(Module),
    Tool(Vec<Expr>),
    FinalAnswer(Box<Expr>),
    Regex(RegexKind),
    Sequence(Vec<Expr>),
    Spread(Box<Expr>),
    Class(Vec<Member>),
    TsAs(Box<Expr>, TsType),
}

#[derive(Arbitrary, Debug)]
pub enum ArrowBody {
    Expr(Box<Expr>),
    Block(Vec<Stmt>),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Module {
    Authorized,
    Fs,
    ChildProcess,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum RegexKind {
    Simple,
    Catastrophic,
    Unicode,
}

/// String literal contents, chosen to stress positions and escapes.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Text {
    Empty,
    Word,
    Quote,
    Newline,
    Astral,
    LoneSurrogate,
    CommentLike,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Lt,
    StrictEq,
    And,
    Or,
    Nullish,
    In,
    InstanceOf,
    Exp,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum UnOp {
    Not,
    Neg,
    TypeOf,
    Void,
    Delete,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum AssignOp {
    Assign,
    Add,
    Nullish,
}

impl Display for Program {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if self.strict {
            f.write_str("\"use strict\";\n")?;
        }
        for statement in &self.body {
            writeln!(f, "{statement}")?;
        }
        Ok(())
    }
}

impl Display for Ident {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Ident::A => "a",
            Ident::B => "b",
            Ident::I => "i",
            Ident::X => "x",
            Ident::Search => "search",
            Ident::FinalAnswer => "final_answer",
            Ident::Arguments => "arguments",
            Ident::Eval => "eval",
            Ident::Let => "let",
            Ident::Yield => "yield",
            Ident::Await => "await",
            Ident::Async => "async",
            Ident::Of => "of",
            Ident::Guard => "__smol_guard",
            Ident::Constructor => "constructor",
            Ident::Proto => "__proto__",
        })
    }
}

impl Display for Label {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Label::Outer => "outer",
            Label::Inner => "inner",
            Label::Main => "main",
        })
    }
}

impl Display for DeclKind {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeclKind::Var => "var",
            DeclKind::Let => "let",
            DeclKind::Const => "const",
        })
    }
}

impl FnKind {
    fn prefix(self) -> &'static str {
        match self {
            FnKind::Plain => "function ",
            FnKind::Async => "async function ",
            FnKind::Generator => "function* ",
            FnKind::AsyncGenerator => "async function* ",
        }
    }

    fn method_prefix(self) -> &'static str {
        match self {
            FnKind::Plain => "",
            FnKind::Async => "async ",
            FnKind::Generator => "*",
            FnKind::AsyncGenerator => "async *",
        }
    }
}

impl Display for TsType {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TsType::Number => "number",
            TsType::String => "string",
            TsType::Any => "any",
            TsType::NumberArray => "number[]",
            TsType::Union => "string | undefined",
        })
    }
}

fn list<T: Display>(f: &mut Formatter<'_>, items: &[T], separator: &str) -> fmt::Result {
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            f.write_str(separator)?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

fn block(f: &mut Formatter<'_>, statements: &[Stmt]) -> fmt::Result {
    f.write_str("{\n")?;
    for statement in statements {
        writeln!(f, "{statement}")?;
    }
    f.write_char('}')
}

impl Display for Stmt {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Stmt::Expr(e) => write!(f, "({e});"),
            Stmt::Decl(kind, name, None) => write!(f, "{kind} {name};"),
            Stmt::Decl(kind, name, Some(init)) => write!(f, "{kind} {name} = ({init});"),
            Stmt::Destructure(kind, names, init) => {
                write!(f, "{kind} {{ ")?;
                list(f, names, ", ")?;
                write!(f, " }} = ({init});")
            }
            Stmt::Typed(kind, name, ty, init) => write!(f, "{kind} {name}: {ty} = ({init});"),
            Stmt::If(test, then, None) => write!(f, "if ({test}) {then}"),
            Stmt::If(test, then, Some(otherwise)) => {
                write!(f, "if ({test}) {then}\nelse {otherwise}")
            }
            Stmt::Block(body) => block(f, body),
            Stmt::While(test, body) => write!(f, "while ({test}) {body}"),
            Stmt::DoWhile(body, test) => write!(f, "do {body}\nwhile ({test});"),
            Stmt::For(init, test, update, body) => {
                f.write_str("for (")?;
                match init.as_deref() {
                    Some(Stmt::Decl(kind, name, init)) => {
                        write!(f, "{kind} {name}")?;
                        if let Some(init) = init {
                            write!(f, " = ({init})")?;
                        }
                    }
                    Some(Stmt::Expr(e)) => write!(f, "({e})")?,
                    _ => {}
                }
                f.write_str("; ")?;
                if let Some(test) = test {
                    write!(f, "{test}")?;
                }
                f.write_str("; ")?;
                if let Some(update) = update {
                    write!(f, "{update}")?;
                }
                write!(f, ") {body}")
            }
            Stmt::ForIn(kind, name, object, body) => {
                f.write_str("for (")?;
                if let Some(kind) = kind {
                    write!(f, "{kind} ")?;
                }
                write!(f, "{name} in ({object})) {body}")
            }
            Stmt::ForOf(is_await, kind, name, iterable, body) => {
                f.write_str(if *is_await { "for await (" } else { "for (" })?;
                if let Some(kind) = kind {
                    write!(f, "{kind} ")?;
                }
                write!(f, "{name} of ({iterable})) {body}")
            }
            Stmt::Labeled(label, body) => write!(f, "{label}: {body}"),
            Stmt::Break(None) => f.write_str("break;"),
            Stmt::Break(Some(label)) => write!(f, "break {label};"),
            Stmt::Continue(None) => f.write_str("continue;"),
            Stmt::Continue(Some(label)) => write!(f, "continue {label};"),
            Stmt::Return(None) => f.write_str("return;"),
            Stmt::Return(Some(value)) => write!(f, "return ({value});"),
            Stmt::Throw(value) => write!(f, "throw ({value});"),
            Stmt::Try(body, catch, finally) => {
                f.write_str("try ")?;
                block(f, body)?;
                if let Some((binding, handler)) = catch {
                    f.write_str(" catch ")?;
                    if let Some(binding) = binding {
                        write!(f, "({binding}) ")?;
                    }
                    block(f, handler)?;
                }
                if let Some(finally) = finally {
                    f.write_str(" finally ")?;
                    block(f, finally)?;
                }
                if catch.is_none() && finally.is_none() {
                    f.write_str(" finally {}")?;
                }
                Ok(())
            }
            Stmt::Switch(discriminant, cases) => {
                writeln!(f, "switch ({discriminant}) {{")?;
                for (test, body) in cases {
                    match test {
                        Some(test) => writeln!(f, "case ({test}):")?,
                        None => f.write_str("default:\n")?,
                    }
                    for statement in body {
                        writeln!(f, "{statement}")?;
                    }
                }
                f.write_char('}')
            }
            Stmt::Function(kind, name, params, body) => {
                write!(f, "{}{name}(", kind.prefix())?;
                list(f, params, ", ")?;
                f.write_str(") ")?;
                block(f, body)
            }
            Stmt::Class(name, members) => {
                writeln!(f, "class {name} {{")?;
                list(f, members, "\n")?;
                f.write_str("\n}")
            }
            Stmt::Enum(name, members) => {
                write!(f, "enum {name} {{ ")?;
                list(f, members, ", ")?;
                f.write_str(" }")
            }
            Stmt::With(object, body) => write!(f, "with ({object}) {body}"),
            Stmt::Empty => f.write_char(';'),
        }
    }
}

impl Display for Member {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Member::Method(kind, is_static, name, params, body) => {
                if *is_static {
                    f.write_str("static ")?;
                }
                write!(f, "{}{name}(", kind.method_prefix())?;
                list(f, params, ", ")?;
                f.write_str(") ")?;
                block(f, body)
            }
            Member::Field(is_static, name, init) => {
                if *is_static {
                    f.write_str("static ")?;
                }
                write!(f, "{name}")?;
                if let Some(init) = init {
                    write!(f, " = ({init})")?;
                }
                f.write_char(';')
            }
            Member::StaticBlock(body) => {
                f.write_str("static ")?;
                block(f, body)
            }
            Member::Getter(name, body) => {
                write!(f, "get {name}() ")?;
                block(f, body)
            }
        }
    }
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Number(n) => write!(f, "{n}"),
            Expr::Float(n) => write!(f, "({}.5e{})", n, n % 4),
            Expr::String(text) => write!(f, "{text}"),
            Expr::Ident(name) => write!(f, "{name}"),
            Expr::Bool(b) => write!(f, "{b}"),
            Expr::Null => f.write_str("null"),
            Expr::Undefined => f.write_str("undefined"),
            Expr::This => f.write_str("this"),
            Expr::Array(items) => {
                f.write_char('[')?;
                for item in items {
                    if let Some(item) = item {
                        write!(f, "({item})")?;
                    }
                    f.write_str(", ")?;
                }
                f.write_char(']')
            }
            Expr::Object(entries) => {
                f.write_str("{ ")?;
                for (key, value) in entries {
                    write!(f, "{key}: ({value}), ")?;
                }
                f.write_char('}')
            }
            Expr::Binary(left, op, right) => write!(f, "({left}) {op} ({right})"),
            Expr::Unary(op, operand) => write!(f, "{op} ({operand})"),
            Expr::Update(prefix, name) => {
                if *prefix {
                    write!(f, "++{name}")
                } else {
                    write!(f, "{name}--")
                }
            }
            Expr::Assign(name, op, value) => write!(f, "{name} {op} ({value})"),
            Expr::Call(callee, args) => {
                write!(f, "({callee})(")?;
                args_list(f, args)?;
                f.write_char(')')
            }
            Expr::OptionalCall(callee, args) => {
                write!(f, "({callee})?.(")?;
                args_list(f, args)?;
                f.write_char(')')
            }
            Expr::Member(object, name) => write!(f, "({object}).{name}"),
            Expr::Index(object, key) => write!(f, "({object})[{key}]"),
            Expr::New(callee, args) => {
                write!(f, "new ({callee})(")?;
                args_list(f, args)?;
                f.write_char(')')
            }
            Expr::Arrow(is_async, params, body) => {
                if *is_async {
                    f.write_str("async ")?;
                }
                f.write_char('(')?;
                list(f, params, ", ")?;
                f.write_str(") => ")?;
                match body {
                    ArrowBody::Expr(e) => write!(f, "({e})"),
                    ArrowBody::Block(body) => block(f, body),
                }
            }
            Expr::Function(kind, params, body) => {
                write!(f, "({}(", kind.prefix())?;
                list(f, params, ", ")?;
                f.write_str(") ")?;
                block(f, body)?;
                f.write_char(')')
            }
            Expr::Await(value) => write!(f, "await ({value})"),
            Expr::Yield(delegate, value) => {
                write!(f, "yield{} ({value})", if *delegate { "*" } else { "" })
            }
            Expr::Conditional(test, then, otherwise) => {
                write!(f, "({test}) ? ({then}) : ({otherwise})")
            }
            Expr::Template(parts) => {
                f.write_char('`')?;
                for part in parts {
                    write!(f, "x${{{part}}}")?;
                }
                f.write_char('`')
            }
            Expr::Import(module) => f.write_str(match module {
                Module::Authorized => "import('lodash')",
                Module::Fs => "import('fs')",
                Module::ChildProcess => "import('node:child_process')",
            }),
            Expr::Tool(args) => {
                f.write_str("search(")?;
                args_list(f, args)?;
                f.write_char(')')
            }
            Expr::FinalAnswer(value) => write!(f, "final_answer({value})"),
            Expr::Regex(kind) => f.write_str(match kind {
                RegexKind::Simple => "/a+b/g",
                RegexKind::Catastrophic => "/(a+)+$/",
                RegexKind::Unicode => "/\\p{L}+/u",
            }),
            Expr::Sequence(items) => {
                f.write_char('(')?;
                args_list(f, items)?;
                if items.is_empty() {
                    f.write_char('0')?;
                }
                f.write_char(')')
            }
            Expr::Spread(value) => write!(f, "[...({value})]"),
            Expr::Class(members) => {
                f.write_str("(class {\n")?;
                list(f, members, "\n")?;
                f.write_str("\n})")
            }
            Expr::TsAs(value, ty) => write!(f, "(({value}) as {ty})"),
        }
    }
}

fn args_list(f: &mut Formatter<'_>, args: &[Expr]) -> fmt::Result {
    for (n, arg) in args.iter().enumerate() {
        if n > 0 {
            f.write_str(", ")?;
        }
        write!(f, "({arg})")?;
    }
    Ok(())
}

impl Display for Text {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Text::Empty => "''",
            Text::Word => "'word'",
            Text::Quote => r#""it's \"q\"""#,
            Text::Newline => "'a\\nb\\u2028c'",
            Text::Astral => "'😀𝒳'",
            Text::LoneSurrogate => "'\\uD800'",
            Text::CommentLike => "'*/ // <!-- -->'",
        })
    }
}

impl Display for BinOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Lt => "<",
            BinOp::StrictEq => "===",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::Nullish => "??",
            BinOp::In => "in",
            BinOp::InstanceOf => "instanceof",
            BinOp::Exp => "**",
        })
    }
}

impl Display for UnOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UnOp::Not => "!",
            UnOp::Neg => "-",
            UnOp::TypeOf => "typeof",
            UnOp::Void => "void",
            UnOp::Delete => "delete",
        })
    }
}

impl Display for AssignOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AssignOp::Assign => "=",
            AssignOp::Add => "+=",
            AssignOp::Nullish => "??=",
        })
    }
}
