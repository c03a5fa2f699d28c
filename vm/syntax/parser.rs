//! Parsing glue: cuts the token stream into forms, runs the generated
//! parser on each, and turns its errors into diagnostics.
//!
//! Forms are parsed one at a time, split at Erlang's `dot` token, so a
//! broken function never hides the errors of the next one. Before a form is
//! parsed, its bracket and block nesting is counted without recursion; after
//! it is parsed, the depth of its tree is measured without recursion. Forms
//! nested deeper than the limits are rejected with `nested too deeply`, so
//! every later pass may recurse over the tree on an ordinary stack.

use super::ast::*;
use super::diagnostic::Diagnostic;
use super::lexer::{LexError, Spanned, Token, tokenize};
use super::span::Span;
use super::walk;
use lalrpop_util::ParseError;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused)]
    grammar,
    "/act.rs"
);

/// Brackets and blocks may nest this deep (`((((...))))`, `case` in `case`).
pub const MAX_NESTING: usize = 1000;

/// Expression trees may be this deep: bounds the recursion of every pass
/// after the parser, and long operator chains (`1+1+...+1`) hit it.
pub const MAX_EXPR_DEPTH: usize = 2000;

/// An error found by a grammar action, with its place.
#[derive(Debug, Clone, PartialEq)]
pub struct UserError {
    pub message: String,
    pub span: Span,
    /// What escript says instead, and where (erl_parse's grammar refuses
    /// some inputs act's grammar reads and then refuses by hand).
    pub escript: Option<(u32, String)>,
}

impl UserError {
    pub fn new(message: &str, start: usize, end: usize) -> UserError {
        UserError {
            message: message.to_string(),
            span: Span::new(start, end),
            escript: None,
        }
    }
}

type GrammarError = ParseError<usize, Token, UserError>;

// ---- helpers called by the grammar's actions --------------------------

pub fn mk(kind: ExprKind, start: usize, end: usize) -> Expr {
    Expr::new(kind, Span::new(start, end))
}

pub fn binop(op: BinaryOp, a: Expr, b: Expr, start: usize, end: usize) -> Expr {
    mk(ExprKind::BinaryOp(op, Box::new(a), Box::new(b)), start, end)
}

pub fn unop(op: UnaryOp, e: Expr, start: usize, end: usize) -> Expr {
    mk(ExprKind::UnaryOp(op, Box::new(e)), start, end)
}

/// `"a" "b"` is one string `"ab"`.
pub fn join_strings(parts: Vec<Vec<u32>>) -> Vec<u32> {
    parts.concat()
}

/// `f(X)` calls the function named `f`; any other callee is a fun value.
pub fn make_call(callee: Expr, args: Vec<Expr>, start: usize, end: usize) -> Expr {
    let target = match callee.kind {
        ExprKind::Atom(name) => CallTarget::Local(name, callee.span),
        _ => CallTarget::Fun(callee),
    };
    mk(ExprKind::Call(Box::new(target), args), start, end)
}

/// `-module(m)` and `-export([f/1])` mean something; any other attribute
/// that reaches the grammar is kept by name only.
pub fn make_attribute(name: String, value: Expr, span: Span) -> Result<Form, GrammarError> {
    let kind = match name.as_str() {
        "module" => match value.kind {
            ExprKind::Atom(module) => AttributeKind::Module(module),
            _ => {
                return Err(user_error(
                    "bad -module attribute: expected -module(name).",
                    value.span,
                ));
            }
        },
        "export" => AttributeKind::Export(export_list(&value)?),
        _ => AttributeKind::Other(name),
    };
    Ok(Form::Attribute(Attribute { kind, span }))
}

fn export_list(value: &Expr) -> Result<Vec<FunctionName>, GrammarError> {
    let bad = |span| {
        user_error(
            "bad -export attribute: expected a list of name/arity, as in -export([main/1]).",
            span,
        )
    };
    let ExprKind::List(items, None) = &value.kind else {
        return Err(bad(value.span));
    };
    let mut names = Vec::new();
    for item in items {
        match &item.kind {
            ExprKind::BinaryOp(BinaryOp::Div, name, arity) => match (&name.kind, &arity.kind) {
                (ExprKind::Atom(name), ExprKind::Integer(arity)) => match u32::try_from(arity) {
                    Ok(arity) => names.push(FunctionName {
                        name: name.clone(),
                        arity,
                        span: item.span,
                    }),
                    Err(_) => return Err(bad(item.span)),
                },
                _ => return Err(bad(item.span)),
            },
            _ => return Err(bad(item.span)),
        }
    }
    Ok(names)
}

