//! Errors and warnings about source text, and their rendering for humans.
//!
//! A `Diagnostic` is data: a severity, a message in words, the span it is
//! about and an optional hint. `render` turns a list of them into text:
//! the first line of each is exactly `FILE:LINE:COL: error: message` (what
//! editors and erlc users expect), followed by codespan-reporting's snippet
//! of the source line with a caret marker under the span.
//!
//! A syntax or preprocessor error may also carry `escript`: the one line
//! escript prints for it (OTP's words, at OTP's place), which a script run
//! prints instead of the explained rendering (see
//! `escript_report::syntax_listing`).

use super::span::{LineIndex, Span};
use codespan_reporting::diagnostic::{Diagnostic as CodespanDiagnostic, Label};
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term::{self, Config};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub span: Span,
    pub hint: Option<String>,
    /// What escript says about this error: OTP's message and the offset it
    /// is reported at (often the span's start, not always), then any more
    /// lines escript prints after it (erl_scan reads on after a bad number,
    /// and the rest of the form is then a syntax error). Empty if act has
    /// no OTP words for it.
    pub escript: Vec<(u32, String)>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span,
            hint: None,
            escript: Vec::new(),
        }
    }

    pub fn warning(message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            message: message.into(),
            span,
            hint: None,
            escript: Vec::new(),
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }

    /// Says that escript reports this error as `message` at the span's
    /// start.
    pub fn escript_says(self, message: impl Into<String>) -> Diagnostic {
        let at = self.span.start;
        self.escript_at(at, message)
    }

    /// Says that escript reports this error as `message` at offset `at`.
    pub fn escript_at(mut self, at: u32, message: impl Into<String>) -> Diagnostic {
        self.escript.insert(0, (at, message.into()));
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Lines longer than this are cut around the span before they are shown,
/// so that an error on a 10 MB line prints a short snippet.
const MAX_SHOWN_LINE: usize = 160;

/// Renders diagnostics in order, each ending with a newline.
pub fn render(diagnostics: &[Diagnostic], file_name: &str, source: &str) -> String {
    let index = LineIndex::new(source);
    let mut out = String::new();
    for diagnostic in diagnostics {
        render_one(&mut out, diagnostic, file_name, source, &index);
    }
    out
}

/// Renders diagnostics about a program of several files (a script and
/// its includes): each names the file its span falls in.
pub fn render_sources(diagnostics: &[Diagnostic], sources: &super::preprocess::Sources) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics {
        let file = sources.file_of(diagnostic.span.start);
        let base = file.base as u32;
        let local = Diagnostic {
            span: Span {
                start: diagnostic.span.start - base,
                end: diagnostic.span.end.saturating_sub(base),
            },
            ..diagnostic.clone()
        };
        render_one(&mut out, &local, &file.name, &file.text, &file.lines);
    }
    out
}

fn render_one(
    out: &mut String,
    diagnostic: &Diagnostic,
    file_name: &str,
    source: &str,
    index: &LineIndex,
) {
    let start = clamp_to_char(source, diagnostic.span.start as usize);
    let end = clamp_to_char(source, (diagnostic.span.end as usize).max(start)).max(start);
    let (line, column) = index.line_col(source, start as u32);
    let kind = match diagnostic.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut message = diagnostic.message.clone();
    let mut hint = diagnostic.hint.clone();
    if message == "unexpected character"
        && let Some(c) = source[start..].chars().next()
    {
        let (name, advice) = describe_character(c);
        message.push(' ');
        message.push_str(&name);
        if hint.is_none() {
            hint = advice.map(str::to_string);
        }
    }
    out.push_str(&format!("{file_name}:{line}:{column}: {kind}: {message}\n"));

    // The snippet shows only the first line of the span, and only a window
    // of that line when it is long; `OneLine` presents that window to
    // codespan under its true line number without copying the file.
    let line_start = index.line_start(line) as usize;
    let line_end = source[line_start..]
        .find('\n')
        .map_or(source.len(), |i| line_start + i);
    let end = end.min(line_end);
    let mut window_start = line_start;
    let mut window_end = line_end;
    if line_end - line_start > MAX_SHOWN_LINE {
        window_start = clamp_to_char(
            source,
            start.saturating_sub(MAX_SHOWN_LINE / 2).max(line_start),
        );
        window_end = clamp_to_char(source, (window_start + MAX_SHOWN_LINE).min(line_end)).max(end);
    }
    let (shown, label) = visible(
        &source[window_start..window_end],
        start - window_start..end - window_start,
    );
    let file = OneLine {
        name: file_name,
        text: &shown,
        line_index: line as usize - 1,
    };
    let codespan = match diagnostic.severity {
        Severity::Error => CodespanDiagnostic::error(),
        Severity::Warning => CodespanDiagnostic::warning(),
    };
    let mut codespan = codespan.with_labels(vec![Label::primary((), label)]);
    if let Some(hint) = &hint {
        codespan = codespan.with_notes(vec![format!("hint: {hint}")]);
    }
    let config = Config::default();
    if let Ok(snippet) = term::emit_into_string(&config, &file, &codespan) {
        // codespan's own header ("error: ...") and location line repeat
        // what our first line says: keep only the snippet and notes.
        for snippet_line in snippet.lines().skip(2) {
            out.push_str(snippet_line.trim_end());
            out.push('\n');
        }
    }
}

