//! The abstract syntax tree of act source, as the parser builds it.
//!
//! As in Erlang's own `erl_parse`, patterns are parsed as expressions
//! (`Expr`) and only the checker decides whether an expression is a legal
//! pattern: `X = f()` and `{ok, X} = f()` come out of one grammar rule.
//! Every node carries the `Span` of its source text. The tree owns its
//! children through `Box`/`Vec`. The parser bounds the depth of every tree
//! it returns (`parser::MAX_EXPR_DEPTH`) and takes apart deeper ones without
//! recursion (`walk::dismantle`), so no input can overflow Rust's stack.

use super::span::Span;
use num_bigint::BigInt;

/// A parsed file: its forms in source order.
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    pub forms: Vec<Form>,
}

/// One top-level form, ending at Erlang's `dot` token.
#[derive(Debug, Clone, PartialEq)]
pub enum Form {
    Attribute(Attribute),
    Function(Function),
}

/// `-name(...).`
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    pub kind: AttributeKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AttributeKind {
    /// `-module(name).`
    Module(String),
    /// `-export([f/1, g/2]).`
    Export(Vec<FunctionName>),
    /// `-record(name, {field, field = Default, field :: type()}).`
    Record(RecordDef),
    /// `-import(lists, [reverse/1]).`
    Import(String, Vec<FunctionName>),
    /// `-compile(export_all).` or a `-compile` list holding `export_all`.
    ExportAll {
        /// No `nowarn_export_all` beside it: erlc warns.
        warn: bool,
    },
    /// `-mode(compile).`, `-spec ...`, `-type ...` and every other
    /// attribute: parsed to its dot and otherwise ignored.
    Other(String),
}

/// A record definition; field types are dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordDef {
    pub name: Name,
    pub fields: Vec<RecordFieldDef>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RecordFieldDef {
    pub name: Name,
    pub default: Option<Expr>,
}

/// An atom naming something (a record, a field), with its span.
#[derive(Debug, Clone, PartialEq)]
pub struct Name {
    pub name: String,
    pub span: Span,
}

/// `field = Value` in `#r{...}`; the field `_` stands for every field
/// not named.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordField {
    pub name: Name,
    pub value: Expr,
    pub span: Span,
}

/// `name/arity`, with the span of the whole reference.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionName {
    pub name: String,
    pub arity: u32,
    pub span: Span,
}

/// A named function: all clauses of one form (`f(0) -> a; f(N) -> b.`).
/// The parser groups the clauses of one form and verifies that they agree
/// on name and arity (`head mismatch`); the checker, that one function's
/// forms are not split apart in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub name: String,
    pub arity: u32,
    pub clauses: Vec<FunctionClause>,
    pub span: Span,
}

/// One clause of a named function: `name(Patterns) when Guard -> Body`.
/// Each clause keeps its own name so that `head mismatch` can be reported.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionClause {
    pub name: String,
    pub name_span: Span,
    pub clause: Clause,
}

/// `(Patterns) when Guard -> Body`: the shape shared by function clauses
/// (one pattern per argument), `case`/`receive`/`try ... of` clauses (one
/// pattern), `if` clauses (no pattern) and fun clauses.
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    pub patterns: Vec<Expr>,
    pub guard: Guard,
    pub body: Vec<Expr>,
    pub span: Span,
}

/// `when G1a, G1b; G2`: alternatives separated by `;`, each a list of
/// tests separated by `,` that must all be true. Empty means no guard.
pub type Guard = Vec<Vec<Expr>>;

/// A `catch` clause of `try`: `Class:Reason:Stack when Guard -> Body`.
#[derive(Debug, Clone, PartialEq)]
pub struct CatchClause {
    /// `throw`, `error`, `exit`, a variable, or `None` (means `throw`).
    pub class: Option<Expr>,
    pub reason: Expr,
    /// The stack trace variable of `Class:Reason:Stack`.
    pub stack: Option<Var>,
    pub guard: Guard,
    pub body: Vec<Expr>,
    pub span: Span,
}

