//! `crosspickle pythons`: every interpreter found, usable or not, and why not.

use std::fmt::Write as _;

use super::args::PythonOptions;
use super::failure::{Failure, EXIT_OK};
use super::settings::{Given, Settings};
use crate::sys::stdout::emit;

pub async fn pythons(options: &PythonOptions, json: bool, verbose: bool) -> Result<i32, Failure> {
    let settings = Settings::resolve(Given {
        cache_dir: options.cache_dir.as_deref(),
        probe_timeout: options.probe_timeout,
        verbose,
        ..Given::default()
    })?;
    let chosen = super::interpreters::choose(options, &settings).await?;
    let (discovery, selection) = (&chosen.discovery, &chosen.selection);
    let shown: Vec<_> = if chosen.requests.is_empty() {
        discovery.interpreters.clone()
    } else {
        selection.interpreters.clone()
    };
    if json {
        emit(&crate::results::pythons::to_json(
            &shown,
            &discovery.unusable,
        ));
        return Ok(EXIT_OK);
    }
    let mut out = String::new();
    let width = shown.iter().map(|i| i.label.len()).max().unwrap_or(10);
    for i in &shown {
        if let Some(reason) = &i.unusable {
            let _ = writeln!(out, "{:width$}  unusable: {reason}", i.label);
            continue;
        }
        let mut flags = Vec::new();
        if i.debug {
            flags.push("debug".to_string());
        }
        if i.free_threaded {
            flags.push("free-threaded".to_string());
            flags.push(if i.gil_enabled { "GIL on" } else { "GIL off" }.to_string());
        } else if !i.gil_enabled {
            flags.push("GIL off".to_string());
        }
        flags.push(match (&i.c_pickle, i.c_pickle_used) {
            (Some(m), true) => m.clone(),
            (Some(m), false) => format!("{m} (pickle.Pickler is Python)"),
            (None, _) => "no C pickle".to_string(),
        });
        if let Some(n) = &i.name {
            flags.push(format!("name={n}"));
        }
        let _ = writeln!(
            out,
            "{:width$}  {}  [{}]  ({})",
            i.label,
            i.executable.display(),
            flags.join(", "),
            i.sources.join(", ")
        );
    }
    if !discovery.unusable.is_empty() {
        out.push_str("\nunusable:\n");
        for u in &discovery.unusable {
            let name = u
                .name
                .as_ref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {}{name}  [{}]: {}",
                u.path.display(),
                u.sources.join(", "),
                u.reason
            );
        }
    }
    emit(&out);
    for m in &selection.missing {
        eprintln!("warning: no interpreter matches `{m}`");
    }
    Ok(EXIT_OK)
}
