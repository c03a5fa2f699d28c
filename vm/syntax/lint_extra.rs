//! The warnings of erl_lint about a module as a whole rather than one
//! function: records and types defined but never used, callbacks of a
//! `-behaviour` of OTP's that the module does not export, and calls to
//! functions OTP 25 marks deprecated or removed.
//!
//! As erl_lint: a record counts as used when any form names it (`#r`,
//! `record_info(_, r)`, `is_record(X, r)`), even an unused function or
//! another record's field type; a type counts as used when a `-spec`, a
//! `-callback`, a record's field type or `-export_type` reaches it, or a
//! used type does. Only definitions in the script itself are reported,
//! not those of included files.

use super::ast::{AttributeKind, Form, Module};
use super::diagnostic::Diagnostic;
use super::lexer::{Spanned, Token, tokenize};
use super::preprocess::Sources;
use super::span::Span;
use std::collections::{BTreeMap, BTreeSet};

/// What OTP 25 says about a call to `module:name/arity` that it marks
/// deprecated or removed (otp_internal's table, for the functions
/// programs commonly still call).
pub fn deprecation(module: &str, name: &str, arity: u32) -> Option<String> {
    const TABLE: &[(&str, &str, u32, &str, &str)] = &[
        (
            "erlang",
            "now",
            0,
            "deprecated",
            "see the \"Time and Time Correction in Erlang\" chapter of the ERTS User's Guide for more information",
        ),
        (
            "erlang",
            "phash",
            2,
            "deprecated",
            "use erlang:phash2/2 instead",
        ),
        (
            "erlang",
            "get_stacktrace",
            0,
            "removed",
            "use the new try/catch syntax for retrieving the stack backtrace",
        ),
        (
            "erlang",
            "hash",
            2,
            "removed",
            "use erlang:phash2/2 instead",
        ),
        ("queue", "lait", 1, "deprecated", "use queue:liat/1 instead"),
        (
            "calendar",
            "local_time_to_universal_time",
            1,
            "deprecated",
            "use calendar:local_time_to_universal_time_dst/1 instead",
        ),
        (
            "crypto",
            "rand_uniform",
            2,
            "deprecated",
            "use rand:uniform/1 instead",
        ),
        (
            "filename",
            "safe_relative_path",
            1,
            "removed",
            "use filelib:safe_relative_path/2 instead",
        ),
        (
            "rpc",
            "safe_multi_server_call",
            2,
            "removed",
            "use rpc:multi_server_call/2 instead",
        ),
        (
            "rpc",
            "safe_multi_server_call",
            3,
            "removed",
            "use rpc:multi_server_call/3 instead",
        ),
    ];
    // Whole modules OTP 25 deprecates: every exported function.
    const GEN_FSM: &[&str] = &[
        "start",
        "start_link",
        "stop",
        "send_event",
        "send_all_state_event",
        "sync_send_event",
        "sync_send_all_state_event",
        "reply",
        "start_timer",
        "send_event_after",
        "cancel_timer",
        "enter_loop",
    ];
    let (how, why) = if module == "random" {
        ("deprecated", "use the 'rand' module instead")
    } else if module == "gen_fsm" && GEN_FSM.contains(&name) {
        ("deprecated", "use the 'gen_statem' module instead")
    } else {
        let &(_, _, _, how, why) = TABLE
            .iter()
            .find(|&&(m, f, a, _, _)| m == module && f == name && a == arity)?;
        (how, why)
    };
    Some(format!("{module}:{name}/{arity} is {how}; {why}"))
}

/// The records the tokens of a program name (after preprocessing).
pub fn record_uses(tokens: &[Spanned]) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for (i, (_, token, _)) in tokens.iter().enumerate() {
        let next = |k: usize| tokens.get(i + k).map(|t| &t.1);
        match token {
            Token::Hash => {
                if let Some(Token::Atom(name)) = next(1) {
                    used.insert(name.clone());
                }
            }
            Token::Atom(f) if f == "record_info" && next(1) == Some(&Token::LParen) => {
                if let (Some(Token::Atom(_)), Some(Token::Comma), Some(Token::Atom(name))) =
                    (next(2), next(3), next(4))
                {
                    used.insert(name.clone());
                }
            }
            Token::Atom(f) if f == "is_record" && next(1) == Some(&Token::LParen) => {
                if let Some(name) = second_argument_atom(&tokens[i + 2..]) {
                    used.insert(name);
                }
            }
            _ => {}
        }
    }
    used
}

