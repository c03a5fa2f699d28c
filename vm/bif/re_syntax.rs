//! PCRE's compile errors for `re`: one pass over a pattern that finds the
//! faults OTP 25's PCRE (8.x) reports, with its words and its offset.
//!
//! The engines (re.rs) accept some patterns PCRE refuses (`a**`,
//! `a{2,1}`, `(?<=a+)`, a reference to a group that is not there) and
//! word the others their own way, so `re:compile` asks this pass first and
//! only then builds the pattern. It checks syntax only: what a pattern
//! means is the engines' business. Offsets are byte offsets where PCRE
//! notices the fault (for a numeric back-reference to a missing group, the
//! end of the pattern: PCRE checks those after compiling).

/// A compile error: PCRE's message and the offset it reports.
#[derive(Debug, PartialEq, Eq)]
pub struct Fault {
    pub message: &'static str,
    pub offset: usize,
}

/// The first fault in `pattern`, if any; `extended` and `unicode` are the
/// options it is compiled with.
pub fn check(pattern: &[u8], extended: bool, unicode: bool) -> Result<(), Fault> {
    let mut scan = Scan {
        p: pattern,
        i: 0,
        extended,
        unicode,
        groups: 0,
        names: Vec::new(),
        named_refs: Vec::new(),
        numbered_refs: Vec::new(),
        backrefs: Vec::new(),
        stack: Vec::new(),
    };
    scan.pattern()?;
    scan.references()
}

fn fault<T>(message: &'static str, offset: usize) -> Result<T, Fault> {
    Err(Fault { message, offset })
}

/// An open group.
struct Group {
    /// The `x` option outside it, restored at its `)`.
    extended: bool,
    /// A look-behind, which must have a fixed length.
    lookbehind: bool,
    /// A variable-length quantifier was seen inside this look-behind.
    variable: bool,
}

/// What the last item allows after it.
#[derive(Clone, Copy, PartialEq)]
enum Last {
    /// Nothing to repeat: the start, `(`, `|`, an assertion.
    Nothing,
    /// A character, class or group: a quantifier may follow.
    Item,
    /// A quantifier: one `+` or `?` may follow.
    Quantifier,
    /// A quantifier with its `+` or `?`.
    Modified,
}

struct Scan<'a> {
    p: &'a [u8],
    i: usize,
    extended: bool,
    unicode: bool,
    /// Capturing groups opened so far.
    groups: usize,
    names: Vec<&'a [u8]>,
    /// References by name, with the offset to report.
    named_refs: Vec<(&'a [u8], usize)>,
    /// Subroutine calls and conditions by number, with their offsets.
    numbered_refs: Vec<(usize, usize)>,
    /// Numeric back-references (reported at the end of the pattern).
    backrefs: Vec<usize>,
    stack: Vec<Group>,
}

const POSIX_CLASSES: [&[u8]; 14] = [
    b"alpha", b"lower", b"upper", b"alnum", b"ascii", b"blank", b"cntrl", b"digit", b"graph",
    b"print", b"punct", b"space", b"word", b"xdigit",
];

const VERBS: [&[u8]; 20] = [
    b"ACCEPT",
    b"FAIL",
    b"F",
    b"COMMIT",
    b"PRUNE",
    b"SKIP",
    b"THEN",
    b"MARK",
    b"UTF8",
    b"UTF",
    b"UCP",
    b"CR",
    b"LF",
    b"CRLF",
    b"ANYCRLF",
    b"ANY",
    b"BSR_ANYCRLF",
    b"BSR_UNICODE",
    b"NO_START_OPT",
    b"NO_AUTO_POSSESS",
];

impl<'a> Scan<'a> {
    fn peek(&self, at: usize) -> Option<u8> {
        self.p.get(at).copied()
    }

