//! Headless commands (`summary`, `stats`, `search`, `rank`, `gpu`, `watch`, `steps`, `ranks`) and the command-line interface.
//!
//! Exit codes: 0 success (also when some captures failed: they are reported), 1 failure (missing
//! path, no captures, nothing loaded), 2 usage error.

pub mod cache;
pub mod capture;
pub mod diff;
pub mod diff_align;
pub mod export;
pub mod gpu;
pub mod load;
pub mod memory;
pub mod nested;
pub mod rank;
pub mod ranks;
pub mod remote;
pub mod search;
pub mod sql;
pub mod stacks;
pub mod stats;
pub mod steps;
pub mod summary;
pub mod text;
pub mod watch;

use crate::analysis::stats::{SortKey, StatsOptions};
use crate::discover::{self, CaptureFile, Catalog};
use crate::formats::LoadError;
use crate::model::{Capture, Ps};
use clap::{Args, Parser, Subcommand, ValueEnum};
use regex::Regex;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use text::clean;

/// Worker threads used to load captures (the target machines have 2 cores; memory stays at two
/// loaded captures).
const LOAD_THREADS: usize = 2;

const MAIN_AFTER: &str = "\
Examples:
  tracetui                              explore the log dir in the current directory
  tracetui ~/logs/jax                   explore every capture below ~/logs/jax
  tracetui summary run/worker0.123.pt.trace.json.gz
  tracetui stats logs/ --cat cpu_op,user_annotation --limit 20
  tracetui stats logs/ --plane '^/device:GPU:0$' --unified --json

