//! Name matching: fzf-style fuzzy scoring (nucleo-matcher: one [`Atom`] per word, every word must
//! match, scores add; a quoted phrase is one exact substring; smart case, smart Latin
//! normalization) or a regex, with the matched character positions for highlighting.
//!
//! nucleo's `Matcher` needs `&mut` and owns scratch memory, so each [`Matcher`] keeps one (with a
//! reused `char` buffer for non-ASCII names) in a `RefCell`: build one per search, per thread.

use super::query::{Mode, Query, Term};
use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization};
use nucleo_matcher::{Config, Utf32Str};
use regex::Regex;
use std::cell::RefCell;
use unicode_segmentation::UnicodeSegmentation;

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
    /// Fuzzy matching (nucleo-matcher).
    Fuzzy {
        /// The pattern as typed.
        pattern: String,
        /// The compiled pattern: one atom per word or phrase, all of which must match.
        atoms: Vec<Atom>,
        /// A substring twin of each fuzzy word: a name matching all of them holds every
        /// word as typed (contiguous), which ranks above any scattered match.
        exact: Vec<Atom>,
        /// nucleo's matcher and a reused buffer for non-ASCII names.
        scratch: RefCell<Scratch>,
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
                let atoms: Vec<Atom> = q.terms().iter().filter_map(atom).collect();
                if atoms.is_empty() {
                    return Ok(Matcher::All);
                }
                let exact = atoms
                    .iter()
                    .filter(|a| a.kind == AtomKind::Fuzzy && !a.negative)
                    .map(|a| {
                        Atom::new(
                            &a.needle_text().to_string(),
                            CaseMatching::Smart,
                            Normalization::Smart,
                            AtomKind::Substring,
                            false,
                        )
                    })
                    .collect();
                Ok(Matcher::Fuzzy {
                    pattern: q.text.clone(),
                    atoms,
                    exact,
                    scratch: RefCell::new(Scratch {
                        nucleo: nucleo_matcher::Matcher::new(Config::DEFAULT),
                        buf: Vec::new(),
                    }),
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
            Matcher::Fuzzy { atoms, scratch, .. } => {
                let Scratch { nucleo, buf } = &mut *scratch.borrow_mut();
                let hay = utf32(name, buf);
                let mut total = 0i64;
                for a in atoms {
                    total += i64::from(a.score(hay, nucleo)?);
                }
                Some(total)
            }
            Matcher::Regex(r) => r.is_match(name).then_some(0),
        }
    }

    /// Score of `name` and whether it holds the text as typed (every fuzzy word as one
    /// contiguous run, as fzf's `'word` would match it), or `None` when it does not match.
    /// Regex and empty text count as contiguous.
    #[inline]
    pub fn score_contiguous(&self, name: &str) -> Option<(i64, bool)> {
        let score = self.score(name)?;
        let contiguous = match self {
            Matcher::Fuzzy { exact, scratch, .. } => {
                let Scratch { nucleo, buf } = &mut *scratch.borrow_mut();
                let hay = utf32(name, buf);
                exact.iter().all(|a| a.score(hay, nucleo).is_some())
            }
            Matcher::All | Matcher::Regex(_) => true,
        };
        Some((score, contiguous))
    }

    /// Character (not byte) positions of `name` to highlight: the fuzzy alignment, or the chars
    /// of the first regex match. Empty when nothing matches or the text is empty.
    pub fn indices(&self, name: &str) -> Vec<usize> {
        match self {
            Matcher::All => Vec::new(),
            Matcher::Fuzzy { atoms, scratch, .. } => {
                let Scratch { nucleo, buf } = &mut *scratch.borrow_mut();
                let mut ix: Vec<u32> = Vec::new();
                let hay = utf32(name, buf);
                for a in atoms {
                    if a.indices(hay, nucleo, &mut ix).is_none() {
                        return Vec::new();
                    }
                }
                ix.sort_unstable();
                ix.dedup();
                if name.is_ascii() {
                    return ix.into_iter().map(|i| i as usize).collect();
                }
                // nucleo counts graphemes (it matches each one's first char): map each to the
                // char position where it starts.
                let mut starts = Vec::with_capacity(name.len());
                let mut c = 0usize;
                for g in name.graphemes(true) {
                    starts.push(c);
                    c += g.chars().count();
                }
                ix.into_iter()
                    .filter_map(|i| starts.get(i as usize).copied())
                    .collect()
            }
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

/// The atom of one term: a word in fzf's syntax (`'exact`, `^prefix`, `suffix$`, `!not`, else
/// fuzzy), or a quoted phrase as one exact substring. `None` for a bare operator being typed
/// (`!`, `^`), which would otherwise match nothing or everything.
fn atom(t: &Term) -> Option<Atom> {
    if t.phrase {
        return Some(Atom::new(
            &t.text,
            CaseMatching::Smart,
            Normalization::Smart,
            AtomKind::Substring,
            false,
        ));
    }
    if t.text.trim_matches(['!', '^', '$', '\'']).is_empty() {
        return None;
    }
    Some(Atom::parse(
        &t.text,
        CaseMatching::Smart,
        Normalization::Smart,
    ))
}

/// nucleo's matcher plus a reused buffer, owned by one [`Matcher`].
pub struct Scratch {
    nucleo: nucleo_matcher::Matcher,
    buf: Vec<char>,
}

/// `name` as nucleo's input: the bytes when ASCII, else the first char of each grapheme in `buf`
/// (as `Utf32Str::new` does, but never handing nucleo non-ASCII bytes as ASCII).
#[inline]
fn utf32<'a>(name: &'a str, buf: &'a mut Vec<char>) -> Utf32Str<'a> {
    if name.is_ascii() {
        return Utf32Str::Ascii(name.as_bytes());
    }
    buf.clear();
    buf.extend(nucleo_matcher::chars::graphemes(name));
    Utf32Str::Unicode(buf)
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
    fn every_word_matches_and_the_name_holding_them_ranks_first() {
        let m = fuzzy("cudnn attention");
        let op = m
            .score("aten::_cudnn_attention_forward")
            .expect("both words");
        let rev = fuzzy("attention cudnn")
            .score("aten::_cudnn_attention_forward")
            .expect("any order");
        assert_eq!(op, rev);
        // A long template kernel name that holds the letters scattered ranks below.
        let kernel = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, \
                      float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>";
        if let Some(k) = m.score(kernel) {
            assert!(op > k, "{op} vs {k}");
        }
        assert_eq!(
            m.score("aten::_cudnn_rnn"),
            None,
            "a missing word fails the name"
        );
        // A quoted phrase is one exact substring, spaces included.
        let q = Matcher::new(&Query::parse("\"anonymous namespace\" cunn", Mode::Fuzzy))
            .expect("fuzzy never fails");
        assert!(q.score(kernel).is_some());
        assert_eq!(q.score("anonymous_namespace::cunn"), None);
        // fzf operators per word: negation.
        assert_eq!(
            fuzzy("cudnn !backward").score("aten::_cudnn_attention_backward"),
            None
        );
        assert!(
            fuzzy("cudnn !backward")
                .score("aten::_cudnn_attention_forward")
                .is_some()
        );
        // Highlights are the union of the words' positions.
        assert_eq!(fuzzy("mm add").indices("aten::addmm"), vec![6, 7, 8, 9, 10]);
        // A bare operator being typed is ignored.
        assert!(fuzzy("mm !").score("aten::mm").is_some());
    }

    #[test]
    fn contiguous_matches_are_told_from_scattered_ones() {
        let m = fuzzy("gemm");
        assert_eq!(
            m.score_contiguous("sm90_xmma_gemm_bf16").map(|s| s.1),
            Some(true)
        );
        assert_eq!(m.score_contiguous("Sgemm").map(|s| s.1), Some(true));
        // The letters in order but apart: a fuzzy hit only.
        let scattered = "void at::native::vectorized_elementwise_kernel<4, GeluMM>";
        assert_eq!(m.score_contiguous(scattered).map(|s| s.1), Some(false));
        assert_eq!(m.score_contiguous("nvjet_tst_128x64"), None);
        // Every word counts; negations and exact words do not need a twin.
        let two = fuzzy("gemm bf16 !fp8");
        assert_eq!(
            two.score_contiguous("xmma_gemm_bf16").map(|s| s.1),
            Some(true)
        );
        assert_eq!(
            two.score_contiguous("xmma_gemm_b_f16").map(|s| s.1),
            Some(false)
        );
        // nucleo alone ranks scattered letters at word starts above a contiguous `gemm`
        // inside a word: the contiguous tier puts it first.
        let (sgemm, c) = m.score_contiguous("ampere_sgemm_128x64").expect("match");
        let (scattered, s) = m.score_contiguous("GeneratorMM").expect("match");
        assert!(c && !s && sgemm < scattered, "{sgemm} vs {scattered}");
        // Within the contiguous tier nucleo's score puts a word start first.
        let mm = fuzzy("mm");
        let (start, c1) = mm.score_contiguous("aten::mm").expect("match");
        let (inside, c2) = mm.score_contiguous("aten::addmm").expect("match");
        assert!(c1 && c2 && start > inside, "{start} vs {inside}");
        let r = Matcher::new(&Query::parse("g.mm", Mode::Regex)).expect("valid");
        assert_eq!(r.score_contiguous("gemm"), Some((0, true)));
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

    #[test]
    fn fuzzy_unicode_positions_and_normalization() {
        // Latin normalization: an ASCII pattern matches accented letters.
        assert!(fuzzy("cafe").score("café_kernel").is_some());
        // A combining accent belongs to the grapheme of its base letter; positions stay chars.
        assert_eq!(fuzzy("ab").indices("e\u{301}_ab"), vec![3, 4]);
        assert_eq!(fuzzy("zz").indices("µ_ab"), Vec::<usize>::new());
    }

    /// Brute-force reference for ASCII names and patterns: smart-case subsequence test.
    fn reference(name: &str, pat: &str) -> bool {
        let sensitive = pat.bytes().any(|b| b.is_ascii_uppercase());
        let fold = |b: u8| if sensitive { b } else { b.to_ascii_lowercase() };
        let mut want = pat.bytes().map(fold).peekable();
        for b in name.bytes().map(fold) {
            if want.peek() == Some(&b) {
                want.next();
            }
        }
        want.peek().is_none()
    }

    proptest! {
        /// A name matches exactly when the pattern is a smart-case subsequence of it, and the
        /// highlighted positions are sorted, distinct, spell the pattern, and lie inside the name.
        #[test]
        fn fuzzy_agrees_with_subsequence(name in "[a-zA-Z_:0-9 ]{0,12}", pat in "[a-zA-Z_:0-9]{1,4}") {
            let m = fuzzy(&pat);
            prop_assert_eq!(m.score(&name).is_some(), reference(&name, &pat));
            let ix = m.indices(&name);
            if m.score(&name).is_some() {
                prop_assert!(ix.windows(2).all(|w| w[0] < w[1]));
                let picked: String = ix.iter().map(|&i| name.as_bytes()[i] as char).collect();
                prop_assert!(picked.eq_ignore_ascii_case(&pat), "{picked} vs {pat}");
            } else {
                prop_assert!(ix.is_empty());
            }
        }

        /// Non-ASCII names: highlighted positions are valid, sorted char positions.
        #[test]
        fn fuzzy_indices_are_char_positions(name in "[a-zµéü_\u{301}]{0,12}", pat in "[a-z_]{1,3}") {
            let m = fuzzy(&pat);
            let ix = m.indices(&name);
            let n = name.chars().count();
            prop_assert!(ix.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(ix.iter().all(|&i| i < n));
            prop_assert_eq!(ix.is_empty(), m.score(&name).is_none());
        }
    }
}
