//! `crosspickle explore` observes a value drawn again only once: the generator draws small
//! values often, and the workers are the same processes for the whole run, so the first
//! observation of a value stands for the next ones. Checked from what the workers are sent:
//! every request to a worker is recorded by a stand-in interpreter (`tee`), and the values of
//! its dump requests are counted.

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::*;

/// A stand-in interpreter that copies what explore's worker is sent into `requests`, then runs
/// `real` with it.
fn recording(dir: &Path, real: &Path) -> String {
    let path = dir.join("python-recorded");
    let log = dir.join("requests");
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in *explore_worker*) tee -a '{}' | exec '{}' \"$@\";; esac\nexec '{}' \"$@\"\n",
        log.display(),
        real.display(),
        real.display()
    );
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path_str(&path)
}

/// The sources of the values of each dump request recorded, in order (a message: a 4-byte
/// big-endian count of parts, each part a 4-byte big-endian length and its bytes; part 0 the
/// JSON header).
fn dumped_sources(recorded: &[u8]) -> Result<Vec<Vec<String>>, String> {
    let mut rest = recorded;
    let mut take = |n: usize| -> Result<&[u8], String> {
        if rest.len() < n {
            return Err(format!(
                "a request cut short, {} bytes from its end",
                rest.len()
            ));
        }
        let (part, after) = rest.split_at(n);
        rest = after;
        Ok(part)
    };
    let number = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize;
    let mut sources = Vec::new();
    let mut left = recorded.len();
    while left > 0 {
        let count = number(take(4)?);
        left -= 4;
        let mut header = None;
        for i in 0..count {
            let size = number(take(4)?);
            let part = take(size)?;
            left -= 4 + size;
            if i == 0 {
                header = Some(
                    serde_json::from_slice::<serde_json::Value>(part)
                        .map_err(|e| format!("a request's header is not JSON: {e}"))?,
                );
            }
        }
        let header = header.ok_or("a request with no header")?;
        if header["op"] == "dump" {
            let mut values = Vec::new();
            for entry in header["values"].as_array().ok_or("a dump with no values")? {
                values.push(
                    entry[1]
                        .as_str()
                        .ok_or("a value with no source")?
                        .to_string(),
                );
            }
            sources.push(values);
        }
    }
    Ok(sources)
}

trial!(a_value_drawn_again_is_observed_once, needs = &["3.12"]);
/// 600 values of seed 7 on 3.12, in three batches of 200: the values drawn before (in the
/// batch, or in a batch judged before this one was made) are counted in the report, and only
/// the others are sent to the worker (seed 7 draws 170 distinct values in its first 200). A batch's dump request is told from a shrink's by its
/// size: a shrink's hold at most 64 candidates, and each of these batches has more values not
/// drawn before.
fn a_value_drawn_again_is_observed_once() -> TestResult {
    let dir = folder(&[]);
    let d = dir.path();
    let py = recording(d, &python("3.12").unwrap());
    let first = Run::from(
        crosspickle(d)
            .args([
                "explore",
                "--pythons-toml",
                "/dev/null",
                "--python",
                &py,
                "--seed",
                "7",
                "--count",
                "600",
                "--batch",
                "200",
                "--json",
                "r.json",
            ])
            .output()
            .expect("runs"),
    );
    check(
        first.code == 0 || first.code == 1,
        format!("explores: {} {}", first.stdout, first.stderr),
    )?;
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    let repeated = report["repeated"]
        .as_u64()
        .ok_or("the report says how many values were drawn again")?;
    let requests = dumped_sources(&std::fs::read(d.join("requests")).unwrap())?;
    let batches: Vec<&Vec<String>> = requests.iter().filter(|r| r.len() > 64).collect();
    let distinct = |values: &[String]| values.iter().collect::<BTreeSet<_>>().len();
    let sent: usize = batches.iter().map(|b| b.len()).sum();
    // Not every value is sent: one of a type 3.12 does not have is built where it is (none
    // here). So at most the values not drawn before.
    check(
        batches.len() == 3 && repeated > 0 && sent as u64 <= 600 - repeated,
        format!(
            "three batches sent at most the values not drawn before, {} of 600 (the report: {repeated} drawn again): {:?}",
            600 - repeated,
            batches.iter().map(|b| b.len()).collect::<Vec<_>>()
        ),
    )?;
    // Each batch is sent a value once, and the third none of those of the first (the second
    // was made while the first was under way).
    for (b, batch) in batches.iter().enumerate() {
        check(
            batch.len() == distinct(batch),
            format!(
                "batch {b}: {} sent, {} distinct",
                batch.len(),
                distinct(batch)
            ),
        )?;
    }
    let earliest: BTreeSet<&String> = batches[0].iter().collect();
    let again: Vec<&String> = batches[2].iter().filter(|s| earliest.contains(s)).collect();
    check(
        again.is_empty(),
        format!("the third batch is not sent the first's values: {again:?}"),
    )?;
    // The summary says so.
    check(
        first
            .stdout
            .contains(&format!("{repeated} of the values were drawn before")),
        format!("the summary counts them: {}", first.stdout),
    )
}