    fn pattern(&mut self) -> Result<(), Fault> {
        let mut last = Last::Nothing;
        while self.i < self.p.len() {
            let c = self.p[self.i];
            if self.extended && (c.is_ascii_whitespace() || c == 0x0b) {
                self.i += 1;
                continue;
            }
            if self.extended && c == b'#' {
                while self.i < self.p.len() && self.p[self.i] != b'\n' {
                    self.i += 1;
                }
                continue;
            }
            let at = self.i;
            self.i += 1;
            last = match c {
                b'\\' => self.escape(last)?,
                b'(' => self.open()?,
                b')' => self.close(at)?,
                b'|' => Last::Nothing,
                b'^' | b'$' => Last::Nothing,
                b'[' => {
                    self.class()?;
                    Last::Item
                }
                b'*' | b'+' | b'?' => {
                    if last == Last::Quantifier && c != b'*' {
                        Last::Modified
                    } else if last != Last::Item {
                        return fault("nothing to repeat", at);
                    } else {
                        self.variable_length();
                        Last::Quantifier
                    }
                }
                b'{' => match self.counted()? {
                    None => Last::Item,
                    Some((end, fixed)) => {
                        if last != Last::Item {
                            return fault("nothing to repeat", end);
                        }
                        if !fixed {
                            self.variable_length();
                        }
                        Last::Quantifier
                    }
                },
                _ => Last::Item,
            };
        }
        if !self.stack.is_empty() {
            return fault("missing )", self.p.len());
        }
        Ok(())
    }

    /// Marks the innermost look-behind as not of fixed length.
    fn variable_length(&mut self) {
        if let Some(g) = self.stack.iter_mut().rev().find(|g| g.lookbehind) {
            g.variable = true;
        }
    }

    /// A `{n}`, `{n,}` or `{n,m}` after the `{`: `None` (and nothing
    /// consumed) when it is not one, so the `{` is a literal; else the
    /// offset of its `}` and whether it repeats a fixed number of times.
    fn counted(&mut self) -> Result<Option<(usize, bool)>, Fault> {
        let digits = |s: &Self, from: usize| {
            let mut j = from;
            while s.peek(j).is_some_and(|c| c.is_ascii_digit()) {
                j += 1;
            }
            j
        };
        let start = self.i;
        let min_end = digits(self, start);
        if min_end == start {
            return Ok(None);
        }
        let (max, end) = match self.peek(min_end) {
            Some(b'}') => (None, min_end),
            Some(b',') => {
                let max_end = digits(self, min_end + 1);
                if self.peek(max_end) != Some(b'}') {
                    return Ok(None);
                }
                (Some((min_end + 1, max_end)), max_end)
            }
            _ => return Ok(None),
        };
        let number = |from: usize, to: usize| -> Result<u64, Fault> {
            let mut n = 0u64;
            for j in from..to {
                n = n * 10 + u64::from(self.p[j] - b'0');
                if n > 65535 {
                    return fault("number too big in {} quantifier", to);
                }
            }
            Ok(n)
        };
        let min = number(start, min_end)?;
        let fixed = match max {
            None => true,
            Some((from, to)) if from == to => false,
            Some((from, to)) => {
                let max = number(from, to)?;
                if max < min {
                    return fault("numbers out of order in {} quantifier", end);
                }
                max == min
            }
        };
        self.i = end + 1;
        Ok(Some((end, fixed)))
    }

