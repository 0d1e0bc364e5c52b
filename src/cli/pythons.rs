//! `crosspickle pythons`: every interpreter found, usable or not, and why not.

use std::fmt::Write as _;
use std::time::Duration;

use super::{PythonOptions, EXIT_OK};
use crate::errors::Error;
use crate::python::discover::{self, Discovery};
use crate::python::probe::Prober;

/// Discover (and cache) the interpreters every command works with.
pub async fn discover_all(options: &PythonOptions) -> Result<(Discovery, Prober), Error> {
    let mut config = options.config()?;
    let cache_dir = options.cache_dir();
    if let Some(dir) = &cache_dir {
        let _ = std::fs::create_dir_all(dir);
        config.add_kept(dir);
    }
    let prober = Prober::new(
        cache_dir.as_deref(),
        Duration::from_secs_f64(options.probe_timeout),
        options.refresh,
    );
    let jobs = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .max(4);
    let discovery = discover::resolve(discover::candidates(&config), &prober, jobs).await;
    Ok((discovery, prober))
}

pub async fn pythons(options: &PythonOptions, json: bool) -> Result<i32, Error> {
    let (discovery, prober) = discover_all(options).await?;
    let requests = crate::python::request::split_requests(&options.python);
    let selection = crate::python::request::select(&discovery, &requests, &prober).await?;
    prober.save();
    let shown: Vec<_> = if requests.is_empty() {
        discovery.interpreters.clone()
    } else {
        selection.interpreters.clone()
    };
    if json {
        let value = serde_json::json!({ "interpreters": shown, "unusable": discovery.unusable });
        super::emit(&(serde_json::to_string_pretty(&value).expect("serializable") + "\n"));
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
        }
        flags.push(match &i.c_pickle {
            Some(m) => m.clone(),
            None => "no C pickle".to_string(),
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
    super::emit(&out);
    for m in &selection.missing {
        eprintln!("warning: no interpreter matches `{m}`");
    }
    Ok(EXIT_OK)
}
