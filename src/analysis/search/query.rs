//! Query text → [`Query`]: the text to match plus prefix filters (`cat:`, `track:`, `proc:`,
//! `arg:KEY=VALUE`).
//!
//! Tokens are separated by whitespace. A token starting with a known prefix is a filter; any other
//! token is text (so `aten::mm` or `a:b` stay text). Double quotes group words and protect a
//! prefix: `"cat:x y"` is text, `track:"stream 7"` is a filter with a space in its value; `\"`
//! and `\\` escape inside quotes; an unterminated quote runs to the end (the prompt is parsed as
//! it is typed). Text tokens are joined with one space. A filter with an empty value (`cat:` while
//! typing) is ignored.

/// What a filter looks at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Filter {
    /// `cat:` — the event's raw category or its canonical name contains the value.
    Cat(String),
    /// `track:` — the track's display or stable name contains the value.
    Track(String),
    /// `proc:` — the process's (plane's) display or stable name contains the value.
    Proc(String),
    /// `arg:KEY` (the event has arg `KEY`) or `arg:KEY=VALUE` (its displayed value contains
    /// `VALUE`). Keys compare exactly.
    Arg {
        /// Arg / stat key.
        key: String,
        /// Part of the value, if given.
        value: Option<String>,
    },
}

/// How the text is matched against names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// Fuzzy matching, nucleo-matcher (smart case: case-sensitive only when the text has an upper-case letter).
    #[default]
    Fuzzy,
    /// A `regex` crate pattern, unanchored and case-sensitive as written.
    Regex,
}

/// A parsed query. Filter values compare case-insensitively (see [`Filter`]).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Query {
    /// Text matched against event names (empty: every name).
    pub text: String,
    /// Filters, all of which must hold for an event to count.
    pub filters: Vec<Filter>,
    /// Matching mode.
    pub mode: Mode,
}

impl Query {
    /// Parses `input` in `mode`.
    pub fn parse(input: &str, mode: Mode) -> Query {
        let mut q = Query {
            mode,
            ..Query::default()
        };
        let mut words: Vec<String> = Vec::new();
        for tok in tokens(input) {
            match (tok.quoted_prefix, filter_of(&tok.text)) {
                (false, Some(Some(f))) => q.filters.push(f),
                (false, Some(None)) => {}
                _ => words.push(tok.text),
            }
        }
        q.text = words.join(" ");
        q
    }

    /// True when every name matching `self` also matches `next` can be found among the matches
    /// of `self`: same mode (fuzzy), same filters, and `next`'s text extends `self`'s. Fuzzy
    /// matching is a subsequence test, so a longer pattern matches a subset; smart case only
    /// turns case-sensitive as letters are added, which also narrows.
    pub fn narrows_to(&self, next: &Query) -> bool {
        self.mode == Mode::Fuzzy
            && next.mode == Mode::Fuzzy
            && self.filters == next.filters
            && next.text.starts_with(&self.text)
    }
}

struct Token {
    text: String,
    /// The token began with a quote, so a prefix in it is text.
    quoted_prefix: bool,
}

/// Splits on unquoted whitespace; quotes group and are removed.
fn tokens(input: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut started = false;
    let mut quoted_prefix = false;
    let mut in_quote = false;
    let mut chars = input.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                if !started {
                    quoted_prefix = true;
                }
                started = true;
                in_quote = !in_quote;
            }
            '\\' if in_quote => {
                started = true;
                match chars.next() {
                    Some(n) => cur.push(n),
                    None => cur.push('\\'),
                }
            }
            c if c.is_whitespace() && !in_quote => {
                if started {
                    out.push(Token {
                        text: std::mem::take(&mut cur),
                        quoted_prefix,
                    });
                }
                started = false;
                quoted_prefix = false;
            }
            c => {
                started = true;
                cur.push(c);
            }
        }
    }
    if started {
        out.push(Token {
            text: cur,
            quoted_prefix,
        });
    }
    out
}

/// `None`: not a filter. `Some(None)`: a filter prefix with an empty value (ignored).
fn filter_of(tok: &str) -> Option<Option<Filter>> {
    let (prefix, value) = tok.split_once(':')?;
    let value = value.to_string();
    let f = match prefix {
        "cat" => Filter::Cat(value),
        "track" => Filter::Track(value),
        "proc" => Filter::Proc(value),
        "arg" => {
            let (key, val) = match value.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => (value, None),
            };
            if key.is_empty() {
                return Some(None);
            }
            return Some(Some(Filter::Arg { key, value: val }));
        }
        _ => return None,
    };
    match &f {
        Filter::Cat(v) | Filter::Track(v) | Filter::Proc(v) if v.is_empty() => Some(None),
        _ => Some(Some(f)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Query {
        Query::parse(s, Mode::Fuzzy)
    }

    #[test]
    fn text_and_prefixes() {
        let q = p("  gemm   cat:kernel track:stream  proc:GPU arg:hlo_op=fusion.1 ");
        assert_eq!(q.text, "gemm");
        assert_eq!(
            q.filters,
            vec![
                Filter::Cat("kernel".into()),
                Filter::Track("stream".into()),
                Filter::Proc("GPU".into()),
                Filter::Arg {
                    key: "hlo_op".into(),
                    value: Some("fusion.1".into())
                },
            ]
        );
        // Names with colons are text; words join with one space.
        let q = p("aten::mm   foo:bar  x");
        assert_eq!(q.text, "aten::mm foo:bar x");
        assert!(q.filters.is_empty());
    }

    #[test]
    fn quoting_and_edge_cases() {
        let q = p(r#"track:"stream 7" "cat:not a filter" arg:"Input Dims=[1, 2]""#);
        assert_eq!(q.text, "cat:not a filter");
        assert_eq!(
            q.filters,
            vec![
                Filter::Track("stream 7".into()),
                Filter::Arg {
                    key: "Input Dims".into(),
                    value: Some("[1, 2]".into())
                }
            ]
        );
        // Escapes inside quotes; an unterminated quote runs to the end.
        let q = p(r#""a \"b\" \\c" "open quote"#);
        assert_eq!(q.text, r#"a "b" \c open quote"#);
        // Empty filter values (mid-typing) are ignored; `arg:` with a value-only key too.
        let q = p("cat: track: proc: arg: arg:=x mm");
        assert_eq!((q.text.as_str(), q.filters.len()), ("mm", 0));
        // `arg:KEY` alone and `arg:KEY=` (empty value: the key must exist / any value).
        let q = p("arg:External id arg:k=");
        assert_eq!(
            q.filters,
            vec![
                Filter::Arg {
                    key: "External".into(),
                    value: None
                },
                Filter::Arg {
                    key: "k".into(),
                    value: Some(String::new())
                }
            ]
        );
        assert_eq!(q.text, "id");
        assert_eq!(p(""), Query::default());
        assert_eq!(p("\"\"").text, "");
    }

    #[test]
    fn narrowing_rule() {
        let a = p("ge cat:kernel");
        assert!(a.narrows_to(&p("gem cat:kernel")));
        assert!(a.narrows_to(&p("geM cat:kernel")));
        assert!(!a.narrows_to(&p("g cat:kernel")));
        assert!(!a.narrows_to(&p("gem")));
        assert!(p("").narrows_to(&p("x")));
        let r = Query::parse("ge", Mode::Regex);
        assert!(!r.narrows_to(&Query::parse("gem", Mode::Regex)));
    }
}
