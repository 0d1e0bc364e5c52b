//! The terminal report: a progress bar while running (on a terminal only), then the matrix of
//! cases × interpreters, the details of every run that fails, and a summary line.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::results::{Results, RunRecord};
use crate::run::Event;
use crate::verdict::Verdict;

/// ANSI styling, off for `NO_COLOR`, `--color never` or a non-terminal.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    /// `choice` is `auto`, `always` or `never`.
    pub fn detect(choice: &str) -> Self {
        let color = match choice {
            "always" => true,
            "never" => false,
            _ => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        };
        Style { color }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub fn verdict(&self, v: Verdict, text: &str) -> String {
        let code = match v {
            Verdict::Ok => "32",
            Verdict::Xfail => "36",
            Verdict::Regression | Verdict::Changed | Verdict::Fixed => "1;31",
            Verdict::Skipped => "2",
            Verdict::EnvError => "1;35",
        };
        self.paint(code, text)
    }

    pub fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }

    pub fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }
}

pub struct TerminalReporter {
    style: Style,
    verbose: bool,
    progress: Option<ProgressBar>,
}

impl TerminalReporter {
    pub fn new(style: Style, verbose: bool) -> Self {
        TerminalReporter {
            style,
            verbose,
            progress: None,
        }
    }

    pub fn on_event(&mut self, event: Event<'_>) {
        match event {
            Event::Planned { plan } => {
                let bar = ProgressBar::with_draw_target(
                    Some(plan.runs.len() as u64),
                    ProgressDrawTarget::stderr(),
                );
                bar.set_style(
                    ProgressStyle::with_template(
                        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs {msg}",
                    )
                    .expect("valid template"),
                );
                if !std::io::stderr().is_terminal() {
                    bar.set_draw_target(ProgressDrawTarget::hidden());
                }
                self.progress = Some(bar);
            }
            Event::Finished { record, .. } => {
                if let Some(bar) = &self.progress {
                    bar.inc(1);
                    if record.verdict.fails_run() {
                        bar.set_message(self.style.verdict(record.verdict, "failures"));
                    }
                }
                if self.verbose {
                    let line = self.run_line(record);
                    match &self.progress {
                        Some(bar) => bar.suspend(|| crate::sys::stdout::emit(&format!("{line}\n"))),
                        None => crate::sys::stdout::emit(&format!("{line}\n")),
                    }
                }
            }
            Event::Stopping { reason } => {
                let line = self.style.bold(reason);
                match &self.progress {
                    Some(bar) => bar.suspend(|| eprintln!("{line}")),
                    None => eprintln!("{line}"),
                }
            }
        }
    }

    fn run_line(&self, r: &RunRecord) -> String {
        let verdict = self
            .style
            .verdict(r.verdict, &format!("{:<10}", r.verdict.as_str()));
        let time = r
            .observed
            .as_ref()
            .map(|o| format!("{:.2}s", o.duration_s))
            .unwrap_or_default();
        let what = match (&r.observed, &r.reason) {
            (Some(o), _) => o.summary(),
            (None, Some(reason)) => reason.clone(),
            _ => String::new(),
        };
        let what: String = what.chars().take(120).collect();
        format!(
            "{verdict} {} on {} {} {}",
            r.name(),
            r.python,
            self.style.dim(&time),
            self.style.dim(&what)
        )
    }

    /// The final report, printed to stdout.
    pub fn finish(&mut self, results: &Results) -> String {
        if let Some(bar) = self.progress.take() {
            bar.finish_and_clear();
        }
        let mut out = String::new();
        out.push_str(&matrix(results, self.style));
        if self.verbose {
            out.push_str(&columns_legend(results, self.style));
        }
        let failing: Vec<&RunRecord> = results
            .runs
            .iter()
            .filter(|r| r.verdict.fails_run())
            .collect();
        if !failing.is_empty() {
            let _ = writeln!(out, "\n{}", self.style.bold("Failures"));
            for r in failing {
                out.push_str(&details(r, results, self.style));
            }
        }
        out.push('\n');
        out.push_str(&summary(results, self.style));
        out.push('\n');
        out
    }
}

/// `2 ok, 1 regression, 3 skipped in 1.20s (6 runs, 2 interpreters)`
pub fn summary(results: &Results, style: Style) -> String {
    let counts = results.counts_text(|v, n| style.verdict(v, &format!("{n} {v}")));
    let mut line = format!(
        "{counts} in {:.2}s ({} runs, {} interpreters)",
        results.duration_s,
        results.runs.len(),
        results.interpreters.len()
    );
    if results.partial {
        let _ = write!(
            line,
            " — PARTIAL: {}",
            results.partial_reason.as_deref().unwrap_or("interrupted")
        );
    }
    line
}

