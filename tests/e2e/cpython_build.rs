//! Commit mode's CPython build path end to end, without building CPython: a git repository laid
//! out like a CPython tree (configure, Makefile.pre.in, setup.py, Lib) whose `configure` and
//! `make` are small stand-ins. The "interpreter" make builds is a copy of a real Python 3.8
//! (after compiling a one-line C file with `cc`, for the compiler cache); its setup.py
//! "builds" an extension module by copying the real one, consulting `DISABLED_MODULE_LIST` as
//! CPython's does; `Lib` links to the real standard library. So a lean build really lacks the
//! modules it did not build, and the case's outcome depends on one of them (`_pickle`).

use std::path::Path;

use serde_json::Value;

use crate::bisect::{bisect_json, boundaries, git, steps};
use crate::support::*;

const CONFIGURE: &str = r#"#!/bin/sh
# A stand-in for CPython's configure: says it ran, then writes config.status and runs it.
srcdir=$(cd "$(dirname "$0")" && pwd)
echo "configure cc=$(command -v cc)" >> "$BUILD_LOG"
cat > config.status <<EOF
#!/bin/sh
echo config.status >> "\$BUILD_LOG"
sed -e "s|@srcdir@|$srcdir|g" "$srcdir/Makefile.pre.in" > Makefile
EOF
sh config.status
"#;

const MAKEFILE: &str = r#"srcdir=	@srcdir@
CC=	cc
BUILDPYTHON=	python
PYTHON_FOR_BUILD=./$(BUILDPYTHON) -E
SHELL=	/bin/sh

all:	build_all

build_all:	python pybuilddir.txt oldsharedmods sharedmods

Makefile: $(srcdir)/Makefile.pre.in config.status
	$(SHELL) config.status

config.status: $(srcdir)/configure
	$(SHELL) $(srcdir)/configure

python: $(srcdir)/Programs/python.c
	mkdir -p Programs
	$(CC) -c $(srcdir)/Programs/python.c -o Programs/python.o
	cp "$$REAL_PYTHON" python
	echo core >> "$$BUILD_LOG"

pybuilddir.txt: python
	mkdir -p build/lib.fake
	echo build/lib.fake > pybuilddir.txt

oldsharedmods:

sharedmods: python pybuilddir.txt
	$(PYTHON_FOR_BUILD) $(srcdir)/setup.py build

.PHONY: all build_all oldsharedmods sharedmods
"#;

const SETUP_PY: &str = r#"# A stand-in for CPython's setup.py: "builds" each extension module by copying the real
# interpreter's, unless DISABLED_MODULE_LIST leaves it out (as CPython's setup.py does), and
# fails to build the module NAME when the tree holds a file broken-NAME.
import os
import shutil

DISABLED_MODULE_LIST = []

class PyBuildExt(object):
    def build_extensions(self):
        srcdir = os.path.dirname(os.path.abspath(__file__))
        dynload = os.environ["REAL_DYNLOAD"]
        for f in sorted(os.listdir(dynload)):
            name = f.split(".")[0]
            if not f.endswith(".so") or name in DISABLED_MODULE_LIST:
                continue
            if os.path.exists(os.path.join(srcdir, "broken-" + name)):
                print("Failed to build these modules: " + name)
                continue
            shutil.copy(os.path.join(dynload, f), os.path.join("build", "lib.fake", f))
            with open(os.environ["BUILD_LOG"], "a") as log:
                log.write("module " + name + "\n")

def main():
    PyBuildExt().build_extensions()

if __name__ == "__main__":
    main()
"#;

/// The case: its outcome depends on the flavour (changed at c5) and on the C pickler, which
/// an interpreter lacking `_pickle` silently replaces by the Python one.
const CASE: &str = "title: the flavour, with the C pickler\ncode: |\n  import json, pickle, flavour\n  assert pickle.Pickler is not pickle._Pickler, 'no C pickler'\n  assert flavour.FLAVOUR == 'old', 'the flavour changed'\n";

