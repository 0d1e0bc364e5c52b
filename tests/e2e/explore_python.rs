//! explore's worker's pure parts tested in Python on every interpreter
//! (`tests/python/worker_test.py`: the canonical description's text and whether a value is
//! plain, the stand-ins that spare a load its description, the task timer), one trial per interpreter:
//! ignored where it is missing, failing where `CROSSPICKLE_REQUIRE_PYTHONS` names it.

use libtest_mimic::Trial;

use crate::driver_python::{on_every_python, python_suite};
use crate::support::{trial, TestResult};

trial!(worker_parts, generated);
/// `explore_python::worker_parts[VERSION]` for every interpreter the e2e tests know.
fn worker_parts() -> Vec<Trial> {
    on_every_python("explore_python::worker_parts", run_suite)
}

fn run_suite(version: &str) -> TestResult {
    // Everywhere: the encoders, what is plain, each type's description learnt once, stand-ins
    // refused, the task timer (9 tests at least); with a C pickler, stand-ins kept (4 more: not
    // on PyPy 3.9 and 3.11 7.3); with PickleBuffer (3.8) and scoped IPv6 addresses (3.9 and
    // later), all 13.
    let least = match version {
        "2.7" | "3.6" | "3.7" => 11,
        "3.8" => 12,
        "pypy" | "pypy3.11" => 9,
        _ => 13,
    };
    python_suite(version, "worker_test.py", "src/explore", "worker", least)
}
