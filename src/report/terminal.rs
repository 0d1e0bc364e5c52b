//! The terminal report: a progress bar while running (on a terminal only), then the matrix of
//! cases × interpreters ([`Grid`]), the details of every failing run ([`RunView`]), a
//! summary line, and (after a merge) the conflicts between the inputs.

use std::fmt::Write as _;
use std::io::IsTerminal;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::grid::Grid;
use super::text::one_line;
use super::view::{self, RunView};
use crate::results::{Results, RunRecord};
use crate::run::Event;
use crate::verdict::Verdict;

/// ANSI styling, off for `NO_COLOR`, `--color never` or a non-terminal.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    /// Colour as `forced` says, or, without it, when stdout is a terminal and `NO_COLOR` is
    /// not set.
    pub fn detect(forced: Option<bool>) -> Self {
        let color = forced.unwrap_or_else(|| {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        });
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
            Verdict::Flaky => "33",
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
    /// `-q`: no matrix and no details, the short summary and the summary line only.
    quiet: bool,
    /// `--durations N`: list the N slowest runs (0: all).
    durations: Option<usize>,
    /// The bars drawn beside the run's (environments being made), if any.
    beside: Option<MultiProgress>,
    /// How the matrix fits the terminal.
    layout: Layout,
}

impl TerminalReporter {
    pub fn new(style: Style, verbose: bool) -> Self {
        TerminalReporter {
            style,
            verbose,
            progress: None,
            quiet: false,
            durations: None,
            beside: None,
            layout: Layout::default(),
        }
    }

    /// The matrix fitted to `layout` (the terminal's width, `--failures-only`).
    pub fn with_layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    /// Draw the run's bar among `bars` (those of environments being made), not over them.
    pub fn beside(mut self, bars: MultiProgress) -> Self {
        self.beside = Some(bars);
        self
    }

    /// `-q` (no matrix, no details of runs) and `--durations N`.
    pub fn with_closing(mut self, quiet: bool, durations: Option<usize>) -> Self {
        self.quiet = quiet;
        self.durations = durations;
        self
    }

