//! `tracetui completions SHELL` and `tracetui man`: generated from the clap definitions, as
//! ripgrep and fd ship them, so they never drift from the options.

use super::Cli;
use super::report::{emit, fail};
use clap::{Args, CommandFactory, ValueEnum};
use clap_complete::Shell;

pub const COMPLETIONS_AFTER: &str = "\
Examples:
  tracetui completions bash > ~/.local/share/bash-completion/completions/tracetui
  tracetui completions zsh > ~/.zfunc/_tracetui        (with fpath+=~/.zfunc in .zshrc)
  tracetui completions fish > ~/.config/fish/completions/tracetui.fish
  tracetui man > ~/.local/share/man/man1/tracetui.1";

/// The shells completions are generated for.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShellArg {
    /// GNU bash
    Bash,
    /// Z shell
    Zsh,
    /// fish
    Fish,
    /// PowerShell
    Powershell,
    /// Elvish
    Elvish,
}

impl From<ShellArg> for Shell {
    fn from(s: ShellArg) -> Shell {
        match s {
            ShellArg::Bash => Shell::Bash,
            ShellArg::Zsh => Shell::Zsh,
            ShellArg::Fish => Shell::Fish,
            ShellArg::Powershell => Shell::PowerShell,
            ShellArg::Elvish => Shell::Elvish,
        }
    }
}

/// Arguments of `completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to write the completion script for
    #[arg(value_enum)]
    pub shell: ShellArg,
}

/// Writes the completion script of `a.shell` to stdout.
pub fn cmd_completions(a: &CompletionsArgs) -> i32 {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(Shell::from(a.shell), &mut cmd, "tracetui", &mut out);
    match emit(&String::from_utf8_lossy(&out)) {
        Ok(()) => 0,
        Err(code) => code,
    }
}

/// Writes the man page (roff, section 1) to stdout: the main command and every subcommand.
pub fn cmd_man() -> i32 {
    let cmd = Cli::command();
    let mut out = Vec::new();
    if let Err(e) = clap_mangen::Man::new(cmd.clone()).render(&mut out) {
        return fail(&format!("cannot render the man page: {e}"));
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let page = sub.clone().bin_name(format!("tracetui {}", sub.get_name()));
        let man = clap_mangen::Man::new(page).title(format!("tracetui-{}", sub.get_name()));
        out.extend_from_slice(b"\n");
        if let Err(e) = man.render(&mut out) {
            return fail(&format!("cannot render the man page: {e}"));
        }
    }
    match emit(&String::from_utf8_lossy(&out)) {
        Ok(()) => 0,
        Err(code) => code,
    }
}
