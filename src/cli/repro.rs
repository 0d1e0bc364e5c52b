//! `crosspickle repro`: one case (a corpus case, or a file explore wrote) turned into one plain
//! Python script that shows its behaviour without crosspickle or YAML, ready to paste into an
//! upstream issue, followed by the script's output on each interpreter selected, those that
//! print the same grouped. A round trip's pickles are made by the case's `dump` on each
//! producer and written into the script as bytes; the script runs the case's `load` on each,
//! and for a bounce its relay there and its reload on the producer (`repro_bounce.rs`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use super::args::PythonOptions;
use super::failure::Failure;
use super::repro_bounce::Pickle;
use super::repro_script::{python_text, run_script};
use super::settings::{Given, Settings};
use crate::case::{Body, Case};
use crate::errors::Error;
use crate::python::Interpreter;
use crate::run::{dump_only, ExecuteOptions, Plan};
use crate::select::Keyword;

#[derive(Debug, Args)]
pub struct ReproArgs {
    /// The case file (or a folder holding the one case -k selects)
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Look for the case in the corpus shipped inside crosspickle
    #[arg(long)]
    pub corpus: bool,
    /// Only the case whose name, path or tags match this expression, as pytest's -k
    #[arg(short = 'k', value_name = "EXPRESSION")]
    pub keyword: Option<String>,
    #[command(flatten)]
    pub pythons: PythonOptions,
    /// Round trips: only these interpreters produce the pickles the script holds
    #[arg(long = "dump-python", value_name = "REQUEST")]
    pub dump_python: Vec<String>,
    /// Only these interpreters run the script (its output is shown for each)
    #[arg(long = "load-python", value_name = "REQUEST")]
    pub load_python: Vec<String>,
    /// Also write the script alone to FILE
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Time limit of each dump and of each run of the script, in seconds [default: 60]
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
}

