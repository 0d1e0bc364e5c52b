//! Out-of-band buffers: protocol 5 with a `buffer_callback` on the producers and `buffers=` on
//! the consumers (the protocol `oob`), on 3.12 and PyPy 8 (PyPy 3.11 with `_pickle`).

use crate::support::*;

const BUFFERS: &str = "import pickle


def readonly():
    return pickle.PickleBuffer(b'ab')


def writable():
    return pickle.PickleBuffer(bytearray(b'cd'))
";

trial!(buffers_out_of_band, needs = &["3.12", "pypy8"]);
/// PyPy 8's C unpickler turns a read-only buffer given back out of band (`bytes`) into a
/// `memoryview` at `READONLY_BUFFER`, where its Python unpickler and CPython's two keep the
/// `bytes`: an unpickler-parity finding at the protocol `oob` alone (in band, protocol 5 writes
/// the bytes into the pickle). The writable buffer comes back as the `bytearray` given, on
/// both. The case file written passes with `crosspickle run` on the same two, and `crosspickle
/// repro` of it shows the difference.
fn buffers_out_of_band() -> TestResult {
    let dir = folder(&[("bufs.py", BUFFERS)]);
    let d = dir.path();
    let pythons = ["3.12", "pypy8"];
    let mut args = vec!["explore".to_string()];
    args.extend(args_on(
        &pythons,
        &[
            "--values", "bufs.py", "--count", "2", "--out", "out", "-j", "2",
        ],
    ));
    let (run, report) = run_json(d, &args);
    run.expect_code(1)?;
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    let parity = findings.iter().find(|f| f["oracle"] == "unpickler-parity");
    let Some(parity) = parity else {
        return check(false, format!("no unpickler-parity: {}", run.stdout));
    };
    check(
        parity["protocols"] == serde_json::json!(["oob"]),
        format!("out of band alone: {parity:#}"),
    )?;
    check(
        parity["value"]
            .as_str()
            .is_some_and(|v| v.contains("readonly()")),
        format!("the read-only buffer: {parity:#}"),
    )?;
    check(
        parity["detail"].to_string().contains("memoryview"),
        format!("a memoryview from the C unpickler: {parity:#}"),
    )?;
    check(
        parity["consumers"]
            .as_array()
            .is_some_and(|c| c.len() == 1 && c[0].as_str().is_some_and(|c| c.starts_with("pypy"))),
        format!("PyPy 8 the consumer: {parity:#}"),
    )?;
    check(
        !findings.iter().any(|f| {
            f["value"]
                .as_str()
                .is_some_and(|v| v.contains("writable()"))
        }),
        format!("the writable buffer loads alike: {findings:#?}"),
    )?;
    let file = parity["case_file"].as_str().unwrap_or("").to_string();
    let case = std::fs::read_to_string(d.join(&file)).unwrap_or_default();
    check(
        case.contains("protocol: [oob]"),
        format!("the case's protocol: {case}"),
    )?;
    let mut run_args = vec!["run".to_string()];
    run_args.extend(python_args(&pythons));
    run_args.push("out".into());
    let (run, results) = run_json(d, &run_args);
    run.expect_code(0)?;
    let xfail = runs(&results)
        .iter()
        .filter(|r| r["verdict"] == "xfail")
        .count();
    check(
        xfail > 0,
        format!("PyPy 8's runs expected to fail: {results:#}"),
    )?;
    // A plain script for upstream: the buffers travel in it with the pickle.
    let mut args = vec!["repro".to_string(), file];
    args.extend(python_args(&pythons));
    let run = Run::from(crosspickle(d).args(&args).output().expect("runs"));
    run.expect_code(0)?;
    check(
        run.stdout.contains(
            r#"AssertionError: C unpickler: ["memoryview","ro","6162"], Python unpickler: ["bytes","6162"]"#,
        ),
        format!("repro shows PyPy 8's memoryview: {}", run.stdout),
    )
}
