//! Headless commands (`summary`, `stats`, `search`, `rank`, `gpu`, `watch`, `steps`, `ranks`, `advise`, …) and the command-line interface.
//!
//! Exit codes: 0 success (also when some captures failed: they are reported), 1 failure (missing
//! path, no captures, nothing loaded), 2 usage error.

pub mod advise;
pub mod cache;
pub mod capture;
pub mod critical;
pub mod diff;
pub mod diff_align;
pub mod event;
pub mod export;
pub mod gpu;
pub mod load;
pub mod mcp;
pub mod memory;
pub mod nested;
mod parse;
pub mod rank;
pub mod ranks;
pub mod remote;
mod report;
pub mod roofline;
pub mod search;
pub mod shell;
pub mod sql;
pub mod sql_named;
pub mod stacks;
pub mod stats;
pub mod stats_graphs;
pub mod stats_launchers;
pub mod steps;
pub mod steps_rows;
pub mod steps_serving;
pub mod summary;
pub mod text;
pub mod watch;
pub mod window;

use clap::{Parser, Subcommand};
pub use parse::parse_time;
use report::fail;
use std::path::{Path, PathBuf};
use text::clean;
const MAIN_AFTER: &str = "\
Examples:
  tracetui                              explore the log dir in the current directory
  tracetui ~/logs/jax                   explore every capture below ~/logs/jax
  tracetui summary run/worker0.123.pt.trace.json.gz
  tracetui stats logs/ --limit 20          torch's key_averages() of each PyTorch capture
  tracetui stats logs/ --plane '^/device:GPU:0$' --unified --json