/// Groups the clauses of one form; name and arity come from the first.
pub fn make_function(clauses: Vec<FunctionClause>, span: Span) -> Function {
    let name = clauses[0].name.clone();
    let arity = clauses[0].clause.patterns.len() as u32;
    Function {
        name,
        arity,
        clauses,
        span,
    }
}

/// A fun's clauses are all anonymous or all named with the same name.
pub fn make_fun(
    clauses: Vec<(Option<Var>, Clause)>,
    start: usize,
    end: usize,
) -> Result<Expr, GrammarError> {
    let first_name = clauses[0].0.clone();
    let mut plain = Vec::with_capacity(clauses.len());
    for (name, clause) in clauses {
        let same = match (&first_name, &name) {
            (None, None) => true,
            (Some(a), Some(b)) => a.name == b.name,
            _ => false,
        };
        if !same {
            let span = name.map_or(clause.span, |n| n.span);
            return Err(user_error(
                "the clauses of a named fun must all use the same name",
                span,
            ));
        }
        plain.push(clause);
    }
    let fun = match first_name {
        None => Fun::Anonymous(plain),
        Some(name) => Fun::Named(name, plain),
    };
    Ok(mk(ExprKind::Fun(Box::new(fun)), start, end))
}

/// `Reason`, `Class:Reason` or `Class:Reason:Stack`; a class is an atom or
/// a variable.
pub fn make_catch_clause(
    class: Option<(Expr, usize)>,
    reason: Expr,
    stack: Option<Var>,
    guard: Guard,
    body: Vec<Expr>,
    start: usize,
    end: usize,
) -> Result<CatchClause, GrammarError> {
    // erl_parse reads `Class:` only after an atom or a variable, and the
    // reason as a pattern: anything else is a syntax error at the `:`
    // (or at the `(` of what act read as a remote call, `error:f(X)`).
    let not_a_class = |class: &Expr, colon: usize| {
        let mut error = user_error(
            "the class of a catch clause must be an atom or a variable",
            class.span,
        );
        if let ParseError::User { error } = &mut error {
            error.escript = Some((colon as u32, "syntax error before: ':'".into()));
        }
        error
    };
    if let Some((class, colon)) = &class
        && !matches!(class.kind, ExprKind::Atom(_) | ExprKind::Var(_))
    {
        return Err(not_a_class(class, *colon));
    }
    if class.is_none()
        && let ExprKind::Call(target, _) = &reason.kind
        && let CallTarget::Remote(m, f) = target.as_ref()
    {
        if !matches!(m.kind, ExprKind::Atom(_) | ExprKind::Var(_)) {
            return Err(not_a_class(m, m.span.end as usize));
        }
        let mut error = user_error("a catch clause takes a pattern, not a call", reason.span);
        if let ParseError::User { error } = &mut error {
            error.escript = Some((f.span.end, "syntax error before: '('".into()));
        }
        return Err(error);
    }
    Ok(CatchClause {
        class: class.map(|(class, _)| class),
        reason,
        stack,
        guard,
        body,
        span: Span::new(start, end),
    })
}

fn user_error(message: &str, span: Span) -> GrammarError {
    ParseError::User {
        error: UserError {
            message: message.to_string(),
            span,
            escript: None,
        },
    }
}

// ---- forms ----------------------------------------------------------------

/// The tokens of one form, without its dot, and where it ends.
struct FormTokens<'t> {
    tokens: &'t [Spanned],
    /// The span of the terminating dot, or the end of the file if missing.
    end: Span,
    has_dot: bool,
}

fn split_forms(tokens: &[Spanned], source_len: usize) -> Vec<FormTokens<'_>> {
    let mut forms = Vec::new();
    let mut start = 0;
    for (i, (l, token, r)) in tokens.iter().enumerate() {
        if *token == Token::Dot {
            forms.push(FormTokens {
                tokens: &tokens[start..i],
                end: Span::new(*l, *r),
                has_dot: true,
            });
            start = i + 1;
        }
    }
    if start < tokens.len() {
        // Point just after the last token, not at trailing blank lines.
        let end = tokens.last().map_or(source_len, |t| t.2);
        forms.push(FormTokens {
            tokens: &tokens[start..],
            end: Span::new(end, end),
            has_dot: false,
        });
    }
    forms
}

