//! `crosspickle explore --streams` end to end on 2.7 and 3.12: streams made to hurt (a
//! BINBYTES8 length of 2^40, a deque that grows without bound, a list nested 20000 deep, a
//! deque that consumes 10^18 items in C) are contained (out of memory, hang) and reported
//! while the run goes on; an unknown opcode is a finding whose case file passes with
//! `crosspickle run` and whose `crosspickle repro` shows the difference; generated streams
//! are the same for a seed.

use std::path::Path;

use crate::support::*;

const PYTHONS: &[&str] = &["2.7", "3.12"];

/// One stream a line, in hex.
const STREAMS: &str = "\
# BINBYTES8 with a length of 2^40, then STOP
80 04 8e 00 00 00 00 00 01 00 00 2e
# collections.deque(range(1410065408)): grows until its memory runs out
80 02 63 63 6f 6c 6c 65 63 74 69 6f 6e 73 0a 64 65 71 75 65 0a 63 62 75 69 6c 74 69 6e 73 0a 72 61 6e 67 65 0a 4a 00 e4 0b 54 85 52 85 52 2e
# a byte that is no opcode
ff
# collections.deque(range(10**18), 0): consumes forever in C
80 02 63 63 6f 6c 6c 65 63 74 69 6f 6e 73 0a 64 65 71 75 65 0a 63 62 75 69 6c 74 69 6e 73 0a 72 61 6e 67 65 0a 8a 08 00 00 64 a7 b3 b6 e0 0d 85 52 4b 00 86 52 2e
# MARK, BININT1 1, STOP: a mark left on the stack, which pickletools.dis refuses
28 4b 01 2e
";

fn explore(dir: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["explore".to_string()];
    args.extend(args_on(PYTHONS, &["--streams", "-j", "2"]));
    args.extend(extra.iter().map(|a| a.to_string()));
    Run::from(
        crosspickle(dir)
            .args(&args)
            .output()
            .expect("crosspickle runs"),
    )
}

fn deep() -> String {
    // A list in a list ... 20000 deep: EMPTY_LIST 20000 times, APPEND 19999 times.
    let mut s = String::from("80 02");
    s.push_str(&" 5d".repeat(20_000));
    s.push_str(&" 61".repeat(19_999));
    s.push_str(" 2e\n");
    s
}

trial!(contained_and_found, needs = PYTHONS);
fn contained_and_found() -> TestResult {
    let dir = folder(&[("streams.hex", &format!("{STREAMS}{}", deep()))]);
    let d = dir.path();
    let began = std::time::Instant::now();
    let run = explore(
        d,
        &[
            "--stream-file",
            "streams.hex",
            "--task-timeout",
            "2",
            "--load-memory",
            "32",
            "--out",
            "out",
            "--json",
            "r.json",
        ],
    );
    let took = began.elapsed().as_secs_f64();
    run.expect_code(1)?;
    let report = json_at(&d.join("r.json"));
    check(
        report["streams"] == 6,
        format!("all 6 streams loaded: {report:#}"),
    )?;
    let contained = report["contained"].as_array().cloned().unwrap_or_default();
    let has = |index: u64, outcome: &str, exception: Option<&str>| {
        contained.iter().any(|c| {
            c["index"] == index
                && c["outcome"] == outcome
                && exception.is_none_or(|e| c["exception"] == e)
                && c["python"].as_str().is_some_and(|p| p.contains("3.12"))
        })
    };
    check(
        has(1, "error", Some("MemoryError")),
        format!("the growing deque ran out of memory on 3.12: {contained:#?}"),
    )?;
    check(
        has(3, "hang", None),
        format!("the endless deque hung on 3.12: {contained:#?}"),
    )?;
    check(
        run.stdout.contains("loads contained") && run.stdout.contains("hang"),
        format!("the summary lists what was contained: {}", run.stdout),
    )?;
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    let bad_key = findings
        .iter()
        .find(|f| f["stream"] == "ff")
        .ok_or_else(|| format!("no finding for the byte ff: {findings:#?}"))?;
    let signature = bad_key["signature"].as_str().unwrap_or("");
    check(
        signature.contains("KeyError") && signature.contains("UnpicklingError"),
        format!("C against Python unpickler: {signature}"),
    )?;
    // pickletools.dis refuses what both unpicklers load (python/cpython gh-127079).
    check(
        findings.iter().any(|f| {
            f["stream"] == "284b012e"
                && f["signature"]
                    .as_str()
                    .is_some_and(|s| s.contains("dis refuses what loads"))
        }),
        format!("dis against the unpicklers: {findings:#?}"),
    )?;
    // Nothing took a worker down: no crash among the loads.
    check(
        !contained.iter().any(|c| c["outcome"] == "crash"),
        format!("no crash: {contained:#?}"),
    )?;
    // The case of the byte ff, alone, passes on the same interpreters.
    let case = bad_key["case"].as_str().unwrap_or("").to_string();
    std::fs::create_dir_all(d.join("one")).unwrap();
    std::fs::copy(d.join(&case), d.join("one/bad-key.yaml")).unwrap();
    let mut args = vec!["run".to_string()];
    args.extend(args_on(PYTHONS, &["one"]));
    let (run, results) = run_json(d, &args);
    run.expect_code(0)?;
    check(
        runs(&results).iter().any(|r| r["verdict"] == "xfail"),
        "the case expects the difference",
    )?;
    // And repro makes a plain script of it that shows both exceptions.
    let mut args = vec!["repro".to_string(), "one/bad-key.yaml".into()];
    args.extend(args_on(PYTHONS, &[]));
    let run = Run::from(crosspickle(d).args(&args).output().expect("runs"));
    run.expect_code(0)?;
    check(
        run.stdout.contains("KeyError") && run.stdout.contains("UnpicklingError"),
        format!("repro shows both: {}", run.stdout),
    )?;
    eprintln!("explore --streams on 6 streams took {took:.1} s");
    Ok(())
}