/// A CPython-like repository at `repo` around the real Python `real`, with the commits
/// c0 (tag v1.0) … c6 (tag v2.0): c3 breaks the `_json` module, c4 mends it, c5 turns the
/// flavour new, c6 changes configure and the C file.
fn fake_cpython(repo: &Path, real: &Path) -> TestResult {
    use std::os::unix::fs::PermissionsExt;
    let stdlib = real
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("lib/python3.8");
    std::fs::create_dir_all(repo.join("Lib"))?;
    std::fs::create_dir_all(repo.join("Programs"))?;
    for entry in std::fs::read_dir(&stdlib)? {
        let entry = entry?;
        let name = entry.file_name();
        if ["lib-dynload", "site-packages", "__pycache__"].contains(&&*name.to_string_lossy()) {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), repo.join("Lib").join(&name))?;
    }
    std::fs::write(repo.join("Lib/flavour.py"), "FLAVOUR = 'old'\n")?;
    std::fs::write(repo.join("configure"), CONFIGURE)?;
    std::fs::set_permissions(
        repo.join("configure"),
        std::fs::Permissions::from_mode(0o755),
    )?;
    std::fs::write(repo.join("Makefile.pre.in"), MAKEFILE)?;
    std::fs::write(repo.join("setup.py"), SETUP_PY)?;
    std::fs::write(
        repo.join("Programs/python.c"),
        "int main(void) { return 0; }\n",
    )?;
    git(repo, &["init", "-q"])?;
    git(repo, &["add", "-A"])?;
    git(repo, &["commit", "-qm", "c0 initial"])?;
    git(repo, &["tag", "v1.0"])?;
    for i in 1..=6 {
        match i {
            3 => std::fs::write(repo.join("broken-_json"), "")?,
            4 => std::fs::remove_file(repo.join("broken-_json"))?,
            5 => std::fs::write(repo.join("Lib/flavour.py"), "FLAVOUR = 'new'\n")?,
            6 => {
                std::fs::write(repo.join("configure"), format!("{CONFIGURE}# v2\n"))?;
                std::fs::write(
                    repo.join("Programs/python.c"),
                    "int main(void) { return 2 - 2; }\n",
                )?;
            }
            _ => std::fs::write(repo.join("notes"), format!("{i}\n"))?,
        }
        git(repo, &["add", "-A"])?;
        git(repo, &["commit", "-qm", &format!("c{i} change {i}")])?;
    }
    git(repo, &["tag", "v2.0"])
}

struct Fixture {
    dir: tempfile::TempDir,
    cache: tempfile::TempDir,
    build_log: std::path::PathBuf,
    env: Vec<(String, String)>,
}

fn fixture() -> Result<Fixture, libtest_mimic::Failed> {
    let real = python("3.8").expect("3.8");
    let dynload = real
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("lib/python3.8/lib-dynload");
    let dir = folder(&[("cases/flavour.yaml", CASE)]);
    fake_cpython(&dir.path().join("repo"), &real)?;
    let build_log = dir.path().join("builds.log");
    let env = vec![
        ("BUILD_LOG".to_string(), path_str(&build_log)),
        ("REAL_PYTHON".to_string(), path_str(&real)),
        ("REAL_DYNLOAD".to_string(), path_str(&dynload)),
    ];
    Ok(Fixture {
        dir,
        cache: tempfile::tempdir()?,
        build_log,
        env,
    })
}

impl Fixture {
    fn bisect(&self, extra: &[(&str, &str)], keep: bool) -> (Run, Value) {
        self.bisect_in(self.cache.path(), extra, keep)
    }

    /// [`Fixture::bisect`] with the cache folder `cache` (relative to the fixture's folder).
    fn bisect_in(&self, cache: &Path, extra: &[(&str, &str)], keep: bool) -> (Run, Value) {
        let mut env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        env.extend_from_slice(extra);
        let mut args = vec![
            "bisect",
            "flavour",
            "--cpython",
            "repo",
            "--good",
            "v1.0",
            "--bad",
            "v2.0",
            "-j",
            "2",
        ];
        if keep {
            args.extend(["--keep", "v1.0"]);
        }
        bisect_json(self.dir.path(), cache, &env, &args)
    }

    /// The case run on `cpython@v1.0`, kept in `cache` by a bisect with `--keep v1.0`: ok.
    fn run_kept(&self, cache: &Path) -> TestResult {
        let (run, results) = bisect_json(
            self.dir.path(),
            cache,
            &[],
            &["run", "cases/flavour.yaml", "--python", "cpython@v1.0"],
        );
        run.expect_code(0)?;
        let runs = runs(&results);
        check(
            runs.len() == 1 && runs[0]["verdict"] == "ok",
            format!("the kept v1.0 runs the case: {runs:?}\n{}", run.stderr),
        )
    }