/// Errors that stop a form before the parser sees it: lexical errors and
/// nesting beyond `MAX_NESTING`.
fn pre_check(form: &FormTokens) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    // A stray ASCII character is a token to erl_scan, which the parser
    // refuses: only the first is an error, and only in a form that has no
    // error of the scanner's own.
    let mut stray = None;
    for (i, (l, token, r)) in form.tokens.iter().enumerate() {
        if let Token::Error(error) = token {
            if let LexError::UnexpectedCharacter(c) = error
                && c.is_ascii()
            {
                if stray.is_none() {
                    stray = Some(Diagnostic::error(error.message(), Span::new(*l, *r)));
                    if let Some((at, words)) = error.escript_words() {
                        stray = stray.map(|d| d.escript_at(*l as u32 + at, words));
                    }
                }
                continue;
            }
            let mut diagnostic = Diagnostic::error(error.message(), Span::new(*l, *r));
            if let Some((at, words)) = error.escript_words() {
                diagnostic = diagnostic.escript_at(*l as u32 + at, words);
            }
            let dot = (form.end.start as usize, Token::Dot, form.end.end as usize);
            let next = match form.tokens.get(i + 1) {
                Some(next) => Some(next),
                None if form.has_dot => Some(&dot),
                None => None,
            };
            diagnostic
                .escript
                .extend(scan_goes_on(error, *l as u32, next));
            errors.push(diagnostic);
        }
    }
    if errors.is_empty() {
        errors.extend(stray);
    }
    if !errors.is_empty() {
        return errors;
    }
    let mut depth = 0usize;
    for (i, (l, token, r)) in form.tokens.iter().enumerate() {
        let opens = match token {
            Token::LParen | Token::LBracket | Token::LBrace | Token::OpenBin => true,
            Token::Begin | Token::Case | Token::If | Token::Receive | Token::Try => true,
            // `fun (...) ... end` and `fun Name(...) ... end` open a block
            // that `end` closes; `fun f/1` and `fun m:f/1` do not.
            Token::Fun => match form.tokens.get(i + 1) {
                Some((_, Token::LParen, _)) => true,
                Some((_, Token::Var(_), _)) => {
                    matches!(form.tokens.get(i + 2), Some((_, Token::LParen, _)))
                }
                _ => false,
            },
            _ => false,
        };
        if opens {
            depth += 1;
            if depth > MAX_NESTING {
                errors.push(
                    Diagnostic::error(
                        format!("nested too deeply (more than {MAX_NESTING} levels)"),
                        Span::new(*l, *r),
                    )
                    .with_hint("split the expression into smaller functions"),
                );
                return errors;
            }
        } else if matches!(
            token,
            Token::RParen | Token::RBracket | Token::RBrace | Token::CloseBin | Token::End
        ) {
            depth = depth.saturating_sub(1);
        }
    }
    errors
}

/// After an illegal base, float, integer or atom, erl_scan goes on reading
/// where it stopped, and what is left of the form is a form of its own,
/// which erl_parse refuses at its first token (`37#1.` gives `illegal
/// base '37'`, then `syntax error before: '#'`). `next` is the token after
/// the bad one; a rest starting with an atom or `-` could be anything,
/// and gets no second line.
fn scan_goes_on(error: &LexError, start: u32, next: Option<&Spanned>) -> Option<(u32, String)> {
    use super::lexer::NumberFault;
    match error {
        LexError::BadNumber(_, NumberFault::Base(base)) => Some((
            start + base.len() as u32,
            "syntax error before: '#'".to_string(),
        )),
        LexError::BadNumber(_, NumberFault::Float | NumberFault::Integer)
        | LexError::AtomTooLong => match next {
            Some((at, token, _)) if !matches!(token, Token::Atom(_) | Token::Minus) => Some((
                *at as u32,
                format!("syntax error before: {}", token.escript_text()),
            )),
            _ => None,
        },
        _ => None,
    }
}

