//! Test support: reads back the text `~w` prints, and the corpus records.
#![allow(dead_code)]

use act::term::Constant;
use num_bigint::BigInt;

/// Reads the text `~w` prints back into a constant (numbers, atoms,
/// lists, tuples, maps and byte binaries: all `~w` ever writes here).
pub struct Reader<'a> {
    pub s: &'a [u8],
    pub at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> u8 {
        self.s.get(self.at).copied().unwrap_or(0)
    }
    fn eat(&mut self, text: &str) -> bool {
        if self.s[self.at..].starts_with(text.as_bytes()) {
            self.at += text.len();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, text: &str) {
        assert!(
            self.eat(text),
            "expected {text} at {} in {}",
            self.at,
            String::from_utf8_lossy(self.s)
        );
    }
    fn sequence(&mut self, close: &str) -> (Vec<Constant>, Option<Constant>) {
        let mut items = Vec::new();
        if self.eat(close) {
            return (items, None);
        }
        loop {
            items.push(self.term());
            if self.eat(",") {
                continue;
            }
            if self.eat("|") {
                let tail = self.term();
                self.expect(close);
                return (items, Some(tail));
            }
            self.expect(close);
            return (items, None);
        }
    }
    pub fn term(&mut self) -> Constant {
        let c = self.peek();
        if self.eat("#{") {
            let mut pairs = Vec::new();
            if !self.eat("}") {
                loop {
                    let k = self.term();
                    self.expect(" => ");
                    let v = self.term();
                    pairs.push((k, v));
                    if !self.eat(",") {
                        break;
                    }
                }
                self.expect("}");
            }
            return Constant::Map(pairs);
        }
        if self.eat("<<") {
            let (items, _) = self.sequence(">>");
            let bytes = items
                .into_iter()
                .map(|c| match c {
                    Constant::Integer(i) => u8::try_from(&i).unwrap(),
                    other => panic!("byte {other:?}"),
                })
                .collect();
            return Constant::Binary(bytes);
        }
        if self.eat("[") {
            let (items, tail) = self.sequence("]");
            return Constant::List(items, Box::new(tail.unwrap_or(Constant::Nil)));
        }
        if self.eat("{") {
            return Constant::Tuple(self.sequence("}").0);
        }
        if c == b'\'' {
            self.at += 1;
            let mut name = String::new();
            loop {
                let ch = self.next_char();
                match ch {
                    '\'' => break,
                    '\\' => {
                        let e = self.next_char();
                        name.push(match e {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            'v' => '\x0b',
                            'b' => '\x08',
                            'f' => '\x0c',
                            'e' => '\x1b',
                            'x' => {
                                self.expect("{");
                                let start = self.at;
                                while self.peek() != b'}' {
                                    self.at += 1;
                                }
                                let hex = std::str::from_utf8(&self.s[start..self.at]).unwrap();
                                self.expect("}");
                                char::from_u32(u32::from_str_radix(hex, 16).unwrap()).unwrap()
                            }
                            '0'..='7' => {
                                let mut v = e.to_digit(8).unwrap();
                                while matches!(self.peek(), b'0'..=b'7') {
                                    v = v * 8 + (self.next_char().to_digit(8).unwrap());
                                }
                                char::from_u32(v).unwrap()
                            }
                            other => other,
                        });
                    }
                    other => name.push(other),
                }
            }
            return Constant::Atom(name);
        }
        if c == b'-' || c.is_ascii_digit() {
            let start = self.at;
            self.at += 1;
            while matches!(self.peek(), b'0'..=b'9' | b'.' | b'e' | b'-' | b'+')
                && !(self.peek() == b'-' && self.s[self.at - 1] != b'e')
            {
                self.at += 1;
            }
            let text = std::str::from_utf8(&self.s[start..self.at]).unwrap();
            if text.contains('.') {
                return Constant::Float(text.parse().unwrap());
            }
            return Constant::Integer(text.parse::<BigInt>().unwrap());
        }
        let start = self.at;
        while self.at < self.s.len() && !b",|}]>= ".contains(&self.s[self.at]) {
            self.at += 1;
        }
        Constant::Atom(String::from_utf8(self.s[start..self.at].to_vec()).unwrap())
    }
    fn next_char(&mut self) -> char {
        let rest = std::str::from_utf8(&self.s[self.at..]).unwrap();
        let ch = rest.chars().next().unwrap();
        self.at += ch.len_utf8();
        ch
    }
}

pub fn line<'a>(data: &'a [u8], at: &mut usize) -> &'a str {
    let end = data[*at..].iter().position(|&b| b == b'\n').unwrap() + *at;
    let s = std::str::from_utf8(&data[*at..end]).unwrap();
    *at = end + 1;
    s
}

pub fn block<'a>(data: &'a [u8], at: &mut usize, len: usize) -> &'a str {
    let s = std::str::from_utf8(&data[*at..*at + len]).unwrap();
    *at += len + 1;
    s
}