trial!(generated_streams_repeat, needs = PYTHONS);
fn generated_streams_repeat() -> TestResult {
    let dir = folder(&[]);
    let d = dir.path();
    let go = |json: &str| {
        explore(
            d,
            &[
                "--seed",
                "3",
                "--count",
                "8",
                "--task-timeout",
                "2",
                "--json",
                json,
            ],
        )
    };
    let first = go("a.json");
    check(
        [0, 1].contains(&first.code),
        format!("a run: {} {}", first.stdout, first.stderr),
    )?;
    go("b.json");
    let (a, b) = (json_at(&d.join("a.json")), json_at(&d.join("b.json")));
    check(a["streams"] == 8, format!("8 streams: {a:#}"))?;
    check(
        a["real_pickles"].as_u64().is_some_and(|n| n > 0),
        "real pickles were mutated",
    )?;
    check(
        a["findings"] == b["findings"],
        "the same seed gives the same findings",
    )?;
    let bad = explore(d, &["--stream-file", "missing.hex"]);
    bad.expect_code(2)?;
    std::fs::write(d.join("bad.hex"), "80 0z\n").unwrap();
    let bad = explore(d, &["--stream-file", "bad.hex"]);
    bad.expect_code(2)?;
    check(
        bad.stderr.contains("bad.hex:1:5") && bad.stderr.contains("`z`"),
        format!("where the bad digit is: {}", bad.stderr),
    )?;
    // What only the values' explore reads is refused, named, rather than ignored.
    let bad = explore(d, &["--partition", "1/2", "--load-requires", "attrs"]);
    bad.expect_code(2)?;
    check(
        bad.stderr
            .contains("--partition, --load-requires are not read with --streams"),
        format!("names both flags: {}", bad.stderr),
    )
}

trial!(out_of_memory_as_a_case, needs = PYTHONS);
/// A stream that allocates without bound on 3.12 (a `deque` of `builtins.range(1410065408)`)
/// and that 2.7 refuses (it has no module `builtins`) is a finding written as a case file whose
/// code loads under explore's limit of memory (`--load-memory 32`): with `crosspickle run` it
/// passes on both, 3.12's runs expected to end in a `MemoryError`, in seconds (without the
/// limit, they would allocate about 11 GiB).
fn out_of_memory_as_a_case() -> TestResult {
    let growing = STREAMS
        .lines()
        .skip_while(|l| !l.contains("grows until"))
        .nth(1)
        .unwrap_or_default();
    let dir = folder(&[("grow.hex", &format!("{growing}\n"))]);
    let d = dir.path();
    let run = explore(
        d,
        &[
            "--stream-file",
            "grow.hex",
            "--task-timeout",
            "5",
            "--load-memory",
            "32",
            "--out",
            "out",
            "--json",
            "r.json",
        ],
    );
    run.expect_code(1)?;
    let report = json_at(&d.join("r.json"));
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    let case = findings
        .first()
        .and_then(|f| f["case"].as_str())
        .ok_or_else(|| format!("no case file for the growing deque: {report:#}"))?
        .to_string();
    let text = std::fs::read_to_string(d.join(&case)).unwrap_or_default();
    check(
        text.contains("memory = 33554432") && text.contains("limited(load, data, unpickler)"),
        format!("the case loads under the limit: {text}"),
    )?;
    check(
        text.contains("exception: \"MemoryError\""),
        format!("3.12's MemoryError expected: {text}"),
    )?;
    let mut args = vec!["run".to_string()];
    args.extend(args_on(PYTHONS, &["out"]));
    let (run, results) = run_json_within(d, &args, std::time::Duration::from_secs(120))?;
    run.expect_code(0)?;
    let ran = runs(&results);
    check(
        ran.len() == 4 && ran.iter().all(|r| r["verdict"] == "xfail"),
        format!("four runs, each failing as expected: {results:#}"),
    )?;
    check(
        ran.iter().any(|r| {
            r["python"].as_str().is_some_and(|p| p.contains("3.12"))
                && r["exception"].to_string().contains("MemoryError")
        }),
        format!("3.12 ran out of memory: {results:#}"),
    )
}
