//! The command line: the arguments, resolved once into [`settings::Settings`]; the
//! interpreters every command works with (`interpreters.rs`); one module per command wiring
//! load → discover → plan → execute → report; and the one place where a [`Failure`] becomes an
//! exit code and a message. Exit codes: 0 all as expected, 1 a verdict failed, 2 bad input,
//! 3 crosspickle could not do its work, 130 interrupted (Ctrl-C; 143 SIGTERM, 129 SIGHUP).

mod args;
mod bisect;
mod cache;
mod env_progress;
mod expected;
mod explore;
mod explore_merge;
mod explore_streams;
mod failure;
mod github;
mod init;
mod interpreters;
mod interrupt;
mod last_failed;
mod list;
mod merge;
mod pythons;
mod ranges;
mod record;
mod repro;
mod repro_bounce;
mod repro_script;
mod run;
mod schema;
mod settings;

use clap::{Parser, Subcommand};

use self::args::{ListArgs, PythonsArgs, RunArgs};
use self::failure::{EXIT_OK, EXIT_USAGE};

pub use self::failure::{Failure, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_SYSTEM};
pub use self::settings::{ColorChoice, Settings};

#[derive(Debug, Parser)]
#[command(
    name = "crosspickle",
    version,
    about = "Run pickle behaviour cases on every installed Python and compare what happened with what was expected",
    args_conflicts_with_subcommands = true,
    after_help = "Without a subcommand, `crosspickle [PATHS] [OPTIONS]` is `crosspickle run`.\nExit codes: 0 all as expected, 1 a verdict failed, 2 bad input, 3 crosspickle could not do its work (a tool it runs, its cache), 130 interrupted (Ctrl-C; 143 SIGTERM, 129 SIGHUP)."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Run cases (the default)
    Run(RunArgs),
    /// List the Python interpreters found, usable or not
    Pythons(PythonsArgs),
    /// List, prune or remove what crosspickle keeps in its cache folder: environments, compiled
    /// forms, CPython bisect builds
    Cache(cache::CacheArgs),
    /// Find where a case's outcome changed: across interpreters, a package's releases, or CPython commits
    Bisect(bisect::BisectArgs),
    /// One test for `git bisect run`: exit 0 while the old outcome holds, 1 when it changed, 125 when it cannot run
    BisectStep(bisect::BisectStepArgs),
    /// Generate values, pickle them on every interpreter, load them on every other, and write
    /// each difference found as a case file
    Explore(explore::ExploreArgs),
    /// Run the dumps of the round trips on every producer selected and keep the pickles they
    /// made, with what made them, in a folder to commit (cases/pickles), which `run` loads
    Record(record::RecordArgs),
    /// Write one plain Python script (no crosspickle, no YAML) that shows a case's behaviour,
    /// with its output on each interpreter, ready to paste into an upstream issue
    Repro(repro::ReproArgs),
    /// Merge the JSON results of several jobs into one matrix and its reports
    Merge(merge::MergeArgs),
    /// Print the catalogue of cases: id, title, tags, links, what the rules expect where
    List(ListArgs),
    /// Write a starter cases/ (one example case) and the GitHub Actions workflow into a folder
    Init(init::InitArgs),
    /// Print the JSON Schema of the case format (for editors and validators)
    Schema,
}

/// Parse the command line, run, and return the exit code.
pub fn main() -> i32 {
    crate::sys::keep_freed_memory();
    crate::sys::stdout::watch_for_github();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if crate::sys::stdout::github_reads() => {
            // Through the neutralising printers: the arguments a workflow passes may hold text
            // a case or a file gave it.
            let text = e.render().to_string();
            if e.use_stderr() {
                crate::sys::stdout::emit_err(&text);
                return EXIT_USAGE;
            }
            crate::sys::stdout::emit(&text);
            return EXIT_OK;
        }
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
        }
    };
    // One thread: crosspickle waits on processes and files, and hopping between worker
    // threads cost a fork server's runs more wall time than the work it spread (200 trivial
    // forked runs, medians of 9 interleaved: 555 against 601 ms).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let result = runtime.block_on(async {
        match cli.command {
            Some(Command::Run(args)) => run::run(args).await,
            Some(Command::Pythons(args)) => {
                pythons::pythons(&args.pythons, args.json, args.verbose).await
            }
            Some(Command::Cache(args)) => cache::cache(&args),
            Some(Command::Bisect(args)) => bisect::bisect(args).await,
            Some(Command::BisectStep(args)) => Ok(bisect::bisect_step(args).await),
            Some(Command::List(args)) => list::list(&args).await,
            Some(Command::Explore(args)) if args.streams => explore_streams::explore(args).await,
            Some(Command::Explore(args)) => explore::explore(args).await,
            Some(Command::Record(args)) => record::record(args).await,
            Some(Command::Repro(args)) => repro::repro(args).await,
            Some(Command::Merge(args)) => merge::merge(&args),
            Some(Command::Init(args)) => init::init(&args),
            Some(Command::Schema) => schema::schema(),
            None => run::run(cli.run).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{}", e.message());
            e.exit_code()
        }
    }
}