pub async fn repro(args: ReproArgs) -> Result<i32, Failure> {
    let settings = Settings::resolve(Given {
        paths: &args.paths,
        corpus: args.corpus,
        jobs: None,
        cache_dir: args.pythons.cache_dir.as_deref(),
        timeout: args.timeout,
        find_links: &[],
        probe_timeout: args.pythons.probe_timeout,
        verbose: false,
    })?;
    let keyword = args.keyword.as_deref().map(Keyword::parse).transpose()?;
    let cases: Vec<Arc<Case>> = settings
        .load_cases()?
        .into_iter()
        .filter(|c| {
            keyword.as_ref().is_none_or(|k| {
                k.selects(c, &crate::case::Params::default())
                    || c.param_combinations().iter().any(|p| k.selects(c, p))
            })
        })
        .map(Arc::new)
        .collect();
    let case = match cases.as_slice() {
        [one] => one.clone(),
        [] => return Err(Error::Usage("no case selected: give a case file, or -k".into()).into()),
        many => {
            return Err(Error::Usage(format!(
            "{} cases selected ({}, ...): repro writes one script for one case; choose it with -k",
            many.len(),
            many.iter()
                .take(3)
                .map(|c| c.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
            .into())
        }
    };
    let interpreters: Vec<Arc<Interpreter>> =
        super::interpreters::for_running(&args.pythons, &settings, None)
            .await?
            .into_iter()
            .map(Arc::new)
            .collect();
    let producers = super::interpreters::narrow(&interpreters, &args.dump_python, "--dump-python")?;
    let consumers = super::interpreters::narrow(&interpreters, &args.load_python, "--load-python")?
        .unwrap_or_else(|| interpreters.clone());
    let limit = Duration::from_secs_f64(args.timeout.unwrap_or(60.0));

    // A bounce's pickles, whose reloads run on their producers.
    let mut bounced: Option<Vec<Pickle>> = None;
    let script = match &case.body {
        Body::Code(code) => code_script(&case, code),
        Body::RoundTrip { dump, load } => {
            let plan = Plan::build(
                std::slice::from_ref(&case),
                &interpreters,
                producers.as_deref(),
                None,
                &|_, _| true,
            );
            let options = ExecuteOptions {
                timeout: args.timeout.or(settings.timeout),
                ..ExecuteOptions::new(settings.jobs)
            };
            let (cancel, interrupted) = super::interrupt::cancel_on_signals();
            let dumped = dump_only(&plan, &options, cancel)
                .await
                .map_err(|e| Failure::system("preparing the dumps", e))?;
            if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
                return Ok(super::interrupt::exit_code());
            }
            let mut pickles = Vec::new();
            let mut refused = Vec::new();
            for d in dumped {
                let run = &plan.runs[d.run];
                let producer = run.producer.as_ref().expect("a round trip's run");
                match d.result {
                    Ok((_, Some(bytes))) => pickles.push(Pickle {
                        producer: producer.label.clone(),
                        params: run.params.clone(),
                        bytes,
                    }),
                    Ok((observed, None)) => refused.push(format!(
                        "{} {}: {}",
                        producer.label, run.params, observed.outcome
                    )),
                    Err(e) => refused.push(format!("{} {}: {e}", producer.label, run.params)),
                }
            }
            pickles.sort_by(|a, b| {
                (&a.producer, a.params.python_literal(), &a.bytes).cmp(&(
                    &b.producer,
                    b.params.python_literal(),
                    &b.bytes,
                ))
            });
            if pickles.is_empty() {
                eprintln!("error: no producer made a pickle: {}", refused.join("; "));
                return Ok(super::failure::EXIT_SYSTEM);
            }
            match &case.bounce {
                Some(bounce) => {
                    let script = super::repro_bounce::script(
                        header(&case),
                        &case,
                        dump,
                        load,
                        bounce,
                        &pickles,
                        &refused,
                    );
                    bounced = Some(pickles);
                    script
                }
                None => round_trip_script(&case, dump, load, &pickles, &refused),
            }
        }
    };
    if let Some(out) = &args.out {
        crate::sys::fs::write_atomic(out, script.as_bytes())
            .map_err(|e| Error::io(format!("cannot write {}", out.display()), e))?;
    }
    let outputs = match &bounced {
        Some(pickles) => {
            super::repro_bounce::outputs(&script, &consumers, &interpreters, pickles, limit).await
        }
        None => run_everywhere(&script, &consumers, limit).await,
    };
    crate::sys::stdout::emit(&markdown(&case, &script, &outputs));
    Ok(super::failure::EXIT_OK)
}

/// The script of a plain case: its params bound (each combination in turn), then its code.
fn code_script(case: &Case, code: &str) -> String {
    let mut out = header(case);
    let combos = case.param_combinations();
    let _ = writeln!(out, "import sys\nprint(sys.version.split()[0])");
    let _ = writeln!(out, "CODE = {}", python_text(code));
    let _ = writeln!(
        out,
        "for params in [{}]:",
        combos
            .iter()
            .map(|p| p.python_literal())
            .collect::<Vec<_>>()
            .join(", ")
    );
    out.push_str(&RUN_ONE.replace("{WHAT}", "params").replace("{DATA}", ""));
    out
}

/// The script of a round trip: the producers' pickles as bytes, and the `load` on each.
fn round_trip_script(
    case: &Case,
    dump: &str,
    load: &str,
    pickles: &[Pickle],
    refused: &[String],
) -> String {
    let mut out = header(case);
    out.push_str("# The pickles were made by this code, with the params beside each:\n");
    for line in dump.lines() {
        let _ = writeln!(out, "#     {line}");
    }
    for r in refused {
        let _ = writeln!(out, "# (it made no pickle on {r})");
    }
    let _ = writeln!(out, "import sys\nprint(sys.version.split()[0])");
    out.push_str("PICKLES = [\n");
    for p in pickles {
        let _ = writeln!(
            out,
            "    ({}, {}, {}),",
            python_text(&p.producer),
            p.params.python_literal(),
            crate::explore::source::bytes(&p.bytes)
        );
    }
    out.push_str("]\n");
    let _ = writeln!(out, "CODE = {}", python_text(load));
    out.push_str("for producer, params, data in PICKLES:\n");
    out.push_str(
        &RUN_ONE
            .replace("{WHAT}", "producer, params")
            .replace("{DATA}", "    scope[\"data\"] = data\n"),
    );
    out
}

/// Runs CODE with the params (and `data`) as globals, printing what it raised or `ok`.
const RUN_ONE: &str = r#"    scope = dict(params)
    scope["__name__"] = "__main__"
{DATA}    try:
        exec(compile(CODE, "<case>", "exec"), scope)
        result = "ok"
    except Exception as e:
        result = "%s: %s" % (type(e).__name__, str(e)[:300])
    print("%s -> %s" % (", ".join(str(x) for x in [{WHAT}]), result))
"#;

fn header(case: &Case) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}", case.title.replace('\n', " "));
    for link in &case.links {
        let _ = writeln!(out, "# {link}");
    }
    out.push_str("# Plain Python (2.7 and 3): run it with each interpreter to compare.\n");
    // The case's `support` files, made modules here: the script stands alone.
    for file in &case.support {
        let (Some(name), Ok(text)) = (
            file.file_stem().and_then(|n| n.to_str()),
            std::fs::read_to_string(file),
        ) else {
            continue;
        };
        let _ = writeln!(
            out,
            "import sys, types\n_m = types.ModuleType({name:?})\nexec(compile({}, {:?}, \"exec\"), _m.__dict__)\nsys.modules[{name:?}] = _m",
            python_text(&text),
            format!("{name}.py")
        );
    }
    out
}

/// The script's output on each interpreter (stdout, then stderr when it is not empty).
async fn run_everywhere(
    script: &str,
    on: &[Arc<Interpreter>],
    limit: Duration,
) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().ok();
    let path = dir.as_ref().map(|d| d.path().join("repro.py"));
    let mut outputs = Vec::new();
    let (Some(dir), Some(path)) = (&dir, path.filter(|p| std::fs::write(p, script).is_ok())) else {
        return outputs;
    };
    for python in on {
        let text = run_script(python, &path, &[], dir.path(), limit).await;
        outputs.push((python.label.clone(), text));
    }
    outputs
}

/// The script and its outputs, those that are the same grouped, as Markdown.
fn markdown(case: &Case, script: &str, outputs: &[(String, String)]) -> String {
    let mut out = format!("{}\n\n```python\n{}```\n", case.title, script);
    let mut groups: Vec<(Vec<&str>, &str)> = Vec::new();
    for (label, text) in outputs {
        // The first line is the version, different on every interpreter: compared without it.
        let body = text.split_once('\n').map_or("", |(_, rest)| rest);
        match groups
            .iter_mut()
            .find(|(_, t)| t.split_once('\n').map_or("", |(_, rest)| rest) == body)
        {
            Some((labels, _)) => labels.push(label),
            None => groups.push((vec![label], text)),
        }
    }
    for (labels, text) in groups {
        let _ = write!(
            out,
            "\nOutput on {}:\n\n```text\n{}",
            labels.join(", "),
            text
        );
        if !text.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("```\n");
    }
    out
}
