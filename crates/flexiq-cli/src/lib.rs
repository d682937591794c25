//! The `flexiq` command line as a library.
//!
//! [`run_cli`] parses arguments, runs the command on its own tokio runtime, prints the answer
//! and returns the exit code, so the `flexiq` binary and the Python package expose exactly the
//! same commands. Exit codes are listed in [`error`] and in `docs/cli.md`:
//! 0 ok, 1 other failure, 2 usage or invalid argument, 3 not found, 4 conflict,
//! 5 unsupported, 6 contract too old.

/// `println!` that ignores a closed stdout (`flexiq jobs list | head -1`) instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

pub mod cli;
pub mod commands;
pub mod connect;
pub mod demo;
pub mod error;
pub mod output;

use clap::error::ErrorKind as ClapErrorKind;
use clap::Parser;

use crate::cli::{Cli, Command};
use crate::error::{CliResult, EXIT_INVALID, EXIT_OK, EXIT_OTHER};
use crate::output::Output;

/// Runs the command line `args` (the first element is the program name), prints its answer
/// on stdout and any error as one line on stderr, and returns the process exit code.
pub fn run_cli(args: Vec<String>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return EXIT_OTHER;
        }
    };
    match runtime.block_on(dispatch(cli)) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("error: {}", e.message);
            e.code
        }
    }
}

/// Help and version go to stdout with exit 0; anything else is one line on stderr, exit 2.
fn usage_error(e: &clap::Error) -> i32 {
    match e.kind() {
        ClapErrorKind::DisplayHelp
        | ClapErrorKind::DisplayVersion
        | ClapErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // Printing help can only fail when stdout is gone; nothing useful remains to do then.
            let _ = e.print();
            if e.kind() == ClapErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                EXIT_INVALID
            } else {
                EXIT_OK
            }
        }
        _ => {
            eprintln!("error: {} (see flexiq --help)", one_line(&e.render().to_string()));
            EXIT_INVALID
        }
    }
}

/// Clap's multi-line message as one line: the text before its usage block, tips dropped.
fn one_line(rendered: &str) -> String {
    let words: Vec<&str> = rendered
        .lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("tip:"))
        .collect();
    let joined = words.join(" ");
    let message = joined.trim_start_matches("error:").trim();
    if message.is_empty() {
        "invalid arguments".to_string()
    } else {
        message.to_string()
    }
}

async fn dispatch(cli: Cli) -> CliResult {
    let out = Output { json: cli.global.json };
    let g = &cli.global;
    match cli.command {
        Command::Demo(args) => demo::run(g, &args, out).await,
        Command::Stats { queue } => commands::stats::run(g, queue.as_deref(), out).await,
        Command::Jobs(cmd) => commands::jobs::run(g, cmd, out).await,
        Command::Flow(cmd) => commands::flow::run(g, cmd, out).await,
        Command::Dedup(cmd) => commands::dedup::run(g, cmd, out).await,
        Command::Dlq(cmd) => commands::dlq::run(g, cmd, out).await,
        Command::Events(cmd) => commands::events::run(g, cmd, out).await,
        Command::Queue(cmd) => commands::queue::run(g, cmd, out).await,
        Command::Task(cmd) => commands::task::run(g, cmd, out).await,
        Command::Requeue { id } => commands::requeue::run(g, &id, out).await,
        Command::Migrate => commands::contract::migrate(g, out).await,
        Command::Contract(cmd) => commands::contract::run(g, cmd, out).await,
        Command::Retention(cmd) => commands::retention::run(g, cmd, out).await,
        Command::Settings(cmd) => commands::settings::run(g, cmd, out).await,
        Command::Schedulers(cmd) => commands::schedulers::run(g, cmd, out).await,
        Command::Workers => commands::workers::run(g, out).await,
        Command::Workflow(cmd) => commands::workflow::run(g, cmd, out).await,
        Command::Dashboard(args) => commands::dashboard::run(g, args, out).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_errors_become_one_line() {
        let rendered = "error: the following required arguments were not provided:\n  <--older-than <SECS>|--task <TASK>>\n\nUsage: flexiq dlq purge\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line(rendered),
            "the following required arguments were not provided: <--older-than <SECS>|--task <TASK>>"
        );
        assert_eq!(
            one_line(
                "error: unexpected argument '--x' found\n\n  tip: to pass '--x' as a value, use '-- --x'\n"
            ),
            "unexpected argument '--x' found"
        );
        assert_eq!(one_line(""), "invalid arguments");
    }
}