/// In `X, name)` (the tokens after `is_record(`): `name`, when the call
/// has exactly two arguments and the second is an atom.
fn second_argument_atom(tokens: &[Spanned]) -> Option<String> {
    let mut depth = 0usize;
    for (i, (_, token, _)) in tokens.iter().enumerate() {
        match token {
            Token::LParen | Token::LBracket | Token::LBrace | Token::OpenBin => depth += 1,
            Token::RParen | Token::RBracket | Token::RBrace | Token::CloseBin => {
                if depth == 0 {
                    return None;
                }
                depth -= 1;
            }
            Token::Comma if depth == 0 => {
                return match (tokens.get(i + 1), tokens.get(i + 2)) {
                    (Some((_, Token::Atom(name), _)), Some((_, Token::RParen, _))) => {
                        Some(name.clone())
                    }
                    _ => None,
                };
            }
            Token::Dot => return None,
            _ => {}
        }
    }
    None
}

/// The callbacks an OTP 25 behaviour requires (its behaviour_info
/// callbacks less the optional ones), in its order.
const BEHAVIOURS: &[(&str, &[(&str, u32)])] = &[
    (
        "gen_server",
        &[("init", 1), ("handle_call", 3), ("handle_cast", 2)],
    ),
    ("supervisor", &[("init", 1)]),
    ("gen_statem", &[("init", 1), ("callback_mode", 0)]),
    (
        "gen_event",
        &[("init", 1), ("handle_event", 2), ("handle_call", 2)],
    ),
    ("application", &[("start", 2), ("stop", 1)]),
    ("supervisor_bridge", &[("init", 1), ("terminate", 2)]),
];

/// erl_lint's `undefined callback function f/N (behaviour 'b')` for each
/// required callback of each `-behaviour(b)` (or `-behavior`) of OTP's
/// that the module does not export, at the attribute's name. A script
/// without `-module` exports only `main/1` (escript's own attribute).
/// Behaviours act does not know are not looked at.
pub fn missing_callbacks(module: &Module, sources: &Sources) -> Vec<Diagnostic> {
    let mut exported: BTreeSet<(String, u32)> = BTreeSet::new();
    let mut export_all = false;
    if !matches!(
        module.forms.first(),
        Some(Form::Attribute(a)) if matches!(a.kind, AttributeKind::Module(_))
    ) {
        exported.insert(("main".to_string(), 1));
    }
    for form in &module.forms {
        if let Form::Attribute(attribute) = form {
            match &attribute.kind {
                AttributeKind::Export(names) => {
                    exported.extend(names.iter().map(|n| (n.name.clone(), n.arity)));
                }
                AttributeKind::ExportAll { .. } => export_all = true,
                _ => {}
            }
        }
    }
    let defined: BTreeSet<(String, u32)> = module
        .forms
        .iter()
        .filter_map(|form| match form {
            Form::Function(f) => Some((f.name.clone(), f.arity)),
            _ => None,
        })
        .collect();
    let mut warnings = Vec::new();
    for form in &module.forms {
        let Form::Attribute(attribute) = form else {
            continue;
        };
        let AttributeKind::Other(kind) = &attribute.kind else {
            continue;
        };
        if kind != "behaviour" && kind != "behavior" {
            continue;
        }
        let tokens = attribute_tokens(sources, attribute.span);
        let Some((_, Token::Atom(name), _)) = tokens.get(3) else {
            continue;
        };
        let Some((_, required)) = BEHAVIOURS.iter().find(|(b, _)| b == name) else {
            continue;
        };
        for &(f, arity) in required.iter() {
            let key = (f.to_string(), arity);
            let has = if export_all {
                defined.contains(&key)
            } else {
                exported.contains(&key) && defined.contains(&key)
            };
            if !has {
                warnings.push(Diagnostic::warning(
                    format!("undefined callback function {f}/{arity} (behaviour '{name}')"),
                    attribute_name(attribute.span, kind),
                ));
            }
        }
    }
    warnings
}