/// Rejects a tree deeper than `MAX_EXPR_DEPTH`, taking it apart without
/// recursion so that dropping it is safe too.
fn depth_check(form: Form) -> Result<Form, Diagnostic> {
    let mut roots = Vec::new();
    walk::form_roots(&form, &mut roots);
    match walk::deeper_than(roots, MAX_EXPR_DEPTH) {
        None => Ok(form),
        Some(span) => {
            walk::dismantle_form(form);
            Err(too_deep(span))
        }
    }
}

fn too_deep(span: Span) -> Diagnostic {
    Diagnostic::error(
        format!("expression nested too deeply (more than {MAX_EXPR_DEPTH} levels)"),
        span,
    )
    .with_hint("split the expression into smaller pieces")
}

/// Parses every form of a file, recovering at each dot. The module holds
/// the forms that parsed; the diagnostics hold every error found.
///
/// Inputs larger than 16 KiB are parsed on a thread with a large stack:
/// a failed parse of a long operator chain drops a deep partial tree.
pub fn parse_module(source: &str) -> (Module, Vec<Diagnostic>) {
    let parsed = parse_module_detailed(source);
    (parsed.module, parsed.diagnostics)
}

/// What `parse_module_detailed` found.
pub struct ParsedModule {
    pub module: Module,
    pub diagnostics: Vec<Diagnostic>,
    /// Names of the functions whose forms failed to parse (`f` of a broken
    /// `f(X) -> ...`): calls to them are not "undefined", only broken.
    pub broken_functions: Vec<String>,
}

/// `parse_module`, also naming the functions whose forms failed.
pub fn parse_module_detailed(source: &str) -> ParsedModule {
    if source.len() > 16 * 1024 {
        super::with_big_stack(|| parse_module_here(source))
    } else {
        parse_module_here(source)
    }
}

fn parse_module_here(source: &str) -> ParsedModule {
    parse_tokens(&tokenize(source), source.len())
}

/// Parses the forms of a token stream (as the preprocessor leaves it);
/// `source_len` is where the text ends, for a last form without a dot.
pub fn parse_tokens(tokens: &[Spanned], source_len: usize) -> ParsedModule {
    if tokens.len() > 4096 {
        super::with_big_stack(|| parse_tokens_here(tokens, source_len))
    } else {
        parse_tokens_here(tokens, source_len)
    }
}

/// Parses an expression sequence from tokens without a dot (the
/// condition of `-if`).
pub fn parse_expr_tokens(tokens: &[Spanned]) -> Result<Vec<Expr>, Diagnostic> {
    let end = tokens.last().map_or(0, |t| t.2);
    let form = FormTokens {
        tokens,
        end: Span::new(end, end),
        has_dot: false,
    };
    if let Some(error) = pre_check(&form).into_iter().next() {
        return Err(error);
    }
    match grammar::ExprSeqParser::new().parse(tokens.iter().cloned()) {
        Ok(exprs) => match walk::deeper_than(exprs.iter().collect(), MAX_EXPR_DEPTH) {
            None => Ok(exprs),
            Some(span) => {
                walk::dismantle(exprs);
                Err(too_deep(span))
            }
        },
        Err(error) => Err(parse_error_to_diagnostic(error, &form)),
    }
}

/// Parses one form from tokens without its dot (erl_parse:parse_form).
pub fn parse_form_tokens(tokens: &[Spanned]) -> Result<Form, Diagnostic> {
    let end = tokens.last().map_or(0, |t| t.2);
    let form = FormTokens {
        tokens,
        end: Span::new(end, end),
        has_dot: true,
    };
    parse_one_form(&form).map_err(|mut errors| errors.remove(0))
}

