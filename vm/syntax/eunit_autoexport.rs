//! What OTP's `eunit_autoexport` parse transform does to a module that
//! includes `eunit.hrl` (the header says
//! `-compile({parse_transform, eunit_autoexport})`): every function of
//! arity 0 named `..._test` or `..._test_` is exported, and so is a
//! `test/0` that runs them (`eunit:test(Module)`), added unless the
//! module has its own. Without it `eunit:test(M)` could not call them.

use super::ast::{Attribute, AttributeKind, Form, FunctionName, Module};
use super::lexer::{Spanned, Token};
use super::span::Span;

/// Whether the tokens hold `{parse_transform, eunit_autoexport}`.
pub fn wanted(tokens: &[Spanned]) -> bool {
    tokens.windows(5).any(|w| {
        matches!(
            w,
            [
                (_, Token::LBrace, _),
                (_, Token::Atom(a), _),
                (_, Token::Comma, _),
                (_, Token::Atom(b), _),
                (_, Token::RBrace, _),
            ] if a == "parse_transform" && b == "eunit_autoexport"
        )
    })
}

/// Adds the exports (after the last attribute before the first function,
/// where erlc allows an `-export`) and `test/0`. `default_name` is the
/// module's name when it has no `-module`.
pub fn apply(module: &mut Module, default_name: &str) {
    let mut name = default_name.to_string();
    let mut has_test = false;
    let mut tests = Vec::new();
    for form in &module.forms {
        match form {
            Form::Attribute(Attribute {
                kind: AttributeKind::Module(m),
                ..
            }) => name = m.clone(),
            Form::Function(f) if f.arity == 0 => {
                if f.name == "test" {
                    has_test = true;
                } else if f.name.ends_with("_test") || f.name.ends_with("_test_") {
                    tests.push(FunctionName {
                        name: f.name.clone(),
                        arity: 0,
                        span: f.span,
                    });
                }
            }
            _ => {}
        }
    }
    let at = module
        .forms
        .iter()
        .position(|f| matches!(f, Form::Function(_)))
        .unwrap_or(module.forms.len());
    let span = match module.forms.get(at) {
        Some(Form::Function(f)) => Span {
            end: f.span.start,
            ..f.span
        },
        _ => Span::default(),
    };
    tests.push(FunctionName {
        name: "test".to_string(),
        arity: 0,
        span,
    });
    module.forms.insert(
        at,
        Form::Attribute(Attribute {
            kind: AttributeKind::Export(tests),
            span,
        }),
    );
    if !has_test && let Some(test) = test_function(&name) {
        module.forms.push(Form::Function(test));
    }
}

/// `test() -> eunit:test(Name).`
fn test_function(name: &str) -> Option<super::ast::Function> {
    let quoted = name.replace('\\', "\\\\").replace('\'', "\\'");
    let (parsed, problems) = super::parse_module(&format!("test() -> eunit:test('{quoted}')."));
    if !problems.is_empty() {
        return None;
    }
    parsed.forms.into_iter().find_map(|f| match f {
        Form::Function(f) => Some(f),
        Form::Attribute(_) => None,
    })
}
