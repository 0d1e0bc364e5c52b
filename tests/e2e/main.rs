//! End-to-end tests: the built binary against real interpreters and real files.
//! One binary with libtest-mimic so that a test whose interpreter is missing shows as ignored,
//! with the reason, rather than passing silently.

mod bisect;
mod bounce;
mod checks;
mod checks_kept;
mod checks_reports;
mod corpus;
mod cpython_build;
mod docs;
mod download;
mod driver_python;
mod expected;
mod explore;
mod explore_causes;
mod explore_debug;
mod explore_hypothesis;
mod explore_memo;
mod explore_oob;
mod explore_overlap;
mod explore_packages;
mod explore_params;
mod explore_python;
mod explore_reach;
mod explore_rules;
mod explore_shards;
mod explore_sites;
mod explore_streams;
mod failures;
mod format2;
mod freethreaded;
mod github;
mod guard;
mod hardening;
mod harness;
mod init;
mod isolation;
mod newcomer;
mod newest;
mod platforms;
mod record;
mod repeat;
mod reports;
mod repro;
mod requires;
mod rerun;
mod retries;
mod roundtrip;
mod runner;
mod shards;
mod sides;
mod stumbles;
mod suite;
mod support;
mod support_files;
mod surefire;
mod surround;
mod workflow;

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    support::start_watchdog();
    // Every file's trials register themselves where they are written (`support::trial!`).
    let mut trials = support::registered();
    // A file still in the old form adds its list here: `trials.extend(FILE::trials());`.
    trials.sort_by(|a, b| a.name().cmp(b.name()));
    let conclusion = libtest_mimic::run(&args, trials);
    support::print_slowest(10);
    conclusion.exit();
}