fn parse_tokens_here(tokens: &[Spanned], source_len: usize) -> ParsedModule {
    let mut forms = Vec::new();
    let mut diagnostics = Vec::new();
    let mut broken_functions = Vec::new();
    for form_tokens in split_forms(tokens, source_len) {
        let failed = match parse_one_form(&form_tokens) {
            Ok(form) => {
                forms.push(form);
                false
            }
            Err(errors) => {
                diagnostics.extend(errors);
                if let Some((_, Token::Atom(name), _)) = form_tokens.tokens.first() {
                    broken_functions.push(name.clone());
                }
                true
            }
        };
        // A form that already failed (often an unterminated string that
        // swallowed the rest of the file) needs no second error at the end.
        if !form_tokens.has_dot && !failed {
            // erl_parse reports the missing dot at the last token.
            let last = form_tokens
                .tokens
                .last()
                .map_or(form_tokens.end.start, |t| t.0 as u32);
            diagnostics.push(
                Diagnostic::error(
                    "unexpected end of file: the last form does not end with '.'",
                    form_tokens.end,
                )
                .with_hint("end every attribute and function with a '.'")
                .escript_at(last, "syntax error before: "),
            );
        }
    }
    ParsedModule {
        module: Module { forms },
        diagnostics,
        broken_functions,
    }
}