/// Rows: cases with params (round trips: one row per producer); columns: interpreters.
pub fn matrix(results: &Results, style: Style) -> String {
    let columns: Vec<(String, String)> = results
        .interpreters
        .iter()
        .map(|i| {
            (
                i.label.clone(),
                if i.unusable.is_some() {
                    i.label.clone()
                } else {
                    i.short_label()
                },
            )
        })
        .collect();
    let mut rows: Vec<String> = Vec::new();
    let mut cells: HashMap<(String, String), Verdict> = HashMap::new();
    for r in &results.runs {
        let row = match &r.dump_python {
            Some(p) => format!("{} {} ->", base_name(r), short(results, p)),
            None => base_name(r),
        };
        if !rows.contains(&row) {
            rows.push(row.clone());
        }
        cells.insert((row, r.python.clone()), r.verdict);
    }
    let name_width = rows
        .iter()
        .map(|r| r.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 70);
    let mut out = String::new();
    let _ = write!(out, "{:name_width$}", "");
    for (_, header) in &columns {
        let _ = write!(out, " {header:>w$}", w = header.len().max(1));
    }
    out.push('\n');
    for row in &rows {
        let shown: String = if row.chars().count() > name_width {
            let cut: String = row.chars().take(name_width - 1).collect();
            format!("{cut}…")
        } else {
            row.clone()
        };
        let _ = write!(out, "{shown:name_width$}");
        for (label, header) in &columns {
            let w = header.len().max(1);
            let cell = match cells.get(&(row.clone(), label.clone())) {
                Some(v) => style.verdict(*v, &format!("{:>w$}", v.symbol())),
                None => format!("{:>w$}", " "),
            };
            let _ = write!(out, " {cell}");
        }
        out.push('\n');
    }
    let legend: Vec<String> = Verdict::ALL
        .iter()
        .map(|v| format!("{} {}", v.symbol(), v.as_str()))
        .collect();
    let _ = writeln!(out, "{}", style.dim(&legend.join("  ")));
    out
}

/// Which interpreter each column is: `3.11.2d = cpython-3.11.2+debug (/usr/bin/python3.11d)`.
pub fn columns_legend(results: &Results, style: Style) -> String {
    let lines: Vec<String> = results
        .interpreters
        .iter()
        .map(|i| {
            format!(
                "{} = {} ({})",
                i.short_label(),
                i.label,
                i.executable.display()
            )
        })
        .collect();
    style.dim(&lines.join("\n")) + "\n"
}

fn base_name(r: &RunRecord) -> String {
    if r.params.is_empty() {
        r.case.clone()
    } else {
        format!("{}[{}]", r.case, r.params)
    }
}

fn short(results: &Results, label: &str) -> String {
    results
        .interpreters
        .iter()
        .find(|i| i.label == label)
        .map(|i| i.short_label())
        .unwrap_or_else(|| label.to_string())
}

/// The details of one failing run: the rule, what happened, and the tails of its output.
pub fn details(r: &RunRecord, results: &Results, style: Style) -> String {
    let mut out = String::new();
    let head = format!(
        "{} {} on {}",
        r.verdict.as_str().to_uppercase(),
        r.name(),
        r.python
    );
    let _ = writeln!(out, "\n{}", style.verdict(r.verdict, &head));
    if let Some(info) = results.cases.get(&r.case) {
        let _ = writeln!(out, "  case:     {} ({})", info.title, info.path);
    }
    let _ = writeln!(
        out,
        "  expected: {}",
        crate::results::describe_expected(&r.expected)
    );
    if let Some(reason) = &r.expected.reason {
        let _ = writeln!(out, "            because {reason}");
    }
    match &r.observed {
        Some(o) => {
            let _ = writeln!(out, "  observed: {}", o.summary());
            if let Some(phase) = o.phase {
                let _ = writeln!(out, "  phase:    {phase}");
            }
            if let Some(tb) = &o.traceback {
                let _ = writeln!(out, "  traceback:\n{}", indent_tail(tb, 12));
            }
            for (name, text) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
                if !text.trim().is_empty() {
                    let _ = writeln!(out, "  {name} (tail):\n{}", indent_tail(text, 15));
                }
            }
        }
        None => {
            let _ = writeln!(out, "  reason:   {}", r.reason.as_deref().unwrap_or(""));
        }
    }
    out
}

fn indent_tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.trim_end().lines().collect();
    let start = all.len().saturating_sub(lines);
    let mut out = String::new();
    if start > 0 {
        let _ = writeln!(out, "    [... {start} lines above ...]");
    }
    for l in &all[start..] {
        let l: String = l.chars().take(300).collect();
        let _ = writeln!(out, "    {l}");
    }
    out.trim_end().to_string()
}
