//! Second-chance repair of known writer defects, and byte offsets for error messages.
//!
//! The fast path parses strictly. When it stops on a syntax error, [`repair`] rewrites the text
//! once (outside strings: bare `N/A`, `NaN`, `Infinity`, `-Infinity` → quoted strings, trailing
//! commas in objects and arrays (`{"k":1,}`, `[…,]`, as Perfetto accepts) dropped, empty values
//! (`"k": ,` — Kineto's empty process-group descriptions, kineto#1119) → `null`; inside
//! strings: raw control characters → `\u00XX`, invalid UTF-8 → U+FFFD, invalid escapes → escaped
//! backslash, lone surrogate escapes → `\uFFFD`) and the file is parsed again from the start.

use std::io::{self, Read};

/// What [`repair`] changed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Repairs {
    /// Bare `N/A` / `NaN` / `Infinity` tokens quoted.
    pub bare_tokens: u64,
    /// Raw control characters escaped inside strings.
    pub control_chars: u64,
    /// Invalid UTF-8 sequences replaced.
    pub invalid_utf8: u64,
    /// Invalid escapes / lone surrogates fixed.
    pub bad_escapes: u64,
    /// Trailing commas before `}` / `]` dropped.
    pub trailing_commas: u64,
    /// Empty values (`"k": ,` / `"k": }`) read as `null`.
    pub empty_values: u64,
}

impl Repairs {
    /// Total number of repairs.
    pub fn total(&self) -> u64 {
        self.bare_tokens
            + self.control_chars
            + self.invalid_utf8
            + self.bad_escapes
            + self.trailing_commas
            + self.empty_values
    }
}

const BARE: [&[u8]; 4] = [b"N/A", b"NaN", b"-Infinity", b"Infinity"];

fn hex4(b: &[u8]) -> Option<u16> {
    let s = std::str::from_utf8(b.get(..4)?).ok()?;
    u16::from_str_radix(s, 16).ok()
}

/// Rewrites `input` fixing the defects listed in the module docs; `None` when nothing needed fixing.
pub fn repair(input: &[u8]) -> Option<(Vec<u8>, Repairs)> {
    let mut r = Repairs::default();
    let mut out = Vec::with_capacity(input.len() + input.len() / 64);
    let mut i = 0;
    let n = input.len();
    while i < n {
        let c = input[i];
        if c == b'"' {
            // Copy one string, repairing its content.
            out.push(b'"');
            i += 1;
            while i < n {
                let c = input[i];
                match c {
                    b'"' => {
                        out.push(b'"');
                        i += 1;
                        break;
                    }
                    b'\\' => {
                        let e = input.get(i + 1).copied();
                        match e {
                            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                                out.extend_from_slice(&input[i..i + 2]);
                                i += 2;
                            }
                            Some(b'u') => match input.get(i + 2..).and_then(hex4) {
                                Some(u) if (0xD800..0xDC00).contains(&u) => {
                                    let low = input
                                        .get(i + 6..i + 8)
                                        .filter(|s| *s == b"\\u")
                                        .and_then(|_| input.get(i + 8..))
                                        .and_then(hex4);
                                    if low.is_some_and(|l| (0xDC00..0xE000).contains(&l)) {
                                        out.extend_from_slice(&input[i..i + 12]);
                                        i += 12;
                                    } else {
                                        out.extend_from_slice(b"\\uFFFD");
                                        r.bad_escapes += 1;
                                        i += 6;
                                    }
                                }
                                Some(u) if (0xDC00..0xE000).contains(&u) => {
                                    out.extend_from_slice(b"\\uFFFD");
                                    r.bad_escapes += 1;
                                    i += 6;
                                }
                                Some(_) => {
                                    out.extend_from_slice(&input[i..i + 6]);
                                    i += 6;
                                }
                                None => {
                                    out.extend_from_slice(b"\\\\");
                                    r.bad_escapes += 1;
                                    i += 1;
                                }
                            },
                            Some(_) => {
                                out.extend_from_slice(b"\\\\");
                                r.bad_escapes += 1;
                                i += 1;
                            }
                            None => {
                                i += 1;
                            }
                        }
                    }
                    0..=0x1f => {
                        out.extend_from_slice(format!("\\u{c:04x}").as_bytes());
                        r.control_chars += 1;
                        i += 1;
                    }
                    0x20..=0x7f => {
                        out.push(c);
                        i += 1;
                    }
                    _ => {
                        let w = match c {
                            0xc2..=0xdf => 2,
                            0xe0..=0xef => 3,
                            0xf0..=0xf4 => 4,
                            _ => 0,
                        };
                        let ok = w > 0
                            && input
                                .get(i..i + w)
                                .is_some_and(|s| std::str::from_utf8(s).is_ok());
                        if ok {
                            out.extend_from_slice(&input[i..i + w]);
                            i += w;
                        } else {
                            out.extend_from_slice("\u{fffd}".as_bytes());
                            r.invalid_utf8 += 1;
                            i += 1;
                        }
                    }
                }
            }
            continue;
        }
        if c == b',' || c == b':' {
            let mut j = i + 1;
            while input
                .get(j)
                .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            {
                j += 1;
            }
            let next = input.get(j).copied();
            if c == b',' && matches!(next, Some(b'}' | b']')) {
                r.trailing_commas += 1;
                i += 1;
                continue;
            }
            if c == b':' && matches!(next, Some(b',' | b'}')) {
                out.extend_from_slice(b":null");
                r.empty_values += 1;
                i += 1;
                continue;
            }
        }
        if let Some(tok) = BARE.iter().find(|t| input[i..].starts_with(t)) {
            out.push(b'"');
            out.extend_from_slice(tok);
            out.push(b'"');
            r.bare_tokens += 1;
            i += tok.len();
            continue;
        }
        out.push(c);
        i += 1;
    }
    (r.total() > 0).then_some((out, r))
}

