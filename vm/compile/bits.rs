//! The bit syntax: binary construction (one `$bs_build` call over the
//! segments, flat when they are few) and binary patterns (`bs_start`, one `bs_get` per segment,
//! `bs_end`), with sizes, types and defaults as erlc resolves them.

use super::expr::{Ctx, Fc, as_constant};
use super::{Result, error};
use crate::code::{Dst, Instr, Label, Src};
use crate::syntax::ast::{self, Expr, ExprKind};
use crate::syntax::bitspec::{SegSpec, SegType};
use crate::syntax::span::Span;
use crate::term::bits::{
    FLAG_LITERAL_SIZE, FLAG_LITERAL_VALUE, FLAG_LITTLE, FLAG_SIGNED, SEG_SHIFT, SIZE_ARG,
    SIZE_LITERAL, SIZE_LITERAL_MAX, SIZE_SHIFT, TY_BINARY, TY_FLOAT, TY_INTEGER, TY_UTF8, TY_UTF16,
    TY_UTF32, UNIT_SHIFT,
};
use crate::term::{Constant, Term};

/// The packed form of a segment's type that the VM reads.
pub(super) fn encode(spec: &SegSpec) -> u32 {
    let ty = match spec.ty {
        SegType::Integer => TY_INTEGER,
        SegType::Float => TY_FLOAT,
        SegType::Binary | SegType::Bitstring => TY_BINARY,
        SegType::Utf8 => TY_UTF8,
        SegType::Utf16 => TY_UTF16,
        SegType::Utf32 => TY_UTF32,
    };
    let mut packed = ty | spec.unit() << UNIT_SHIFT;
    if spec.signed {
        packed |= FLAG_SIGNED;
    }
    if spec.little {
        packed |= FLAG_LITTLE;
    }
    packed
}

/// A string segment is one segment per character, each with the
/// string's size and type (`<<"ab"/utf16>>`).
fn expand_strings(elements: &[ast::BinElement]) -> Vec<ast::BinElement> {
    let mut expanded = Vec::with_capacity(elements.len());
    for el in elements {
        match &el.value.kind {
            ExprKind::String(chars) => {
                for &c in chars {
                    expanded.push(ast::BinElement {
                        value: Expr::new(ExprKind::Integer((c as i64).into()), el.span),
                        size: el.size.clone(),
                        specifiers: el.specifiers.clone(),
                        span: el.span,
                    });
                }
            }
            _ => expanded.push(el.clone()),
        }
    }
    expanded
}

/// A segment size that is a constant small enough for a flat spec word.
fn constant_size(e: &Expr) -> Option<u64> {
    match &e.kind {
        ExprKind::Integer(n) => u64::try_from(n).ok().filter(|&n| n < SIZE_LITERAL_MAX),
        _ => None,
    }
}

/// The bytes of a binary made only of literal bytes (no type, no size).
fn constant_binary(elements: &[ast::BinElement]) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    for el in elements {
        if !el.specifiers.is_empty() || el.size.is_some() {
            return None;
        }
        match &el.value.kind {
            ExprKind::Integer(i) => bytes.push(i64::try_from(i).ok()? as u8),
            _ => return None,
        }
    }
    Some(bytes)
}

fn spec_of(el: &ast::BinElement) -> Result<SegSpec> {
    SegSpec::of(el).or_else(|message| error(el.span, message))
}

