//! What explore reaches beyond the protocols each dump names: the default protocol
//! (`pickle.dumps(value)`), which every consumer is asked to load, and exception messages
//! compared once normalised (message-differs). On 2.7, 3.12 and 3.14, whose defaults are 0, 4
//! and 5.

use crate::support::*;

trial!(
    default_protocol_and_messages,
    needs = &["2.7", "3.12", "3.14"]
);
/// 2.7 refuses 3.12's and 3.14's default pickles (`unsupported pickle protocol`), a
/// `PickleBuffer` pickles with 3.14's default and not with 3.12's, and the two say the same
/// `PicklingError` in other words below protocol 5 (3.12's "can only pickled", 3.14's "can
/// only be pickled"): a message-differs finding, listed after the type changes. The case files
/// of the first and the last pass with `crosspickle run`.
fn default_protocol_and_messages() -> TestResult {
    let dir = folder(&[]);
    let d = dir.path();
    let pythons = ["2.7", "3.12", "3.14"];
    let mut args = vec!["explore".to_string()];
    args.extend(args_on(
        &pythons,
        &["--seed", "1", "--count", "60", "--out", "out", "-j", "2"],
    ));
    let (run, report) = run_json(d, &args);
    run.expect_code(1)?;
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    let find = |oracle: &str, observed: &str| {
        findings
            .iter()
            .find(|f| f["oracle"] == oracle && f["observed"] == observed)
            .cloned()
    };
    let Some(unreadable) = find("load-differs", "ValueError") else {
        return check(false, format!("no ValueError of 2.7: {}", run.stdout));
    };
    check(
        unreadable["protocols"] == serde_json::json!(["default"]),
        format!("the default protocol alone: {unreadable:#}"),
    )?;
    check(
        unreadable["detail"]
            .as_str()
            .is_some_and(|d| d.starts_with("ValueError: unsupported pickle protocol: ")),
        format!("2.7's message: {unreadable:#}"),
    )?;
    check(
        unreadable["consumers"].as_array().is_some_and(|c| {
            c.len() == 1 && c[0].as_str().is_some_and(|c| c.starts_with("cpython-2.7"))
        }),
        format!("2.7 the consumer: {unreadable:#}"),
    )?;
    let Some(buffer) = find("dump-differs", "PicklingError") else {
        return check(
            false,
            format!("no PickleBuffer refused by 3.12: {}", run.stdout),
        );
    };
    check(
        buffer["shape"]
            .as_str()
            .is_some_and(|s| s.starts_with("PickleBuffer")),
        format!("a PickleBuffer: {buffer:#}"),
    )?;
    let Some(message) = find("message-differs", "PicklingError") else {
        return check(false, format!("no message-differs: {}", run.stdout));
    };
    // A tie of one against one: the first interpreter's words are the reference.
    check(
        message["detail"] == "PicklingError: PickleBuffer can only be pickled with protocol >= 5"
            && message["producers"].as_array().is_some_and(|p| {
                p.len() == 1 && p[0].as_str().is_some_and(|p| p.starts_with("cpython-3.14"))
            }),
        format!("3.14's words against 3.12's: {message:#}"),
    )?;
    check(
        findings
            .last()
            .is_some_and(|f| f["oracle"] == "message-differs"),
        "the message change listed after the type changes",
    )?;
    let mut run_args = vec!["run".to_string()];
    run_args.extend(args_on(&pythons, &["-j", "2"]));
    for f in [&unreadable, &message] {
        run_args.push(f["case_file"].as_str().unwrap_or("").to_string());
    }
    let (run, _) = run_json(d, &run_args);
    run.expect_code(0)
}