/// Byte offset of serde_json's (line, column) position (column 1 = first byte of the line).
pub fn offset_of(mut src: impl Read, line: usize, column: usize) -> u64 {
    let mut buf = vec![0u8; 1 << 16];
    let mut cur_line = 1usize;
    let mut pos = 0u64;
    let column = column.saturating_sub(1) as u64;
    if line <= 1 {
        return column;
    }
    loop {
        let n = match src.read(&mut buf) {
            Ok(0) | Err(_) => return pos,
            Ok(n) => n,
        };
        for (k, &b) in buf[..n].iter().enumerate() {
            if b == b'\n' {
                cur_line += 1;
                if cur_line == line {
                    return pos + k as u64 + 1 + column;
                }
            }
        }
        pos += n as u64;
    }
}

/// Reads everything, stopping quietly at a read error (truncated gzip): returns bytes and error.
pub fn read_all(mut src: impl Read) -> (Vec<u8>, Option<io::Error>) {
    let mut v = Vec::new();
    match src.read_to_end(&mut v) {
        Ok(_) => (v, None),
        Err(e) => (v, Some(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repairs_known_defects() {
        let (out, r) = repair(b"{\"a\":N/A,\"b\":\"x\x01y\",\"c\":\"\xff\",\"d\":NaN}").unwrap();
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            "{\"a\":\"N/A\",\"b\":\"x\\u0001y\",\"c\":\"\u{fffd}\",\"d\":\"NaN\"}"
        );
        assert_eq!(r.bare_tokens, 2);
        assert_eq!(r.control_chars, 1);
        assert_eq!(r.invalid_utf8, 1);
        assert!(repair(b"{\"a\":\"N/A\"}").is_none());
        let (out, r) = repair(br#"["\x", "\ud800", "\ud83d\ude00"]"#).unwrap();
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"["\\x", "\uFFFD", "\ud83d\ude00"]"#
        );
        assert_eq!(r.bad_escapes, 2);
    }

    #[test]
    fn trailing_commas_and_empty_values() {
        let (out, r) =
            repair(b"{\"a\":[1,2, ],\"b\":{\"c\":1,\n},\"d\": ,\"e\":\"x,}\",\"f\":}").unwrap();
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            "{\"a\":[1,2 ],\"b\":{\"c\":1\n},\"d\":null ,\"e\":\"x,}\",\"f\":null}"
        );
        assert_eq!((r.trailing_commas, r.empty_values), (2, 2));
        assert_eq!(r.total(), 4);
        assert!(repair(b"[{\"a\":\"b,]\"}]").is_none());
    }

    #[test]
    fn offsets_from_line_col() {
        let t = b"ab\ncd\nef";
        assert_eq!(offset_of(&t[..], 1, 2), 1);
        assert_eq!(offset_of(&t[..], 2, 0), 3);
        assert_eq!(offset_of(&t[..], 3, 2), 7);
    }
}
