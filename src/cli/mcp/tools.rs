//! The tools the server offers: each one's name, the headless command it runs and what it
//! answers, and which of the commands' arguments are paths or left out.

/// A tool: its name, the command it runs, what it answers.
pub(super) struct Tool {
    pub(super) name: &'static str,
    pub(super) command: &'static str,
    pub(super) description: &'static str,
}

pub(super) const TOOLS: &[Tool] = &[
    Tool {
        name: "list_captures",
        command: "",
        description: "List the captures under the server's roots and the client's (or under `path`): path, format, run, host, size in bytes, and loaded_heap_bytes of those the server keeps loaded (null otherwise). Start here: every other tool takes one of these paths (or a log dir under a root).",
    },
    Tool {
        name: "summary",
        command: "summary",
        description: "What each capture holds: format, span (ns), event counts, processes and tracks, warnings. Same JSON as `tracetui summary --json`. Times are integer ns.",
    },
    Tool {
        name: "stats",
        command: "stats",
        description: "Per-name statistics like torch's key_averages(): count, total / self / avg / min / max time, device time, per kind (CPU ops, GPU kernels, runtime, memcpy, ...). Same JSON as `tracetui stats --json`; times are integer ns. Rows are the `stats` array.",
    },
    Tool {
        name: "search",
        command: "search",
        description: "Find event names (fuzzy, or regex with `regex`) with count, total and self time (ns) and their first occurrences (track, start ns). Same JSON as `tracetui search --json`.",
    },
    Tool {
        name: "event",
        command: "event",
        description: "One event by its `id` (search prints ids in `first`, window in `events`): name, track, start / end / dur / self (ns from the capture's zero), depth, category, correlation id, args, call stack, parents (outermost first), children, flow and correlation partners (`relation`: launches, launched_by, flow, correlation), the device events it or its descendants launched, and for a kernel its launching call and CPU op. The explorer's details pane as JSON; same as `tracetui event --json`.",
    },
    Tool {
        name: "window",
        command: "window",
        description: "The events (slices) overlapping a time range, of the whole capture or of the tracks whose `process / track` matches `track` (regex), in time order: id, name, track, depth, start_ns, dur_ns (ns from the capture's zero). `from` / `to` take units (10ms, 250us; bare numbers are ns). Filter with `max-depth`, `min-dur`. Same JSON as `tracetui window --json`; rows are `events`.",
    },
    Tool {
        name: "steps",
        command: "steps",
        description: "Each capture's training steps and what their time went to: compute, communication, idle, input (ns and fractions). Same JSON as `tracetui steps --json`. Use to find the slow step.",
    },
    Tool {
        name: "critical",
        command: "critical",
        description: "The critical path of each step through host threads, launches, syncs and the GPU: segments with their duration (ns) and what bounds the step. Same JSON as `tracetui critical --json`.",
    },
    Tool {
        name: "roofline",
        command: "roofline",
        description: "FLOP/s and bytes/s per op against the device's peaks (roofline): achieved FLOP/s, bytes/s, arithmetic intensity (FLOP/byte), bound. Same JSON as `tracetui roofline --json`. Use to pick the kernel to optimize first.",
    },
    Tool {
        name: "gpu",
        command: "gpu",
        description: "HTA-style GPU breakdowns per device and stream: busy / idle time (ns), idle causes, queue length, kernel launches, top kernels. Same JSON as `tracetui gpu --json`.",
    },
    Tool {
        name: "memory",
        command: "memory",
        description: "Memory per device / allocator: peaks (bytes), allocations, live at end, top allocating ops. Same JSON as `tracetui memory --json`.",
    },
    Tool {
        name: "diff",
        command: "diff",
        description: "Compare two captures (`a` baseline, `b` new): per-name count, total and self time (ns), delta and status. Same JSON as `tracetui diff --json`. Use to see what changed between two runs.",
    },
    Tool {
        name: "advise",
        command: "advise",
        description: "What to change: findings ranked by the time each would save per step (saving_ns is an upper bound measured from the trace, ns per step), each with its evidence (event ids, tracks, the analysis that measured it), what to try and the threshold that fired. Same JSON as `tracetui advise --json`. Start here for \"why is this step slow?\".",
    },
    Tool {
        name: "ranks",
        command: "ranks",
        description: "Group the captures of a log dir into runs of ranks: step times per rank (ns), collectives across ranks, skew, stragglers. Same JSON as `tracetui ranks --json`.",
    },
];

/// Positional arguments that are paths (checked against the roots).
pub(super) const PATH_ARGS: &[&str] = &["path", "a", "b"];

/// CLI options the server handles itself or that make no sense here.
pub(super) const HIDDEN: &[&str] = &["json", "help", "version", "quiet", "wide", "limit"];
