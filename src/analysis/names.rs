//! Names as they are matched across captures (`diff`, `ranks`, the diff flame graph): the same
//! Python frame gets a new object address in every run (`<built-in method append of list
//! object at 0x7f11398ed400>`), so addresses are replaced by `0x…` before names are compared.

use std::borrow::Cow;

/// What an address becomes.
pub const ADDRESS: &str = "0x…";

/// Fewest hex digits after `0x` that make an address (so `0x1` / `0xff` constants in kernel
/// template arguments stay as they are; 32-bit addresses have 8).
const MIN_DIGITS: usize = 6;

/// `name` with every memory address — `0x` (or `0X`) and at least six hex digits, not part of
/// a longer word — replaced by [`ADDRESS`]; borrowed when it has none. Two names that differ
/// only in their addresses give the same text, and the result has no address left, so applying
/// it twice changes nothing.
pub fn match_name(name: &str) -> Cow<'_, str> {
    let b = name.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0; // bytes of `name` already in `out`
    let mut i = 0;
    while i + 1 < b.len() {
        let word_before = i > 0 && is_word(b[i - 1]);
        if b[i] == b'0' && (b[i + 1] == b'x' || b[i + 1] == b'X') && !word_before {
            let digits = b[i + 2..]
                .iter()
                .take_while(|c| c.is_ascii_hexdigit())
                .count();
            let end = i + 2 + digits;
            let word_after = b.get(end).is_some_and(|&c| is_word(c));
            if digits >= MIN_DIGITS && !word_after {
                let o = out.get_or_insert_with(|| String::with_capacity(name.len()));
                o.push_str(&name[copied..i]);
                o.push_str(ADDRESS);
                copied = end;
                i = end;
                continue;
            }
        }
        i += 1;
    }
    match out {
        None => Cow::Borrowed(name),
        Some(mut o) => {
            o.push_str(&name[copied..]);
            Cow::Owned(o)
        }
    }
}

/// A byte that continues a word (so `a0x123456` or `0x123456z` are not addresses).
fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn python_object_addresses_match() {
        let a = "<built-in method append of list object at 0x7f11398ed400>";
        let b = "<built-in method append of list object at 0x7f3cfbbad140>";
        assert_eq!(match_name(a), match_name(b));
        assert_eq!(
            match_name(a),
            "<built-in method append of list object at 0x…>"
        );
        assert_eq!(
            match_name("<bound method A.f of <m.A object at 0x7fa1a3f827f0>> at 0X10AB34CD"),
            "<bound method A.f of <m.A object at 0x…>> at 0x…"
        );
    }

    #[test]
    fn names_without_addresses_are_borrowed() {
        for n in [
            "aten::mm",
            "void k<0x1, 0xff>(float*)",
            "ProfilerStep#3",
            "a0x7f11398ed400",
            "0x7f11398ed400z",
            "0x",
            "",
            "Ω 0x",
        ] {
            assert!(matches!(match_name(n), Cow::Borrowed(_)), "{n}");
        }
    }

    proptest! {
        /// Names that differ only in their addresses match; the result is a fixed point and
        /// keeps the text around the addresses.
        #[test]
        fn only_addresses_change(
            parts in proptest::collection::vec("[a-z <>:.()0-9é]{0,8}", 1..5),
            addrs in proptest::collection::vec((6usize..16, any::<u64>(), any::<u64>()), 4),
        ) {
            let mut a = String::new();
            let mut b = String::new();
            let mut want = String::new();
            for (k, p) in parts.iter().enumerate() {
                // Keep the address a word of its own.
                let p = format!(" {p} ");
                a.push_str(&p);
                b.push_str(&p);
                want.push_str(&p);
                if k + 1 < parts.len() {
                    let (n, x, y) = addrs[k % addrs.len()];
                    let hex = |v: u64| format!("0x{:0n$x}", v, n = n);
                    a.push_str(&hex(x)[..n + 2]);
                    b.push_str(&hex(y)[..n + 2]);
                    want.push_str(ADDRESS);
                }
            }
            let (ma, mb) = (match_name(&a).into_owned(), match_name(&b).into_owned());
            // A part may itself hold an address-like run of digits: compare with the part
            // text normalised too.
            prop_assert_eq!(&ma, &mb);
            let mw = match_name(&want).into_owned();
            prop_assert_eq!(&ma, &mw);
            let again = match_name(&ma).into_owned();
            prop_assert_eq!(&again, &ma);
        }
    }
}