Log dirs are searched recursively: TensorBoard/XProf sessions (plugins/profile/<session>/*.xplane.pb),
PyTorch tensorboard_trace_handler dirs (*.pt.trace.json[.gz]) and other Chrome trace JSON files.
Exit status: 0 ok (failed captures are reported), 1 nothing could be loaded, 2 usage error.";

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
    /// Print no warnings or notes on stderr (errors are still printed)
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Never cut names in text output (tables are as wide as the longest name)
    #[arg(long, global = true)]
    pub wide: bool,
    /// Graph capture traces to merge into the trace loaded (a folder with
    /// execution_details.json) [default: capture_traces/ beside the trace]; docs/graphs.md
    #[arg(long, global = true, value_name = "DIR")]
    pub capture: Option<PathBuf>,
    /// Headless command.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Headless commands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print what each capture holds: span, events, processes and tracks, warnings
    #[command(after_help = summary::SUMMARY_AFTER)]
    Summary(summary::SummaryArgs),
    /// Print per-name statistics (count, total, self, avg, min, max) like torch's key_averages()
    #[command(after_help = stats::STATS_AFTER)]
    Stats(stats::StatsArgs),
    /// One event by id (`search --json` prints ids): details, parents, children, launches, flows
    #[command(after_help = event::EVENT_AFTER)]
    Event(event::EventArgs),
    /// The events of a capture (or of matching tracks) in a time range, in time order
    #[command(after_help = window::WINDOW_AFTER)]
    Window(window::WindowArgs),
    /// Rank the CPU events worth optimizing: where the GPU queue drained (torch's BasicEvaluation)
    #[command(after_help = rank::RANK_AFTER)]
    Rank(rank::RankArgs),
    /// Print HTA-style GPU breakdowns per device and stream: busy/idle, idle causes, queue, launches
    #[command(after_help = gpu::GPU_AFTER)]
    Gpu(gpu::GpuArgs),
    /// Find event names (fuzzy or regex, with filters) with count, total, self and first occurrences
    #[command(after_help = search::SEARCH_AFTER)]
    Search(search::SearchArgs),
    /// Print one line per capture event (new, writing, ready, changed, removed) until interrupted
    #[command(after_help = watch::WATCH_AFTER)]
    Watch(watch::WatchArgs),
    /// Nested-event accounting of jit_* events and per-function-id timing (ejkernel's profiler)
    #[command(after_help = nested::NESTED_AFTER)]
    Nested(nested::NestedArgs),
    /// Compare two captures: per-name counts, total and self time, delta and status (B vs A)
    #[command(after_help = diff::DIFF_AFTER)]
    Diff(diff::DiffArgs),
    /// List the capture cache (models of big JSON captures, reused on the next open) or --clear it
    Cache(cache::CacheArgs),
    /// Write every slice, instant, counter sample and flow to a Parquet dataset (Hive partitions)
    #[command(after_help = export::EXPORT_AFTER)]
    #[cfg_attr(
        not(feature = "export"),
        command(
            about = "Write every event to a Parquet dataset [not in this build: cargo install tracetui --features export]"
        )
    )]
    Export(export::ExportArgs),
    /// Run SQL (Apache DataFusion) over an exported dataset or a log dir: table `events`
    #[command(after_help = sql::SQL_AFTER)]
    #[cfg_attr(
        not(feature = "sql"),
        command(
            about = "Run SQL (DataFusion) over a dataset or log dir [not in this build: cargo install tracetui --features sql]"
        )
    )]
    Sql(sql::SqlArgs),
    /// Print folded stacks of the merged call tree (flame graph input), or torch's export_stacks
    #[command(after_help = stacks::STACKS_AFTER)]
    Stacks(stacks::StacksArgs),
    /// Memory per device / allocator: peaks, allocations, live at end, top allocating ops; also
    /// reads torch CUDA allocator snapshots (*.pickle)
    #[command(after_help = memory::MEMORY_AFTER)]
    Memory(memory::MemoryArgs),
    /// Print each capture's steps and what their time went to: compute, communication, idle, input
    #[command(after_help = steps::STEPS_AFTER)]
    Steps(steps::StepsArgs),
    /// The critical path of each step through host threads, launches, syncs and the GPU
    #[command(after_help = critical::CRITICAL_AFTER)]
    Critical(critical::CriticalArgs),
    /// Group captures into runs of ranks: step times, collectives across ranks, skew, stragglers
    #[command(after_help = ranks::RANKS_AFTER)]
    Ranks(ranks::RanksArgs),
    /// FLOP/s and bytes/s per op against the device's peaks (roofline, TraceLens's perf model)
    #[command(after_help = roofline::ROOFLINE_AFTER)]
    Roofline(roofline::RooflineArgs),
    /// What to change: findings ranked by the time each would save per step, with their evidence
    #[command(after_help = advise::ADVISE_AFTER)]
    Advise(advise::AdviseArgs),
    /// Record a trace from a running program: a JAX/TensorFlow profiler server, or PyTorch via dynolog
    #[command(after_help = capture::CAPTURE_AFTER)]
    Capture(capture::CaptureArgs),
    /// Serve the captures under PATH… to coding agents: a Model Context Protocol server on stdio
    #[command(after_help = mcp::MCP_AFTER)]
    Mcp(mcp::McpArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish) to stdout
    #[command(after_help = shell::COMPLETIONS_AFTER)]
    Completions(shell::CompletionsArgs),
    /// Print the man page (roff) to stdout: `tracetui man > tracetui.1`
    Man,
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
    report::set_quiet(cli.quiet);
    text::set_wide(cli.wide);
    crate::formats::graph_capture::set_capture_dir(cli.capture.clone());
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
        Some(Command::Summary(a)) => summary::cmd_summary(&a),
        Some(Command::Stats(a)) => stats::cmd_stats(&a),
        Some(Command::Event(a)) => event::cmd_event(&a),
        Some(Command::Window(a)) => window::cmd_window(&a),
        Some(Command::Rank(a)) => rank::cmd_rank(&a),
        Some(Command::Gpu(a)) => gpu::cmd_gpu(&a),
        Some(Command::Search(a)) => search::cmd_search(&a),
        Some(Command::Watch(a)) => watch::cmd_watch(&a),
        Some(Command::Nested(a)) => nested::cmd_nested(&a),
        Some(Command::Cache(a)) => cache::cmd_cache(&a),
        Some(Command::Export(a)) => export::cmd_export(&a),
        Some(Command::Sql(a)) => sql::cmd_sql(&a),
        Some(Command::Diff(a)) => diff::cmd_diff(&a),
        Some(Command::Stacks(a)) => stacks::cmd_stacks(&a),
        Some(Command::Memory(a)) => memory::cmd_memory(&a),
        Some(Command::Steps(a)) => steps::cmd_steps(&a),
        Some(Command::Critical(a)) => critical::cmd_critical(&a),
        Some(Command::Ranks(a)) => ranks::cmd_ranks(&a),
        Some(Command::Roofline(a)) => roofline::cmd_roofline(&a),
        Some(Command::Advise(a)) => advise::cmd_advise(&a),
        Some(Command::Capture(a)) => capture::cmd_capture(&a),
        Some(Command::Mcp(a)) => mcp::cmd_mcp(&a),
        Some(Command::Completions(a)) => shell::cmd_completions(&a),
        Some(Command::Man) => shell::cmd_man(),
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
