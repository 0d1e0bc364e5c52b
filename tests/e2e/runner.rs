//! What a forked run's cost cuts may change, end to end: a fork server freezes what it holds
//! (`gc.freeze`, 3.7 and later) before it forks, which a case can see and `isolation: exec`
//! undoes, while the case's own objects are collected as in a started interpreter, at exit
//! included.

use crate::support::*;

trial!(
    a_forked_run_collects_the_cases_own_objects_as_a_started_one_does,
    needs = &["2.7", "3.12", "pypy", "debug"]
);
/// Cycles with a `__del__`, made by the case: one collected while the code runs, one left in a
/// global to be collected as the interpreter ends. Both isolations print the same on each
/// interpreter (2.7 collects neither: a cycle with `__del__` is uncollectable there; PyPy runs
/// no `__del__` at exit), and 3.12 and the debug build print both.
fn a_forked_run_collects_the_cases_own_objects_as_a_started_one_does() -> TestResult {
    let case = "title: cycles\ncode: |\n  import gc, os\n  class Loud(object):\n      def __init__(self, name):\n          self.name, self.me = name, self\n      def __del__(self, write=os.write):\n          write(1, ('del ' + self.name + '\\n').encode('ascii'))\n  Loud('while running')\n  gc.collect()\n  os.write(1, b'collected\\n')\n  kept = Loud('at exit')\n";
    let dir = folder(&[("cases/cycles.yaml", case)]);
    let mut seen = std::collections::BTreeMap::new();
    for iso in ISOLATIONS {
        let (run, json) = run_json(
            dir.path(),
            &args_on(&["2.7", "3.12", "pypy", "debug"], &["--isolation", iso]),
        );
        run.expect_code(0)?;
        check(runs(&json).len() == 4, format!("{json}"))?;
        for r in runs(&json) {
            let python = r["python"].as_str().unwrap_or("").to_string();
            let out = r["stdout"].as_str().unwrap_or("").to_string();
            seen.entry(python).or_insert_with(Vec::new).push(out);
        }
    }
    for (python, outs) in &seen {
        check(
            outs.len() == 2 && outs[0] == outs[1],
            format!("{python}: exec, fork {outs:?}"),
        )?;
        let full = "del while running\ncollected\ndel at exit\n";
        if python.starts_with("cpython-3") {
            check(outs[0] == full, format!("{python}: {outs:?}"))?;
        }
    }
    Ok(())
}

trial!(
    a_fork_server_freezes_what_it_holds_unless_the_case_says_exec,
    needs = &["2.7", "3.12", "pypy"]
);
/// Under fork, 3.12's runs find more objects frozen than a started interpreter has (3.12 starts
/// with a few hundred); under exec, or with `isolation: exec`, they find what a start gives;
/// 2.7 and PyPy have no gc.freeze.
fn a_fork_server_freezes_what_it_holds_unless_the_case_says_exec() -> TestResult {
    let code = "code: |\n  import gc\n  print(getattr(gc, 'get_freeze_count', lambda: -1)())\n";
    let dir = folder(&[
        ("cases/frozen.yaml", &format!("title: frozen\n{code}")),
        (
            "cases/started.yaml",
            &format!("title: started\nisolation: exec\n{code}"),
        ),
    ]);
    let mut counts = std::collections::BTreeMap::new();
    for iso in ISOLATIONS {
        let (run, json) = run_json(
            dir.path(),
            &args_on(&["2.7", "3.12", "pypy"], &["--isolation", iso]),
        );
        run.expect_code(0)?;
        check(runs(&json).len() == 6, format!("{json}"))?;
        for r in runs(&json) {
            let count: i64 = r["stdout"].as_str().unwrap_or("").trim().parse()?;
            let key = (
                r["python"].as_str().unwrap_or("").to_string(),
                iso,
                r["case"].to_string(),
            );
            counts.insert(key, count);
        }
    }
    for ((python, iso, case), count) in &counts {
        let start = counts[&(python.clone(), "exec", case.clone())];
        let frozen = *iso == "fork" && case == "\"frozen\"" && python.starts_with("cpython-3");
        check(
            if frozen {
                *count > start
            } else {
                *count == start
            },
            format!("--isolation {iso}, {case} on {python}: {count} frozen, {start} at a start"),
        )?;
    }
    Ok(())
}