/// A variable occurrence; `_` is the anonymous variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Var {
    pub name: String,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// `42`, `16#ff`, `$a`, `1_000`: always exact, any size.
    Integer(BigInt),
    /// `3.14`, `1.0e-3`
    Float(f64),
    /// `ok`, `'any text'`
    Atom(String),
    /// `"text"` (adjacent literals already joined): a list of character codes.
    String(Vec<u32>),
    /// `X`, `_Acc`, `_`
    Var(String),
    /// `[]`, `[a, b]`, `[H | T]`: the elements and the optional tail.
    List(Vec<Expr>, Option<Box<Expr>>),
    /// `{a, 1}`
    Tuple(Vec<Expr>),
    /// `#{k => v, ...}`
    Map(Vec<MapField>),
    /// `M#{k := v, ...}`
    MapUpdate(Box<Expr>, Vec<MapField>),
    /// `<<1, X:8, B/binary>>`
    Binary(Vec<BinElement>),
    /// `A + B`, `A andalso B`, `A ++ B`, `A == B`, ...
    BinaryOp(BinaryOp, Box<Expr>, Box<Expr>),
    /// `-A`, `not A`, `bnot A`, `+A`
    UnaryOp(UnaryOp, Box<Expr>),
    /// `Pattern = Expr`
    Match(Box<Expr>, Box<Expr>),
    /// `Pid ! Message`
    Send(Box<Expr>, Box<Expr>),
    /// `f(A)`, `m:f(A)`, `F(A)`, `(fun ...)(A)`
    Call(Box<CallTarget>, Vec<Expr>),
    /// `fun (X) -> ... end`, `fun Name(X) -> ... end`, `fun f/1`, `fun m:f/2`
    Fun(Box<Fun>),
    /// `case E of Clauses end`: each clause has exactly one pattern.
    Case(Box<Expr>, Vec<Clause>),
    /// `if Clauses end`: each clause has no pattern and a guard.
    If(Vec<Clause>),
    /// `receive Clauses after T -> Body end`
    Receive(Vec<Clause>, Option<Box<After>>),
    /// `try Body of Clauses catch CatchClauses after AfterBody end`
    Try(Box<Try>),
    /// `catch Expr`
    Catch(Box<Expr>),
    /// `begin E1, E2 end`
    Block(Vec<Expr>),
    /// `[Expr || Qualifiers]`
    ListComprehension(Box<Expr>, Vec<Qualifier>),
    /// `#r{a = 1}`. Records exist only between the parser and
    /// `records::expand`, which turns them into tuple operations.
    Record(Name, Vec<RecordField>),
    /// `R#r{a = 1}`
    RecordUpdate(Box<Expr>, Name, Vec<RecordField>),
    /// `R#r.a`
    RecordAccess(Box<Expr>, Name, Name),
    /// `#r.a`: the field's position in the tuple.
    RecordIndex(Name, Name),
    /// `<< Expr || Qualifiers >>`
    BinaryComprehension(Box<Expr>, Vec<Qualifier>),
}

/// What a call calls.
#[derive(Debug, Clone, PartialEq)]
pub enum CallTarget {
    /// `f(...)`: a local function or an auto-imported built-in.
    Local(String, Span),
    /// `M:F(...)`: module and function are expressions (usually atoms).
    Remote(Expr, Expr),
    /// `F(...)`, `(fun ...)(...)`: any other expression, called as a fun.
    Fun(Expr),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Fun {
    /// `fun (X) -> ...; (Y) -> ... end`
    Anonymous(Vec<Clause>),
    /// `fun Loop(0) -> ...; Loop(N) -> ... Loop(N - 1) end`
    Named(Var, Vec<Clause>),
    /// `fun name/2`
    Local(FunctionName),
    /// `fun M:F/A`: each part may be a variable in Erlang.
    Remote {
        module: Expr,
        function: Expr,
        arity: Expr,
    },
}

/// `after Timeout -> Body` of a receive.
#[derive(Debug, Clone, PartialEq)]
pub struct After {
    pub timeout: Expr,
    pub body: Vec<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Try {
    pub body: Vec<Expr>,
    /// Clauses of `of`, each with one pattern; empty when there is no `of`.
    pub of_clauses: Vec<Clause>,
    pub catch_clauses: Vec<CatchClause>,
    /// The `after` body; empty when there is none.
    pub after: Vec<Expr>,
}

/// `K => V` (insert or update) or `K := V` (update an existing key; in a
/// pattern, `:=` is the only legal form).
#[derive(Debug, Clone, PartialEq)]
pub struct MapField {
    pub key: Expr,
    pub value: Expr,
    pub exact: bool,
    pub span: Span,
}

/// One segment of a binary: `Value:Size/Type-Specifiers`.
#[derive(Debug, Clone, PartialEq)]
pub struct BinElement {
    pub value: Expr,
    pub size: Option<Expr>,
    /// `binary`, `integer`, `big`, `little`, `signed`, `unit:8`, ...
    pub specifiers: Vec<BinSpecifier>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BinSpecifier {
    pub name: String,
    /// The number of `unit:8`; `None` for plain names.
    pub value: Option<u32>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Qualifier {
    /// `Pattern <- ListExpr`
    Generator(Expr, Expr),
    /// `Pattern <= BinaryExpr`
    BinaryGenerator(Expr, Expr),
    /// any other expression: a filter (or a guard-like test)
    Filter(Expr),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    // arithmetic
    Add,
    Sub,
    Mul,
    Div,
    IntDiv,
    Rem,
    Band,
    Bor,
    Bxor,
    Bsl,
    Bsr,
    // boolean
    And,
    Or,
    Xor,
    AndAlso,
    OrElse,
    // lists
    Append,
    Subtract,
    // comparison
    Eq,
    NotEq,
    ExactEq,
    ExactNotEq,
    Less,
    LessEq,
    Greater,
    GreaterEq,
}

impl BinaryOp {
    /// The operator as written in source (`"=:="`, `"div"`, ...).
    pub fn symbol(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            IntDiv => "div",
            Rem => "rem",
            Band => "band",
            Bor => "bor",
            Bxor => "bxor",
            Bsl => "bsl",
            Bsr => "bsr",
            And => "and",
            Or => "or",
            Xor => "xor",
            AndAlso => "andalso",
            OrElse => "orelse",
            Append => "++",
            Subtract => "--",
            Eq => "==",
            NotEq => "/=",
            ExactEq => "=:=",
            ExactNotEq => "=/=",
            Less => "<",
            LessEq => "=<",
            Greater => ">",
            GreaterEq => ">=",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Plus,
    Minus,
    Not,
    Bnot,
}

impl UnaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            UnaryOp::Plus => "+",
            UnaryOp::Minus => "-",
            UnaryOp::Not => "not",
            UnaryOp::Bnot => "bnot",
        }
    }
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }
}
