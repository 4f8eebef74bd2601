//! Tests of the terminal text rule: every dangerous character class is replaced, widths follow
//! unicode-width, cuts never exceed the width nor split a character from its marks.

use super::*;
use proptest::prelude::*;

#[test]
fn controls_c0_c1_and_del_are_replaced() {
    for c in (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32) {
        let s = format!("a{c}b");
        let out = sanitize(&s);
        assert!(!out.chars().any(is_unsafe), "{c:?} leaked");
        assert_eq!(out.chars().count(), 3);
    }
    assert_eq!(sanitize("\x1b[2Jboom"), "\u{FFFD}[2Jboom");
    assert_eq!(sanitize("a\tb\nc\rd"), "a b c d");
    assert_eq!(sanitize("\u{9b}31m"), "\u{FFFD}31m", "C1 CSI");
}

#[test]
fn bidi_zero_width_bom_and_tags_are_replaced() {
    for c in [
        '\u{202E}',
        '\u{202A}',
        '\u{2066}',
        '\u{2069}',
        '\u{200E}',
        '\u{200F}',
        '\u{061C}',
        '\u{200B}',
        '\u{200C}',
        '\u{200D}',
        '\u{2060}',
        '\u{FEFF}',
        '\u{2028}',
        '\u{2029}',
        '\u{E0041}',
        '\u{FFF9}',
    ] {
        assert_eq!(sanitize(&format!("x{c}y")), "x\u{FFFD}y", "{:x}", c as u32);
    }
}

#[test]
fn plain_text_is_borrowed_and_kept() {
    for s in [
        "aten::mm",
        "日本語",
        "e\u{301}t\u{e9}",
        "fused_add_relu (12)",
        "🙂",
    ] {
        assert!(matches!(sanitize(s), Cow::Borrowed(_)), "{s}");
    }
}

#[test]
fn width_counts_wide_and_combining() {
    assert_eq!(width("abc"), 3);
    assert_eq!(width("日本語"), 6);
    assert_eq!(width("e\u{301}"), 1, "combining acute");
    assert_eq!(width("a\u{20DD}"), 1, "combining enclosing circle");
}

#[test]
fn fit_cuts_with_an_ellipsis_by_columns() {
    assert_eq!(fit("abcdef", 6), "abcdef");
    assert_eq!(fit("abcdef", 4), "abc…");
    assert_eq!(fit("abcdef", 1), "…");
    assert_eq!(fit("abcdef", 0), "");
    assert_eq!(fit("日本語テキスト", 5), "日本…");
    assert_eq!(fit("日本語テキスト", 6), "日本…");
    assert_eq!(fit("e\u{301}e\u{301}e\u{301}", 2), "e\u{301}…");
    let long = "x".repeat(100_000);
    let f = fit(&long, 60);
    assert_eq!(width(&f), 60);
    assert!(f.ends_with('…'));
}

#[test]
fn head_and_tail_keep_marks_with_their_base() {
    assert_eq!(head("ae\u{301}b", 2), "ae\u{301}");
    assert_eq!(tail("ae\u{301}b", 2), "e\u{301}b");
    assert_eq!(tail("a日本", 3), "本");
    assert_eq!(head("日本", 3), "日");
}

proptest! {
    /// Labels that differ only in a number of at most 6 digits after a shared prefix stay apart
    /// once there is room for the number and a few columns; every label fits; a label that fits
    /// is unchanged.
    #[test]
    fn fit_apart_fits_and_keeps_numbered_rows_apart(
        prefix in "[a-zé日 _#/]{0,30}",
        nums in prop::collection::btree_set(0u32..1_000_000, 1..8),
        suffix in "[a-z()]{0,12}",
        max in 0usize..40,
    ) {
        let labels: Vec<String> = nums.iter().map(|n| format!("{prefix}{n}{suffix}")).collect();
        let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
        let out = fit_apart(&refs, max);
        prop_assert_eq!(out.len(), labels.len());
        for (l, o) in labels.iter().zip(&out) {
            prop_assert!(width(o) <= max, "{:?} -> {:?}", l, o);
            if width(l) <= max {
                prop_assert_eq!(l, o);
            }
        }
        // Brute force: pairwise distinct once the room holds 4 prefix columns, `…`, 6 digits
        // and a cut mark.
        if max >= 12 {
            for i in 0..out.len() {
                for j in i + 1..out.len() {
                    prop_assert_ne!(&out[i], &out[j], "{:?}", out);
                }
            }
        }
    }

    #[test]
    fn fit_apart_keeps_a_prefix_of_wide_characters_apart(max in 12usize..14) {
        // Giving back the word the shared prefix cuts through once ate the whole prefix, and
        // the middle cut then dropped the digit that differs.
        let out = fit_apart(&["日日610000(a(", "日日614000(a("], max);
        prop_assert_ne!(&out[0], &out[1]);
        prop_assert!(out.iter().all(|o| width(o) <= max), "{:?}", out);
    }

    #[test]
    fn sanitized_fit_is_safe_and_fits(s in "\\PC*|[\\x00-\\x{ff}\\x{200b}-\\x{206f}\\x{feff}日é\\x{301}]{0,80}", max in 0usize..50) {
        let out = clean_fit(&s, max);
        prop_assert!(!out.chars().any(is_unsafe));
        prop_assert!(width(&out) <= max);
        if width(&sanitize(&s)) <= max {
            prop_assert_eq!(out, sanitize(&s).into_owned());
        } else {
            prop_assert!(out.ends_with('…') || max == 0);
        }
    }
}

#[test]
fn middle_cuts_keep_what_tells_rows_apart() {
    assert_eq!(fit_middle("abcdefghij", 20), "abcdefghij");
    let m = fit_middle("tf_XLAEigen/-59308927420123", 14);
    assert_eq!(width(&m), 14);
    assert!(m.starts_with("tf_XLA") && m.ends_with("0123"), "{m}");
    let labels = ["tf_XLAEigen/-59308927420123", "tf_XLAEigen/-59308927420456"];
    let out = fit_apart(&labels, 12);
    assert_ne!(out[0], out[1], "{out:?}");
    assert!(
        out[0].ends_with("123") && out[1].ends_with("456"),
        "{out:?}"
    );
    assert!(out.iter().all(|o| width(o) <= 12), "{out:?}");
    // The same stream number on another device stays whole, and a label's twin on another
    // device (identical) keeps both ends.
    let rows = [
        "queue Stream #123(MemcpyH2D)",
        "queue Stream #134(Compute)",
        "GPU queue depth",
        "GPU queue depth",
    ];
    let out = fit_apart(&rows, 13);
    assert!(out[0].contains("123") && out[1].contains("134"), "{out:?}");
    assert_eq!(out[2], fit_middle("GPU queue depth", 13), "{out:?}");
    assert!(out.iter().all(|o| width(o) <= 13), "{out:?}");
    // Wide characters before the number are not given back at the number's expense (a case
    // the property test found).
    let wide = [" _é/_日日é200000", " _é/_日日é220000"];
    let out = fit_apart(&wide, 12);
    assert_ne!(out[0], out[1], "{out:?}");
    assert!(out.iter().all(|o| width(o) <= 12), "{out:?}");
    let threads = ["thread 2568503 (python3.8)", "thread 2568611 (python3.8)"];
    let out = fit_apart(&threads, 20);
    assert_ne!(out[0], out[1], "{out:?}");
    assert!(out[0].contains("503") && out[1].contains("611"), "{out:?}");
    assert!(out.iter().all(|o| width(o) <= 20), "{out:?}");
}
