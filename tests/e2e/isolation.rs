//! How runs get their process, end to end: the result channel a case cannot reach, in both
//! isolations; fork servers that a case kills or stops, that go idle, and that are bounded in
//! number; `isolation: exec` in a case; a forked run's quiet ending, where its finalisation
//! would show nothing; and the whole corpus run both ways, compared run by run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::*;

/// Every attack on the result channel. On crosspickle 0.1.0 (the result written to
/// `.crosspickle-result` in the case's folder) rmtree-cwd, dir-named-like-result and
/// open-patched turned a pass into a crash, and forge-then-os-exit and forked-child-reports
/// turned a crash into a pass; the attacks on the standard streams and descriptors guard the
/// channel that replaced it.
const CHANNEL: &str = r#"title: the result channel is out of the case's reach
params:
  attack: [rmtree-cwd, chdir, forge-then-os-exit, dir-named-like-result, open-patched, forked-child-reports, stdout-none, close-std-streams, dup2-over-std-streams, closerange, reuse-fd]
code: |
  import os, sys, shutil
  if attack == "rmtree-cwd":
      shutil.rmtree(os.getcwd())
  elif attack == "chdir":
      os.chdir("/")
  elif attack == "forge-then-os-exit":
      record = b"crosspickle-result 1\noutcome 4\npass\nend 0\n\n"
      for name in [".crosspickle-result", "result"]:
          with open(name, "wb") as f:
              f.write(record)
      os._exit(0)
  elif attack == "dir-named-like-result":
      os.mkdir(".crosspickle-result")
  elif attack == "open-patched":
      try:
          import builtins
      except ImportError:
          import __builtin__ as builtins
      def refuse(*args, **kwargs):
          raise IOError("no files for you")
      builtins.open = refuse
  elif attack == "forked-child-reports":
      pid = os.fork()
      if pid == 0:
          sys.exit(0)
      os.waitpid(pid, 0)
      os._exit(0)
  elif attack == "stdout-none":
      sys.stdout = None
      sys.stderr = None
  elif attack == "close-std-streams":
      os.close(1)
      os.close(2)
  elif attack == "dup2-over-std-streams":
      fd = os.open(os.devnull, os.O_WRONLY)
      os.dup2(fd, 1)
      os.dup2(fd, 2)
  elif attack == "closerange":
      os.closerange(3, 4096)
  elif attack == "reuse-fd":
      os.closerange(3, 4096)
      fds = [os.open(os.devnull, os.O_WRONLY) for _ in range(300)]
expect:
  - where: {attack: [forge-then-os-exit, forked-child-reports]}
    outcome: crash
"#;

trial!(
    result_channel_out_of_the_cases_reach,
    needs = &["2.7", "3.12", "pypy"],
    both
);
fn result_channel_out_of_the_cases_reach(iso: &'static str) -> TestResult {
    let dir = folder(&[("cases/channel.yaml", CHANNEL)]);
    let (run, json) = run_json(
        dir.path(),
        &args_on(&["2.7", "3.12", "pypy"], &["--isolation", iso]),
    );
    let runs = runs(&json);
    check(
        runs.len() == 33,
        format!("{} runs\n{}", runs.len(), run.stdout),
    )?;
    for r in &runs {
        let attack = r["params"]["attack"].as_str().unwrap_or("");
        let crash = attack == "forge-then-os-exit" || attack == "forked-child-reports";
        let (verdict, outcome) = if crash {
            ("xfail", "crash")
        } else {
            ("ok", "pass")
        };
        check(
            r["verdict"] == verdict && r["outcome"] == outcome,
            format!("{attack} on {}: {r}", r["python"]),
        )?;
    }
    run.expect_code(0)
}

/// Attacks on what the driver uses once the case has run: the builtins, sys and os, the trace
/// and profile functions and the recursion limit. Before they were bound or set aside (crosspickle at
/// ba87fb5), builtins-replaced, exc-info-replaced, version-info-flipped (but on 2.7), the
/// hooks that raise, hostile-metaclass and recursion-limit-lowest (on 3.12, 3.13 and PyPy)
/// turned the case's ValueError into a crash, and most of them a pass into a crash too;
/// import-refused, modules-cleared and os-emptied lost the traceback's source lines; and the
/// instance of an old-style class that 2.7 can raise was a crash.
const TAMPER: &str = r#"title: the driver's own work after the case is out of its reach
params:
  attack: [builtins-replaced, import-refused, exc-info-replaced, version-info-flipped, trace-hook-raises, profile-hook-raises, recursion-limit-lowest, modules-cleared, hostile-metaclass, os-emptied]
  end: [raise, return]
code: |
  import sys, os
  try:
      import builtins
  except ImportError:
      import __builtin__ as builtins
  class Meta(type):
      def __getattribute__(cls, name):
          if name.startswith("__") and name not in ("__dict__", "__new__", "__init__", "__call__", "__class__"):
              raise RuntimeError("no " + name)
          return type.__getattribute__(cls, name)
  Boom = Meta("Boom", (ValueError,), {}) if attack == "hostile-metaclass" else ValueError
  error = Boom("boom")
  def hook(frame, event, arg):
      if frame.f_code.co_filename != __file__:
          raise RuntimeError("hook outside the case")
      return hook
  def broken(*args, **kwargs):
      raise RuntimeError("replaced by the case")
  class Other(Exception):
      pass
  if attack == "builtins-replaced":
      table = vars(builtins)
      new = {}
      for name in table:
          if name.startswith("_") and name != "__import__":
              continue
          value = table[name]
          if isinstance(value, type) and issubclass(value, BaseException):
              new[name] = Other
          elif callable(value):
              new[name] = broken
          else:
              new[name] = None
      table.update(new)
  elif attack == "import-refused":
      builtins.__import__ = broken
  elif attack == "exc-info-replaced":
      sys.exc_info = broken
  elif attack == "version-info-flipped":
      sys.version_info = (2, 7, 18, "final", 0) if sys.version_info[0] == 3 else (3, 12, 0, "final", 0)
      sys.version = "2.7.18" if sys.version[0] == "3" else "3.12.0"
  elif attack == "trace-hook-raises":
      sys.settrace(hook)
  elif attack == "profile-hook-raises":
      sys.setprofile(hook)
  elif attack == "profile-hook-raises":
      sys.setprofile(hook)
  elif attack == "recursion-limit-lowest":
      # The lowest limit the case itself can still finish under.
      limit = 12 if sys.version_info[0] == 2 else 1  # on 2.7 a comparison counts too
      while 1:
          try:
              sys.setrecursionlimit(limit)
              if end == "raise" or end != "raise":
                  break
          except RuntimeError:
              limit += 1
  elif attack == "modules-cleared":
      sys.modules.clear()
  elif attack == "os-emptied":
      for name in list(vars(os)):
          if not name.startswith("__"):
              delattr(os, name)
  if end == "raise":
      raise error
expect:
  # The trace function, given back, fails in PyPy's own shutdown code, which ends with status 1
  # (as `pypy3 case.py` does); CPython's shutdown runs no Python frame.
  - where: {attack: trace-hook-raises}
    implementation: pypy
    outcome: crash
  - where: {end: raise, attack: hostile-metaclass}
    outcome: error
    exception: Boom
    instance_of: ValueError
    match: ^boom$
  - where: {end: raise}
    outcome: error
    exception: ValueError
    instance_of: Exception
    match: ^boom$
"#;

/// What 2.7 alone can raise: an instance of an old-style class (no BaseException).
const OLD_STYLE: &str = r#"title: an old-style class's instance raised
python: "<3"
code: |
  class Old:
      def __str__(self):
          return "old"
  raise Old()