    fn log(&self) -> Vec<String> {
        std::fs::read_to_string(&self.build_log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn modules_built(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .log()
            .iter()
            .filter_map(|l| l.strip_prefix("module ").map(str::to_string))
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

fn note_of(step: &Value, needle: &str) -> bool {
    step["notes"].as_array().is_some_and(|n| {
        n.iter()
            .any(|n| n.as_str().is_some_and(|n| n.contains(needle)))
    })
}

trial!(only_the_modules_the_case_needs, needs = &["3.8"]);
fn only_the_modules_the_case_needs() -> TestResult {
    let f = fixture()?;
    // Without a compiler cache, so that this test holds on machines without ccache.
    let (run, report) = f.bisect(&[("CCACHE_DISABLE", "1")], false);
    run.expect_code(0)?;
    let b = boundaries(&report);
    check(
        b.len() == 1
            && b[0]["last_old"]["subject"] == "c4 change 4"
            && b[0]["first_new"]["subject"] == "c5 change 5",
        format!(
            "c4 -> c5, with the C pickler at both: {b:?}\n{}",
            run.stdout
        ),
    )?;
    let s = steps(&report);
    check(
        s.iter().all(|s| s["state"] != "skip"),
        format!("every step ran: {s:?}"),
    )?;
    // Only the modules the case imports were built; the first step learned them by running.
    let built = f.modules_built();
    check(
        built == ["_heapq", "_json", "_pickle", "_struct"],
        format!("json, pickle (and collections) need _heapq, _json, _pickle and _struct; built {built:?}"),
    )?;
    check(
        note_of(&s[0], "the case imported"),
        format!(
            "the first step built again for what the case imported: {:?}",
            s[0]
        ),
    )?;
    check(
        s.iter().skip(1).all(|s| !note_of(s, "the case imported")),
        format!("later steps build the learned modules at once: {s:?}"),
    )?;
    let c3 = s.iter().find(|s| note_of(s, "c3 change 3"));
    check(
        c3.is_some_and(|c3| note_of(c3, "_json did not build") && c3["state"] != "skip"),
        format!("c3, whose _json does not build, runs without it (json's own fallback, as a full build): {c3:?}"),
    )?;
    // configure ran for c0 and for c6's new script; c3 to c5 got c0's results back.
    let log = f.log();
    let configures = log.iter().filter(|l| l.starts_with("configure")).count();
    let statuses = log.iter().filter(|l| *l == "config.status").count();
    check(
        configures == 2 && statuses >= 3,
        format!("configure twice, and config.status once more: {log:?}"),
    )?;

    // Again: every step from the cache, nothing built.
    let before = log.len();
    let (run, report) = f.bisect(&[("CCACHE_DISABLE", "1")], false);
    run.expect_code(0)?;
    check(
        report["builds"] == 0 && f.log().len() == before,
        format!(
            "no build the second time: {}\n{:?}",
            report["builds"],
            f.log()
        ),
    )?;

    // A kept interpreter is for any case: v1.0 is built again with every module.
    let (run, _) = f.bisect(&[("CCACHE_DISABLE", "1")], true);
    run.expect_code(0)?;
    let built = f.modules_built();
    check(
        built.iter().any(|m| m == "_decimal") && built.len() > 20,
        format!("--keep builds every module: {built:?}"),
    )?;
    let kept = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("kept cpython@v1.0: "))
        .and_then(|l| l.split(" (use").next())
        .map(std::path::PathBuf::from);
    let prefix = kept
        .as_ref()
        .and_then(|p| p.parent()?.parent().map(Path::to_path_buf));
    check(
        prefix.as_ref().is_some_and(|p| {
            !p.join("lib/python3.8/sitecustomize.py").exists()
                && p.join("lib/python3.8/lib-dynload")
                    .read_dir()
                    .is_ok_and(|d| d.count() > 20)
        }),
        format!(
            "the kept prefix is whole, without the watch: {kept:?}\n{}",
            run.stdout
        ),
    )?;
    f.run_kept(f.cache.path())
}

trial!(compiler_cache, needs = &["3.8"], tool = "ccache");
fn compiler_cache() -> TestResult {
    let f = fixture()?;
    // crosspickle's own compiler cache, whatever the environment says.
    let (run, report) = f.bisect(&[("CCACHE_DIR", "")], false);
    run.expect_code(0)?;
    check(
        boundaries(&report).len() == 1,
        format!("one boundary: {}", run.stdout),
    )?;
    let links = f.cache.path().join("bisect/ccache/bin");
    let log = f.log();
    check(
        log.iter()
            .filter(|l| l.starts_with("configure"))
            .all(|l| *l == format!("configure cc={}", links.join("cc").display())),
        format!("configure found the compiler-named link to ccache first: {log:?}"),
    )?;
    // c0 and c6 compile different sources (two misses); c3 compiles c0's again: a hit.
    let store = f.cache.path().join("bisect/ccache/store");
    let out = std::process::Command::new("ccache")
        .arg("--print-stats")
        .env("CCACHE_DIR", &store)
        .output()?;
    let stats = String::from_utf8_lossy(&out.stdout).into_owned();
    let stat = |name: &str| -> u64 {
        stats
            .lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or(0)
    };
    let hits = stat("direct_cache_hit") + stat("preprocessed_cache_hit");
    check(
        hits >= 1 && stat("cache_miss") == 2,
        format!("one hit (c3 compiles c0's source), two misses, in {store:?}:\n{stats}"),
    )
}

trial!(
    cache_prune_and_clean_spare_kept_interpreters,
    needs = &["3.8"]
);
/// `cache list`, `prune` and `clean` on what bisects keep: a build a bisect used again is not
/// pruned, one unused for longer than `--unused-for` is (and the clone and build folder with
/// it), and neither touches an interpreter kept with `--keep`, which still runs cases after
/// both. A bisect after a prune builds again what it needs.
fn cache_prune_and_clean_spare_kept_interpreters() -> TestResult {
    let f = fixture()?;
    let no_ccache = [("CCACHE_DISABLE", "1")];
    let (run, _) = f.bisect(&no_ccache, true);
    run.expect_code(0)?;
    let cache_cmd = |args: &[&str]| cache_command(f.dir.path(), f.cache.path(), args);
    let checkouts = f.cache.path().join("bisect/cpython");
    let checkout = std::fs::read_dir(&checkouts)?
        .next()
        .ok_or("no checkout folder")??
        .path();
    let builds = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(checkout.join("builds"))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let all = builds();
    let list = cache_cmd(&["list"]);
    check(
        all.len() > 1
            && list.stdout.contains(&format!(
                "1 checkout, {} built interpreters, 1 of them kept with --keep",
                all.len()
            )),
        format!("list: {}\nbuilds: {all:?}", list.stdout),
    )?;
    let pruned = cache_cmd(&["prune"]);
    check(
        pruned.stdout.contains("unused as long: 0 interpreters")
            && builds() == all
            && checkout.join("src").is_dir()
            && checkout.join("build").is_dir(),
        format!("nothing is old yet: {}", pruned.stdout),
    )?;

    // 40 days old, then used again by a bisect that builds nothing.
    age(&checkout, 40)?;
    let (run, report) = f.bisect(&no_ccache, false);
    run.expect_code(0)?;
    check(
        report["builds"] == 0,
        format!("all from the cache: {}", run.stdout),
    )?;
    let pruned = cache_cmd(&["prune"]);
    check(
        pruned.stdout.contains("unused as long: 0 interpreters")
            && builds() == all
            && !checkout.join("src").exists()
            && !checkout.join("build").exists(),
        format!(
            "what the bisect used stays, the clone and the build folder nothing was built in go: {}",
            pruned.stdout
        ),
    )?;

    age(&checkout, 40)?;
    let pruned = cache_cmd(&["prune", "--unused-for", "39"]);
    let left = builds();
    check(
        pruned
            .stdout
            .contains(&format!("unused as long: {} interpreters", all.len() - 1))
            && left.len() == 1,
        format!("all but the kept one go: {}\nleft: {left:?}", pruned.stdout),
    )?;
    let run_kept = || f.run_kept(f.cache.path());
    run_kept()?;
    let (run, report) = f.bisect(&no_ccache, false);
    run.expect_code(0)?;
    check(
        report["builds"].as_u64().is_some_and(|b| b > 0) && boundaries(&report).len() == 1,
        format!("built again after the prune: {}", run.stdout),
    )?;

    let cleaned = cache_cmd(&["clean"]);
    cleaned.expect_code(0)?;
    check(
        builds() == left
            && !checkout.join("src").exists()
            && !checkout.join("build").exists()
            && !f.cache.path().join("bisect/ccache").exists()
            && cleaned
                .stdout
                .contains("1 interpreter kept with --keep stay"),
        format!("clean: {}\nleft: {:?}", cleaned.stdout, builds()),
    )?;
    run_kept()
}

/// Set the modification time of `dir` and of everything under it to `days` days ago
/// (symbolic links are not followed).
fn age(dir: &Path, days: u64) -> TestResult {
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(days * 86400);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        let meta = std::fs::symlink_metadata(&path)?;
        if meta.is_symlink() {
            continue;
        }
        if meta.is_dir() {
            stack.extend(std::fs::read_dir(&path)?.flatten().map(|e| e.path()));
            std::fs::File::open(&path)?.set_modified(then)?;
        } else {
            std::fs::File::options()
                .append(true)
                .open(&path)?
                .set_modified(then)?;
        }
    }
    Ok(())
}

trial!(
    a_kept_interpreter_in_a_relative_cache_folder_runs,
    needs = &["3.8"]
);
/// `--keep` with a relative cache folder (`CROSSPICKLE_CACHE_DIR=cache`): the kept
/// interpreter is named by its absolute path, and runs from there.
fn a_kept_interpreter_in_a_relative_cache_folder_runs() -> TestResult {
    let f = fixture()?;
    let (run, _) = f.bisect_in(Path::new("cache"), &[("CCACHE_DISABLE", "1")], true);
    run.expect_code(0)?;
    let kept = std::fs::read_to_string(f.dir.path().join("cache/kept-pythons.toml"))?;
    let absolute = f.dir.path().join("cache");
    check(
        kept.contains(&format!("\"{}", absolute.display())),
        format!("kept by its absolute path: {kept}"),
    )?;
    f.run_kept(Path::new("cache"))
}
