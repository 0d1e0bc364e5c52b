//! End-to-end tests: the built binary against real interpreters and real files.
//! One binary with libtest-mimic so that a test whose interpreter is missing shows as ignored,
//! with the reason, rather than passing silently.

mod bisect;
mod corpus;
mod cpython_build;
mod docs;
mod download;
mod expected;
mod explore;
mod format2;
mod github;
mod hardening;
mod harness;
mod init;
mod isolation;
mod newest;
mod repeat;
mod reports;
mod requires;
mod rerun;
mod retries;
mod roundtrip;
mod runner;
mod shards;
mod support;
mod surround;
mod workflow;

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    support::start_watchdog();
    let mut trials = Vec::new();
    trials.extend(corpus::trials());
    trials.extend(docs::trials());
    trials.extend(expected::trials());
    trials.extend(explore::trials());
    trials.extend(download::trials());
    trials.extend(format2::trials());
    trials.extend(init::trials());
    trials.extend(github::trials());
    trials.extend(harness::trials());
    trials.extend(hardening::trials());
    trials.extend(newest::trials());
    trials.extend(isolation::trials());
    trials.extend(requires::trials());
    trials.extend(bisect::trials());
    trials.extend(cpython_build::trials());
    trials.extend(reports::trials());
    trials.extend(runner::trials());
    trials.extend(roundtrip::trials());
    trials.extend(workflow::trials());
    trials.extend(shards::trials());
    trials.extend(retries::trials());
    trials.extend(rerun::trials());
    trials.extend(surround::trials());
    trials.extend(repeat::trials());
    libtest_mimic::run(&args, trials).exit();
}
