//! `crosspickle explore --streams` (and `--stream-file FILE`): its options read from
//! `explore`'s arguments, the streams of a file, the progress bar, the summary (findings and
//! the loads that had to be contained), the case files in `--out` and the `--json` report.
//! The engine is [`crate::explore::streams`]. Exit codes as `explore`'s: 0 no finding, 1
//! findings, 2 bad input, 3 a worker that cannot start, 130 / 143 / 129 a signal.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use super::explore::{progress_bar, usable_outputs, ExploreArgs};
use super::failure::Failure;
use super::settings::{seconds, Given, Settings};
use crate::errors::Error;
use crate::explore::stream;
use crate::explore::stream_case;
use crate::explore::streams::{self, Contained, Finding, Options, Report, Seen};
use crate::explore::Progress;
use crate::python::Interpreter;

pub async fn explore(args: ExploreArgs) -> Result<i32, Failure> {
    let settings = Settings::resolve(Given {
        paths: &[],
        corpus: false,
        jobs: args.jobs,
        cache_dir: args.pythons.cache_dir.as_deref(),
        timeout: None,
        find_links: &[],
        probe_timeout: args.pythons.probe_timeout,
        verbose: false,
    })?;
    let options = options(&args, &settings)?;
    usable_outputs(&args)?;
    let pythons = super::interpreters::for_running(&args.pythons, &settings, None).await?;
    let (cancel, _) = super::interrupt::cancel_on_signals();
    let count = options
        .given
        .as_ref()
        .map(|g| g.len() as u64)
        .or(options.count);
    let bar = progress_bar(count);
    let started = std::time::Instant::now();
    let report = streams::explore(&pythons, &options, &cancel, &mut |p| match p {
        Progress::Values(n, found) => {
            bar.set_position(n);
            bar.set_message(format!("streams, {found} findings"));
        }
        Progress::Shrinking(what) => bar.set_message(format!("shrinking {what}")),
    })
    .await
    .map_err(|e| Failure::system("exploring", std::io::Error::other(e)))?;
    bar.finish_and_clear();
    let elapsed = started.elapsed().as_secs_f64();
    let seed = options.given.is_none().then_some(args.seed);
    let files = match &args.out {
        Some(dir) => write_cases(dir, &report.findings, &pythons, seed, options.memory)?,
        None => vec![None; report.findings.len()],
    };
    if let Some(path) = &args.json {
        let doc = json_report(&pythons, &report, &files, seed, elapsed);
        let text = serde_json::to_string_pretty(&doc).expect("JSON") + "\n";
        crate::sys::fs::write_atomic(path, text.as_bytes())
            .map_err(|e| Error::Usage(format!("cannot write {}: {e}", path.display())))?;
    }
    crate::sys::stdout::emit(&summary(&pythons, &report, &files, elapsed));
    Ok(super::explore::exit_code(
        report.interrupted,
        !report.findings.is_empty(),
    ))
}

fn options(args: &ExploreArgs, settings: &Settings) -> Result<Options, Error> {
    let time = args.time.map(|t| seconds("--time", t)).transpose()?;
    seconds("--task-timeout", args.task_timeout)?;
    if args.batch == 0 {
        return Err(Error::Usage("--batch must be at least 1".into()));
    }
    // What only the values' explore reads: refused rather than ignored.
    let unread: Vec<&str> = [
        ("--values", args.values.is_some()),
        ("--baseline", args.baseline.is_some()),
        ("--partition", args.partition.is_some()),
        ("--requires", !args.requires.is_empty()),
        ("--dump-requires", !args.dump_requires.is_empty()),
        ("--load-requires", !args.load_requires.is_empty()),
    ]
    .into_iter()
    .filter_map(|(flag, given)| given.then_some(flag))
    .collect();
    if !unread.is_empty() {
        return Err(Error::Usage(format!(
            "{} {} not read with --streams: explore streams without {}",
            unread.join(", "),
            if unread.len() == 1 { "is" } else { "are" },
            if unread.len() == 1 { "it" } else { "them" },
        )));
    }
    if args.load_memory == 0 {
        return Err(Error::Usage(
            "--load-memory must be at least 1 (MiB)".into(),
        ));
    }
    let given = args.stream_file.as_deref().map(read_streams).transpose()?;
    Ok(Options {
        seed: args.seed,
        count: args.count.or(if time.is_some() { None } else { Some(200) }),
        time,
        // A stream's batch is loaded three times on every interpreter, each load a child.
        batch: args.batch.min(STREAMS_PER_BATCH),
        task_limit: args.task_timeout,
        jobs: settings.jobs,
        memory: args.load_memory.saturating_mul(1 << 20),
        given,
        shrinks_per_kind: 2,
    })
}

/// The most streams a batch holds, whatever `--batch` says.
const STREAMS_PER_BATCH: usize = 20;

/// `--stream-file FILE`: one stream a line, in hex (spaces allowed between bytes); blank
/// lines and lines starting with `#` are skipped.
fn read_streams(path: &Path) -> Result<Vec<Vec<u8>>, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("cannot read --stream-file {}", path.display()), e))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        out.push(hex(line).map_err(|(column, what)| {
            Error::Usage(format!(
                "{}:{}:{}: {what}; write each stream as hex digits, two a byte (`80 02 4b 01 2e`)",
                path.display(),
                n + 1,
                column + 1
            ))
        })?);
    }
    if out.is_empty() {
        return Err(Error::Usage(format!(
            "--stream-file {}: no stream in it; write one stream a line, in hex",
            path.display()
        )));
    }
    Ok(out)
}