Log dirs are searched recursively: TensorBoard/XProf sessions (plugins/profile/<session>/*.xplane.pb),
PyTorch tensorboard_trace_handler dirs (*.pt.trace.json[.gz]) and other Chrome trace JSON files.
Exit status: 0 ok (failed captures are reported), 1 nothing could be loaded, 2 usage error.";

const SUMMARY_AFTER: &str = "\
Examples:
  tracetui summary logs/                      every capture below logs/
  tracetui summary vm.xplane.pb --json | jq '.captures[0].tracks'

For each capture: run, host/worker, format, time span, event totals, every process and track
(kind, events, max nesting depth) and load warnings. When a host has both an .xplane.pb and JSON
exports of the same capture, only the XPlane is loaded; the JSON files are listed under `also:`.";

const STATS_AFTER: &str = "\
Examples:
  tracetui stats trace.pt.trace.json --cat cpu_op,user_annotation
        torch key_averages(): count, CPU total, self CPU per op
  tracetui stats trace.pt.trace.json --cat cpu_op,user_annotation --nest-cat python_function
        same, with python frames (with_stack=True) taking self time like torch does
  tracetui stats logs/ --cat kernel --sort total --limit 10
  tracetui stats vm.xplane.pb --plane GPU --line 'XLA Ops' --json
  tracetui stats vm.xplane.pb --plane TPU --unified

Self time = duration minus the durations of direct children on the same track, children found
with torch's containment rule among the kept events. ProfilerStep#N rows group as ProfilerStep*.
Rows of different kinds (CPU ops, GPU kernels, runtime calls, memory copies, annotations, instant
events) are kept apart, each kind with its own total: the sum over every thread or stream it ran
on (said under the table), so it can exceed the capture's span. Instant events are counted, with
no duration. The profiler's own spans (PyTorch Profiler (0)) are left out unless --with-profiler;
the header says so. Times are shown in ps/ns/µs/ms/s; --json gives integer ns.";

const RANK_AFTER: &str = "\
Examples:
  tracetui rank run/worker0.123.pt.trace.json.gz          top 10 optimizable CPU events
  tracetui rank logs/ --top 3 --json | jq '.captures[].optimizable[0]'
  tracetui rank trace.pt.trace.json --compat              torch's BasicEvaluation, quirks included

torch's BasicEvaluation heuristic (torch.profiler._utils): CPU events during which the GPU queue
fell from depth >= 4 to 0, scored z(idle fraction) + 0.6 z(self time). Kineto JSON (launches
cudaLaunchKernel*, plus cuLaunchKernel* and hip*LaunchKernel unless --compat) and XPlane GPU
captures (host events linked to /device:GPU:N kernels by correlation_id). START is relative to the
capture's zero (its earliest event); --json gives start_ns from it and the absolute start_epoch_ns.
See docs/analysis.md.";

const GPU_AFTER: &str = "\
Examples:
  tracetui gpu run/worker0.123.pt.trace.json.gz
  tracetui gpu logs/ --json | jq '.captures[].gpu[] | {device, stream, idle_ns, host_wait_ns}'
  tracetui gpu trace.json --idle-threshold-us 10 --hta

Per device and stream, HTA's definitions (docs/gpu.md): busy time split into compute /
communication / memory / other by kernel name, idle time and its breakdown into host wait, kernel
wait and other, queue length (launched, not started) and launch delay; per device the temporal
breakdown and the communication/computation overlap. --json gives ns.";

const SEARCH_AFTER: &str = "\
Examples:
  tracetui search trace.pt.trace.json gemm              fuzzy (fzf-style), ranked by score then total
  tracetui search logs/ 'mm cat:kernel track:stream'    with prefix filters
  tracetui search vm.xplane.pb 'proc:GPU arg:hlo_op=fusion' --limit 5
  tracetui search trace.json '^aten::(mm|addmm)$' --regex --json

Filters: cat:TEXT track:TEXT proc:TEXT (case-insensitive substrings), arg:KEY or arg:KEY=TEXT;
quote values with spaces: track:\"stream 7\". Every track, all time is searched. Query syntax and
ranking: docs/search.md. No match exits 0; an invalid regex exits 2.";

const NESTED_AFTER: &str = "\
Examples:
  tracetui nested logs/                                  every jit_* event's own duration
  tracetui nested logs/ --regex '^fusion|^dot' --json    merged time of the contained fusions/dots
  tracetui nested runs/ --id-pattern '^jit_autotune_fn_([0-9]+)' --json | jq .functions

ejkernel's nested-event accounting (docs/analysis.md): for each event whose unified name
hlo_module(program_id-scope_range_id) starts with --prefix, the union of the events it fully
contains (same plane, any line) whose unified name matches --regex, else its own duration; events
shorter than --min-dur are ignored. Per-function-id figures take one sample per capture and name
(several runs = several samples), dropping the min and max when more than two. --json gives ns.";

/// tracetui: explore ML profiler traces (JAX/TensorFlow XPlane, PyTorch Kineto, Chrome JSON)
/// in the terminal.
#[derive(Parser, Debug)]
#[command(
    name = "tracetui",
    version,
    about = "Explore ML profiler traces (XPlane, PyTorch Kineto, Chrome JSON) in the terminal",
    after_help = MAIN_AFTER,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// Log dir or capture file to open in the interactive explorer [default: .]
    pub path: Option<PathBuf>,
    /// Config file (keys, theme) [default: $XDG_CONFIG_HOME/tracetui/config.toml]
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Print the default config (every key binding and theme setting) and exit
    #[arg(long)]
    pub print_config: bool,
    /// Open each new capture as soon as it is complete (the log dir is always watched)
    #[arg(long)]
    pub follow: bool,
    /// Keep at most N events per capture (a capture too large for the available memory is
    /// capped automatically; both are reported)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_events: Option<u64>,
    /// Headless command.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Headless commands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print what each capture holds: span, events, processes and tracks, warnings
    #[command(after_help = SUMMARY_AFTER)]
    Summary(SummaryArgs),
    /// Print per-name statistics (count, total, self, avg, min, max) like torch's key_averages()
    #[command(after_help = STATS_AFTER)]
    Stats(StatsArgs),
    /// Rank the CPU events worth optimizing: where the GPU queue drained (torch's BasicEvaluation)
    #[command(after_help = RANK_AFTER)]
    Rank(RankArgs),
    /// Print HTA-style GPU breakdowns per device and stream: busy/idle, idle causes, queue, launches
    #[command(after_help = GPU_AFTER)]
    Gpu(GpuArgs),
    /// Find event names (fuzzy or regex, with filters) with count, total, self and first occurrences
    #[command(after_help = SEARCH_AFTER)]
    Search(SearchArgs),
    /// Print one line per capture event (new, writing, ready, changed, removed) until interrupted
    #[command(after_help = WATCH_AFTER)]
    Watch(WatchArgs),
    /// Nested-event accounting of jit_* events and per-function-id timing (ejkernel's profiler)
    #[command(after_help = NESTED_AFTER)]
    Nested(NestedArgs),
    /// Compare two captures: per-name counts, total and self time, delta and status (B vs A)
    #[command(after_help = diff::DIFF_AFTER)]
    Diff(diff::DiffArgs),
    /// List the capture cache (models of big JSON captures, reused on the next open) or --clear it
    Cache(cache::CacheArgs),
    /// Write every slice, instant, counter sample and flow to a Parquet dataset (Hive partitions)
    #[command(after_help = export::EXPORT_AFTER)]
    Export(export::ExportArgs),
    /// Run SQL (Apache DataFusion) over an exported dataset or a log dir: table `events`
    #[command(after_help = sql::SQL_AFTER)]
    Sql(sql::SqlArgs),
    /// Print folded stacks of the merged call tree (flame graph input), or torch's export_stacks
    #[command(after_help = stacks::STACKS_AFTER)]
    Stacks(stacks::StacksArgs),
    /// Memory per device / allocator: peaks, allocations, live at end, top allocating ops; also
    /// reads torch CUDA allocator snapshots (*.pickle)
    #[command(after_help = MEMORY_AFTER)]
    Memory(MemoryArgs),
    /// Print each capture's steps and what their time went to: compute, communication, idle, input
    #[command(after_help = STEPS_AFTER)]
    Steps(StepsArgs),
    /// Group captures into runs of ranks: step times, collectives across ranks, skew, stragglers
    #[command(after_help = RANKS_AFTER)]
    Ranks(RanksArgs),
    /// Record a trace from a running program: a JAX/TensorFlow profiler server, or PyTorch via dynolog
    #[command(after_help = capture::CAPTURE_AFTER)]
    Capture(capture::CaptureArgs),
}

const MEMORY_AFTER: &str = "\
Examples:
  tracetui memory trace.pt.trace.json             peaks, counts, live at end, top ops per device
  tracetui memory trace.pt.trace.json --at 12ms   the allocations live 12 ms after the first event
  tracetui memory snap.pickle --stacks            a CUDA allocator snapshot, with folded stack lines
  tracetui memory logs/ --json | jq '.captures[].tracks[].peak_allocated'

Sources: Kineto `[memory]` / `[OutOfMemory]` events (torch.profiler with profile_memory=True),
XPlane MemoryAllocation / MemoryDeallocation events (host tracer level >= 2), and snapshots from
torch.cuda.memory._dump_snapshot. Allocations are matched to frees by address; each is attributed to
the innermost op enclosing it on its own thread. See docs/memory.md.";

const STEPS_AFTER: &str = "\
Examples:
  tracetui steps run/worker0.123.pt.trace.json.gz
  tracetui steps logs/ --json | jq '.captures[].steps[] | {step, dur_ns, idle_ns}'
  tracetui steps vm.xplane.pb --step-regex '^train_step_(\\d+)$'

Steps: Kineto ProfilerStep#N, XPlane host events with a step_num stat (StepTraceAnnotation) or the
Steps line, else --step-regex; a capture without any is one step. Per step and GPU device:
compute + exposed communication + memory + other busy + idle = step time, and idle = host wait +
kernel wait + other idle (the gpu rules); input = host time in data-loading annotations. The flat
fields are the busiest device's; --json has every device. Definitions: docs/steps.md.";

const RANKS_AFTER: &str = "\
Examples:
  tracetui ranks logs/                      every run below logs/: ranks, stragglers, skewed collectives
  tracetui ranks logs/ --json | jq '.runs[].stragglers'
  tracetui ranks logs/ --candidates 4 --top 20

Runs: captures of one run dir with the same distributedInfo.world_size; ranks: distributedInfo.rank,
else by host/worker name. Collectives are matched across ranks by process group and Seq, else by
kernel name and order per stream; host clocks are aligned on collective ends. Stragglers: HTA's
get_potential_stragglers definition over every NCCL/RCCL kernel. Definitions: docs/steps.md.";

/// Arguments of `memory`.
#[derive(Args, Debug)]
pub struct MemoryArgs {
    /// Log dir, capture file or allocator snapshot (*.pickle)
    pub path: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// List the allocations live at TIME after the first event (e.g. 1.5ms, 200us; bare = ns)
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub at: Option<i64>,
    /// Show call stacks of live allocations; for snapshots also the folded `stream;state;frames
    /// bytes` lines that `python -m torch.cuda._memory_viz memory` draws
    #[arg(long)]
    pub stacks: bool,
    /// Show at most N live allocations per device with --at [default: 20 for text, all for --json]
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

/// Arguments of `steps`.
#[derive(Args, Debug)]
pub struct StepsArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Host events whose name matches are the steps (first capture group = step number)
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub step_regex: Option<Regex>,
    /// Host events whose name matches count as input wait
    #[arg(long, value_name = "REGEX", value_parser = parse_regex,
          default_value = crate::analysis::steps::DEFAULT_INPUT_PATTERN)]
    pub input_regex: Regex,
    /// A device idle gap shorter than this is kernel wait (µs)
    #[arg(long, value_name = "US", default_value = "30", value_parser = parse_us)]
    pub idle_threshold_us: f64,
}

/// Arguments of `ranks`.
#[derive(Args, Debug)]
pub struct RanksArgs {
    #[command(flatten)]
    pub steps: StepsArgs,
    /// HTA's number of straggler candidates
    #[arg(long, value_name = "N", default_value_t = crate::analysis::ranks::HTA_CANDIDATES)]
    pub candidates: usize,
    /// Collectives listed per run in the text output (largest start skew first)
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
}

impl StepsArgs {
    fn options(&self) -> crate::analysis::steps::StepOptions {
        crate::analysis::steps::StepOptions {
            regex: self.step_regex.clone(),
            input: Some(self.input_regex.clone()),
            idle_threshold: (self.idle_threshold_us * 1e6).round() as i64,
        }
    }
}

const WATCH_AFTER: &str = "\
Examples:
  tracetui watch logs/                  tab-separated: event, run, host, path, bytes
  tracetui watch logs/ --json | jq -c 'select(.event == \"ready\")'

A capture is announced `ready` (new) or `changed` (rewritten) only once it is complete: closed after
its last write, renamed into place, or unchanged for the settle window (1 s); `writing` means it is
still being written. Uses inotify; where that fails (limits reached), polls every 500 ms.";

/// Arguments of `watch`.
#[derive(Args, Debug)]
pub struct WatchArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Print JSON lines (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Poll the file system instead of using inotify
    #[arg(long)]
    pub poll: bool,
    /// A file not closed after writing is complete once unchanged this long (ms)
    #[arg(long, value_name = "MS", default_value_t = 1000, hide = true)]
    pub settle_ms: u64,
    /// Exit after printing N events (tests)
    #[arg(long, value_name = "N", hide = true)]
    pub exit_after: Option<usize>,
    /// Exit after SECS seconds (tests)
    #[arg(long, value_name = "SECS", hide = true)]
    pub timeout: Option<f64>,
}

fn parse_us(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("expected a non-negative number of µs, got {s:?}")),
    }
}

/// Arguments of `gpu`.
#[derive(Args, Debug)]
pub struct GpuArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Gaps shorter than this are kernel wait, µs
    #[arg(long, value_name = "US", default_value = "30", value_parser = parse_us)]
    pub idle_threshold_us: f64,
    /// Launches longer than this are runtime outliers, µs
    #[arg(long, value_name = "US", default_value = "50", value_parser = parse_us)]
    pub runtime_cutoff_us: f64,
    /// Launch delays longer than this are outliers, µs
    #[arg(long, value_name = "US", default_value = "100", value_parser = parse_us)]
    pub launch_delay_cutoff_us: f64,
    /// Queue length that blocks the host
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub queue_full: i64,
    /// Reproduce HTA's preprocessing (for parity checks): JSON times rounded inward to whole µs,
    /// only activities launched before the last ProfilerStep
    #[arg(long)]
    pub hta: bool,
}

/// Arguments of `search`.
#[derive(Args, Debug)]
pub struct SearchArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Text to match plus optional filters (cat:, track:, proc:, arg:KEY=VALUE)
    pub query: String,
    /// Match the text as a regular expression instead of fuzzily
    #[arg(long)]
    pub regex: bool,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Show at most N names per capture [default: 20 for text, all for --json]
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

/// Arguments of `nested`.
#[derive(Args, Debug)]
pub struct NestedArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Parent events: unified names starting with this (empty: all)
    #[arg(long, value_name = "P", default_value = "jit_")]
    pub prefix: String,
    /// Count the merged time of contained events whose unified name matches this regex
    /// [default: the parent's own duration]
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub regex: Option<Regex>,
    /// Ignore events shorter than this (a bare number is ns; 1.5us, 2ms…)
    #[arg(long, value_name = "NS", default_value = "1000", value_parser = parse_time)]
    pub min_dur: i64,
    /// Function id: the first capture group of this regex on a row's name
    #[arg(long, value_name = "RE", default_value = crate::analysis::nested::DEFAULT_ID_PATTERN,
          value_parser = parse_regex)]
    pub id_pattern: Regex,
}

/// Arguments of `rank`.
#[derive(Args, Debug)]
pub struct RankArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Show the N best events per capture
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Reproduce torch's code exactly, quirks included (see docs/analysis.md)
    #[arg(long)]
    pub compat: bool,
}

/// Arguments of `summary`.
#[derive(Args, Debug)]
pub struct SummaryArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Keep at most N events per capture (reported as a `capped` warning; large captures are
    /// capped automatically to the available memory)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_events: Option<u64>,
}

/// Row order of `stats`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortArg {
    /// Self time, largest first
    #[value(name = "self")]
    SelfTime,
    /// Total time, largest first
    Total,
    /// Number of events, largest first
    Count,
    /// Average duration, largest first
    Avg,
    /// Name, ascending
    Name,
}

impl From<SortArg> for SortKey {
    fn from(s: SortArg) -> SortKey {
        match s {
            SortArg::SelfTime => SortKey::SelfTime,
            SortArg::Total => SortKey::Total,
            SortArg::Count => SortKey::Count,
            SortArg::Avg => SortKey::Avg,
            SortArg::Name => SortKey::Name,
        }
    }
}

/// Parses a time with an optional unit (`ps`, `ns`, `us`/`µs`, `ms`, `s`; bare numbers are ns)
/// into picoseconds.
pub fn parse_time(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("invalid time `{s}` (examples: 1.5ms, 200us, 3s)"))?;
    let scale = match unit.trim() {
        "ps" => 1.0,
        "" | "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        u => return Err(format!("unknown time unit `{u}` (ps, ns, us, ms, s)")),
    };
    let ps = v * scale;
    if !ps.is_finite() || ps.abs() > 9.2e18 {
        return Err(format!("time `{s}` out of range"));
    }
    Ok(ps.round() as i64)
}

fn parse_regex(s: &str) -> Result<Regex, String> {
    Regex::new(s).map_err(|e| format!("invalid regex: {e}"))
}

/// Arguments of `stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Only events of these categories (comma-separated; raw `cat` or canonical name, so `cpu_op`
    /// also matches legacy `Operator`) [default: all slices]
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub cat: Option<Vec<String>>,
    /// Categories that count as children for self time without rows of their own
    /// (e.g. python_function)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub nest_cat: Vec<String>,
    /// Row order
    #[arg(long, value_enum, default_value = "self")]
    pub sort: SortArg,
    /// Show at most N rows per capture [default: 40 for text, all for --json]
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Only processes / XPlane planes whose name matches this regex
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub plane: Option<Regex>,
    /// Only tracks / XPlane lines whose name matches this regex
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub line: Option<Regex>,
    /// Group device events by the ejkernel unified name hlo_module(program_id-scope_range_id)
    #[arg(long)]
    pub unified: bool,
    /// What a row groups (not with --unified, which is a grouping by name)
    #[arg(long, value_enum, default_value = "name", conflicts_with = "unified")]
    pub group_by: stats::GroupArg,
    /// Only events starting at or after TIME, relative to each capture's first event
    /// (e.g. 1.5ms, 200us, 3s; a bare number is ns). Durations are not clipped.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub from: Option<i64>,
    /// Only events starting before TIME (relative to the first event, like --from)
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub to: Option<i64>,
    /// Keep at most N events per capture (reported as a `capped` warning; large captures are
    /// capped automatically to the available memory)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_events: Option<u64>,
    /// Include the profiler's own spans (Kineto `PyTorch Profiler (0)` on `Spans`, ...), left
    /// out by default as in torch's key_averages()
    #[arg(long)]
    pub with_profiler: bool,
}

/// Parses the command line and runs; returns the process exit code (0 ok, 1 failure, 2 usage).
pub fn main() -> i32 {
    run(std::env::args_os())
}

/// Runs with explicit arguments (the first is the program name).
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    if let Err(code) = remote::localize(&mut cli) {
        return code;
    }
    crate::formats::budget::set_max_events(match &cli.command {
        Some(Command::Summary(a)) => a.max_events,
        Some(Command::Stats(a)) => a.max_events,
        Some(_) => None,
        None => cli.max_events,
    });
    match cli.command {
        Some(Command::Summary(a)) => cmd_summary(&a),
        Some(Command::Stats(a)) => cmd_stats(&a),
        Some(Command::Rank(a)) => cmd_rank(&a),
        Some(Command::Gpu(a)) => cmd_gpu(&a),
        Some(Command::Search(a)) => cmd_search(&a),
        Some(Command::Watch(a)) => watch::cmd_watch(&a),
        Some(Command::Nested(a)) => cmd_nested(&a),
        Some(Command::Cache(a)) => cache::cmd_cache(&a),
        Some(Command::Export(a)) => export::cmd_export(&a),
        Some(Command::Sql(a)) => sql::cmd_sql(&a),
        Some(Command::Diff(a)) => cmd_diff(&a),
        Some(Command::Stacks(a)) => stacks::cmd_stacks(&a),
        Some(Command::Memory(a)) => cmd_memory(&a),
        Some(Command::Steps(a)) => cmd_steps(&a),
        Some(Command::Ranks(a)) => cmd_ranks(&a),
        Some(Command::Capture(a)) => capture::cmd_capture(&a),
        None if cli.print_config => {
            print!("{}", crate::ui::config::default_toml());
            0
        }
        None => {
            let (config, errors) = crate::ui::config::load(cli.config.as_deref());
            for e in &errors {
                eprintln!("tracetui: config: {}", clean(&e.to_string()));
            }
            let mut path = cli.path.unwrap_or_else(|| PathBuf::from("."));
            let piped = path == Path::new("-");
            if piped {
                // Folded stacks piped in: kept in a temporary file the explorer opens.
                match stacks::stdin_to_file() {
                    Ok(p) => path = p,
                    Err(e) => return fail(&format!("cannot read stdin: {e}")),
                }
            }
            let _cleanup = stacks::RemoveOnDrop(piped.then(|| path.clone()));
            if !path.exists() {
                return fail(&format!(
                    "{}: no such file or directory",
                    clean(&path.display().to_string())
                ));
            }
            match crate::ui::run_live(&path, &config, &errors, cli.follow) {
                Ok(()) => 0,
                Err(e) => fail(&e.to_string()),
            }
        }
    }
}

fn fail(msg: &str) -> i32 {
    eprintln!("tracetui: error: {msg}");
    1
}

/// Discovers captures; prints problems to stderr. `Err(code)` when nothing can be loaded.
fn catalog(path: &Path) -> Result<Catalog, i32> {
    let cat = match discover::discover(path) {
        Ok(c) => c,
        Err(e) => return Err(fail(&clean(&e.to_string()))),
    };
    for (p, why) in &cat.problems {
        eprintln!(
            "tracetui: warning: {}: {}",
            clean(&p.display().to_string()),
            clean(why)
        );
    }
    if cat.is_empty() {
        return Err(fail(&format!(
            "{}: no captures found (looked for *.xplane.pb, *.pt.trace.json[.gz] and Chrome trace \
             JSON)",
            clean(&path.display().to_string())
        )));
    }
    Ok(cat)
}

/// Writes `s` to stdout; a closed pipe (`| head`) is not an error.
fn emit(s: &str) -> Result<(), i32> {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(0),
        Err(e) => Err(fail(&format!("cannot write output: {e}"))),
    }
}

fn to_json<T: Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}")) + "\n"
}

/// Exit code after loading: 1 when every capture failed, else 0; failures listed on stderr.
fn finish<'a>(errors: impl Iterator<Item = (&'a str, Option<&'a String>)>, total: usize) -> i32 {
    let mut failed = 0;
    for (_, e) in errors {
        if let Some(e) = e {
            failed += 1;
            eprintln!("tracetui: error: {}", clean(e));
        }
    }
    if failed == total {
        1
    } else {
        if failed > 0 {
            eprintln!("tracetui: {failed} of {total} captures could not be loaded");
        }
        0
    }
}

fn captures(cat: &Catalog) -> Vec<&CaptureFile> {
    cat.captures().collect()
}

#[derive(Serialize)]
struct Problem {
    path: String,
    message: String,
}

fn problems(cat: &Catalog) -> Vec<Problem> {
    cat.problems
        .iter()
        .map(|(p, m)| Problem {
            path: p.display().to_string(),
            message: m.clone(),
        })
        .collect()
}

/// Runs `per_capture` on every capture found under `path` (loaded [`LOAD_THREADS`] at a time),
/// prints the reports — JSON `{"captures": […], "problems": […]}`, or each report's `text`
/// separated by blank lines — and returns the exit code from each report's (path, error).
fn report<T, F>(
    path: &Path,
    json: bool,
    per_capture: F,
    text: fn(&T) -> String,
    outcome: fn(&T) -> (&str, Option<&String>),
) -> i32
where
    T: Serialize + Send,
    F: Fn(&CaptureFile, Result<Capture, LoadError>) -> T + Sync,
{
    let cat = match catalog(path) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let caps = captures(&cat);
    let reports = load::map_loaded(&caps, LOAD_THREADS, per_capture);
    let printed = if json {
        #[derive(Serialize)]
        struct Out<'a, T> {
            captures: &'a [T],
            problems: Vec<Problem>,
        }
        emit(&to_json(&Out {
            captures: &reports,
            problems: problems(&cat),
        }))
    } else {
        let texts: Vec<String> = reports.iter().map(text).collect();
        emit(&texts.join("\n"))
    };
    if let Err(code) = printed {
        return code;
    }
    finish(reports.iter().map(outcome), reports.len())
}

fn cmd_summary(a: &SummaryArgs) -> i32 {
    report(
        &a.path,
        a.json,
        summary::summarize,
        summary::render_text,
        |s| (s.path.as_str(), s.error.as_ref()),
    )
}

fn cmd_stats(a: &StatsArgs) -> i32 {
    let opts = StatsOptions {
        cats: a.cat.clone(),
        nest_cats: a.nest_cat.clone(),
        plane: a.plane.clone(),
        line: a.line.clone(),
        unified: a.unified,
        range: None,
        group: a.group_by.into(),
        track: None,
        process: None,
        profiler: a.with_profiler,
    };
    let (from, to) = (a.from, a.to);
    let limit = a.limit.or(if a.json { None } else { Some(40) });
    let sort = SortKey::from(a.sort);
    let per_capture = |cap: &CaptureFile, loaded: Result<Capture, LoadError>| {
        // --from / --to are relative to each capture's first event.
        let mut o = opts.clone();
        if (from.is_some() || to.is_some())
            && let Ok(c) = &loaded
        {
            let z = c.time_zero();
            o.range = Some((
                from.map_or(Ps::MIN, |f| z.saturating_add(f)),
                to.map_or(Ps::MAX, |t| z.saturating_add(t)),
            ));
        }
        stats::capture_stats(cap, loaded, &o, sort, limit)
    };
    report(&a.path, a.json, per_capture, stats::render_text, |s| {
        (s.path.as_str(), s.error.as_ref())
    })
}

fn cmd_memory(a: &MemoryArgs) -> i32 {
    let o = memory::MemoryOptions {
        at: a.at,
        stacks: a.stacks,
        limit: a.limit.or(if a.json { None } else { Some(20) }),
    };
    if crate::discover::is_snapshot_file(&a.path) {
        let r = memory::snapshot_memory(&a.path, &o);
        let printed = if a.json {
            #[derive(Serialize)]
            struct Out<'a> {
                captures: [&'a memory::CaptureMemory; 1],
                problems: [Problem; 0],
            }
            emit(&to_json(&Out {
                captures: [&r],
                problems: [],
            }))
        } else {
            emit(&memory::render_text(&r))
        };
        if let Err(code) = printed {
            return code;
        }
        return finish(std::iter::once((r.path.as_str(), r.error.as_ref())), 1);
    }
    report(
        &a.path,
        a.json,
        |cap, loaded| memory::capture_memory(cap, loaded, &o),
        memory::render_text,
        |s| (s.path.as_str(), s.error.as_ref()),
    )
}

fn cmd_search(a: &SearchArgs) -> i32 {
    use crate::analysis::search::{Matcher, Mode, Query};
    let mode = if a.regex { Mode::Regex } else { Mode::Fuzzy };
    let query = Query::parse(&a.query, mode);
    if let Err(e) = Matcher::new(&query) {
        // The regex crate's message spans lines (pattern, caret, reason): keep them as lines.
        let text = e.to_string();
        let lines: Vec<_> = text.lines().map(clean).collect();
        eprintln!("tracetui: error: {}", lines.join("\n"));
        return 2;
    }
    let limit = a.limit.or(if a.json { None } else { Some(20) });
    report(
        &a.path,
        a.json,
        |cap, loaded| search::capture_search(cap, loaded, &query, limit),
        search::render_text,
        |s| (s.path.as_str(), s.error.as_ref()),
    )
}

fn cmd_nested(a: &NestedArgs) -> i32 {
    let cat = match catalog(&a.path) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let caps = captures(&cat);
    let opts = crate::analysis::nested::NestedOptions {
        prefix: a.prefix.clone(),
        regex: a.regex.clone(),
        min_dur: a.min_dur,
        id_pattern: a.id_pattern.clone(),
    };
    let reports = load::map_loaded(&caps, LOAD_THREADS, |cap, loaded| {
        nested::capture_nested(cap, loaded, &opts)
    });
    let functions: Vec<nested::FunctionJson> =
        crate::analysis::nested::by_function_id(reports.iter().map(|r| &r.report), &a.id_pattern)
            .iter()
            .map(nested::FunctionJson::from)
            .collect();
    let printed = if a.json {
        #[derive(Serialize)]
        struct Out<'a> {
            captures: &'a [nested::CaptureNested],
            functions: &'a [nested::FunctionJson],
            problems: Vec<Problem>,
        }
        emit(&to_json(&Out {
            captures: &reports,
            functions: &functions,
            problems: problems(&cat),
        }))
    } else {
        let mut s = String::new();
        for r in &reports {
            s.push_str(&nested::render_text(r));
            s.push('\n');
        }
        s.push_str(&nested::render_functions(&functions));
        emit(&s)
    };
    if let Err(code) = printed {
        return code;
    }
    finish(
        reports.iter().map(|s| (s.path.as_str(), s.error.as_ref())),
        reports.len(),
    )
}

fn cmd_gpu(a: &GpuArgs) -> i32 {
    let ps = |us: f64| (us * 1e6).round() as i64;
    let opts = crate::analysis::gpu::GpuOptions {
        idle_threshold: ps(a.idle_threshold_us),
        runtime_cutoff: ps(a.runtime_cutoff_us),
        launch_delay_cutoff: ps(a.launch_delay_cutoff_us),
        queue_full: a.queue_full,
        hta_compat: a.hta,
    };
    report(
        &a.path,
        a.json,
        |cap, loaded| gpu::capture_gpu(cap, loaded, &opts),
        gpu::render_text,
        |s| (s.path.as_str(), s.error.as_ref()),
    )
}

fn cmd_rank(a: &RankArgs) -> i32 {
    let mode = if a.compat {
        crate::analysis::rank::Mode::Compat
    } else {
        crate::analysis::rank::Mode::Default
    };
    report(
        &a.path,
        a.json,
        |cap, loaded| rank::capture_rank(cap, loaded, mode, a.top),
        rank::render_text,
        |s| (s.path.as_str(), s.error.as_ref()),
    )
}

/// The one capture `path` names (a file, or a dir holding exactly one capture).
fn one_capture(label: &str, path: &Path) -> Result<CaptureFile, i32> {
    let cat = catalog(path)?;
    let caps = captures(&cat);
    match caps.as_slice() {
        [one] => Ok((*one).clone()),
        many => {
            let list: Vec<String> = many
                .iter()
                .take(5)
                .map(|c| clean(&c.path.display().to_string()).into_owned())
                .collect();
            Err(fail(&format!(
                "{label}: {} holds {} captures; name one file ({}{})",
                clean(&path.display().to_string()),
                many.len(),
                list.join(", "),
                if many.len() > 5 { ", …" } else { "" }
            )))
        }
    }
}

fn cmd_diff(a: &diff::DiffArgs) -> i32 {
    let (ca, cb) = match (one_capture("A", &a.a), one_capture("B", &a.b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    if let Some(stream) = &a.align {
        let j = match diff_align::compute(&ca, &cb, stream, a.limit.unwrap_or(20)) {
            Ok(j) => j,
            Err(e) => return fail(&clean(&e)),
        };
        let out = if a.json {
            to_json(&j)
        } else {
            diff_align::render_text(&j)
        };
        return match emit(&out) {
            Ok(()) => 0,
            Err(code) => code,
        };
    }
    let opts = a.options();
    let mut d = match diff::compute(&ca, &cb, &opts) {
        Ok(d) => d,
        Err(e) => return fail(&clean(&e)),
    };
    crate::analysis::diff::sort_rows(&mut d.rows, a.sort.into(), false);
    let limit = a.limit.or(if a.json { None } else { Some(40) });
    let j = diff::to_json(&ca, &cb, &d, &opts, limit);
    let out = if a.json {
        to_json(&j)
    } else {
        diff::render_text(&j)
    };
    match emit(&out) {
        Ok(()) => 0,
        Err(code) => code,
    }
}

fn cmd_steps(a: &StepsArgs) -> i32 {
    let opts = a.options();
    report(
        &a.path,
        a.json,
        |cap, loaded| steps::capture_steps(cap, loaded, &opts),
        steps::render_text,
        |s| (s.path.as_str(), s.error.as_ref()),
    )
}

fn cmd_ranks(a: &RanksArgs) -> i32 {
    let cat = match catalog(&a.steps.path) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let caps = captures(&cat);
    let opts = a.steps.options();
    // One capture per core at a time; each is summarized and dropped before the next.
    let threads = crate::threads::from_env("TRACETUI_RANKS_THREADS");
    let all = load::map_loaded(&caps, threads, |cap, loaded| {
        ranks::summarize(cap, loaded, &opts)
    });
    let runs = ranks::runs(&all, a.candidates);
    let printed = if a.steps.json {
        #[derive(Serialize)]
        struct Out<'a> {
            runs: &'a [ranks::RunJson],
            errors: Vec<Problem>,
            problems: Vec<Problem>,
        }
        emit(&to_json(&Out {
            runs: &runs,
            errors: all
                .iter()
                .filter_map(|s| {
                    s.error.as_ref().map(|e| Problem {
                        path: s.path.clone(),
                        message: e.clone(),
                    })
                })
                .collect(),
            problems: problems(&cat),
        }))
    } else {
        let texts: Vec<String> = runs.iter().map(|r| ranks::render_text(r, a.top)).collect();
        emit(&texts.join("\n"))
    };
    if let Err(code) = printed {
        return code;
    }
    finish(
        all.iter().map(|s| (s.path.as_str(), s.error.as_ref())),
        all.len(),
    )
}