/// How an unexpected character is named: itself in quotes when it is
/// plain ASCII, else its code point (`U+00A0`), with its name for the
/// invisible and look-alike characters that come in from word processors
/// and web pages, and what to type instead. Never the raw character when
/// it would not show (or would turn the terminal's text around).
pub fn describe_character(c: char) -> (String, Option<&'static str>) {
    if c.is_ascii_graphic() {
        return (format!("'{c}'"), None);
    }
    const SPACE: &str = "an invisible look-alike of a space: replace it with an ordinary space";
    const INVISIBLE: &str = "an invisible character: delete it";
    const BIDI: &str = "a character that reorders how text is displayed (it can hide what the code does): delete it";
    let (name, advice) = match c as u32 {
        0x00 => ("NUL", Some(INVISIBLE)),
        0x09 => ("tab", None),
        0x7F => ("delete", Some(INVISIBLE)),
        0x01..=0x1F => ("a control character", Some(INVISIBLE)),
        0x80..=0x9F => ("a control character", Some(INVISIBLE)),
        0xA0 => ("no-break space", Some(SPACE)),
        0xAD => ("soft hyphen", Some(INVISIBLE)),
        0x1680 => ("ogham space mark", Some(SPACE)),
        0x2000..=0x200A => ("a typographic space", Some(SPACE)),
        0x200B => ("zero-width space", Some(INVISIBLE)),
        0x200C => ("zero-width non-joiner", Some(INVISIBLE)),
        0x200D => ("zero-width joiner", Some(INVISIBLE)),
        0x200E => ("left-to-right mark", Some(BIDI)),
        0x200F => ("right-to-left mark", Some(BIDI)),
        0x2010 | 0x2011 => ("hyphen", Some("use the ASCII '-'")),
        0x2012 => ("figure dash", Some("use the ASCII '-'")),
        0x2013 => ("en dash", Some("use the ASCII '-'")),
        0x2014 => ("em dash", Some("use the ASCII '-'")),
        0x2212 => ("minus sign", Some("use the ASCII '-'")),
        0x2018 => (
            "left single quotation mark",
            Some("use the ASCII ' (quoted atoms) or \" (strings)"),
        ),
        0x2019 => (
            "right single quotation mark",
            Some("use the ASCII ' (quoted atoms) or \" (strings)"),
        ),
        0x201C => (
            "left double quotation mark",
            Some("use the ASCII \" for strings"),
        ),
        0x201D => (
            "right double quotation mark",
            Some("use the ASCII \" for strings"),
        ),
        0x2026 => ("horizontal ellipsis", Some("use three ASCII dots '...'")),
        0x2028 => ("line separator", Some("use an ordinary line break")),
        0x2029 => ("paragraph separator", Some("use an ordinary line break")),
        0x202A => ("left-to-right embedding", Some(BIDI)),
        0x202B => ("right-to-left embedding", Some(BIDI)),
        0x202C => ("pop directional formatting", Some(BIDI)),
        0x202D => ("left-to-right override", Some(BIDI)),
        0x202E => ("right-to-left override", Some(BIDI)),
        0x202F => ("narrow no-break space", Some(SPACE)),
        0x205F => ("medium mathematical space", Some(SPACE)),
        0x2060 => ("word joiner", Some(INVISIBLE)),
        0x2061..=0x2064 => ("an invisible operator", Some(INVISIBLE)),
        0x2066 => ("left-to-right isolate", Some(BIDI)),
        0x2067 => ("right-to-left isolate", Some(BIDI)),
        0x2068 => ("first strong isolate", Some(BIDI)),
        0x2069 => ("pop directional isolate", Some(BIDI)),
        0x3000 => ("ideographic space", Some(SPACE)),
        0xFEFF => (
            "byte order mark",
            Some("a byte order mark belongs only at the very start of a file: delete it"),
        ),
        0xFF08 => ("fullwidth left parenthesis", Some("use the ASCII '('")),
        0xFF09 => ("fullwidth right parenthesis", Some("use the ASCII ')'")),
        0xFF0C => ("fullwidth comma", Some("use the ASCII ','")),
        0xFF1B => ("fullwidth semicolon", Some("use the ASCII ';'")),
        0xFFFD => ("replacement character", None),
        _ => {
            let code = format!("U+{:04X}", c as u32);
            // A character that shows as itself (a letter, an arrow) is
            // quoted too; anything else only by its code.
            let shows = c.is_alphanumeric() || (0x2190..=0x2BFF).contains(&(c as u32));
            return if shows && !c.is_control() {
                (format!("{code} '{c}'"), None)
            } else {
                (code, None)
            };
        }
    };
    (format!("U+{:04X} ({name})", c as u32), advice)
}