    pub fn on_event(&mut self, event: Event<'_>) {
        match event {
            Event::Planned { plan } => {
                let mut bar = ProgressBar::with_draw_target(
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
                } else if let Some(bars) = &self.beside {
                    bar = bars.add(bar);
                }
                self.progress = Some(bar);
            }
            Event::Finished { record, .. } => {
                if let Some(bar) = &self.progress {
                    bar.inc(1);
                    if record.fails() {
                        bar.set_message(self.style.verdict(record.shown_verdict(), "failures"));
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
            Event::Notice { text } => {
                let line = format!("warning: {}", super::text::clean(text));
                match &self.progress {
                    Some(bar) => bar.suspend(|| eprintln!("{line}")),
                    None => eprintln!("{line}"),
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
        let mut what: String = one_line(&r.summary()).chars().take(120).collect();
        if !r.attempts.is_empty() {
            // Tried more than once (`--repeat`, `--retries`): what the attempts did.
            what.push_str(&format!(" [{}]", view::counts_text(r)));
        }
        format!(
            "{verdict} {} on {} {} {}",
            one_line(&r.name()),
            one_line(&r.python),
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
        let failing: Vec<RunView<'_>> = view::views(results).filter(|v| v.fails()).collect();
        if !self.quiet {
            out.push_str(&self.full_report(results, &failing));
        }
        if let Some(n) = self.durations {
            out.push_str(&durations(results, n, self.style));
        }
        out.push_str(&short_summary(results, &failing, self.style));
        out.push('\n');
        out.push_str(&summary(results, self.style));
        out.push('\n');
        out.push_str(&conflicts(results, self.style));
        out
    }

    /// The matrix, the details of every failing run and of every flaky one.
    fn full_report(&self, results: &Results, failing: &[RunView<'_>]) -> String {
        let mut out = matrix(results, self.style, self.layout);
        if self.verbose {
            out.push_str(&columns_legend(results, self.style));
        }
        if !failing.is_empty() {
            let _ = writeln!(out, "\n{}", self.style.bold("Failures"));
            out.push_str(&grouped_details(failing, self.style));
        }
        let flaky: Vec<RunView<'_>> = view::views(results)
            .filter(|v| v.verdict() == Verdict::Flaky && v.conflict.is_none())
            .collect();
        if !flaky.is_empty() {
            let _ = writeln!(
                out,
                "\n{}",
                self.style
                    .bold("Flaky (failed, then as expected when run again)")
            );
            for v in &flaky {
                out.push_str(&details(v, self.style));
            }
        }
        out
    }
}

/// `--durations N`: the N slowest runs (all for 0), slowest first.
pub fn durations(results: &Results, n: usize, style: Style) -> String {
    let lines = super::rerun::slowest(results, n);
    let title = match n {
        0 => "Durations of every run, slowest first".to_string(),
        1 => "The slowest run".to_string(),
        n => format!("The {n} slowest runs"),
    };
    let mut out = format!("\n{}\n", style.bold(&title));
    for l in lines {
        let _ = writeln!(out, "{l}");
    }
    out
}

/// Pytest's short summary: each failing run in one line, then the arguments that select it
/// alone again after the same paths (see [`super::rerun`]).
pub fn short_summary(results: &Results, failing: &[RunView<'_>], style: Style) -> String {
    if failing.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n{}\n",
        style.bold(
            "Short summary (each with the arguments that run it again, after the same paths)"
        )
    );
    let names = super::rerun::Names::of(results);
    for v in failing.iter().take(SHORT_SUMMARY_RUNS) {
        let what: String = super::text::one_line(&v.explanation())
            .chars()
            .take(160)
            .collect();
        let head = super::text::one_line(&format!(
            "{} {} on {}",
            v.status().to_uppercase(),
            v.name,
            v.python()
        ));
        let args = super::rerun::rerun_args(results, &names, v.record);
        if v.record.verdict.fails_run() || v.conflict.is_some() {
            let _ = writeln!(out, "{}: {what}", style.verdict(v.verdict(), &head));
            let _ = writeln!(out, "  {}", super::text::one_line(&args));
        }
        // Each failing check on a line of its own, with the arguments of the run that makes it.
        for c in v.record.checks.iter().filter(|c| c.verdict.fails_run()) {
            let head = super::text::one_line(&format!(
                "{} {} check {} on {}",
                c.verdict.as_str().to_uppercase(),
                v.name,
                c.name,
                v.python()
            ));
            let what: String = super::text::one_line(&view::check_line(c))
                .chars()
                .take(160)
                .collect();
            let _ = writeln!(out, "{}: {what}", style.verdict(c.verdict, &head));
            let _ = writeln!(out, "  {}", super::text::one_line(&args));
        }
    }
    if failing.len() > SHORT_SUMMARY_RUNS {
        let _ = writeln!(
            out,
            "... and {} more failing runs (each is in the failures above and in the report files)",
            failing.len() - SHORT_SUMMARY_RUNS
        );
    }
    out
}

/// The failing runs the short summary lists at most: past that, a count (as the details,
/// every one of them is in the failures above and the report files).
const SHORT_SUMMARY_RUNS: usize = 200;

/// The conflicts between merged inputs (none for a run), a line each after a heading.
pub fn conflicts(results: &Results, style: Style) -> String {
    let mut out = String::new();
    if results.conflicts.is_empty() {
        return out;
    }
    let heading = format!(
        "{} between the inputs",
        super::text::count(results.conflicts.len(), "conflict", "conflicts")
    );
    let _ = writeln!(out, "\n{}", style.bold(&heading));
    for c in &results.conflicts {
        let _ = writeln!(
            out,
            "CONFLICT {} on {}: {}",
            super::text::one_line(&c.name()),
            super::text::one_line(&c.python),
            super::text::clean(&c.describe())
        );
    }
    out
}

/// `2 ok, 1 regression, 3 skipped in 1.20s (6 runs, 2 interpreters)`
pub fn summary(results: &Results, style: Style) -> String {
    let counts = results.counts_text(|v, n| style.verdict(v, &format!("{n} {v}")));
    let mut line = format!(
        "{counts} in {:.2}s ({}, {})",
        results.duration_s,
        super::text::count(results.runs.len(), "run", "runs"),
        super::text::count(results.interpreters.len(), "interpreter", "interpreters")
    );
    let checks = results.check_counts();
    if !checks.is_empty() {
        let each: Vec<String> = checks
            .iter()
            .map(|&(v, n)| style.verdict(v, &format!("{n} {v}")))
            .collect();
        let total: usize = checks.iter().map(|(_, n)| n).sum();
        let _ = write!(
            line,
            "; {}: {}",
            super::text::count(total, "named check", "named checks"),
            each.join(", ")
        );
    }
    if results.partial {
        let _ = write!(
            line,
            " — PARTIAL: {}",
            one_line(results.partial_reason.as_deref().unwrap_or("interrupted"))
        );
    }
    line
}

/// How the matrix fits the terminal: its width in columns, whether only the rows with a
/// failing run are shown (and why: `--failures-only`, `CI is set`), and whether names are kept
/// whole (off a terminal: a CI log is read by names, so a name is never cut, and columns that
/// do not fit beside the longest go in groups).
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub width: usize,
    pub failures_only: Option<&'static str>,
    pub keep_names: bool,
}

impl Default for Layout {
    /// 80 columns (a terminal of unknown width), every row.
    fn default() -> Self {
        Layout {
            width: 80,
            failures_only: None,
            keep_names: false,
        }
    }
}

/// The header is drawn again after this many rows.
const HEADER_EVERY: usize = 40;
/// The indent of a row's cells under its name, when names stand on lines of their own.
const STACKED_INDENT: usize = 2;
/// The narrowest matrix drawn, whatever the terminal says.
const MIN_WIDTH: usize = 40;

/// Rows: cases with params (round trips: one row per producer); columns: interpreters. Each
/// row is one line of at most `layout.width` characters: names too long are shortened in the
/// middle (`default-protocol…3.12.1 ->`), and columns that do not fit beside them are drawn
/// in groups, one after the other, each with the rows again; the header is repeated every
/// [`HEADER_EVERY`] rows.
pub fn matrix(results: &Results, style: Style, layout: Layout) -> String {
    let mut grid = Grid::new(results);
    // Names and labels from case files and JSON files: no escape sequence reaches the terminal.
    for row in &mut grid.rows {
        row.name = one_line(&row.name);
    }
    for column in &mut grid.columns {
        column.header = one_line(&column.header);
    }
    let total_rows = grid.rows.len();
    if layout.failures_only.is_some() {
        grid.rows.retain(|row| {
            row.cells
                .iter()
                .flatten()
                .any(|&i| row.fails(&results.runs[i]))
        });
    }
    let width = layout.width.max(MIN_WIDTH);
    let cells: Vec<usize> = grid
        .columns
        .iter()
        .map(|c| c.header.chars().count().max(1))
        .collect();
    let all_cells: usize = cells.iter().map(|w| w + 1).sum();
    let longest = grid.rows.iter().map(|r| r.name.chars().count()).max();
    let longest = longest.unwrap_or(4).max(4);
    // Every column beside names of at least a third of the width, else names of half the
    // width and the columns in groups.
    let beside = width.saturating_sub(all_cells);
    // Off a terminal, a name that leaves too little room for the cells beside it stands whole
    // on a line of its own, its cells on the next.
    let stacked = layout.keep_names && longest + all_cells > width && beside < longest;
    let name_width = if stacked {
        STACKED_INDENT
    } else if longest + all_cells <= width || layout.keep_names {
        longest
    } else if beside >= longest.min(width / 3) {
        beside
    } else {
        longest.min(width / 2)
    };
    let groups = match grid.rows.is_empty() && layout.failures_only.is_some() {
        true => Vec::new(),
        false => column_groups(&cells, width.saturating_sub(name_width)),
    };
    let mut out = String::new();
    for (g, group) in groups.iter().enumerate() {
        if groups.len() > 1 {
            let _ = writeln!(
                out,
                "{}",
                style.dim(&format!(
                    "interpreters {}-{} of {}:",
                    group.start + 1,
                    group.end,
                    cells.len()
                ))
            );
        }
        let mut header = format!("{:name_width$}", "");
        for (c, w) in grid.columns[group.clone()]
            .iter()
            .zip(&cells[group.clone()])
        {
            let _ = write!(header, " {:>w$}", shorten(&c.header, *w));
        }
        for (n, row) in grid.rows.iter().enumerate() {
            if n % HEADER_EVERY == 0 {
                let _ = writeln!(out, "{header}");
            }
            match stacked {
                true => {
                    let _ = write!(out, "{}\n{:name_width$}", row.name, "");
                }
                false => {
                    let _ = write!(out, "{:name_width$}", shorten(&row.name, name_width));
                }
            }
            for (cell, w) in row.cells[group.clone()].iter().zip(&cells[group.clone()]) {
                let w = *w;
                let cell = match cell.and_then(|i| row.verdict(&results.runs[i])) {
                    Some(v) => style.verdict(v, &format!("{:>w$}", v.symbol())),
                    None => format!("{:>w$}", " "),
                };
                let _ = write!(out, " {cell}");
            }
            out.push('\n');
        }
        if grid.rows.is_empty() {
            let _ = writeln!(out, "{header}");
        }
        if g + 1 < groups.len() {
            out.push('\n');
        }
    }
    if let Some(why) = layout.failures_only {
        let left = total_rows - grid.rows.len();
        let _ = writeln!(
            out,
            "{}",
            style.dim(&format!(
                "{} with no failing run not shown ({why})",
                super::text::count(left, "row", "rows")
            ))
        );
    }
    let legend: Vec<String> = Verdict::ALL
        .iter()
        .map(|v| format!("{} {}", v.symbol(), v.as_str()))
        .collect();
    let _ = writeln!(out, "{}", style.dim(&legend.join("  ")));
    out
}

/// The columns (each `cells[i]` wide, plus a space) split into consecutive groups that fit in
/// `room`; a column wider than `room` is a group of its own (its header is shortened).
fn column_groups(cells: &[usize], room: usize) -> Vec<std::ops::Range<usize>> {
    let mut groups = Vec::new();
    let (mut start, mut used) = (0, 0);
    for (i, w) in cells.iter().enumerate() {
        if used + w + 1 > room && i > start {
            groups.push(start..i);
            (start, used) = (i, 0);
        }
        used += w + 1;
    }
    groups.push(start..cells.len());
    groups
}

/// `text` in at most `width` characters: shortened in the middle, where an ellipsis keeps its
/// start and its end (the params and the producer, which tell rows apart).
fn shorten(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width {
        return text.to_string();
    }
    if width < 2 {
        return text.chars().take(width).collect();
    }
    let tail = (width - 1) / 2;
    let head = width - 1 - tail;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// Which interpreter each column is: `3.11.2d = cpython-3.11.2+debug (/usr/bin/python3.11d)`,
/// and a free-threaded build's GIL state (`3.13.15t = … (…), free-threaded, GIL off`).
pub fn columns_legend(results: &Results, style: Style) -> String {
    let lines: Vec<String> = results
        .interpreters
        .iter()
        .map(|i| {
            format!(
                "{} = {} ({}){}",
                one_line(&i.short_label()),
                one_line(&i.label),
                one_line(&i.executable.display().to_string()),
                i.gil_note().map(|n| format!(", {n}")).unwrap_or_default()
            )
        })
        .collect();
    style.dim(&lines.join("\n")) + "\n"
}

/// The interpreters (or runs) a group's heading names; past them, a count.
const GROUP_LISTS: usize = 12;

/// Facts that differ from run to run of one mistake: left out of what groups runs together.
const PER_RUN: [&str; 2] = ["duration", "pair"];

/// The failing runs grouped by case, deciding rule, status and facts (the interpreters aside),
/// each group's details once with its interpreters listed in its heading: one mistyped rule
/// failing on six interpreters is one block, not six. A group of one run is [`details`].
pub fn grouped_details(failing: &[RunView<'_>], style: Style) -> String {
    let key = |v: &RunView<'_>| {
        let facts: Vec<String> = v
            .brief_facts()
            .filter(|f| !PER_RUN.contains(&f.label))
            .map(|f| format!("{}={}", f.label, f.value.plain()))
            .collect();
        (
            v.record.case.clone(),
            v.record.expected.line,
            v.status(),
            facts,
        )
    };
    let mut groups: Vec<(_, Vec<&RunView<'_>>)> = Vec::new();
    for v in failing {
        let k = key(v);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, runs)) => runs.push(v),
            None => groups.push((k, vec![v])),
        }
    }
    let mut out = String::new();
    for (_, runs) in &groups {
        match runs.as_slice() {
            [one] => out.push_str(&details(one, style)),
            many => out.push_str(&group_details(many, style)),
        }
    }
    out
}

/// One group of failing runs (more than one): a heading naming the case (or the run, when
/// all share it), the rule's line and every interpreter once, the shared facts, then each
/// distinct traceback and output once, with the runs it came from when they differ.
fn group_details(runs: &[&RunView<'_>], style: Style) -> String {
    let first = runs[0];
    let same_name = runs.iter().all(|v| v.name == first.name);
    let who = |v: &RunView<'_>| -> String {
        let r = v.record;
        let mut who = match (&r.dump_python, &r.load_python) {
            (Some(d), Some(l)) if !same_name => format!("{d} -> {l}"),
            _ => r.python.clone(),
        };
        if !same_name && !r.params.is_empty() {
            who.push_str(&format!(" [{}]", r.params));
        }
        one_line(&who)
    };
    let whos: Vec<String> = runs.iter().map(|v| who(v)).collect();
    let name = match same_name {
        true => one_line(&first.name),
        false => one_line(&first.record.case),
    };
    let noun = match same_name {
        true => "interpreters",
        false => "runs",
    };
    let mut listed = whos[..whos.len().min(GROUP_LISTS)].join(", ");
    if whos.len() > GROUP_LISTS {
        let _ = write!(listed, " and {} more", whos.len() - GROUP_LISTS);
    }
    let head = format!(
        "{} {name} on {} {noun}: {listed}",
        first.status().to_uppercase(),
        runs.len(),
    );
    let mut out = String::new();
    let _ = writeln!(out, "\n{}", style.verdict(first.verdict(), &head));
    for fact in first.brief_facts().filter(|f| !PER_RUN.contains(&f.label)) {
        let label = format!("{}:", fact.label);
        let _ = writeln!(
            out,
            "  {label:<11}{}",
            super::text::clean(&fact.value.plain())
        );
    }
    // Each distinct output once, with the runs that left it.
    let mut outputs: Vec<(&[view::Section<'_>], Vec<&str>)> = Vec::new();
    for (v, w) in runs.iter().zip(&whos) {
        match outputs.iter_mut().find(|(o, _)| *o == v.output.as_slice()) {
            Some((_, ws)) => ws.push(w),
            None => outputs.push((v.output.as_slice(), vec![w])),
        }
    }
    let several = outputs.len() > 1;
    for (sections, ws) in &outputs {
        if several {
            let _ = writeln!(out, "  {}", style.dim(&format!("on {}:", ws.join(", "))));
        }
        out.push_str(&output_sections(sections));
    }
    out
}

/// The details of one failing run: its facts, then the last lines of its traceback and output.
pub fn details(view: &RunView<'_>, style: Style) -> String {
    let mut out = String::new();
    let head = format!(
        "{} {} on {}",
        view.status().to_uppercase(),
        one_line(&view.name),
        one_line(view.python())
    );
    let _ = writeln!(out, "\n{}", style.verdict(view.verdict(), &head));
    for fact in view.brief_facts() {
        let label = format!("{}:", fact.label);
        let _ = writeln!(
            out,
            "  {label:<11}{}",
            super::text::clean(&fact.value.plain())
        );
    }
    out.push_str(&output_sections(&view.output));
    out
}

/// The last lines of a run's traceback and output, each under its name.
fn output_sections(sections: &[view::Section<'_>]) -> String {
    let mut out = String::new();
    for section in sections {
        let (title, lines) = match section.name {
            "traceback" | "check traceback" => (section.name.to_string(), 12),
            name => (format!("{name} (tail)"), 15),
        };
        let text = super::text::clean(section.text);
        let _ = writeln!(out, "  {title}:\n{}", indent_tail(&text, lines));
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
