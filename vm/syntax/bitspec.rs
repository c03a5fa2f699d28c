//! The type specifiers of a binary segment (`/integer-signed-little-unit:8`)
//! resolved as erlc resolves them: defaults, conflicts and the errors
//! erl_lint reports (the compiler packs them for the VM, see
//! `term::bits::Packed`).

use super::ast::{BinElement, BinSpecifier};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SegType {
    Integer,
    Float,
    Binary,
    Bitstring,
    Utf8,
    Utf16,
    Utf32,
}

impl SegType {
    fn name(self) -> &'static str {
        match self {
            SegType::Integer => "integer",
            SegType::Float => "float",
            SegType::Binary => "binary",
            SegType::Bitstring => "bitstring",
            SegType::Utf8 => "utf8",
            SegType::Utf16 => "utf16",
            SegType::Utf32 => "utf32",
        }
    }

    pub fn is_utf(self) -> bool {
        matches!(self, SegType::Utf8 | SegType::Utf16 | SegType::Utf32)
    }

    pub fn is_binary(self) -> bool {
        matches!(self, SegType::Binary | SegType::Bitstring)
    }
}

/// A resolved segment type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SegSpec {
    pub ty: SegType,
    pub signed: bool,
    pub little: bool,
    /// The unit given with `unit:N`, if any.
    pub explicit_unit: Option<u32>,
}

impl SegSpec {
    /// Resolves the specifiers of `el`, or gives erlc's message.
    pub fn of(el: &BinElement) -> Result<SegSpec, String> {
        let mut ty: Option<SegType> = None;
        let mut sign: Option<&str> = None;
        let mut endian: Option<&str> = None;
        let mut unit = None;
        for BinSpecifier { name, value, .. } in &el.specifiers {
            let name = name.as_str();
            let new_ty = match name {
                "integer" => Some(SegType::Integer),
                "float" => Some(SegType::Float),
                "binary" | "bytes" => Some(SegType::Binary),
                "bitstring" | "bits" => Some(SegType::Bitstring),
                "utf8" => Some(SegType::Utf8),
                "utf16" => Some(SegType::Utf16),
                "utf32" => Some(SegType::Utf32),
                _ => None,
            };
            if let Some(t) = new_ty {
                match ty {
                    Some(old) if old != t => {
                        return Err(conflict("type", t.name(), old.name()));
                    }
                    _ => ty = Some(t),
                }
                continue;
            }
            match name {
                "signed" | "unsigned" => match sign {
                    Some(old) if old != name => return Err(conflict("sign", name, old)),
                    _ => sign = Some(name),
                },
                "big" | "little" | "native" => match endian {
                    Some(old) if old != name => return Err(conflict("endianness", name, old)),
                    _ => endian = Some(name),
                },
                "unit" => match value {
                    Some(n) if (1..=256).contains(n) => unit = Some(*n),
                    Some(n) => return Err(format!("bit type {{unit,{n}}} undefined")),
                    None => return Err("bad bit type 'unit'".to_string()),
                },
                _ => return Err(format!("bit type {name} undefined")),
            }
        }
        let ty = ty.unwrap_or(SegType::Integer);
        if ty.is_utf() && (el.size.is_some() || unit.is_some()) {
            return Err(
                "neither size nor unit must be given for segments of type utf8/utf16/utf32"
                    .to_string(),
            );
        }
        if unit.is_some() && el.size.is_none() && !ty.is_binary() {
            return Err(
                "a bit unit size must not be specified unless a size is specified too".to_string(),
            );
        }
        let little = matches!(endian, Some("little"))
            || (endian == Some("native") && cfg!(target_endian = "little"));
        Ok(SegSpec {
            ty,
            signed: sign == Some("signed"),
            little,
            explicit_unit: unit,
        })
    }

    /// The unit: as given, else 8 for `binary`, 1 for the rest.
    pub fn unit(&self) -> u32 {
        self.explicit_unit
            .unwrap_or(if self.ty == SegType::Binary { 8 } else { 1 })
    }

    /// The size when none is written: 8 for integers, 64 for floats;
    /// `None` for binaries (all that is left) and utf segments.
    pub fn default_size(&self) -> Option<u32> {
        match self.ty {
            SegType::Integer => Some(8),
            SegType::Float => Some(64),
            _ => None,
        }
    }
}

fn conflict(what: &str, new: &str, old: &str) -> String {
    format!("conflict in {what} specification for bit field: '{new}' and '{old}'")
}