impl Fc<'_> {
    /// `<<Segments>>`: each segment becomes `{Value, Size, Type}` and one
    /// BIF builds the bitstring (`Term::NONE` as the size: all of a
    /// binary value).
    pub(super) fn binary(
        &mut self,
        elements: &[ast::BinElement],
        hint: Option<Dst>,
        span: Span,
    ) -> Result<Src> {
        // Each expanded segment's position in the source (a string is one).
        let positions: Vec<u32> = elements
            .iter()
            .enumerate()
            .flat_map(|(i, el)| {
                let n = match &el.value.kind {
                    ExprKind::String(chars) => chars.len(),
                    _ => 1,
                };
                std::iter::repeat_n(i as u32 + 1, n)
            })
            .collect();
        let elements = expand_strings(elements);
        if let Some(bytes) = constant_binary(&elements) {
            let lit = self.m.constant(&Constant::Binary(bytes), span)?;
            return Ok(match hint {
                Some(d) => {
                    self.mov(lit, d);
                    d.src()
                }
                None => lit,
            });
        }
        let saved = self.x_floor;
        let specs: Vec<SegSpec> = elements.iter().map(spec_of).collect::<Result<_>>()?;
        let mut sizes: Vec<Option<Expr>> = Vec::new();
        for (el, spec) in elements.iter().zip(&specs) {
            sizes.push(match &el.size {
                Some(e) => Some(e.clone()),
                None => spec
                    .default_size()
                    .map(|n| Expr::new(ExprKind::Integer(n.into()), el.span)),
            });
        }
        let none = self.lit(Term::NONE);
        let mut es: Vec<&Expr> = Vec::new();
        for (el, size) in elements.iter().zip(&sizes) {
            es.push(&el.value);
            if let Some(s) = size {
                es.push(s);
            }
        }
        let srcs = self.exprs(&es)?;
        let dst = match hint {
            Some(d) => d,
            None => self.temp(),
        };
        // Up to four segments go flat, each as its value and a spec word
        // with a constant size folded in (`term::bits::SIZE_SHIFT`).
        let mut flat = Vec::new();
        let mut next = srcs.iter().copied();
        let packed: Vec<u32> = specs
            .iter()
            .zip(&sizes)
            .zip(&positions)
            .zip(&elements)
            .map(|(((spec, size), &position), el)| {
                // What erlc knows of the segment before it runs (see
                // `FLAG_LITERAL_VALUE`), and where it is, for its error.
                let mut known = 0;
                if super::expr::as_constant(&el.value).is_some() {
                    known |= FLAG_LITERAL_VALUE;
                }
                if size
                    .as_ref()
                    .is_none_or(|e| super::expr::as_constant(e).is_some())
                {
                    known |= FLAG_LITERAL_SIZE;
                }
                encode(spec) | known | position.min(255) << SEG_SHIFT
            })
            .collect();
        for (&spec, size) in packed.iter().zip(&sizes) {
            let value = next.next().unwrap_or(none);
            let mut word = spec as u64;
            let mut size_arg = None;
            if let Some(e) = size {
                let s = next.next().unwrap_or(none);
                match constant_size(e) {
                    Some(n) => word |= (n + SIZE_LITERAL) << SIZE_SHIFT,
                    None => {
                        word |= SIZE_ARG << SIZE_SHIFT;
                        size_arg = Some(s);
                    }
                }
            }
            flat.push(value);
            flat.push(self.lit(Term::small(word as i64)));
            flat.extend(size_arg);
        }
        if flat.len() <= crate::bif::MAX_ARITY {
            let arity = flat.len() as u32;
            let index = super::expr::bif_index("erlang", "$bs_build", arity, span)?;
            let r = self.emit_bif(index, &flat, dst);
            self.x_floor = saved;
            return Ok(r);
        }
        let mut next = srcs.into_iter();
        let mut segments = Vec::new();
        for (&spec, size) in packed.iter().zip(&sizes) {
            let value = next.next().unwrap_or(none);
            let size = match size {
                Some(_) => next.next().unwrap_or(none),
                None => none,
            };
            let ty = self.lit(Term::small(spec as i64));
            let t = self.put_tuple(&[value, size, ty], None);
            self.protect(t);
            segments.push(t);
        }
        let all = self.put_tuple(&segments, None);
        self.protect(all);
        let index = super::expr::bif_index("erlang", "$bs_build", 1, span)?;
        let r = self.emit_bif(index, &[all], dst);
        self.x_floor = saved;
        Ok(r)
    }

    /// `<<Seg, ...>>` against `src`: `bs_start` sets a position register,
    /// each segment is a `bs_get` (a size may use a variable bound by an
    /// earlier segment), and `bs_end` checks that nothing is left.
    pub(super) fn binary_pattern(
        &mut self,
        elements: &[ast::BinElement],
        src: Src,
        fail: Label,
    ) -> Result<()> {
        let elements = expand_strings(elements);
        let pos = self.temp();
        self.m.emit(Instr::BsStart { src, fail, pos });
        let saved = self.guard_fail;
        for el in &elements {
            let spec = spec_of(el)?;
            let size = match &el.size {
                Some(e) => {
                    // A size is a guard expression: an error in it is a
                    // mismatch.
                    self.guard_fail = Some(fail);
                    let s = self.expr(e, Ctx::Value(None))?;
                    self.guard_fail = saved;
                    self.protect(s);
                    s
                }
                None => match spec.default_size() {
                    Some(n) => self.lit(Term::small(n as i64)),
                    None => self.lit(Term::NONE),
                },
            };
            let seg = self.m.operand_list(&[src, pos.src(), size]);
            let constant = as_constant(&el.value);
            let dst = if constant.is_some() {
                self.temp()
            } else {
                self.element_place(&el.value)
            };
            self.m.emit(Instr::BsGet {
                spec: encode(&spec),
                seg,
                fail,
                dst,
            });
            match constant {
                Some(c) => {
                    // `<<1/float>>` matches the float 1.0.
                    let c = match (c, spec.ty) {
                        (Constant::Integer(i), SegType::Float) => {
                            Constant::Float(i.to_string().parse::<f64>().unwrap_or(f64::NAN))
                        }
                        (c, _) => c,
                    };
                    let lit = self.m.constant(&c, el.span)?;
                    self.m.emit(Instr::IsEqExact {
                        a: dst.src(),
                        b: lit,
                        fail,
                    });
                }
                None => self.pattern(&el.value, dst.src(), fail)?,
            }
        }
        self.m.emit(Instr::BsEnd {
            bin: src,
            pos: pos.src(),
            fail,
        });
        Ok(())
    }
}
