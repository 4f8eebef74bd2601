//! Load warnings worded as facts about the file (what it holds and why profilers write it so),
//! not as faults of the tool.

/// `11797` → `11 797` (groups of three digits, as the summary prints counts).
pub fn group_digits(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (k, ch) in s.chars().enumerate() {
        if k > 0 && (s.len() - k).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(ch);
    }
    out
}

/// The `unresolved_flow` warning: flow ends whose start the file does not hold, flow starts
/// whose end it does not hold, and flow points on no event, each counted.
pub fn unresolved_flows(ends_alone: u64, starts_alone: u64, no_event: u64) -> String {
    let mut parts = Vec::new();
    let n = |k: u64, one: &str, many: &str| {
        format!("{} {}", group_digits(k), if k == 1 { one } else { many })
    };
    if ends_alone > 0 {
        parts.push(n(
            ends_alone,
            "flow end without a start in the file",
            "flow ends without a start in the file",
        ));
    }
    if starts_alone > 0 {
        parts.push(n(
            starts_alone,
            "flow start without an end in the file",
            "flow starts without an end in the file",
        ));
    }
    if no_event > 0 {
        parts.push(n(
            no_event,
            "flow point on no event",
            "flow points on no event",
        ));
    }
    format!(
        "{} (profilers write both ends of a flow only when both events fall inside the captured \
         window and buffer; the arrows that have both ends are drawn)",
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_as_facts() {
        assert_eq!(group_digits(11_797), "11 797");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1_000_000), "1 000 000");
        let m = unresolved_flows(11_797, 0, 0);
        assert!(
            m.starts_with("11 797 flow ends without a start in the file (profilers write"),
            "{m}"
        );
        let m = unresolved_flows(1, 2, 3);
        assert!(
            m.starts_with(
                "1 flow end without a start in the file, 2 flow starts without an end in the \
                 file, 3 flow points on no event"
            ),
            "{m}"
        );
    }
}
