//! Query text → [`Query`]: the text to match plus prefix filters (`cat:`, `track:`, `proc:`,
//! `arg:KEY=VALUE`).
//!
//! Tokens are separated by whitespace. A token starting with a known prefix is a filter; any other
//! token is text (so `aten::mm` or `a:b` stay text). Double quotes group words and protect a
//! prefix: `"cat:x y"` is text, `track:"stream 7"` is a filter with a space in its value; `\"`
//! and `\\` escape inside quotes; an unterminated quote runs to the end (the prompt is parsed as
//! it is typed). Text tokens are joined with one space and kept apart as [`Term`]s: in fuzzy mode
//! every word must match (any order, fuzzy per word, fzf's `'exact` `^prefix` `suffix$` `!not`
//! per word) and a quoted token is one exact phrase. A filter with an empty value (`cat:` while
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

/// One text token of a query: a word, or a quoted phrase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// The token without its quotes.
    pub text: String,
    /// Written in quotes: matched as one exact (smart-case) substring, spaces included.
    pub phrase: bool,
}

/// A parsed query. Filter values compare case-insensitively (see [`Filter`]).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Query {
    /// Text matched against event names (empty: every name): the terms joined with one space.
    pub text: String,
    /// The text's tokens. Empty with a non-empty `text` (a query built in code) means the
    /// whitespace-separated words of `text` ([`Query::terms`]).
    pub phrases: Vec<Term>,
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
                _ => {
                    if !tok.text.is_empty() {
                        q.phrases.push(Term {
                            text: tok.text.clone(),
                            phrase: tok.quoted,
                        });
                    }
                    words.push(tok.text)
                }
            }
        }
        q.text = words.join(" ");
        q
    }

    /// The terms to match: the parsed tokens, or the words of `text` for a query built in code.
    pub fn terms(&self) -> Vec<Term> {
        if !self.phrases.is_empty() || self.text.is_empty() {
            return self.phrases.clone();
        }
        self.text
            .split_whitespace()
            .map(|w| Term {
                text: w.to_string(),
                phrase: false,
            })
            .collect()
    }

    /// True when every name matching `self` also matches `next` can be found among the matches
    /// of `self`: same mode (fuzzy), same filters, and `next`'s text extends `self`'s. Fuzzy
    /// matching is a subsequence test, so a longer pattern matches a subset; smart case only
    /// turns case-sensitive as letters are added, which also narrows.
    /// Every word must match, so adding words or letters narrows too — except with fzf's
    /// operators (`!not`, `^`, `$`, `'`) and quotes, which can widen as they are typed.
    pub fn narrows_to(&self, next: &Query) -> bool {
        let plain = |q: &Query| {
            !q.text.contains(['!', '^', '$', '\'', '"']) && q.phrases.iter().all(|t| !t.phrase)
        };
        self.mode == Mode::Fuzzy
            && next.mode == Mode::Fuzzy
            && self.filters == next.filters
            && plain(self)
            && plain(next)
            && next.text.starts_with(&self.text)
    }
}

struct Token {
    text: String,
    /// The token began with a quote, so a prefix in it is text.
    quoted_prefix: bool,
    /// The token had quotes: a phrase.
    quoted: bool,
}

/// Splits on unquoted whitespace; quotes group and are removed.
fn tokens(input: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut started = false;
    let mut quoted_prefix = false;
    let mut quoted = false;
    let mut in_quote = false;
    let mut chars = input.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                if !started {
                    quoted_prefix = true;
                }
                started = true;
                quoted = true;
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
                        quoted,
                    });
                }
                started = false;
                quoted_prefix = false;
                quoted = false;
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
            quoted,
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
        // Words and phrases are kept apart for matching.
        let q = p(r#"cudnn "attention forward" cat:cpu_op"#);
        assert_eq!(q.text, "cudnn attention forward");
        let t = |text: &str, phrase| Term {
            text: text.into(),
            phrase,
        };
        assert_eq!(
            q.terms(),
            vec![t("cudnn", false), t("attention forward", true)]
        );
        let built = Query {
            text: "a  b".into(),
            ..Query::default()
        };
        assert_eq!(built.terms(), vec![t("a", false), t("b", false)]);
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
        // More words narrow (each must match); operators and phrases do not take the shortcut.
        assert!(p("cudnn").narrows_to(&p("cudnn att")));
        assert!(!p("mm !").narrows_to(&p("mm !a")));
        assert!(!p("\"mm").narrows_to(&p("\"mm a")));
        let r = Query::parse("ge", Mode::Regex);
        assert!(!r.narrows_to(&Query::parse("gem", Mode::Regex)));
    }
}
