//! Words for the ranking's figures, shared by `tracetui rank` and the explorer's `o` view and
//! details: what the score means and how the table is sorted, and each event's figures with
//! what they were measured over (so "queue depth 521 · GPU idle 88 %" cannot read as a
//! contradiction: the depth is at the event's start, the idle share is over its duration).

use super::EventInfo;
use crate::model::Ps;

/// One line: what the score means and the order of the ranking.
pub const SCORE_MEANING: &str = "score = z(idle fraction) + 0.6 z(self time) over the \
    candidates (CPU events overlapping a drop of the GPU queue from depth ≥ 4 to 0); sorted by \
    score, best first";

/// The figures of one CPU event with what each was measured over, e.g. `GPU queue 521 deep at
/// its start · GPU idle 62.0 ms of its 70.8 ms (88 %) · optimizable #1 (score 21.96)`;
/// `fmt` formats a duration.
pub fn describe(info: &EventInfo, dur: Ps, fmt: impl Fn(Ps) -> String) -> String {
    let rank = match info.rank {
        Some((k, score)) => format!("optimizable #{} (score {score:.2})", k + 1),
        None => "not among the optimizable candidates".into(),
    };
    format!(
        "GPU queue {} deep at its start · GPU idle {} of its {} ({:.0}%) · {rank}",
        info.queue_depth,
        fmt(info.idle_ps),
        fmt(dur),
        info.idle_fraction * 100.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_say_what_they_cover() {
        let info = EventInfo {
            self_ps: 1,
            idle_ps: 62_000,
            idle_fraction: 0.875,
            queue_depth: 521,
            rank: Some((0, 21.961)),
        };
        let s = describe(&info, 70_800, |p| format!("{p} ps"));
        assert_eq!(
            s,
            "GPU queue 521 deep at its start · GPU idle 62000 ps of its 70800 ps (88%) · \
             optimizable #1 (score 21.96)"
        );
        assert!(SCORE_MEANING.contains("sorted by score, best first"));
    }
}