/// A line of hex digits as bytes; else the column and what is wrong there.
fn hex(line: &str) -> Result<Vec<u8>, (usize, String)> {
    let mut digits = Vec::new();
    for (i, c) in line.char_indices() {
        if c.is_whitespace() {
            continue;
        }
        let Some(d) = c.to_digit(16) else {
            return Err((i, format!("`{}` is not a hex digit", c.escape_debug())));
        };
        digits.push((i, d as u8));
    }
    if digits.len() % 2 == 1 {
        let (i, _) = digits[digits.len() - 1];
        return Err((i, "an odd number of hex digits".into()));
    }
    Ok(digits.chunks(2).map(|p| p[0].1 << 4 | p[1].1).collect())
}

fn file_name(f: &Finding) -> String {
    format!(
        "explore-streams-{}.yaml",
        crate::sys::hash::short_hex(f.signature.as_bytes(), 10)
    )
}

fn write_cases(
    dir: &Path,
    found: &[Finding],
    pythons: &[Interpreter],
    seed: Option<u64>,
    memory: u64,
) -> Result<Vec<Option<PathBuf>>, Error> {
    found
        .iter()
        .map(|f| {
            // A case that ran out of memory here loads under the same limit (its code sets
            // it): see stream_case::needs_limit.
            let path = dir.join(file_name(f));
            let text = stream_case::write(f, pythons, seed, memory);
            crate::sys::fs::write_atomic(&path, text.as_bytes())
                .map_err(|e| Error::Usage(format!("cannot write {}: {e}", path.display())))?;
            Ok(Some(path))
        })
        .collect()
}

fn seen_json(s: &Seen) -> Json {
    match s {
        Seen::Loaded(h, canon) => json!({"outcome": "loaded", "hash": h, "value": canon}),
        Seen::Raised(t, m) => json!({"outcome": "error", "exception": t, "message": m}),
        Seen::Hang => json!({"outcome": "hang"}),
        Seen::Crash(why) => json!({"outcome": "crash", "message": why}),
    }
}

fn json_report(
    pythons: &[Interpreter],
    report: &Report,
    files: &[Option<PathBuf>],
    seed: Option<u64>,
    elapsed: f64,
) -> Json {
    let findings: Vec<Json> = report
        .findings
        .iter()
        .zip(files)
        .map(|(f, file)| {
            let loads: Vec<Json> = f
                .seen
                .iter()
                .map(|((p, r), s)| {
                    let mut j = seen_json(s);
                    j["python"] = pythons[*p].label.clone().into();
                    j["reader"] = r.as_str().into();
                    j
                })
                .collect();
            json!({
                "signature": f.signature,
                "stream": crate::sys::hash::hex(&f.ops.concat()),
                "opcodes": stream::describe(&f.ops),
                "index": f.index,
                "occurrences": f.occurrences,
                "loads": loads,
                "case": file.as_ref().map(|p| p.display().to_string()),
            })
        })
        .collect();
    json!({
        "explore_streams": 1,
        "seed": seed,
        "pythons": pythons.iter().map(|p| p.label.clone()).collect::<Vec<_>>(),
        "streams": report.streams,
        "real_pickles": report.real,
        "seconds": elapsed,
        "interrupted": report.interrupted,
        "findings": findings,
        "contained": report.contained.iter().map(|c| contained_json(pythons, c)).collect::<Vec<_>>(),
    })
}

fn contained_json(pythons: &[Interpreter], c: &Contained) -> Json {
    let mut j = seen_json(&c.seen);
    j["python"] = pythons[c.python].label.clone().into();
    j["reader"] = c.reader.as_str().into();
    j["index"] = c.index.into();
    j
}

fn summary(
    pythons: &[Interpreter],
    report: &Report,
    files: &[Option<PathBuf>],
    elapsed: f64,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "explored {} streams ({} real pickles mutated among them) on {} interpreters in {elapsed:.1} s",
        report.streams,
        report.real,
        pythons.len()
    );
    if report.interrupted {
        let _ = writeln!(
            out,
            "interrupted by {}: what was found so far",
            super::interrupt::what()
        );
    }
    let _ = writeln!(out, "{} findings", report.findings.len());
    for (f, file) in report.findings.iter().zip(files) {
        let _ = writeln!(
            out,
            "  stream {} (x{}): {}",
            f.index, f.occurrences, f.signature
        );
        let _ = writeln!(
            out,
            "      {}: {}",
            crate::explore::source::bytes(&f.ops.concat()),
            stream::describe(&f.ops)
        );
        if let Some(file) = file {
            let under = if stream_case::needs_limit(f) {
                " (loads under the limit of memory)"
            } else {
                ""
            };
            let _ = writeln!(out, "      {}{under}", file.display());
        }
    }
    if !report.contained.is_empty() {
        let _ = writeln!(
            out,
            "{} loads contained (hang, crash, out of memory){}:",
            report.contained.len(),
            if report.contained.len() >= 100 {
                ", the first 100"
            } else {
                ""
            }
        );
        for c in &report.contained {
            let what = match &c.seen {
                Seen::Hang => "hang".to_string(),
                Seen::Crash(how) => format!("crash: {how}"),
                Seen::Raised(t, m) => format!("{t}: {}", m.chars().take(80).collect::<String>()),
                Seen::Loaded(..) => "loaded".into(),
            };
            let _ = writeln!(
                out,
                "  stream {} on {} ({}): {what}",
                c.index,
                pythons[c.python].label,
                c.reader.as_str()
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_lines_read_as_bytes_and_bad_ones_say_where() {
        assert_eq!(hex("80 02 4b 01 2e"), Ok(vec![0x80, 2, 0x4b, 1, 0x2e]));
        assert_eq!(hex("8002"), Ok(vec![0x80, 2]));
        assert_eq!(hex("80 0g").unwrap_err().0, 4);
        assert_eq!(hex("80 0").unwrap_err().1, "an odd number of hex digits");
    }
}