expect:
  - outcome: error
    exception: __main__.Old
    match: ^old$
"#;

trial!(
    what_the_driver_does_after_the_case_is_out_of_its_reach,
    needs = &["2.7", "3.6", "3.12", "3.13", "pypy", "debug"],
    both
);
fn what_the_driver_does_after_the_case_is_out_of_its_reach(iso: &'static str) -> TestResult {
    let dir = folder(&[
        ("cases/tamper.yaml", TAMPER),
        ("cases/old-style.yaml", OLD_STYLE),
    ]);
    let pythons = ["2.7", "3.6", "3.12", "3.13", "pypy", "debug"];
    let (run, json) = run_json(dir.path(), &args_on(&pythons, &["--isolation", iso]));
    let (old, runs): (Vec<_>, Vec<_>) = runs(&json)
        .into_iter()
        .partition(|r| r["case"] == "old-style");
    let on_27: Vec<_> = old.iter().filter(|r| r["verdict"] != "skipped").collect();
    check(
        on_27.len() == 1
            && on_27[0]["verdict"] == "xfail"
            && on_27[0]["exception"] == "__main__.Old"
            && on_27[0]["message"] == "old",
        format!("{old:?}"),
    )?;
    check(
        runs.len() == 10 * 2 * pythons.len(),
        format!("{} runs\n{}", runs.len(), run.stdout),
    )?;
    for r in &runs {
        let what = format!("{} on {}: {r}", r["params"], r["python"]);
        let pypy = r["python"].as_str().unwrap_or("").starts_with("pypy");
        if pypy && r["params"]["attack"] == "trace-hook-raises" {
            // Reported, then ended by the trace function at shutdown.
            let raised = r["params"]["end"] == "raise";
            check(
                r["verdict"] == "xfail"
                    && r["outcome"] == "crash"
                    && r["exit_code"] == 1
                    && (r["exception"] == "ValueError") == raised,
                &what,
            )?;
            continue;
        }
        if r["params"]["end"] == "return" {
            check(r["verdict"] == "ok" && r["outcome"] == "pass", &what)?;
            continue;
        }
        let metaclass = r["params"]["attack"] == "hostile-metaclass";
        let exception = if metaclass {
            "__main__.Boom"
        } else {
            "ValueError"
        };
        let traceback = r["traceback"].as_str().unwrap_or("");
        check(
            r["verdict"] == "xfail"
                && r["outcome"] == "error"
                && r["exception"] == exception
                && r["message"] == "boom"
                && traceback.contains("cases/tamper.yaml\", line ")
                && traceback.contains("\n    raise error\n"),
            &what,
        )?;
    }
    run.expect_code(0)
}

/// The pids of crosspickle's fork servers: its children running the boot program (`-c` and
/// its text, or its compiled form, a .pyc).
fn servers_of(crosspickle: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for e in entries.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let fields: Vec<&str> = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        if fields.first() == Some(&"Z") || fields.get(1) != Some(&crosspickle.to_string().as_str())
        {
            continue;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        if args
            .get(1)
            .is_some_and(|a| *a == b"-c" || a.ends_with(b".pyc"))
        {
            found.push(pid);
        }
    }
    found
}

trial!(
    a_case_that_kills_its_server_takes_no_other_run_with_it,
    needs = &["3.12"]
);
fn a_case_that_kills_its_server_takes_no_other_run_with_it() -> TestResult {
    let killer = "title: kills its server\ncode: |\n  import os, signal, time\n  time.sleep(0.5)\n  os.kill(os.getppid(), signal.SIGKILL)\n  time.sleep(5)\n";
    // Runs in flight on the same server when it dies: they must keep their true verdicts.
    let bystander = "title: bystander\nparams:\n  n: [1, 2, 3]\ncode: |\n  import time\n  time.sleep(2)\n  raise ValueError('bystander %d' % n)\nexpect:\n  - outcome: error\n    exception: ValueError\n    match: bystander\n";
    let group = "title: kills its own group\ncode: |\n  import os, signal\n  os.killpg(0, signal.SIGKILL)\nexpect:\n  - outcome: crash\n    signal: SIGKILL\n";
    let dir = folder(&[
        ("cases/a-bystander.yaml", bystander),
        ("cases/b-killer.yaml", killer),
        ("cases/c-group.yaml", group),
    ]);
    let start = Instant::now();
    let (run, json) = run_json(
        dir.path(),
        &args_on(&["3.12"], &["--isolation", "fork", "-j", "4"]),
    );
    let took = start.elapsed();
    let runs = runs(&json);
    check(runs.len() == 5, format!("{}\n{}", run.stdout, run.stderr))?;
    for r in &runs {
        let case = r["case"].as_str().unwrap_or("");
        match case {
            "a-bystander" | "c-group" => {
                check(r["verdict"] == "xfail", format!("{case}: {r}"))?;
            }
            "b-killer" => {
                check(
                    r["verdict"] == "regression"
                        && r["outcome"] == "crash"
                        && r["message"]
                            .as_str()
                            .unwrap_or("")
                            .contains("kills or stops the process that started it"),
                    format!("{case}: {r}"),
                )?;
            }
            _ => return Err(format!("unexpected run {r}").into()),
        }
    }
    check(
        run.stderr
            .contains("was killed by SIGKILL while it ran; it was run again alone"),
        format!("no warning about the lost server:\n{}", run.stderr),
    )?;
    check(took < Duration::from_secs(40), format!("took {took:?}"))?;
    run.expect_code(1)
}

trial!(a_server_stopped_by_a_case_is_replaced, needs = &["3.12"]);
/// A case that stops its server (SIGSTOP): the server is killed when it does not answer, the
/// run is run again alone, and is reported as a crash saying why, the other run untouched.
/// Also when the server is stopped before it could say that it started the run (a preloaded
/// module makes it wait after each fork): the run did start, so it is never left to exec
/// isolation, where stopping its parent would stop crosspickle.
fn a_server_stopped_by_a_case_is_replaced() -> TestResult {
    let stopper = "title: stops its server\ncode: |\n  import os, signal\n  os.kill(os.getppid(), signal.SIGSTOP)\n";
    let early = "title: stops its server before it says it started the run\npreload: [slowfork]\nenv: {PYTHONPATH: MODULES}\ntimeout: 3\ncode: |\n  import os, signal\n  os.kill(os.getppid(), signal.SIGSTOP)\n";
    let bystander = "title: bystander\ncode: |\n  import time\n  time.sleep(1)\n";
    let dir = folder(&[
        ("cases/a-stopper.yaml", stopper),
        ("cases/b-bystander.yaml", bystander),
        ("cases/c-early.yaml", early),
        (
            "modules/slowfork.py",
            "import os, time\nos.register_at_fork(after_in_parent=lambda: time.sleep(1))\n",
        ),
    ]);
    let early = dir.path().join("cases/c-early.yaml");
    let modules = path_str(&dir.path().join("modules"));
    std::fs::write(
        &early,
        std::fs::read_to_string(&early)?.replace("MODULES", &modules),
    )?;
    let start = Instant::now();
    let (run, json) = run_json_within(
        dir.path(),
        &args_on(&["3.12"], &["--isolation", "fork"]),
        Duration::from_secs(90),
    )?;
    let took = start.elapsed();
    let runs = runs(&json);
    check(runs.len() == 3, format!("{}\n{}", run.stdout, run.stderr))?;
    let find = |case: &str| runs.iter().find(|r| r["case"] == case).unwrap();
    check(
        find("b-bystander")["verdict"] == "ok",
        format!("{}", find("b-bystander")),
    )?;
    // The stopper stops its server as it runs: almost always after the server said it started
    // the run, but on a busy machine possibly before.
    for (case, says) in [
        (
            "a-stopper",
            &["did not reap a run within", "did not start a run within"][..],
        ),
        ("c-early", &["did not start a run within 3.0s"][..]),
    ] {
        let r = find(case);
        let message = r["message"].as_str().unwrap_or("");
        check(
            r["outcome"] == "crash" && says.iter().any(|s| message.contains(s)),
            format!("{case}: {r}"),
        )?;
    }
    // Two answers awaited for 10 s each (on the shared server, then alone), and for 3 s each.
    check(took < Duration::from_secs(60), format!("took {took:?}"))?;
    run.expect_code(1)
}