    /// An escape outside a class, after its backslash.
    fn escape(&mut self, last: Last) -> Result<Last, Fault> {
        let Some(c) = self.peek(self.i) else {
            return fault("\\ at end of pattern", self.p.len());
        };
        let at = self.i;
        self.i += 1;
        Ok(match c {
            b'b' | b'B' | b'A' | b'z' | b'Z' | b'G' | b'K' => Last::Nothing,
            b'Q' => {
                let mut any = false;
                while self.i < self.p.len() {
                    if self.p[self.i] == b'\\' && self.peek(self.i + 1) == Some(b'E') {
                        self.i += 2;
                        break;
                    }
                    self.i += 1;
                    any = true;
                }
                if any { Last::Item } else { last }
            }
            b'E' => last,
            b'L' | b'l' | b'U' | b'u' => {
                return fault("PCRE does not support \\L, \\l, \\N{name}, \\U, or \\u", at);
            }
            b'N' if self.peek(self.i) == Some(b'{') => {
                return fault("PCRE does not support \\L, \\l, \\N{name}, \\U, or \\u", at);
            }
            b'c' => {
                if self.peek(self.i).is_none() {
                    return fault("\\c at end of pattern", self.p.len());
                }
                self.i += 1;
                Last::Item
            }
            b'1'..=b'7' => {
                let start = at;
                while self.peek(self.i).is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1;
                }
                let n: usize = std::str::from_utf8(&self.p[start..self.i])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(usize::MAX);
                if n < 10 || n <= self.groups {
                    self.backrefs.push(n);
                } else {
                    // Octal: up to three octal digits, the rest literal.
                    self.i = start;
                    let mut k = 0;
                    while k < 3
                        && self
                            .peek(self.i)
                            .is_some_and(|c| (b'0'..=b'7').contains(&c))
                    {
                        self.i += 1;
                        k += 1;
                    }
                }
                Last::Item
            }
            b'g' => {
                self.g_reference()?;
                Last::Item
            }
            b'k' => {
                let close = match self.peek(self.i) {
                    Some(b'<') => b'>',
                    Some(b'\'') => b'\'',
                    Some(b'{') => b'}',
                    _ => {
                        return fault(
                            "\\k is not followed by a braced, angle-bracketed, or quoted name",
                            self.i,
                        );
                    }
                };
                self.i += 1;
                let (name, end) = self.reference_name(close)?;
                self.named_refs.push((name, end));
                Last::Item
            }
            b'x' => {
                self.hex()?;
                Last::Item
            }
            b'p' | b'P' => {
                self.property()?;
                Last::Item
            }
            _ => Last::Item,
        })
    }

    /// `\g{n}`, `\gn`, `\g{-n}`, `\g{name}`, `\g<...>`, `\g'...'`.
    fn g_reference(&mut self) -> Result<(), Fault> {
        let (braced, close) = match self.peek(self.i) {
            Some(b'{') => (true, b'}'),
            Some(b'<') => (false, b'>'),
            Some(b'\'') => (false, b'\''),
            _ => (true, 0),
        };
        if close != 0 {
            self.i += 1;
        }
        let start = self.i;
        let relative = matches!(self.peek(self.i), Some(b'-' | b'+'));
        if relative {
            self.i += 1;
        }
        let digits_from = self.i;
        while self.peek(self.i).is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        if self.i > digits_from && (close == 0 || self.peek(self.i) == Some(close)) {
            let n: usize = std::str::from_utf8(&self.p[digits_from..self.i])
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(usize::MAX);
            let end = self.i;
            if close != 0 {
                self.i += 1;
            }
            if !relative {
                if braced {
                    self.backrefs.push(n);
                } else {
                    self.numbered_refs.push((n, end));
                }
            }
            return Ok(());
        }
        if close == 0 {
            return fault("a numbered reference must not be zero", start);
        }
        self.i = start;
        let (name, end) = self.reference_name(close)?;
        self.named_refs.push((name, end));
        Ok(())
    }

    /// A name up to `close` (consumed): the name and the offset of `close`.
    fn reference_name(&mut self, close: u8) -> Result<(&'a [u8], usize), Fault> {
        let start = self.i;
        while self.peek(self.i).is_some_and(is_word) {
            self.i += 1;
        }
        if self.peek(self.i) != Some(close) {
            return fault(
                "syntax error in subpattern name (missing terminator)",
                self.i,
            );
        }
        let end = self.i;
        self.i += 1;
        Ok((&self.p[start..end], end))
    }

    /// `\x` after the `x`: `\x{hhh..}` or up to two hex digits.
    fn hex(&mut self) -> Result<u32, Fault> {
        if self.peek(self.i) != Some(b'{') {
            let mut v = 0;
            for _ in 0..2 {
                match self.peek(self.i).and_then(|c| (c as char).to_digit(16)) {
                    Some(d) => {
                        v = v * 16 + d;
                        self.i += 1;
                    }
                    None => break,
                }
            }
            return Ok(v);
        }
        let mut j = self.i + 1;
        let mut v: u64 = 0;
        while let Some(d) = self.peek(j).and_then(|c| (c as char).to_digit(16)) {
            v = (v * 16 + u64::from(d)).min(1 << 40);
            j += 1;
        }
        if self.peek(j) != Some(b'}') {
            return fault("non-hex character in \\x{} (closing brace missing?)", j);
        }
        let limit = if self.unicode { 0x10ffff } else { 0xff };
        if v > limit {
            return fault("character value in \\x{} or \\o{} is too large", j);
        }
        self.i = j + 1;
        Ok(v as u32)
    }

    /// `\p` or `\P` after the letter: `\pL` or `\p{...}`.
    fn property(&mut self) -> Result<(), Fault> {
        match self.peek(self.i) {
            None => fault("malformed \\P or \\p sequence", self.i),
            Some(b'{') => {
                let mut j = self.i + 1;
                while self.peek(j).is_some_and(|c| c != b'}') {
                    j += 1;
                }
                if j >= self.p.len() {
                    return fault("malformed \\P or \\p sequence", j);
                }
                self.i = j + 1;
                Ok(())
            }
            Some(_) => {
                self.i += 1;
                Ok(())
            }
        }
    }

    /// A `(` and what follows it up to the group's body.
    fn open(&mut self) -> Result<Last, Fault> {
        let outer = self.extended;
        let mut lookbehind = false;
        match (self.peek(self.i), self.peek(self.i + 1)) {
            (Some(b'*'), Some(c)) if c.is_ascii_uppercase() => return self.verb(),
            (Some(b'?'), next) => {
                self.i += 1;
                match next {
                    Some(b'#') => {
                        while self.peek(self.i).is_some_and(|c| c != b')') {
                            self.i += 1;
                        }
                        if self.i >= self.p.len() {
                            return fault("missing ) after comment", self.p.len());
                        }
                        self.i += 1;
                        return Ok(Last::Nothing);
                    }
                    Some(b':' | b'|' | b'>' | b'=' | b'!') => self.i += 1,
                    Some(b'<') if matches!(self.peek(self.i + 1), Some(b'=' | b'!')) => {
                        self.i += 2;
                        lookbehind = true;
                    }
                    Some(b'<') => {
                        self.i += 1;
                        self.group_name(b'>', "unrecognized character after (?<")?;
                    }
                    Some(b'\'') => {
                        self.i += 1;
                        self.group_name(b'\'', "unrecognized character after (?'")?;
                    }
                    Some(b'P') => {
                        self.i += 1;
                        match self.peek(self.i) {
                            Some(b'<') => {
                                self.i += 1;
                                self.group_name(b'>', "unrecognized character after (?P")?;
                            }
                            Some(b'=' | b'>') => {
                                self.i += 1;
                                let (name, end) = self.reference_name(b')')?;
                                self.named_refs.push((name, end));
                                return Ok(Last::Item);
                            }
                            _ => return fault("unrecognized character after (?P", self.i),
                        }
                    }
                    Some(b'&') => {
                        self.i += 1;
                        let (name, end) = self.reference_name(b')')?;
                        self.named_refs.push((name, end));
                        return Ok(Last::Item);
                    }
                    Some(b'R') if self.peek(self.i + 1) == Some(b')') => {
                        self.i += 2;
                        return Ok(Last::Item);
                    }
                    Some(b'0'..=b'9' | b'+' | b'-')
                        if self.peek(self.i + 1).is_some_and(|c| c.is_ascii_digit())
                            || next.is_some_and(|c| c.is_ascii_digit()) =>
                    {
                        return self.subroutine();
                    }
                    Some(b'(') => self.condition()?,
                    _ => return self.options(outer),
                }
            }
            _ => self.groups += 1,
        }
        self.stack.push(Group {
            extended: outer,
            lookbehind,
            variable: false,
        });
        Ok(Last::Nothing)
    }

    /// `(*VERB)` or `(*VERB:arg)` after the `(`.
    fn verb(&mut self) -> Result<Last, Fault> {
        self.i += 1;
        let start = self.i;
        while self
            .peek(self.i)
            .is_some_and(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
        {
            self.i += 1;
        }
        let name = &self.p[start..self.i];
        let known = VERBS.contains(&name)
            || name.starts_with(b"LIMIT_MATCH")
            || name.starts_with(b"LIMIT_RECURSION");
        match self.peek(self.i) {
            Some(b')') if known => {
                self.i += 1;
                Ok(Last::Nothing)
            }
            Some(b':' | b'=') if known => {
                while self.peek(self.i).is_some_and(|c| c != b')') {
                    self.i += 1;
                }
                if self.i >= self.p.len() {
                    return fault("(*VERB) not recognized or malformed", self.i);
                }
                self.i += 1;
                Ok(Last::Nothing)
            }
            _ => fault("(*VERB) not recognized or malformed", self.i),
        }
    }

    /// A named group's name after `(?<`, `(?'` or `(?P<`, up to `close`.
    fn group_name(&mut self, close: u8, bad_start: &'static str) -> Result<(), Fault> {
        match self.peek(self.i) {
            Some(c) if c.is_ascii_digit() => {
                return fault("group name must start with a non-digit", self.i);
            }
            Some(c) if is_word(c) => {}
            _ => return fault(bad_start, self.i),
        }
        let (name, end) = self.reference_name(close)?;
        if self.names.contains(&name) {
            return fault("two named subpatterns have the same name", end);
        }
        self.names.push(name);
        self.groups += 1;
        Ok(())
    }

    /// `(?n)`, `(?+n)`, `(?-n)` after the `?`.
    fn subroutine(&mut self) -> Result<Last, Fault> {
        let relative = matches!(self.peek(self.i), Some(b'+' | b'-'));
        if relative {
            self.i += 1;
        }
        let start = self.i;
        while self.peek(self.i).is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        if self.peek(self.i) != Some(b')') {
            return fault("(?R or (?[+-]digits must be followed by )", self.i);
        }
        let n: usize = std::str::from_utf8(&self.p[start..self.i])
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(usize::MAX);
        if !relative {
            self.numbered_refs.push((n, self.i));
        }
        self.i += 1;
        Ok(Last::Item)
    }

    /// A condition after `(?`, at its `(`: a group number, a name, `R`,
    /// `DEFINE`, or an assertion (left for the main loop to scan).
    fn condition(&mut self) -> Result<(), Fault> {
        if self.peek(self.i + 1) == Some(b'?') || self.peek(self.i + 1) == Some(b'*') {
            return Ok(());
        }
        self.i += 1;
        let start = self.i;
        while self.peek(self.i).is_some_and(|c| c != b')') {
            self.i += 1;
        }
        if self.i >= self.p.len() {
            return fault("malformed number or name after (?(", self.i);
        }
        let inside = &self.p[start..self.i];
        self.i += 1;
        if !inside.is_empty() && inside.iter().all(u8::is_ascii_digit) {
            let n = std::str::from_utf8(inside)
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(usize::MAX);
            self.numbered_refs.push((n, self.i));
        } else if let [b'<' | b'\'', name @ .., b'>' | b'\''] = inside {
            self.named_refs.push((name, self.i - 1));
        }
        Ok(())
    }

    /// Option letters after `(?`: `(?i)` sets them for the rest of the
    /// group, `(?i:` opens a group with them.
    fn options(&mut self, outer: bool) -> Result<Last, Fault> {
        let mut on = true;
        let mut extended = self.extended;
        loop {
            match self.peek(self.i) {
                Some(b'-') => on = false,
                Some(b'x') => extended = on,
                Some(b'i' | b'm' | b's' | b'J' | b'U' | b'X') => {}
                Some(b')') => {
                    self.i += 1;
                    self.extended = extended;
                    return Ok(Last::Nothing);
                }
                Some(b':') => {
                    self.i += 1;
                    self.stack.push(Group {
                        extended: outer,
                        lookbehind: false,
                        variable: false,
                    });
                    self.extended = extended;
                    return Ok(Last::Nothing);
                }
                _ => return fault("unrecognized character after (? or (?-", self.i),
            }
            self.i += 1;
        }
    }

    fn close(&mut self, at: usize) -> Result<Last, Fault> {
        let Some(group) = self.stack.pop() else {
            return fault("unmatched parentheses", at);
        };
        if group.lookbehind && group.variable {
            return fault("lookbehind assertion is not fixed length", at);
        }
        self.extended = group.extended;
        Ok(Last::Item)
    }

    /// A character class after its `[`.
    fn class(&mut self) -> Result<(), Fault> {
        if self.peek(self.i) == Some(b'^') {
            self.i += 1;
        }
        let mut first = true;
        // The last single character, which a `-` may make a range's start.
        let mut low: Option<u32> = None;
        loop {
            let Some(c) = self.peek(self.i) else {
                return fault("missing terminating ] for character class", self.p.len());
            };
            if c == b']' && !first {
                self.i += 1;
                return Ok(());
            }
            first = false;
            if c == b'['
                && matches!(self.peek(self.i + 1), Some(b':' | b'.' | b'='))
                && let Some(end) = self.posix_end()
            {
                let start = self.i + 2 + usize::from(self.peek(self.i + 2) == Some(b'^'));
                if !POSIX_CLASSES.contains(&&self.p[start..end]) {
                    return fault("unknown POSIX class name", start);
                }
                self.i = end + 2;
                low = None;
                continue;
            }
            if c == b'-' && low.is_some() && self.peek(self.i + 1).is_some_and(|n| n != b']') {
                self.i += 1;
                let high_at = self.i;
                let high = self.class_atom()?;
                let Some(high) = high else {
                    return fault("invalid range in character class", self.i - 1);
                };
                let _ = high_at;
                if high < low.unwrap_or(0) {
                    return fault("range out of order in character class", self.i - 1);
                }
                low = None;
                continue;
            }
            low = self.class_atom()?;
        }
    }

    /// The end of a `[:name:]` at the cursor (the offset of its closing
    /// `:`), if it is one.
    fn posix_end(&self) -> Option<usize> {
        let delimiter = self.p[self.i + 1];
        let mut j = self.i + 2;
        while j + 1 < self.p.len() {
            if self.p[j] == b']' {
                return None;
            }
            if self.p[j] == delimiter && self.p[j + 1] == b']' {
                return Some(j);
            }
            j += 1;
        }
        None
    }

    /// One character of a class (its value), or a class escape such as
    /// `\d` (`None`).
    fn class_atom(&mut self) -> Result<Option<u32>, Fault> {
        let c = self.p[self.i];
        self.i += 1;
        if c != b'\\' {
            if c < 0x80 || !self.unicode {
                return Ok(Some(u32::from(c)));
            }
            // A UTF-8 sequence: decode it for range order.
            let start = self.i - 1;
            let len = match c {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                _ => 4,
            };
            let end = (start + len).min(self.p.len());
            self.i = end;
            return Ok(std::str::from_utf8(&self.p[start..end])
                .ok()
                .and_then(|s| s.chars().next())
                .map(u32::from));
        }
        let Some(e) = self.peek(self.i) else {
            return fault("\\ at end of pattern", self.p.len());
        };
        self.i += 1;
        Ok(match e {
            b'd' | b'D' | b'w' | b'W' | b's' | b'S' | b'h' | b'H' | b'v' | b'V' => None,
            b'p' | b'P' => {
                self.property()?;
                None
            }
            b'x' => Some(self.hex()?),
            b'n' => Some(10),
            b't' => Some(9),
            b'r' => Some(13),
            b'f' => Some(12),
            b'e' => Some(27),
            b'a' => Some(7),
            b'b' => Some(8),
            b'Q' => {
                // Quoted characters: take the first as this atom.
                if self.peek(self.i) == Some(b'\\') && self.peek(self.i + 1) == Some(b'E') {
                    self.i += 2;
                    return Ok(None);
                }
                let v = self.peek(self.i).map(u32::from);
                self.i += 1;
                while self.i < self.p.len()
                    && !(self.p[self.i] == b'\\' && self.peek(self.i + 1) == Some(b'E'))
                {
                    self.i += 1;
                }
                self.i = (self.i + 2).min(self.p.len());
                v
            }
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                let mut k = 1;
                while k < 3
                    && self
                        .peek(self.i)
                        .is_some_and(|c| (b'0'..=b'7').contains(&c))
                {
                    v = v * 8 + u32::from(self.p[self.i] - b'0');
                    self.i += 1;
                    k += 1;
                }
                Some(v)
            }
            b'c' => {
                let Some(x) = self.peek(self.i) else {
                    return fault("\\c at end of pattern", self.p.len());
                };
                self.i += 1;
                Some(u32::from(x.to_ascii_uppercase() ^ 0x40))
            }
            other => Some(u32::from(other)),
        })
    }

    /// References to groups that were never opened, checked at the end
    /// (a reference may come before its group).
    fn references(&self) -> Result<(), Fault> {
        if let Some(&(_, at)) = self
            .named_refs
            .iter()
            .find(|(name, _)| !self.names.contains(name))
        {
            return fault("reference to non-existent subpattern", at);
        }
        if let Some(&(_, at)) = self.numbered_refs.iter().find(|(n, _)| *n > self.groups) {
            return fault("reference to non-existent subpattern", at);
        }
        if self.backrefs.iter().any(|&n| n > self.groups) {
            return fault("reference to non-existent subpattern", self.p.len());
        }
        Ok(())
    }
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (pattern, PCRE's message and offset) as OTP 25's re:compile gives them.
    #[test]
    fn faults_as_pcre_reports_them() {
        let cases: &[(&str, Option<(&str, usize)>)] = &[
            ("(", Some(("missing )", 1))),
            ("a)b", Some(("unmatched parentheses", 1))),
            (
                "[]a",
                Some(("missing terminating ] for character class", 3)),
            ),
            ("[z-a]", Some(("range out of order in character class", 3))),
            ("[a-\\d]", Some(("invalid range in character class", 4))),
            ("[[:foo:]]", Some(("unknown POSIX class name", 3))),
            ("a**", Some(("nothing to repeat", 2))),
            ("a*?+", Some(("nothing to repeat", 3))),
            ("{2}", Some(("nothing to repeat", 2))),
            ("a{2,1}", Some(("numbers out of order in {} quantifier", 5))),
            ("x{1,99999}", Some(("number too big in {} quantifier", 9))),
            ("(?z)", Some(("unrecognized character after (? or (?-", 2))),
            (
                "(?<n>a)(?<n>b)",
                Some(("two named subpatterns have the same name", 11)),
            ),
            (
                "(?P<1a>x)",
                Some(("group name must start with a non-digit", 4)),
            ),
            (
                "\\k<zz>abc",
                Some(("reference to non-existent subpattern", 5)),
            ),
            ("\\1abc", Some(("reference to non-existent subpattern", 5))),
            ("(?1)abc", Some(("reference to non-existent subpattern", 3))),
            (
                "(?<=a+)b",
                Some(("lookbehind assertion is not fixed length", 6)),
            ),
            ("\\c", Some(("\\c at end of pattern", 2))),
            ("(*FOO)a", Some(("(*VERB) not recognized or malformed", 5))),
            ("a*+", None),
            ("{", None),
            ("a{,5}", None),
            ("(a)\\1", None),
            ("[\\d-z]", None),
            ("[]a]", None),
            ("(?<=a{2})", None),
            ("(*UCP)(*CRLF)a", None),
            ("\\Q*\\E", None),
            ("(?x) a * ", None),
        ];
        for (pattern, want) in cases {
            let got = check(pattern.as_bytes(), false, false).err();
            let want = want.map(|(message, offset)| Fault { message, offset });
            assert_eq!(got, want, "{pattern}");
        }
    }
}