/// Where erl_lint places a message about an attribute: at its name.
fn attribute_name(span: Span, name: &str) -> Span {
    let at = span.start as usize + 1;
    Span::new(at, at + name.len())
}

fn in_script(sources: &Sources, span: Span) -> bool {
    sources.file_of(span.start).base == 0
}

fn attribute_tokens(sources: &Sources, span: Span) -> Vec<Spanned> {
    let file = sources.file_of(span.start);
    let start = (span.start as usize - file.base).min(file.text.len());
    let end = (span.end as usize)
        .saturating_sub(file.base)
        .clamp(start, file.text.len());
    tokenize(file.text.get(start..end).unwrap_or(""))
}

/// The user types that `tokens` (a type expression, a spec) refer to:
/// `name(...)` not after `:` (a remote type), with its number of arguments.
fn type_references(tokens: &[Spanned]) -> Vec<(String, u32)> {
    let mut found = Vec::new();
    for (i, (_, token, _)) in tokens.iter().enumerate() {
        let Token::Atom(name) = token else { continue };
        if i > 0 && matches!(tokens[i - 1].1, Token::Colon | Token::Hash) {
            continue;
        }
        if tokens.get(i + 1).map(|t| &t.1) != Some(&Token::LParen) {
            continue;
        }
        if let Some(arity) = count_arguments(&tokens[i + 2..]) {
            found.push((name.clone(), arity));
        }
    }
    found
}

/// The number of arguments in `a, b)` (the tokens after an open paren).
fn count_arguments(tokens: &[Spanned]) -> Option<u32> {
    let mut depth = 0usize;
    let mut commas = 0;
    for (i, (_, token, _)) in tokens.iter().enumerate() {
        match token {
            Token::LParen | Token::LBracket | Token::LBrace | Token::OpenBin => depth += 1,
            Token::RParen if depth == 0 => return Some(if i == 0 { 0 } else { commas + 1 }),
            Token::RParen | Token::RBracket | Token::RBrace | Token::CloseBin => {
                depth = depth.checked_sub(1)?;
            }
            Token::Comma if depth == 0 => commas += 1,
            _ => {}
        }
    }
    None
}

/// A `-type` or `-opaque` definition.
struct TypeDef {
    opaque: bool,
    at: Span,
    body: Vec<(String, u32)>,
}

/// A type's name and arity.
type TypeName = (String, u32);

/// `-type name(P1, P2) :: Body` -> (name, arity, refs of Body).
fn type_definition(tokens: &[Spanned]) -> Option<(String, u32, Vec<TypeName>)> {
    // `-`, the attribute's name, an optional `(` around the whole.
    let mut i = 2;
    if tokens.get(i).map(|t| &t.1) == Some(&Token::LParen) {
        i += 1;
    }
    let Some((_, Token::Atom(name), _)) = tokens.get(i) else {
        return None;
    };
    if tokens.get(i + 1).map(|t| &t.1) != Some(&Token::LParen) {
        return None;
    }
    let arity = count_arguments(&tokens[i + 2..])?;
    let body_start = tokens
        .iter()
        .position(|t| t.1 == Token::ColonColon)
        .map_or(tokens.len(), |p| p + 1);
    Some((name.clone(), arity, type_references(&tokens[body_start..])))
}