fn parse_one_form(form: &FormTokens) -> Result<Form, Vec<Diagnostic>> {
    let errors = pre_check(form);
    if errors
        .iter()
        .any(|d| d.message.starts_with("nested too deeply"))
    {
        // The parser keeps its own stack, so it may still find the real
        // syntax error; the deep tree it builds otherwise is taken apart
        // without recursion.
        return match grammar::FormParser::new().parse(form.tokens.iter().cloned()) {
            Ok(tree) => {
                walk::dismantle_form(tree);
                Err(errors)
            }
            Err(error) => Err(vec![parse_error_to_diagnostic(error, form)]),
        };
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if let [(l, Token::Minus, _), (_, Token::Atom(name), _), ..] = form.tokens
        && let Some(result) =
            meaningful_attribute(name, form.tokens, Span::new(*l, form.end.start as usize))
    {
        return result.map_err(|d| vec![d]);
    }
    // Attributes other than -module and -export are skipped to their dot.
    if let [(l, Token::Minus, _), (_, Token::Atom(name), _), ..] = form.tokens
        && name != "module"
        && name != "export"
    {
        let end = form.tokens.last().map_or(*l, |t| t.2);
        return Ok(Form::Attribute(Attribute {
            kind: AttributeKind::Other(name.clone()),
            span: Span::new(*l, end),
        }));
    }
    let parser = grammar::FormParser::new();
    let result = parser.parse(form.tokens.iter().cloned());
    match result {
        Ok(form) => depth_check(form).and_then(head_check).map_err(|d| vec![d]),
        Err(error) => Err(vec![parse_error_to_diagnostic(error, form)]),
    }
}

/// As erl_parse builds a function: every clause must have the first
/// clause's name and arity, or the form is `head mismatch` at the first
/// clause that does not (a syntax error, so escript stops before it lints).
fn head_check(form: Form) -> Result<Form, Diagnostic> {
    let Form::Function(function) = &form else {
        return Ok(form);
    };
    let bad = function.clauses.iter().find(|clause| {
        clause.name != function.name || clause.clause.patterns.len() as u32 != function.arity
    });
    match bad {
        None => Ok(form),
        Some(clause) => Err(Diagnostic::error("head mismatch", clause.name_span)
            .with_hint(format!(
                "this clause is {}/{}, but its function is {}/{}; end a function with '.' \
                 before starting the next",
                clause.name,
                clause.clause.patterns.len(),
                function.name,
                function.arity
            ))
            .escript_says("head mismatch")),
    }
}

/// The attributes read here rather than by the grammar, because their
/// arguments are not one expression: `-record`, `-import`, `-compile`
/// and `-on_load`. `None` for every other attribute.
fn meaningful_attribute(
    name: &str,
    tokens: &[Spanned],
    span: Span,
) -> Option<Result<Form, Diagnostic>> {
    let attribute = |kind| Ok(Form::Attribute(Attribute { kind, span }));
    let name_span = Span::new(tokens[1].0, tokens[1].2);
    // The tokens inside `-name( ... )`.
    let inner = match tokens {
        [
            _,
            _,
            (_, Token::LParen, _),
            inner @ ..,
            (_, Token::RParen, _),
        ] => Some(inner),
        _ => None,
    };
    match name {
        "record" => Some(match inner {
            Some(inner) => record_definition(inner, span).map(|def| {
                Form::Attribute(Attribute {
                    kind: AttributeKind::Record(def),
                    span,
                })
            }),
            None => Err(Diagnostic::error("bad record declaration", name_span)),
        }),
        "import" => Some((|| {
            let bad = || {
                Diagnostic::error(
                    "bad -import attribute: expected -import(module, [name/arity, ...]).",
                    name_span,
                )
            };
            let inner = inner.ok_or_else(bad)?;
            let [(_, Token::Atom(module), _), (_, Token::Comma, _), list @ ..] = inner else {
                return Err(bad());
            };
            let exprs = parse_expr_tokens(list)?;
            let [list] = exprs.as_slice() else {
                return Err(bad());
            };
            let names = export_list(list).map_err(|_| bad())?;
            attribute(AttributeKind::Import(module.clone(), names))
        })()),
        "compile" => Some((|| {
            let exprs = parse_expr_tokens(inner.unwrap_or_default())?;
            let has = |option: &str| {
                exprs.iter().any(|e| match &e.kind {
                    ExprKind::Atom(a) => a == option,
                    ExprKind::List(items, _) => items
                        .iter()
                        .any(|i| matches!(&i.kind, ExprKind::Atom(a) if a == option)),
                    _ => false,
                })
            };
            attribute(if has("export_all") {
                AttributeKind::ExportAll {
                    warn: !has("nowarn_export_all"),
                }
            } else if has("nowarn_export_all") {
                AttributeKind::Other("nowarn_export_all".to_string())
            } else {
                AttributeKind::Other("compile".to_string())
            })
        })()),
        "on_load" => Some(Err(Diagnostic::error(
            "-on_load is not supported: act has no on_load step when it loads a module",
            name_span,
        )
        .with_hint("call the initialization function from main/1 instead"))),
        _ => None,
    }
}

/// `name, {field, field = Default, field :: type()}` of `-record(...)`.
fn record_definition(tokens: &[Spanned], span: Span) -> Result<RecordDef, Diagnostic> {
    let bad = |at: Span| Diagnostic::error("bad record declaration", at);
    let [
        (nl, Token::Atom(name), nr),
        (_, Token::Comma, _),
        (_, Token::LBrace, _),
        body @ ..,
        (_, Token::RBrace, _),
    ] = tokens
    else {
        return Err(bad(tokens.first().map_or(span, |t| Span::new(t.0, t.2))));
    };
    let mut fields = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut pieces = Vec::new();
    for (i, (_, token, _)) in body.iter().enumerate() {
        match token {
            Token::LParen | Token::LBracket | Token::LBrace | Token::OpenBin => depth += 1,
            Token::Begin | Token::Case | Token::If | Token::Receive | Token::Try => depth += 1,
            Token::Fun if matches!(body.get(i + 1), Some((_, Token::LParen, _))) => depth += 1,
            Token::RParen | Token::RBracket | Token::RBrace | Token::CloseBin | Token::End => {
                depth = depth.saturating_sub(1)
            }
            Token::Comma if depth == 0 => {
                pieces.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !body.is_empty() {
        pieces.push(&body[start..]);
    }
    for piece in pieces {
        // The type after `::` is documentation only.
        let mut depth = 0usize;
        let mut end = piece.len();
        for (i, (_, token, _)) in piece.iter().enumerate() {
            match token {
                Token::LParen | Token::LBracket | Token::LBrace | Token::OpenBin => depth += 1,
                Token::RParen | Token::RBracket | Token::RBrace | Token::CloseBin => {
                    depth = depth.saturating_sub(1)
                }
                Token::ColonColon if depth == 0 => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        let piece = &piece[..end];
        match piece {
            [(l, Token::Atom(field), r)] => fields.push(RecordFieldDef {
                name: Name {
                    name: field.clone(),
                    span: Span::new(*l, *r),
                },
                default: None,
            }),
            [
                (l, Token::Atom(field), r),
                (_, Token::Equals, _),
                value @ ..,
            ] if !value.is_empty() => {
                let exprs = parse_expr_tokens(value)?;
                let [default] = <[Expr; 1]>::try_from(exprs).map_err(|_| bad(Span::new(*l, *r)))?;
                fields.push(RecordFieldDef {
                    name: Name {
                        name: field.clone(),
                        span: Span::new(*l, *r),
                    },
                    default: Some(default),
                });
            }
            [first, ..] => {
                return Err(Diagnostic::error(
                    "bad record field",
                    Span::new(first.0, first.2),
                ));
            }
            [] => return Err(bad(span)),
        }
    }
    Ok(RecordDef {
        name: Name {
            name: name.clone(),
            span: Span::new(*nl, *nr),
        },
        fields,
    })
}

/// Parses a single form (a function definition or an attribute), as typed
/// at the REPL. A final dot is required.
pub fn parse_form(source: &str) -> Result<Form, Vec<Diagnostic>> {
    let tokens = tokenize(source);
    let forms = split_forms(&tokens, source.len());
    let Some(form_tokens) = single_form(&forms, source)? else {
        return Err(vec![Diagnostic::error(
            "expected a form, found nothing",
            Span::new(source.len(), source.len()),
        )]);
    };
    parse_one_form(form_tokens)
}

/// Parses an expression sequence ending in a dot (`X = 1, X + 1.`), as
/// typed at the REPL.
pub fn parse_exprs(source: &str) -> Result<Vec<Expr>, Vec<Diagnostic>> {
    let tokens = tokenize(source);
    let forms = split_forms(&tokens, source.len());
    let Some(form) = single_form(&forms, source)? else {
        return Err(vec![Diagnostic::error(
            "expected an expression, found nothing",
            Span::new(source.len(), source.len()),
        )]);
    };
    let errors = pre_check(form);
    if !errors.is_empty() {
        return Err(errors);
    }
    let parser = grammar::ExprSeqParser::new();
    match parser.parse(form.tokens.iter().cloned()) {
        Ok(exprs) => match walk::deeper_than(exprs.iter().collect(), MAX_EXPR_DEPTH) {
            None => Ok(exprs),
            Some(span) => {
                walk::dismantle(exprs);
                Err(vec![too_deep(span)])
            }
        },
        Err(error) => Err(vec![parse_error_to_diagnostic(error, form)]),
    }
}

/// A complete input typed at the REPL.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplInput {
    /// `X = 1, X + 2.`
    Exprs(Vec<Expr>),
    /// `double(X) -> 2 * X.` or `-module(m).`
    Form(Form),
}

/// Parses REPL input as an expression sequence or, failing that, as a
/// form. Input starting with `-name` is an attribute, not a negation.
/// When both fail, the errors of the reading that got further are kept.
pub fn parse_repl(source: &str) -> Result<ReplInput, Vec<Diagnostic>> {
    let tokens = tokenize(source);
    if let [
        (_, Token::Minus, _),
        (_, Token::Atom(_), _),
        (_, Token::LParen, _),
        ..,
    ] = tokens.as_slice()
    {
        return parse_form(source).map(ReplInput::Form);
    }
    let expr_errors = match parse_exprs(source) {
        Ok(exprs) => return Ok(ReplInput::Exprs(exprs)),
        Err(errors) => errors,
    };
    match parse_form(source) {
        Ok(form) => Ok(ReplInput::Form(form)),
        Err(form_errors) => {
            let reach = |errors: &[Diagnostic]| errors.first().map_or(0, |d| d.span.start);
            Err(if reach(&form_errors) > reach(&expr_errors) {
                form_errors
            } else {
                expr_errors
            })
        }
    }
}

/// True when `source` holds a `dot` token: the REPL reads more lines until
/// it does.
pub fn is_complete(source: &str) -> bool {
    tokenize(source).iter().any(|(_, t, _)| *t == Token::Dot)
}

fn single_form<'f, 't>(
    forms: &'f [FormTokens<'t>],
    source: &str,
) -> Result<Option<&'f FormTokens<'t>>, Vec<Diagnostic>> {
    match forms {
        [] => Ok(None),
        [first, rest @ ..] => {
            if !first.has_dot {
                return Err(vec![Diagnostic::error(
                    "unexpected end of input: expected '.' at the end",
                    Span::new(source.len(), source.len()),
                )]);
            }
            if let Some(extra) = rest.first() {
                let start = extra
                    .tokens
                    .first()
                    .map_or(extra.end.start as usize, |t| t.0);
                return Err(vec![Diagnostic::error(
                    "unexpected text after the '.' that ends the input",
                    Span::new(start, start + 1),
                )]);
            }
            Ok(Some(first))
        }
    }
}

// ---- error messages ---------------------------------------------------------

fn parse_error_to_diagnostic(error: GrammarError, form: &FormTokens) -> Diagnostic {
    match error {
        ParseError::InvalidToken { location } => {
            Diagnostic::error("invalid token", Span::new(location, location + 1))
        }
        ParseError::UnrecognizedEof { expected, .. } => {
            // lalrpop places the end at the last token; the real end of
            // the form is its dot (or the end of the file).
            let found = if form.has_dot {
                "'.' (the end of the form)"
            } else {
                "the end of the file"
            };
            let message = format!(
                "syntax error: unexpected {found}{}",
                expected_words(&expected)
            );
            let mut diagnostic = Diagnostic::error(message, form.end);
            if form.has_dot {
                diagnostic = diagnostic
                    .with_hint("a '.' followed by white space always ends a form")
                    .escript_says("syntax error before: '.'");
            } else {
                // erl_parse reports the missing end at the last token.
                let last = form.tokens.last().map_or(form.end.start, |t| t.0 as u32);
                diagnostic = diagnostic.escript_at(last, "syntax error before: ");
            }
            diagnostic
        }
        ParseError::UnrecognizedToken {
            token: (l, token, r),
            expected,
        } => {
            let message = format!(
                "syntax error: unexpected {}{}",
                token.describe(),
                expected_words(&expected)
            );
            let mut diagnostic = Diagnostic::error(message, Span::new(l, r))
                .escript_says(format!("syntax error before: {}", token.escript_text()));
            if token == Token::Period {
                diagnostic =
                    diagnostic.with_hint("a '.' that ends a form must be followed by white space");
            }
            diagnostic
        }
        ParseError::ExtraToken {
            token: (l, token, r),
        } => Diagnostic::error(
            format!(
                "syntax error: unexpected {}, expected the end of the form",
                token.describe()
            ),
            Span::new(l, r),
        )
        .escript_says(format!("syntax error before: {}", token.escript_text())),
        ParseError::User { error } => {
            let diagnostic = Diagnostic::error(error.message, error.span);
            match error.escript {
                Some((at, says)) => diagnostic.escript_at(at, says),
                None => diagnostic,
            }
        }
    }
}

/// Tokens that can start an expression, as lalrpop names them.
const EXPRESSION_STARTS: &[&str] = &[
    "atom", "var", "number", "char", "string", "(", "[", "{", "<<", "#", "begin", "case", "if",
    "receive", "fun", "try", "catch", "+", "-", "not", "bnot",
];

/// Infix operators, as lalrpop names them.
const OPERATORS: &[&str] = &[
    "=", "!", "orelse", "andalso", "==", "/=", "=<", "<", ">=", ">", "=:=", "=/=", "++", "--", "+",
    "-", "bor", "bxor", "bsl", "bsr", "or", "xor", "/", "*", "div", "rem", "band", "and",
];

/// `, expected an expression or ')'`: lalrpop's list of terminals in words.
fn expected_words(expected: &[String]) -> String {
    let names: Vec<&str> = expected.iter().map(|e| e.trim_matches('"')).collect();
    if names.len() == 2 && names.contains(&"atom") && names.contains(&"-") {
        return ", expected a function definition or an attribute".to_string();
    }
    let has = |n: &str| names.contains(&n);
    let mut words: Vec<String> = Vec::new();
    let expression = has("var") && has("atom") && has("(");
    let operator = has("==") && has("*") && has("++");
    if expression {
        words.push("an expression".into());
    }
    if operator {
        words.push("an operator".into());
    }
    for name in &names {
        if (expression && EXPRESSION_STARTS.contains(name))
            || (operator && OPERATORS.contains(name))
        {
            continue;
        }
        words.push(match *name {
            "atom" => "an atom".into(),
            "var" => "a variable".into(),
            "number" => "a number".into(),
            "char" => "a character".into(),
            "string" => "a string".into(),
            other => format!("'{other}'"),
        });
    }
    if words.is_empty() {
        return String::new();
    }
    const SHOWN: usize = 8;
    let more = words.len() > SHOWN;
    words.truncate(SHOWN);
    let mut text = String::from(", expected ");
    let last = words.len() - 1;
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            text.push_str(if i == last && !more { " or " } else { ", " });
        }
        text.push_str(word);
    }
    if more {
        text.push_str(", ...");
    }
    text
}