trial!(
    idle_servers_exit_and_their_number_is_bounded,
    needs = &["3.11", "3.12"]
);
fn idle_servers_exit_and_their_number_is_bounded() -> TestResult {
    // A quick case on 3.12, then one that takes 12 s on 3.11: the 3.12 server goes idle and
    // exits while the 3.11 run goes on.
    let quick = "title: quick\npython: '3.12'\ncode: pass\n";
    let slow = "title: slow\npython: '3.11'\ncode: |\n  import time\n  time.sleep(12)\n";
    let dir = folder(&[("cases/a-quick.yaml", quick), ("cases/b-slow.yaml", slow)]);
    let mut child = crosspickle(dir.path())
        .args(args_on(&["3.11", "3.12"], &["--isolation", "fork"]))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let started = Instant::now();
    let mut early = 0;
    let mut late = usize::MAX;
    while child.try_wait().unwrap().is_none() {
        let n = servers_of(pid).len();
        let t = started.elapsed();
        if t < Duration::from_secs(3) {
            early = early.max(n);
        } else if t > Duration::from_secs(8) && t < Duration::from_secs(11) {
            late = late.min(n);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    check(
        early == 2,
        format!("{early} servers at the start (wanted 2)"),
    )?;
    check(
        late == 1,
        format!("{late} servers once the 3.12 one was idle for long (wanted 1)"),
    )?;

    // Twenty case environments: twenty server keys, never more than 16 servers at once.
    let mut files: Vec<(String, String)> = Vec::new();
    for i in 0..20 {
        files.push((
            format!("cases/env-{i:02}.yaml"),
            format!("title: env {i}\nenv:\n  WHICH: '{i}'\ncode: |\n  import os\n  assert os.environ['WHICH'] == '{i}'\n"),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = folder(&refs);
    let json_path = dir.path().join("r.json");
    let mut child = crosspickle(dir.path())
        .args(args_on(
            &["3.12"],
            &["--isolation", "fork", "-j", "2", "--json"],
        ))
        .arg(&json_path)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut most = 0;
    while child.try_wait().unwrap().is_none() {
        most = most.max(servers_of(pid).len());
        std::thread::sleep(Duration::from_millis(20));
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json_path).unwrap_or_default()).unwrap_or_default();
    let all_ok = runs(&json).len() == 20 && runs(&json).iter().all(|r| r["verdict"] == "ok");
    check(all_ok, format!("{json}"))?;
    check(
        (2..=16).contains(&most),
        format!("{most} servers alive at once (at most 16)"),
    )
}

trial!(
    compiled_code_kept_between_exec_runs_is_invisible,
    needs = &["3.12", "3.8", "pypy", "2.7"]
);
fn compiled_code_kept_between_exec_runs_is_invisible() -> TestResult {
    // Six runs of the same code on each interpreter, three at a time (so in three working
    // directories): the later ones load what an earlier one compiled in another folder, and
    // must still name their own file, and start as a plain script does, without the ast
    // module's classes that a compile() makes (on 2.7 every run compiled its code, for want
    // of _imp._fix_co_filename; PyPy has them from the start) and without what the boot
    // program loaded the driver with; code whose compiling warns is
    // compiled by every run, so that every run says it.
    let quiet = r#"title: quiet
params:
  n: [1, 2, 3, 4, 5, 6]
code: |
  import sys, time
  made = [c for c in object.__subclasses__() if c.__name__ == "AST"]
  assert not made or "PyPy" in sys.version, made
  # Nor with what the boot program loaded the driver with (2.7 starts without marshal).
  assert sys.version_info[0] > 2 or "marshal" not in sys.modules
  boot = vars(sys.modules["__crosspickle_driver__"])
  left = [n for n in ("_h", "_m", "_v", "_f", "_d", "_c") if n in boot]
  assert not left, left
  def inner():
      return sys._getframe().f_code.co_filename
  class K(object):
      where = sys._getframe().f_code.co_filename
  assert inner() == K.where == sys._getframe().f_code.co_filename == __file__, (inner(), __file__)
  time.sleep(0.3)
  raise ValueError(__file__)
expect:
  - outcome: error
    exception: ValueError
"#;
    let warns = "title: warns\nparams:\n  n: [1, 2, 3]\ncode: |\n  x = 1 is 1\n";
    let dir = folder(&[("cases/quiet.yaml", quiet), ("cases/warns.yaml", warns)]);
    let mut args = python_args(&["3.12", "3.8", "pypy", "2.7"]);
    args.extend(["--isolation", "exec", "-j", "3"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let runs = runs(&json);
    check(runs.len() == 36, format!("{json}"))?;
    let mut files: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in &runs {
        let python = r["python"].as_str().unwrap_or("").to_string();
        if r["case"] == "quiet" {
            // (The case asserted that its code names its own file; this checks it ran in
            // more than one folder, so that the assertion was put to the test: it raised its
            // `__file__`, as tracebacks name the case file instead.)
            let file = r["message"].as_str().unwrap_or("").to_string();
            files.entry(python).or_default().insert(file);
        } else if python.starts_with("cpython-3") {
            let stderr = r["stderr"].as_str().unwrap_or("");
            check(stderr.contains("SyntaxWarning"), format!("{r}"))?;
        }
    }
    for (python, files) in &files {
        check(
            files.len() >= 2,
            format!("{python} ran in one folder only: {files:?}"),
        )?;
    }
    Ok(())
}

trial!(
    compiled_forms_are_kept_checked_and_remade,
    needs = &["2.7", "3.12", "pypy"]
);
/// The driver's and the cases' compiled forms, kept in the cache folder from one crosspickle
/// to the next: reused as they are; remade when another interpreter made them, when they are
/// another file's (the driver's form found as a case's, and the other way round) or when they
/// do not load; removed by `cache clean`. Every run is right whatever it finds there.
fn compiled_forms_are_kept_checked_and_remade() -> TestResult {
    let case = "title: kept\nparams:\n  n: [1, 2]\ncode: |\n  import sys\n  raise ValueError('boom %d' % n)\nexpect:\n  - outcome: error\n    exception: ValueError\n    match: boom\n";
    let dir = folder(&[("cases/kept.yaml", case)]);
    let cache = tempfile::tempdir().unwrap();
    let pythons = ["2.7", "3.12", "pypy"];
    let run = |iso: &str| -> TestResult {
        let mut args = python_args(&pythons);
        args.extend(["--isolation".into(), iso.into()]);
        let json = dir.path().join("results.json");
        let out = crosspickle(dir.path())
            .env("CROSSPICKLE_CACHE_DIR", cache.path())
            .args(&args)
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap();
        let run = Run::from(out);
        run.expect_code(0)?;
        let value: serde_json::Value = serde_json::from_slice(&std::fs::read(&json)?)?;
        let runs = runs(&value);
        check(
            runs.len() == 6,
            format!("{} runs\n{}", runs.len(), run.stdout),
        )?;
        for r in &runs {
            let tb = r["traceback"].as_str().unwrap_or("");
            let n = r["params"]["n"].as_i64().unwrap_or(0);
            check(
                tb.contains("cases/kept.yaml\", line 6, in <module>")
                    && tb.contains("    raise ValueError('boom %d' % n)\n")
                    && tb.ends_with(&format!("ValueError: boom {n}\n")),
                format!("{iso}: {r}"),
            )?;
        }
        Ok(())
    };
    // What is kept: path -> (modified, bytes).
    let kept = || -> BTreeMap<std::path::PathBuf, (std::time::SystemTime, Vec<u8>)> {
        let mut files = BTreeMap::new();
        let mut stack = vec![cache.path().join("drivers")];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let m = e.metadata().unwrap();
                if m.is_dir() {
                    stack.push(e.path());
                } else {
                    let bytes = std::fs::read(e.path()).unwrap();
                    files.insert(e.path(), (m.modified().unwrap(), bytes));
                }
            }
        }
        files
    };
    let compiled = |files: &BTreeMap<std::path::PathBuf, (std::time::SystemTime, Vec<u8>)>| {
        files
            .iter()
            .filter(|(p, _)| p.extension().is_some_and(|e| e == "bin" || e == "case"))
            .map(|(p, (_, b))| (p.clone(), b.clone()))
            .collect::<Vec<_>>()
    };
    run("exec")?;
    let first = kept();
    let forms = compiled(&first);
    // One driver per interpreter; a case's code for those that set a loaded code's file name.
    let drivers = forms
        .iter()
        .filter(|(p, _)| p.extension().unwrap() == "bin")
        .count();
    check(
        drivers == 3 && forms.len() > 3,
        format!("kept: {:?}", first.keys()),
    )?;
    std::thread::sleep(Duration::from_millis(20));
    run("fork")?;
    check(
        kept() == first,
        "a second crosspickle rewrote what it found",
    )?;
    // Each interpreter's forms made by another, then forms that do not load.
    let (_, other) = forms
        .iter()
        .find(|(_, b)| b.starts_with(b"3.12"))
        .unwrap()
        .clone();
    for (path, _) in &forms {
        std::fs::write(path, &other)?;
    }
    run("exec")?;
    let remade = compiled(&kept());
    // Each form is behind the sys.version of the interpreter that made it.
    let versions: Vec<Vec<u8>> = pythons
        .iter()
        .map(|v| {
            std::process::Command::new(python(v).unwrap())
                .args(["-c", "import sys; sys.stdout.write(sys.version)"])
                .output()
                .unwrap()
                .stdout
        })
        .collect();
    let mut makers = BTreeSet::new();
    for (path, bytes) in &remade {
        let Some(version) = versions.iter().find(|v| bytes.starts_with(v)) else {
            return Err(
                format!("{} is behind no interpreter's sys.version", path.display()).into(),
            );
        };
        makers.insert(version.clone());
        // Its header whole (sys.version, its name), then what does not load.
        let mut broken = version.clone();
        broken.push(b' ');
        broken.extend_from_slice(path.file_name().unwrap().as_encoded_bytes());
        broken.push(b'\n');
        check(
            bytes.starts_with(&broken),
            format!("header of {}", path.display()),
        )?;
        broken.extend_from_slice(b"not a marshalled code object");
        std::fs::write(path, broken)?;
    }
    check(makers.len() == 3, "forms of every interpreter")?;
    run("fork")?;
    run("exec")?;
    check(
        compiled(&kept()).len() == remade.len(),
        "forms after remaking",
    )?;
    let clean = Run::from(
        crosspickle(dir.path())
            .args(["cache", "clean", "--cache-dir"])
            .arg(cache.path())
            .output()?,
    );
    clean.expect_code(0)?;
    check(
        !cache.path().join("drivers").exists()
            && clean
                .stdout
                .contains("compiled forms of the driver and of cases"),
        format!("after cache clean: {}", clean.stdout),
    )
}

/// The documented difference: randomness decided as the interpreter starts is the server's.
/// Cases of `preload`: modules there as the code starts, none without it, an import that
/// fails (wholly or half-way), one that writes what a server's protocol might take for its
/// own, and one that starts a thread (no fork server can serve those two).
const PRELOADS: &[(&str, &str)] = &[
    (
        "cases/first.yaml",
        "title: t\npreload: [pickle, xml.dom]\ncode: |\n  import sys\n  assert 'pickle' in sys.modules and 'xml.dom' in sys.modules\n",
    ),
    (
        "cases/none.yaml",
        "title: t\ncode: |\n  import sys\n  assert 'pickle' not in sys.modules and 'xml.dom' not in sys.modules\n",
    ),
    (
        "cases/missing.yaml",
        "title: t\npreload: [pickle, no_such_module]\ncode: pass\nexpect:\n  - python: '>=3.6'\n    outcome: error\n    exception: ModuleNotFoundError\n    match: \"'no_such_module'\"\n  - outcome: error\n    exception: ImportError\n    match: no_such_module\n",
    ),
    (
        "cases/half.yaml",
        "title: t\npreload: [half]\nenv: {PYTHONPATH: MODULES}\ncode: pass\nexpect:\n  - outcome: error\n    exception: RuntimeError\n    match: ^half way$\n",
    ),
    (
        "cases/threads.yaml",
        "title: t\npreload: [threader]\nenv: {PYTHONPATH: MODULES}\nparams: {n: [1, 2, 3]}\ncode: |\n  import threading\n  assert threading.active_count() == 2, threading.active_count()\n",
    ),
    (
        "cases/noisy.yaml",
        "title: t\npreload: [noisy]\nenv: {PYTHONPATH: MODULES}\ncode: |\n  import os\n  f = open(os.devnull)\n  assert f.fileno() == 3, f.fileno()\n  print('code')\n",
    ),
    ("modules/half.py", "import json\nraise RuntimeError('half way')\n"),
    (
        "modules/noisy.py",
        "import sys\nprint('hello')\nsys.stdout.flush()\nsys.stderr.write('started 0 1\\n')\nsys.stdout.write('exited 1 0\\n')\n",
    ),
    (
        "modules/threader.py",
        "import threading, time\nt = threading.Thread(target=time.sleep, args=(600,))\nt.daemon = True\nt.start()\n",
    ),
];

trial!(
    preload_is_imported_before_the_code,
    needs = &["2.7", "3.12", "pypy"],
    both
);
fn preload_is_imported_before_the_code(iso: &'static str) -> TestResult {
    let dir = folder(PRELOADS);
    let modules = path_str(&dir.path().join("modules"));
    for name in ["half", "threads", "noisy"] {
        let path = dir.path().join(format!("cases/{name}.yaml"));
        let text = std::fs::read_to_string(&path)?.replace("MODULES", &modules);
        std::fs::write(&path, text)?;
    }
    let (run, json) = run_json(
        dir.path(),
        &args_on(&["2.7", "3.12", "pypy"], &["--isolation", iso]),
    );
    run.expect_code(0)?;
    check(runs(&json).len() == 24, format!("{json}"))?;
    for noisy in runs(&json).iter().filter(|r| r["case"] == "noisy") {
        let (out, err) = (&noisy["stdout"], &noisy["stderr"]);
        check(
            out == "hello\nexited 1 0\ncode\n" && err == "started 0 1\n",
            format!("{noisy}"),
        )?;
    }
    for half in runs(&json).iter().filter(|r| r["case"] == "half") {
        let traceback = half["traceback"].as_str().unwrap_or("");
        check(traceback.contains("half.py\", line 2"), format!("{half}"))?;
    }
    // A fork server cannot give its children the thread: those runs are started instead.
    let said = run
        .stderr
        .contains("started threads, which forked runs would lack");
    check(said == (iso == "fork"), &run.stderr)
}

trial!(
    a_random_hash_seed_is_the_servers_unless_the_case_says_exec,
    needs = &["3.12"]
);
fn a_random_hash_seed_is_the_servers_unless_the_case_says_exec() -> TestResult {
    let case = |isolation: &str| {
        format!("title: seed\n{isolation}env:\n  PYTHONHASHSEED: random\nparams:\n  n: [1, 2, 3, 4]\ncode: |\n  print(hash('crosspickle'))\n")
    };
    let hashes = |text: &str, iso: &str| -> Result<BTreeSet<String>, libtest_mimic::Failed> {
        let dir = folder(&[("cases/seed.yaml", text)]);
        let (run, json) = run_json(dir.path(), &args_on(&["3.12"], &["--isolation", iso]));
        run.expect_code(0)?;
        Ok(runs(&json)
            .iter()
            .map(|r| r["stdout"].as_str().unwrap_or("").to_string())
            .collect())
    };
    let shared = hashes(&case(""), "fork")?;
    check(shared.len() == 1, format!("forked runs: {shared:?}"))?;
    let own = hashes(&case(""), "exec")?;
    check(own.len() > 1, format!("exec'd runs: {own:?}"))?;
    let asked = hashes(&case("isolation: exec\n"), "fork")?;
    check(
        asked.len() > 1,
        format!("isolation: exec under fork: {asked:?}"),
    )
}

trial!(
    a_server_with_nowhere_to_keep_preload_output_imports_nothing,
    needs = &["2.7", "3.12", "pypy"]
);
/// A fork server keeps what its preload writes in files of its working directory. One that
/// cannot make them (its folder gone, as on a full disk) must not import at all, where what
/// the modules write would reach its protocol: it imports nothing and says why as its first
/// run comes (crosspickle then starts that run's interpreter itself, as for a preload that
/// wrote output). The driver is run as crosspickle runs it, by its protocol; beside it, the same
/// server in a folder that is there imports the module.
fn a_server_with_nowhere_to_keep_preload_output_imports_nothing() -> TestResult {
    for version in ["2.7", "3.12", "pypy"] {
        let python = python(version).ok_or(version)?;
        let dir = folder(&[("modules/marker.py", "open('imported', 'w').close()\n")]);
        let driver = dir.path().join("crosspickle_driver.py");
        std::fs::write(&driver, crate::support::driver_source()?)?;
        let serve = |cwd: &Path, gone: bool| -> std::io::Result<std::process::Output> {
            use std::io::Write;
            std::fs::create_dir(cwd)?;
            let mut server = std::process::Command::new(&python)
                .arg(&driver)
                .current_dir(cwd)
                .env("PYTHONPATH", dir.path().join("modules"))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()?;
            if gone {
                std::fs::remove_dir(cwd)?;
            }
            let mut stdin = server.stdin.take().expect("piped");
            stdin.write_all(b"preload marker\nrun 1 {}\n")?;
            drop(stdin);
            server.wait_with_output()
        };
        let gone = dir.path().join("gone");
        let out = serve(&gone, true)?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        check(
            out.status.code() == Some(70)
                && out.stdout.is_empty()
                && stderr.contains("cannot keep what importing the case's preload writes"),
            format!(
                "{version}: {:?}, stdout {:?}, stderr {stderr}",
                out.status, out.stdout
            ),
        )?;
        check(
            !dir.path().join("imported").exists() && !gone.join("imported").exists(),
            format!("{version}: the server imported the module"),
        )?;
        let here = dir.path().join("here");
        let out = serve(&here, false)?;
        check(
            here.join("imported").exists()
                && String::from_utf8_lossy(&out.stdout).starts_with("started 1 "),
            format!("{version}: with its folder there: {out:?}"),
        )?;
    }
    Ok(())
}

trial!(
    a_case_can_ask_for_exec,
    needs = &["2.7", "3.12", "pypy", "debug"]
);
fn a_case_can_ask_for_exec() -> TestResult {
    // Under exec isolation a run's parent is crosspickle; a forked run's is its server.
    let code = "code: |\n  import os, sys\n  parent = os.readlink('/proc/%d/exe' % os.getppid())\n  assert ('crosspickle' in parent) == EXEC, parent\n";
    let dir = folder(&[
        (
            "cases/exec.yaml",
            &format!(
                "title: exec\nisolation: exec\n{}",
                code.replace("EXEC", "True")
            ),
        ),
        (
            "cases/fork.yaml",
            &format!("title: fork\n{}", code.replace("EXEC", "False")),
        ),
    ]);
    let with = |iso: &str| args_on(&["2.7", "3.12", "pypy", "debug"], &["--isolation", iso]);
    let (run, json) = run_json(dir.path(), &with("fork"));
    run.expect_code(0)?;
    check(runs(&json).len() == 8, format!("{json}"))?;
    // And --isolation exec makes every run exec'd: the fork case now fails.
    let (run, json) = run_json(dir.path(), &with("exec"));
    run.expect_code(1)?;
    let failed: BTreeSet<String> = runs(&json)
        .iter()
        .filter(|r| r["verdict"] != "ok")
        .map(|r| r["case"].as_str().unwrap_or("").to_string())
        .collect();
    check(
        failed == BTreeSet::from(["fork".to_string()]),
        format!("{failed:?}"),
    )?;
    // An unknown isolation is a load error with its place.
    let dir = folder(&[(
        "cases/bad.yaml",
        "title: t\nisolation: thread\ncode: pass\n",
    )]);
    let (run, _) = run_json(dir.path(), &python_args(&["3.12"]));
    run.expect_code(2)?;
    check(
        run.stderr.contains("bad.yaml:2") && run.stderr.contains("thread"),
        &run.stderr,
    )
}

trial!(an_execd_run_is_spawned_not_forked, needs = &["2.7", "3.12"]);
/// An exec'd run's interpreter is started with posix_spawn, not by a fork of crosspickle (that
/// fork, and the copy-on-write faults it leaves crosspickle with, cost more than the rest of what
/// crosspickle does for an exec'd run): it has no parent-death signal, which only a hook
/// between fork and exec can set. The reaper stands in for it:
/// surround::nothing_outlives_a_killed_crosspickle[exec] still holds.
fn an_execd_run_is_spawned_not_forked() -> TestResult {
    let code = "title: no parent-death signal\ncode: |\n  import ctypes\n  libc = ctypes.CDLL(None, use_errno=True)\n  signal = ctypes.c_int(-1)\n  assert libc.prctl(2, ctypes.byref(signal), 0, 0, 0) == 0  # PR_GET_PDEATHSIG\n  assert signal.value == 0, 'parent-death signal %d' % signal.value\n";
    let dir = folder(&[("cases/spawned.yaml", code)]);
    let (run, json) = run_json(
        dir.path(),
        &args_on(&["2.7", "3.12"], &["--isolation", "exec"]),
    );
    check(runs(&json).len() == 2, format!("{json}"))?;
    run.expect_code(0)
}

trial!(
    an_execd_run_starts_from_the_compiled_boot_program,
    needs = &["2.7", "3.12", "pypy"]
);
/// The first process of an interpreter (its driver not yet compiled) also compiles the boot
/// program into a .pyc of the cache folder; the next crosspickle starts each run from it
/// (`python PYC FALLBACK`), parsing and compiling no `-c` text (2.1 M instructions of a
/// trivial run's 49 M on 3.12; PyPy, which starts a .pyc more slowly, keeps `-c`), and the runs see what they saw under `-c`: `sys.argv` is the
/// code's file alone, `sys.path[0]` its folder, the code one frame below the program's.
fn an_execd_run_starts_from_the_compiled_boot_program() -> TestResult {
    let code = "title: the boot program's form\ncode: |\n  import os, sys\n  f = open('/proc/%d/cmdline' % os.getpid(), 'rb')\n  argv = f.read().split(b'\\0')\n  f.close()\n  assert len(sys.argv) == 1, sys.argv\n  assert sys.path[0] == os.path.dirname(sys.argv[0]), sys.path[0]\n  assert sys._getframe().f_back is None or sys._getframe().f_back.f_back is None\n  pypy = '__pypy__' in sys.builtin_module_names\n  assert argv[1] == b'-c' if pypy else argv[1].endswith(b'.pyc'), argv[1][:20]\n";
    let dir = folder(&[("cases/boot.yaml", code)]);
    let cache = dir.path().join("cache");
    let run = |dir: &Path| {
        let out = crosspickle(dir)
            .args(args_on(
                &["2.7", "3.12", "pypy"],
                &["--isolation", "exec", "--json", "r.json"],
            ))
            .env("CROSSPICKLE_CACHE_DIR", &cache)
            .output()
            .expect("crosspickle runs");
        (Run::from(out), json_at(&dir.join("r.json")))
    };
    // The first: started with `-c` (the CPythons' runs fail), as the .pyc is written by its
    // first process.
    let (first, json) = run(dir.path());
    first.expect_code(1)?;
    check(
        runs(&json).iter().all(|r| {
            r["python"].as_str().is_some_and(|p| p.starts_with("pypy"))
                || r["message"].as_str().is_some_and(|m| m.contains("-c"))
        }),
        format!("{json}"),
    )?;
    let (second, json) = run(dir.path());
    check(runs(&json).len() == 3, format!("{json}"))?;
    second.expect_code(0)
}

trial!(
    a_run_loads_the_parts_of_the_driver_it_uses,
    needs = &["2.7", "3.12", "pypy"],
    both
);
/// An exec'd run loads the driver's quiet ending (a forked run's), the fork server's loop,
/// traceback formatting and class relations only when it uses them (0.7 M instructions of a
/// trivial run on 3.12): none as its code starts, the traceback and relations once a check
/// raised in a case whose rules name a class; a forked run has them all from its server. What
/// the run reports is the same.
fn a_run_loads_the_parts_of_the_driver_it_uses(iso: &'static str) -> TestResult {
    let code = r#"title: the driver's parts
expect:
  - check: raises
    outcome: error
    exception: ValueError
  - outcome: error
    exception: KeyError
code: |
  import sys
  driver = sys.modules['__crosspickle_driver__'].__dict__
  def parts():
      print(' '.join([n for n in ('_quiet_exit', '_server', '_check_record', '_traceback', '_classes') if n in driver]) or '-')
  parts()
  with check('raises'):
      raise ValueError('in a check')
  parts()
  raise KeyError('at the end')
"#;
    let dir = folder(&[("cases/parts.yaml", code)]);
    let (run, json) = run_json(
        dir.path(),
        &args_on(&["2.7", "3.12", "pypy"], &["--isolation", iso]),
    );
    run.expect_code(0)?;
    let found = runs(&json);
    check(found.len() == 3, format!("{json}"))?;
    let (before, after) = match iso {
        "exec" => ("-", "_check_record _traceback _classes"),
        _ => (
            "_quiet_exit _server _check_record _traceback _classes",
            "_quiet_exit _server _check_record _traceback _classes",
        ),
    };
    for r in &found {
        let stdout = r["stdout"].as_str().unwrap_or_default();
        check(
            stdout.lines().collect::<Vec<_>>() == [before, after],
            format!("{iso}: {stdout:?}, not {before:?} then {after:?}"),
        )?;
        let traceback = r["traceback"].as_str().unwrap_or_default();
        let check_traceback = r["checks"][0]["traceback"].as_str().unwrap_or_default();
        check(
            r["verdict"] == "xfail"
                && traceback.ends_with("KeyError: 'at the end'\n")
                && traceback.contains("line 17")
                && check_traceback.ends_with("ValueError: in a check\n"),
            format!("{r}"),
        )?;
    }
    Ok(())
}

/// message, with addresses and temporary paths made alike.
fn comparable(r: &serde_json::Value) -> String {
    let text = |k: &str| r[k].as_str().unwrap_or("").to_string();
    // The race of threads/pickler-dump-race.yaml passed in one run on 3.15 and raised in the
    // next (both forked, .ci/shards-check): either is what its rule allows.
    if let Some(verdict) = sometimes(r) {
        return verdict;
    }
    format!(
        "{} | {} | {} | {}",
        text("outcome"),
        text("exception"),
        text("signal"),
        normalise(&text("message"))
    )
}

fn normalise(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("0x") {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 2..];
        let n = tail
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(tail.len());
        out.push_str(if n > 0 { "0xADDR" } else { "0x" });
        rest = &tail[n..];
    }
    out.push_str(rest);
    // Temporary folders: /tmp/crosspickle-XXXXXX/run-XXXXXX and the like.
    let mut cleaned = String::new();
    for word in out.split_inclusive(|c: char| c.is_whitespace() || c == '\'' || c == '"') {
        if word.contains("/crosspickle-") {
            cleaned.push_str("<tmp>");
            if let Some(last) = word.chars().last().filter(|c| !c.is_alphanumeric()) {
                cleaned.push(last);
            }
        } else {
            cleaned.push_str(word);
        }
    }
    stack_used(&cleaned)
}

/// 3.14's RecursionError says how much C stack the thread had used when it overflowed
/// (`Stack overflow (used 8152 kB)`): a measure of the process, as an address is, which differs
/// by a few kB between a forked and an exec'd run, so it is compared as `used N kB`. Whether it
/// goes on with ` while calling a Python object` (the overflow met in a C call rather than in a
/// Python frame) is one too: a plain `python3.15 script.py` whose recursion goes through
/// `sorted`'s key says it with 3 of 33 sizes of its environment (`env -i PAD=...`, 0 to 2048
/// bytes), so that part is not compared either.
fn stack_used(text: &str) -> String {
    const AT: &str = "Stack overflow (used ";
    let Some(i) = text.find(AT) else {
        return text.to_string();
    };
    let tail = &text[i + AT.len()..];
    let n = tail
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(tail.len());
    if n == 0 || !tail[n..].starts_with(" kB)") {
        return text.to_string();
    }
    let after = &tail[n..];
    let after = match after.strip_prefix(" kB) while calling a Python object") {
        Some(rest) => format!(" kB){rest}"),
        None => after.to_string(),
    };
    format!("{}{AT}N{}", &text[..i], stack_used(&after))
}

trial!(
    the_corpus_is_the_same_in_both_isolations,
    needs = &[EVERY_PYTHON, NEWEST_PYTHONS].concat()
);
/// The whole corpus on every interpreter, exec'd and forked: the same outcome, exception, signal
/// and message run by run. Where `.ci/run` names its corpus run (`CROSSPICKLE_TEST_CORPUS_RUN`
/// and `CROSSPICKLE_TEST_CORPUS_ARGS`, as for `expected::the_ci_corpus_run_is_what_list_expected`),
/// that run is the forked side (the default isolation on Linux), and the exec side is the run
/// `CROSSPICKLE_TEST_CORPUS_EXEC_RUN` names (`.ci/shards-check`'s exec'd shards, merged), or
/// else is run here with the same arguments from the repository: CI runs the corpus twice in
/// all, not four times.
fn the_corpus_is_the_same_in_both_isolations() -> TestResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ci_run = std::env::var("CROSSPICKLE_TEST_CORPUS_RUN").ok();
    let ci_args = std::env::var("CROSSPICKLE_TEST_CORPUS_ARGS").unwrap_or_default();
    let ci_args: Vec<&str> = ci_args.lines().filter(|l| !l.is_empty()).collect();
    let exec_run = std::env::var("CROSSPICKLE_TEST_CORPUS_EXEC_RUN").ok();
    let dir = folder(&[]);
    let mut results = Vec::new();
    for iso in ISOLATIONS {
        let given = match (&ci_run, iso) {
            (Some(path), "fork") => {
                check(
                    !ci_args.contains(&"--isolation"),
                    format!("CI's corpus run chose its isolation: {ci_args:?}"),
                )?;
                Some(path)
            }
            (Some(_), _) => exec_run.as_ref(),
            (None, _) => None,
        };
        let json = match given {
            Some(path) => json_at(&root.join(path)),
            None => {
                // CI's arguments from the repository, as its run was; else every interpreter
                // here on the corpus's folder. The JSON is written outside the repository.
                let (cwd, mut args): (&Path, Vec<String>) = if ci_run.is_some() {
                    (root, ci_args.iter().map(|a| a.to_string()).collect())
                } else {
                    let mut args = python_args(&[EVERY_PYTHON, NEWEST_PYTHONS].concat());
                    args.push(path_str(&root.join("cases")));
                    (dir.path(), args)
                };
                args.extend(["--isolation".to_string(), iso.to_string()]);
                let written = dir.path().join(format!("{iso}.json"));
                let out = crosspickle(cwd)
                    .args(&args)
                    .arg("--json")
                    .arg(&written)
                    .output()?;
                let run = Run::from(out);
                check(
                    run.code == 0 || run.code == 1,
                    format!("{iso}: exit {}\n{}", run.code, run.stderr),
                )?;
                json_at(&written)
            }
        };
        let by_run: BTreeMap<String, String> = runs(&json)
            .iter()
            .map(|r| {
                let name = format!(
                    "{}[{}] {} {}",
                    r["case"],
                    r["params"],
                    r["dump_python"].as_str().unwrap_or(""),
                    r["python"]
                );
                (name, comparable(r))
            })
            .collect();
        check(by_run.len() > 500, format!("{iso}: {} runs", by_run.len()))?;
        results.push(by_run);
    }
    let (exec, fork) = (&results[0], &results[1]);
    let mut differences = Vec::new();
    for (name, e) in exec {
        match fork.get(name) {
            Some(f) if f == e => {}
            Some(f) => differences.push(format!("{name}\n  exec: {e}\n  fork: {f}")),
            None => differences.push(format!("{name}: missing under fork")),
        }
    }
    for name in fork.keys().filter(|n| !exec.contains_key(*n)) {
        differences.push(format!("{name}: missing under exec"));
    }
    check(
        differences.is_empty(),
        format!(
            "{} runs differ between exec and fork:\n{}",
            differences.len(),
            differences.join("\n")
        ),
    )?;
    println!("{} runs the same exec'd and forked", exec.len());
    Ok(())
}

/// What a case's code sees below it and how deep it can recurse, said by the code itself.
const FRAMES_SCRIPT: &str = r#"import sys, traceback
below = []
f = sys._getframe().f_back
while f is not None:
    below.append("%s:%s" % (f.f_code.co_filename, f.f_code.co_name))
    f = f.f_back
stack = len(traceback.extract_stack())
def depth(k):
    try:
        return depth(k + 1)
    except RuntimeError:
        return k
raise ValueError("below=%s stack=%d depth=%d" % ("|".join(below), stack, depth(0)))
"#;

const FRAMES_PYTHONS: &[&str] = &["2.7", "3.7", "3.12", "3.14", "pypy", "pypy3.11", "debug"];

trial!(
    case_code_has_only_the_process_program_below_it,
    needs = FRAMES_PYTHONS,
    both
);
/// A case's code runs at the top level of the process's own program (`python -c BOOT`, the
/// bottom of the stack; in a forked run too, whose server's frames have returned): one frame
/// below it, where `python case.py` has none, so that `sys._getframe().f_back` is that
/// program's `<module>`, `traceback.extract_stack()` has 2 entries, and the code recurses as
/// deep as the same script less 0 to 2 levels (here: 1 on 2.7, 3.12, 3.14 and PyPy 3.11, 2 on
/// 3.7 and 3.11's debug build, 0 on PyPy 3.9). crosspickle at 066f271 ran it three driver
/// frames deep (the driver's module and `_main` between), `extract_stack()` had 4 entries and
/// it recursed 4 levels less on 2.7.
fn case_code_has_only_the_process_program_below_it(iso: &'static str) -> TestResult {
    let indented: String = FRAMES_SCRIPT.lines().map(|l| format!("  {l}\n")).collect();
    let case = format!(
        "title: frames\ncode: |\n{indented}expect:\n  - outcome: error\n    exception: ValueError\n"
    );
    let dir = folder(&[("cases/frames.yaml", &case), ("plain.py", FRAMES_SCRIPT)]);
    let (run, json) = run_json(dir.path(), &args_on(FRAMES_PYTHONS, &["--isolation", iso]));
    run.expect_code(0)?;
    let field = |message: &str, key: &str| -> Option<String> {
        message
            .split(' ')
            .find_map(|w| w.strip_prefix(&format!("{key}=")).map(str::to_string))
    };
    let mut seen = 0;
    for need in FRAMES_PYTHONS {
        let exe = python(need).ok_or(format!("no {need}"))?;
        let plain = std::process::Command::new(&exe)
            .arg("plain.py")
            .current_dir(dir.path())
            .output()
            .map_err(|e| format!("{}: {e}", exe.display()))?;
        let stderr = String::from_utf8_lossy(&plain.stderr);
        let plain_message = stderr.lines().last().unwrap_or("").to_string();
        let plain_depth: i64 = field(&plain_message, "depth")
            .and_then(|d| d.parse().ok())
            .ok_or(format!("{need}: plain script said {plain_message:?}"))?;
        check(
            field(&plain_message, "below").as_deref() == Some("")
                && field(&plain_message, "stack").as_deref() == Some("1"),
            format!("{need}: the plain script itself: {plain_message}"),
        )?;
        let canonical = |p: &str| std::fs::canonicalize(p).ok();
        let label = json["interpreters"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|i| {
                canonical(i["executable"].as_str().unwrap_or("")) == canonical(&path_str(&exe))
            })
            .and_then(|i| i["label"].as_str())
            .ok_or(format!("{need}: {} is not in {json}", exe.display()))?;
        let r = runs(&json)
            .into_iter()
            .find(|r| r["python"] == label)
            .ok_or(format!("{need}: no run on {label}"))?;
        let message = r["message"].as_str().unwrap_or("").to_string();
        check(
            field(&message, "below").as_deref() == Some("<string>:<module>")
                && field(&message, "stack").as_deref() == Some("2"),
            format!("{need} ({iso}): {message}"),
        )?;
        let depth: i64 = field(&message, "depth")
            .and_then(|d| d.parse().ok())
            .ok_or(format!("{need}: {message}"))?;
        check(
            (0..=2).contains(&(plain_depth - depth)),
            format!("{need} ({iso}): recursed {depth} deep, the plain script {plain_depth}"),
        )?;
        println!("{need} ({iso}): {depth} deep, the plain script {plain_depth}");
        seen += 1;
    }
    check(seen == FRAMES_PYTHONS.len(), format!("{seen} interpreters"))
}

/// What a run's finalisation does, written by it to files in a folder the test reads: each
/// `kind` leaves something alive at exit that acts as it is freed (or, `atexit`, `thread` and
/// `weak-container`, at the interpreter's ending before that), and every write goes through
/// functions bound before teardown can take them away.
const ENDING: &str = r#"title: what finalising a run does
params:
  kind: [del, slots-del, generator, weakref-callback, buffered-file, atexit, thread, weak-container, audit, freeze, nothing]
code: |
  import os, sys
  implementation = sys.implementation.name if hasattr(sys, "implementation") else "cpython"
  tag = "%s-%s-%d" % (implementation, ".".join(map(str, sys.version_info[:2])), hasattr(sys, "gettotalrefcount"))
  def write(what, _open=os.open, _write=os.write, _close=os.close, _flags=os.O_WRONLY | os.O_APPEND | os.O_CREAT, _path=OUT + "/" + kind + "-" + tag):
      fd = _open(_path, _flags, 0o600)
      _write(fd, (what + "\n").encode("ascii"))
      _close(fd)
  write("ran")
  # What is left alive is kept in a module of its own, which nothing else refers to: as the
  # interpreter ends, its dict is freed entry by entry, in order (kept in __main__, the order
  # would be the collector's, as __main__'s dict is in cycles with its functions).
  holder = type(sys)("holder")
  sys.modules["holder"] = holder
  if kind == "del":
      class D(object):
          def __del__(self, write=write):
              write("del")
      holder.kept = D()
  elif kind == "slots-del":
      class S(object):
          __slots__ = ()
          def __del__(self, write=write):
              write("slots-del")
      holder.kept = S()
  elif kind == "generator":
      def g(write=write):
          try:
              yield 1
          finally:
              write("generator")
      holder.kept = g()
      next(holder.kept)
  elif kind == "weakref-callback":
      import weakref
      class T(object):
          pass
      holder.kept = T()
      holder.ref = weakref.ref(holder.kept, lambda _, write=write: write("weakref-callback"))
  elif kind == "buffered-file":
      holder.kept = open(OUT + "/content-" + tag, "w")
      holder.kept.write("buffered-file\n")
  elif kind == "atexit":
      import atexit
      atexit.register(write, "atexit")
  elif kind == "thread":
      import threading, time
      def later(write=write, sleep=time.sleep):
          sleep(0.2)
          write("thread")
      threading.Thread(target=later).start()
  elif kind == "weak-container":
      import weakref
      class V(object):
          pass
      holder.kept = V()
      holder.table = weakref.WeakValueDictionary({1: holder.kept})
  elif kind == "freeze":
      # What the case made, frozen with its __del__ (3.7 and later): hidden from the collector,
      # still freed as the interpreter ends.
      import gc
      class F(object):
          def __del__(self, write=write):
              write("freeze")
      holder.kept = F()
      if hasattr(gc, "freeze"):
          gc.freeze()
  elif kind == "audit" and hasattr(sys, "addaudithook"):
      def hook(event, args, write=write):
          if event == "cpython.PyInterpreterState_Clear":
              write("audit")
      sys.addaudithook(hook)
  del holder
expect:
  - outcome: pass
"#;

const ENDING_PYTHONS: &[&str] = &["2.7", "3.7", "3.12", "3.14", "3.15", "pypy", "debug"];

/// Each interpreter's files of one isolation: `kind-implementation-version-debug` → what was
/// written.
/// `preload`: the case's `preload` list, if any.
fn endings(iso: &str, preload: &str) -> Result<BTreeMap<String, String>, libtest_mimic::Failed> {
    let written = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = written.path();
    let mut case = ENDING.replace("OUT", &format!("{:?}", path_str(out)));
    if !preload.is_empty() {
        case.push_str(&format!("preload: [{preload}]\n"));
    }
    let dir = folder(&[("cases/ending.yaml", &case)]);
    let (run, json) = run_json(dir.path(), &args_on(ENDING_PYTHONS, &["--isolation", iso]));
    run.expect_code(0)?;
    let ran = runs(&json).len();
    check(ran == 11 * ENDING_PYTHONS.len(), format!("{ran} runs"))?;
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(out).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let text = std::fs::read_to_string(entry.path()).map_err(|e| e.to_string())?;
        found.insert(entry.file_name().to_string_lossy().into_owned(), text);
    }
    Ok(found)
}

trial!(
    a_forked_run_ends_as_a_started_one_whenever_its_ending_shows,
    needs = ENDING_PYTHONS
);
/// A forked run on CPython 3.7 and later skips finalisation when nothing it made would act as
/// it is freed (`driver.py`'s `_loud`, `_quiet_exit`). Whatever would act (a `__del__`, one on a
/// class whose instances the collector does not track, a suspended generator's `finally`, a weak
/// reference's callback, a buffered file, a `__del__` the case froze with `gc.freeze()`, and at
/// the ending before that, atexit handlers and threads) does so in both isolations alike, on every interpreter: the same files with the same
/// lines. The one difference is the documented one that shows the quiet ending was taken: an
/// audit hook sees finalisation's `cpython.PyInterpreterState_Clear` in a started interpreter (3.8
/// and later) and not in a forked run that ended quietly. On 30e87af, which finalised every run,
/// the forked runs wrote `audit` too.
///
/// The same holds with `preload: [logging]`, whose import registers an atexit callback in the
/// server: the driver's is registered before the preload, so the quiet ending is still taken
/// (registered after it, as it was until this was tested, it was not registered at all and
/// every such run was finalised: 3× the CPU of 200 trivial runs on 3.12). From 3.10 only, and
/// with `preload: [copy]` too (see below).
fn a_forked_run_ends_as_a_started_one_whenever_its_ending_shows() -> TestResult {
    compare_endings("")?;
    compare_endings("logging")?;
    // copy imports weakref, which imports atexit: on 3.7 and 3.8, with the driver's callback
    // registered before that preload (as from 3.10 it is), every run crashed as it ended.
    compare_endings("copy")
}

fn compare_endings(preload: &str) -> TestResult {
    let exec = endings("exec", preload)?;
    let fork = endings("fork", preload)?;
    let mut audit_seen = 0;
    for (name, text) in &exec {
        let forked = fork.get(name).map(String::as_str).unwrap_or("(no file)");
        let cpython = name.contains("-cpython-") && !name.contains("-cpython-2.");
        if name.starts_with("audit-") {
            // The started interpreter's finalisation tells its hooks; the forked run's quiet
            // ending does not (PyPy and 2.7 have no audit hooks, 3.7 neither).
            if text.contains("audit") {
                check(
                    forked == "ran\n",
                    format!("{name}: forked {forked:?}, started {text:?}"),
                )?;
                audit_seen += 1;
            }
            continue;
        }
        check(
            forked == text,
            format!("{name}: forked run wrote {forked:?}, started {text:?}"),
        )?;
        if name.starts_with("content-") {
            continue;
        }
        let kind = name.split("-cpython-").next().unwrap_or("");
        if cpython && !matches!(kind, "nothing" | "weak-container" | "audit") {
            // CPython does each of these at exit (PyPy does not promise to finalise).
            let wanted = if kind == "buffered-file" { "ran\n" } else { "" };
            check(
                kind == "buffered-file" && text == wanted || text.lines().any(|l| l == kind),
                format!("{name}: {text:?}"),
            )?;
        }
    }
    check(
        exec.len() == fork.len(),
        format!("{} files, {} forked", exec.len(), fork.len()),
    )?;
    for (name, text) in exec
        .iter()
        .filter(|(n, _)| n.starts_with("content-cpython-3"))
    {
        check(
            text == "buffered-file\n",
            format!("{name}: a buffered file's content is written as it is freed: {text:?}"),
        )?;
    }
    // 3.12, 3.14, 3.15 and the debug 3.11 (3.8 and later) each showed the quiet ending.
    check(
        audit_seen >= 4,
        format!("preload [{preload}]: {audit_seen} interpreters told their audit hooks"),
    )
}