/// `text` with every character that would not show (or would reorder the
/// line on a terminal: controls, zero-width and bidirectional marks, line
/// separators) written as an Erlang escape, `\x{202E}`, and `span` (byte
/// offsets into `text`) moved onto the same characters of the result, so
/// the caret falls under the escape of a hidden character.
fn visible(text: &str, span: std::ops::Range<usize>) -> (String, std::ops::Range<usize>) {
    let mut out = String::with_capacity(text.len());
    let (mut start, mut end) = (None, None);
    for (i, c) in text.char_indices() {
        if i == span.start {
            start = Some(out.len());
        }
        if i == span.end {
            end = Some(out.len());
        }
        // A carriage return ending the line (a CRLF file) stays as it is.
        if hidden(c) && !(c == '\r' && i + 1 == text.len()) {
            out.push_str(&format!("\\x{{{:02X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    let start = start.unwrap_or(out.len());
    let end = end.unwrap_or(out.len()).max(start);
    (out, start..end)
}

/// Whether a terminal would not show `c` as a mark of its own.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c as u32, 0xAD | 0x200B..=0x200F | 0x2028..=0x202E | 0x2060..=0x2064 | 0x2066..=0x2069 | 0xFEFF)
}

#[cfg(test)]
mod visible_tests {
    use super::visible;

    #[test]
    fn hidden_characters_are_escaped_and_the_span_follows_them() {
        let text = "main(_) -> ok\u{200B}.";
        let at = text.find('\u{200B}').unwrap();
        let (shown, span) = visible(text, at..at + 3);
        assert_eq!(shown, "main(_) -> ok\\x{200B}.");
        assert_eq!(&shown[span], "\\x{200B}");
        let (shown, span) = visible("a\0b\u{202E}c", 6..7);
        assert_eq!(shown, "a\\x{00}b\\x{202E}c");
        assert_eq!(&shown[span], "c");
        assert_eq!(visible("tab\tok", 0..3), ("tab\tok".to_string(), 0..3));
    }
}

/// One line of a file (or a window of it) shown under its true line number.
struct OneLine<'a> {
    name: &'a str,
    text: &'a str,
    line_index: usize,
}

impl<'a> Files<'a> for OneLine<'a> {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, _: ()) -> Result<&'a str, FilesError> {
        Ok(self.name)
    }

    fn source(&'a self, _: ()) -> Result<&'a str, FilesError> {
        Ok(self.text)
    }

    fn line_index(&'a self, _: (), _byte_index: usize) -> Result<usize, FilesError> {
        Ok(self.line_index)
    }

    fn line_range(
        &'a self,
        _: (),
        line_index: usize,
    ) -> Result<std::ops::Range<usize>, FilesError> {
        if line_index == self.line_index {
            Ok(0..self.text.len())
        } else {
            Err(FilesError::LineTooLarge {
                given: line_index,
                max: self.line_index,
            })
        }
    }
}

/// The largest char boundary at or before `offset` within `source`.
fn clamp_to_char(source: &str, offset: usize) -> usize {
    let mut offset = offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_is_file_line_col_and_a_caret_marks_the_span() {
        let source = "main(_) ->\n    X = foo.\n";
        let text = render(
            &[Diagnostic::error(
                "variable 'X' is unused",
                Span::new(15, 16),
            )],
            "t.act",
            source,
        );
        assert!(
            text.starts_with("t.act:2:5: error: variable 'X' is unused\n"),
            "{text}"
        );
        assert!(text.contains("X = foo."), "{text}");
        assert!(text.contains('^'), "{text}");
    }

    #[test]
    fn a_long_line_is_cut_around_the_span() {
        let mut source = "x".repeat(100_000);
        source.push_str(" bad ");
        source.push_str(&"y".repeat(100_000));
        let text = render(
            &[Diagnostic::error("here", Span::new(100_001, 100_004))],
            "t.act",
            &source,
        );
        assert!(text.len() < 2000, "{}", text.len());
        assert!(text.contains("bad"));
        assert!(text.starts_with("t.act:1:100002: error: here\n"));
    }
}
