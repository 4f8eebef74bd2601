//! Name matching: skim fuzzy scoring (fuzzy-matcher's `SkimMatcherV2`) or a regex, with the
//! matched character positions for highlighting.
//!
//! Fuzzy matching first runs a byte-level subsequence test (the same test skim's own
//! `cheap_matches` does on `char`s, ASCII case folded unless the pattern has an upper-case
//! letter); only names that pass are scored by skim's dynamic programme, which allocates.

use super::query::{Mode, Query};
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use regex::Regex;

/// Why a query cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchError {
    /// The regex does not compile; `message` is the regex crate's explanation.
    Regex {
        /// The pattern as given.
        pattern: String,
        /// The regex crate's error text.
        message: String,
    },
}

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SearchError::Regex { pattern, message } => {
                write!(f, "invalid regex {pattern:?}: {message}")
            }
        }
    }
}

impl std::error::Error for SearchError {}

/// A compiled text matcher. Scores: higher is better; regex and empty text score 0.
pub enum Matcher {
    /// Empty text: every name matches.
    All,
    /// Skim fuzzy matching.
    Fuzzy {
        /// The pattern.
        pattern: String,
        /// Pattern bytes for the subsequence pre-test (lower-cased unless case-sensitive);
        /// `None` when the pattern is not ASCII (skim then tests every name itself).
        folded: Option<Vec<u8>>,
        /// Smart case: the pattern has an upper-case ASCII letter.
        case_sensitive: bool,
        /// The skim matcher (smart case, its default).
        skim: Box<SkimMatcherV2>,
    },
    /// A regular expression.
    Regex(Regex),
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Matcher::All => write!(f, "All"),
            Matcher::Fuzzy { pattern, .. } => write!(f, "Fuzzy({pattern:?})"),
            Matcher::Regex(r) => write!(f, "Regex({:?})", r.as_str()),
        }
    }
}

impl Matcher {
    /// Compiles the text of `q` in its mode.
    pub fn new(q: &Query) -> Result<Matcher, SearchError> {
        if q.text.is_empty() {
            return Ok(Matcher::All);
        }
        match q.mode {
            Mode::Fuzzy => {
                let case_sensitive = q.text.bytes().any(|b| b.is_ascii_uppercase());
                let folded = q.text.is_ascii().then(|| {
                    if case_sensitive {
                        q.text.as_bytes().to_vec()
                    } else {
                        q.text.bytes().map(|b| b.to_ascii_lowercase()).collect()
                    }
                });
                Ok(Matcher::Fuzzy {
                    pattern: q.text.clone(),
                    folded,
                    case_sensitive,
                    skim: Box::new(SkimMatcherV2::default().smart_case()),
                })
            }
            Mode::Regex => {
                Regex::new(&q.text)
                    .map(Matcher::Regex)
                    .map_err(|e| SearchError::Regex {
                        pattern: q.text.clone(),
                        message: e.to_string(),
                    })
            }
        }
    }

    /// Score of `name`, or `None` when it does not match.
    #[inline]
    pub fn score(&self, name: &str) -> Option<i64> {
        match self {
            Matcher::All => Some(0),
            Matcher::Fuzzy {
                pattern,
                folded,
                case_sensitive,
                skim,
            } => {
                if let Some(p) = folded
                    && !subsequence(name.as_bytes(), p, *case_sensitive)
                {
                    return None;
                }
                skim.fuzzy_match(name, pattern)
            }
            Matcher::Regex(r) => r.is_match(name).then_some(0),
        }
    }

    /// Character (not byte) positions of `name` to highlight: the fuzzy alignment, or the chars
    /// of the first regex match. Empty when nothing matches or the text is empty.
    pub fn indices(&self, name: &str) -> Vec<usize> {
        match self {
            Matcher::All => Vec::new(),
            Matcher::Fuzzy { pattern, skim, .. } => skim
                .fuzzy_indices(name, pattern)
                .map(|(_, ix)| ix)
                .unwrap_or_default(),
            Matcher::Regex(r) => match r.find(name) {
                Some(m) => name
                    .char_indices()
                    .enumerate()
                    .filter(|(_, (b, _))| *b >= m.start() && *b < m.end())
                    .map(|(i, _)| i)
                    .collect(),
                None => Vec::new(),
            },
        }
    }
}

/// True when `pat` (ASCII, already folded when not case-sensitive) is a subsequence of `hay`.
/// Non-ASCII bytes of `hay` never equal an ASCII pattern byte, as in skim's char comparison.
#[inline]
fn subsequence(hay: &[u8], pat: &[u8], case_sensitive: bool) -> bool {
    let mut it = pat.iter();
    let Some(mut want) = it.next() else {
        return true;
    };
    for &b in hay {
        let b = if case_sensitive {
            b
        } else {
            b.to_ascii_lowercase()
        };
        if b == *want {
            match it.next() {
                Some(w) => want = w,
                None => return true,
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fuzzy(t: &str) -> Matcher {
        Matcher::new(&Query::parse(t, Mode::Fuzzy)).expect("fuzzy never fails")
    }

    #[test]
    fn fuzzy_scores_and_highlights() {
        let m = fuzzy("mm");
        let a = m.score("aten::mm").expect("match");
        let b = m.score("aten::matmul").expect("match");
        // Consecutive letters at a word start beat scattered ones.
        assert!(a > b, "{a} vs {b}");
        assert_eq!(m.score("aten::add"), None);
        assert_eq!(m.indices("aten::mm"), vec![6, 7]);
        // Char (not byte) positions past a multi-byte char.
        assert_eq!(fuzzy("ab").indices("µ_ab"), vec![2, 3]);
        // Smart case.
        assert!(fuzzy("gemm").score("Sgemm").is_some());
        assert!(fuzzy("Gemm").score("sgemm").is_none());
        assert!(fuzzy("Gemm").score("xGemm").is_some());
    }

    #[test]
    fn regex_matches_and_errors() {
        let m = Matcher::new(&Query::parse("^aten::(mm|add)$", Mode::Regex)).expect("valid");
        assert_eq!(m.score("aten::mm"), Some(0));
        assert_eq!(m.score("aten::mmx"), None);
        let m = Matcher::new(&Query::parse("m+", Mode::Regex)).expect("valid");
        assert_eq!(m.indices("µ_mm"), vec![2, 3]);
        let e = Matcher::new(&Query::parse("ker(nel", Mode::Regex)).expect_err("invalid");
        let SearchError::Regex { pattern, message } = &e;
        assert_eq!(pattern, "ker(nel");
        assert!(message.contains("unclosed group"), "{message}");
        assert!(e.to_string().starts_with("invalid regex \"ker(nel\": "));
    }

    proptest! {
        /// The byte pre-test never rejects a name skim would match.
        #[test]
        fn pretest_agrees_with_skim(name in "[a-zA-Z_:µ0-9 ]{0,12}", pat in "[a-zA-Z_:0-9]{1,4}") {
            let m = fuzzy(&pat);
            let skim = SkimMatcherV2::default().smart_case();
            prop_assert_eq!(m.score(&name), skim.fuzzy_match(&name, &pat));
        }
    }
}