/// The record and type warnings of a module.
pub fn unused_records_and_types(
    module: &Module,
    sources: &Sources,
    record_uses: &BTreeSet<String>,
) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    let mut types: BTreeMap<(String, u32), TypeDef> = BTreeMap::new();
    let mut roots: Vec<(String, u32)> = Vec::new();
    let mut exported: BTreeSet<(String, u32)> = BTreeSet::new();
    let mut seen_records: BTreeSet<String> = BTreeSet::new();
    for form in &module.forms {
        let Form::Attribute(attribute) = form else {
            continue;
        };
        match &attribute.kind {
            AttributeKind::Record(def) => {
                // A second definition is an error, not another record.
                let first = seen_records.insert(def.name.name.clone());
                if first
                    && in_script(sources, attribute.span)
                    && !record_uses.contains(&def.name.name)
                {
                    warnings.push(Diagnostic::warning(
                        format!("record {} is unused", def.name.name),
                        attribute_name(attribute.span, "record"),
                    ));
                }
                roots.extend(type_references(&attribute_tokens(sources, attribute.span)));
            }
            AttributeKind::Other(kind) => match kind.as_str() {
                "type" | "opaque" => {
                    let tokens = attribute_tokens(sources, attribute.span);
                    if let Some((name, arity, body)) = type_definition(&tokens) {
                        if in_script(sources, attribute.span) {
                            types.entry((name, arity)).or_insert(TypeDef {
                                opaque: kind == "opaque",
                                at: attribute_name(attribute.span, kind),
                                body,
                            });
                        } else {
                            roots.extend(body);
                        }
                    }
                }
                "spec" | "callback" => {
                    roots.extend(type_references(&attribute_tokens(sources, attribute.span)));
                }
                "export_type" => {
                    let tokens = attribute_tokens(sources, attribute.span);
                    for w in tokens.windows(3) {
                        if let (Token::Atom(name), Token::Slash, Token::Number(n)) =
                            (&w[0].1, &w[1].1, &w[2].1)
                            && let Some(arity) = number_u32(n)
                        {
                            exported.insert((name.clone(), arity));
                        }
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    roots.extend(exported.iter().cloned());
    let mut used: BTreeSet<(String, u32)> = BTreeSet::new();
    while let Some(t) = roots.pop() {
        if used.insert(t.clone())
            && let Some(def) = types.get(&t)
        {
            roots.extend(def.body.iter().cloned());
        }
    }
    for ((name, arity), def) in &types {
        let shown = format!("{name}({})", vec!["_"; *arity as usize].join(","));
        if def.opaque && !exported.contains(&(name.clone(), *arity)) {
            warnings.push(Diagnostic::warning(
                format!("opaque type {shown} is not exported"),
                def.at,
            ));
        }
        if !used.contains(&(name.clone(), *arity)) {
            warnings.push(Diagnostic::warning(
                format!("type {shown} is unused"),
                def.at,
            ));
        }
    }
    warnings
}

fn number_u32(n: &super::lexer::Number) -> Option<u32> {
    match n {
        super::lexer::Number::Integer(i) => u32::try_from(i).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(source: &str) -> Vec<String> {
        let program = crate::syntax::read_program("w.erl", "w.erl", source, None, "w");
        unused_records_and_types(&program.module, &program.sources, &program.record_uses)
            .into_iter()
            .map(|d| d.message)
            .collect()
    }

    #[test]
    fn records_named_anywhere_are_used() {
        let source = "-record(a, {x}).\n-record(b, {y}).\n-record(c, {z}).\n-record(d, {w}).\n\
                      -record(e, {v :: #d{}}).\n-record(h, {s}).\n\
                      main(X) -> #a{}, is_record(X, b), record_info(fields, c).\n";
        assert_eq!(
            warnings(source),
            vec!["record e is unused", "record h is unused"]
        );
    }

    #[test]
    fn types_reached_from_specs_and_exports_are_used() {
        let source = "-type t1() :: integer().\n-type t2(A) :: [A].\n-type t4() :: atom().\n\
                      -type t5() :: t4().\n-opaque t6() :: ok.\n-type t7() :: t8().\n\
                      -type t8() :: ok.\n-export_type([t7/0]).\n-spec main(t1()) -> ok.\n\
                      main(_) -> ok.\n";
        assert_eq!(
            warnings(source),
            vec![
                "type t2(_) is unused",
                "type t4() is unused",
                "type t5() is unused",
                "opaque type t6() is not exported",
                "type t6() is unused"
            ]
        );
    }

    #[test]
    fn deprecated_functions_say_what_to_use() {
        assert_eq!(
            deprecation("random", "uniform", 0).as_deref(),
            Some("random:uniform/0 is deprecated; use the 'rand' module instead")
        );
        assert_eq!(deprecation("lists", "map", 2), None);
    }
}
