//! A case's `support` files: Python modules beside the case file that every run of it can
//! import, so that cases share classes and helpers (one file where each case held a copy).

use crate::support::*;

const SHARED: &str = "class Point(object):
    def __init__(self, x):
        self.x = x


def same(a, b):
    assert type(a) is type(b) and a.x == b.x, 'loaded %r' % (a.__dict__,)
";

const CASE: &str = "title: a class of a support file pickles by reference as shared.Point
support: [shared.py]
params:
  protocol: [0, 2]
dump: |
  import pickle
  from shared import Point
  data = pickle.dumps(Point(1), protocol)
load: |
  import pickle
  from shared import Point, same
  same(pickle.loads(data), Point(1))
";

trial!(a_case_imports_its_support_files, needs = &["2.7", "3.12"]);
/// A round trip whose both ends import a class of `shared.py`, beside the case: it passes on
/// 2.7 and 3.12 in both isolations (the class pickled as `shared.Point` loads on the other
/// end); a `support` file that is not there is bad input naming the file, line and column.
fn a_case_imports_its_support_files() -> TestResult {
    let dir = folder(&[
        ("cases/shared.py", SHARED),
        ("cases/point.yaml", CASE),
        (
            "gone/gone.yaml",
            "title: t\nsupport: [helpers.py]\ncode: import helpers\n",
        ),
    ]);
    let d = dir.path();
    for isolation in ["fork", "exec"] {
        let mut args = vec!["run".to_string()];
        args.extend(args_on(
            &["2.7", "3.12"],
            &["--isolation", isolation, "cases"],
        ));
        let (run, results) = run_json(d, &args);
        run.expect_code(0)?;
        let all = runs(&results);
        check(
            all.len() == 8 && all.iter().all(|r| r["verdict"] == "ok"),
            format!("8 runs ok ({isolation}): {all:#?}"),
        )?;
    }
    let mut args = vec!["run".to_string()];
    args.extend(args_on(&["3.12"], &["gone"]));
    let run = Run::from(crosspickle(d).args(&args).output().expect("runs"));
    run.expect_code(2)?;
    check(
        run.stderr
            .contains("gone.yaml:2:11: `support` file `helpers.py` is not there"),
        format!("a missing support file: {}", run.stderr),
    )
}

trial!(
    a_case_named_without_its_folder_finds_its_support_files,
    needs = &["3.12"]
);
/// `crosspickle run point.yaml` in the case's own folder: the support file beside it is found
/// by the runs too, whose working directory is another (the file was named by a bare relative
/// path, which the dump's process could not import).
fn a_case_named_without_its_folder_finds_its_support_files() -> TestResult {
    let dir = folder(&[("cases/shared.py", SHARED), ("cases/point.yaml", CASE)]);
    let mut args = vec!["run".to_string()];
    args.extend(args_on(&["3.12"], &["point.yaml"]));
    let (run, results) = run_json(&dir.path().join("cases"), &args);
    run.expect_code(0)?;
    let all = runs(&results);
    check(
        all.len() == 2 && all.iter().all(|r| r["verdict"] == "ok"),
        format!("2 runs ok: {all:#?}"),
    )
}
