//! `--markdown FILE`: a summary for `$GITHUB_STEP_SUMMARY` (GitHub-flavoured Markdown): a
//! banner when the results are partial, the summary line, the matrix with one symbol per
//! verdict, the conflicts of a merge, then each failing run folded in `<details>`, and why the
//! skipped runs were skipped (folded, one line per run name and reason).
//!
//! GitHub takes at most 1 MiB per step summary: the matrix is kept to [`MATRIX`] bytes (its rows
//! with a failing run first, then as many others as fit, and a line saying how many were left
//! out), the details stop once the whole text reaches [`TOTAL`] bytes, and the summary says how
//! many failing runs were left out.

use std::fmt::Write as _;

use super::grid::Grid;
use super::text::{self, is_web_link, Budget};
use super::view::{self, RunView};
use crate::errors::Error;
use crate::results::Results;
use crate::verdict::Verdict;

/// Bytes of the whole summary before the details of failing runs stop.
pub const TOTAL: usize = 900 * 1024;
/// Bytes of details of one failing run.
pub const PER_RUN: usize = 8 * 1024;
/// Bytes of the matrix's rows.
pub const MATRIX: usize = 512 * 1024;

/// The symbol of a verdict in the matrix.
pub fn symbol(v: Verdict) -> &'static str {
    match v {
        Verdict::Ok => "✅",
        Verdict::Xfail => "☑️",
        Verdict::Regression => "❌",
        Verdict::Fixed => "⭕",
        Verdict::Changed => "⚠️",
        Verdict::Skipped => "➖",
        Verdict::EnvError => "💥",
        Verdict::Flaky => "🔁",
    }
}

const CONFLICT: &str = "❗";

pub fn write(path: &std::path::Path, results: &Results) -> Result<(), Error> {
    crate::sys::fs::write_atomic(path, render(results).as_bytes())
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))
}

pub fn render(results: &Results) -> String {
    let mut out = String::from("## crosspickle results\n\n");
    if results.partial {
        let reason = results.partial_reason.as_deref().unwrap_or("interrupted");
        let _ = writeln!(
            out,
            "> [!WARNING]\n> **Partial results**: {}. Not every planned run is here.\n",
            md_escape(&text::clean(reason))
        );
    }
    let _ = writeln!(out, "{}\n", summary_line(results));
    out.push_str(&matrix(results));
    if !results.conflicts.is_empty() {
        let _ = writeln!(
            out,
            "\n### {CONFLICT} Conflicts ({})\n",
            results.conflicts.len()
        );
        out.push_str("The merged inputs disagree about these runs; each counts as a failure.\n\n");
        for c in &results.conflicts {
            let name = c.name();
            let _ = writeln!(
                out,
                "- {} on {}: {}",
                md_escape(&name),
                md_escape(&c.python),
                md_escape(&text::clean_head(&c.describe(), 2048))
            );
        }
    }
    let failing: Vec<RunView<'_>> = view::views(results).filter(|v| v.fails()).collect();
    if !failing.is_empty() {
        let _ = writeln!(out, "\n### Failing runs ({})\n", failing.len());
        let mut budget = Budget::new(TOTAL.saturating_sub(out.len()), PER_RUN, 0);
        let mut left_out = 0;
        for v in &failing {
            if budget.exhausted() {
                left_out += 1;
                continue;
            }
            let block = details(v, budget.allowance());
            budget.spend(block.len());
            out.push_str(&block);
        }
        if left_out > 0 {
            let _ = writeln!(
                out,
                "\n{left_out} more failing runs are left out to keep this summary small: see the JSON, JUnit or HTML report.\n"
            );
        }
    }
    out.push_str(&flaky(results, TOTAL.saturating_sub(out.len())));
    out.push_str(&skipped(results, TOTAL.saturating_sub(out.len())));
    out
}

/// The runs that failed, then were as expected when run again (`--retries`): one line each
/// with every attempt, within `room` bytes.
fn flaky(results: &Results, room: usize) -> String {
    let flaky: Vec<_> = results
        .runs
        .iter()
        .filter(|r| r.verdict == Verdict::Flaky)
        .collect();
    if flaky.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n### {} Flaky runs ({}): failed, then as expected when run again\n\n",
        symbol(Verdict::Flaky),
        flaky.len()
    );
    let lines = flaky.into_iter().map(|r| {
        format!(
            "- {} on {}: attempts {}\n",
            md_escape(&text::clean(&r.name())),
            md_escape(&r.python),
            md_escape(&text::clean_head(&view::attempts_text(r), 1024))
        )
    });
    fill(&mut out, lines, room, 0);
    out
}

/// Appends each of `lines` to `out` that fits in `room` bytes, keeping `reserve` bytes for what
/// closes the section and 120 for the note, then says how many were left out.
fn fill(out: &mut String, lines: impl Iterator<Item = String>, room: usize, reserve: usize) {
    let mut left_out = 0;
    for line in lines {
        if out.len() + line.len() + reserve + 120 > room {
            left_out += 1;
            continue;
        }
        out.push_str(&line);
    }
    if left_out > 0 {
        let _ = writeln!(
            out,
            "\n{left_out} more are left out to keep this summary small."
        );
    }
}

/// Why runs were skipped, folded: `- name (on labels): reason`, one line per run name and
/// reason, within `room` bytes.
fn skipped(results: &Results, room: usize) -> String {
    let mut why: Vec<((String, String), Vec<&str>)> = Vec::new();
    for r in results
        .runs
        .iter()
        .filter(|r| r.verdict == Verdict::Skipped)
    {
        let name = crate::case::run_name(&r.case, &r.params, r.dump_python.as_deref(), None);
        let key = (name, r.reason.clone().unwrap_or_default());
        match why.iter_mut().find(|(k, _)| *k == key) {
            Some((_, labels)) => labels.push(&r.python),
            None => why.push((key, vec![&r.python])),
        }
    }
    if why.is_empty() {
        return String::new();
    }
    let count = results
        .runs
        .iter()
        .filter(|r| r.verdict == Verdict::Skipped)
        .count();
    let mut out = format!(
        "\n<details><summary>{} Skipped runs ({count}), and why</summary>\n\n",
        symbol(Verdict::Skipped)
    );
    let end = "\n</details>\n";
    let lines = why.iter().map(|((name, reason), labels)| {
        format!(
            "- {} (on {}): {}\n",
            md_escape(&text::clean(name)),
            md_escape(&labels.join(", ")),
            md_escape(&text::clean_head(reason, 512))
        )
    });
    fill(&mut out, lines, room, end.len());
    out.push_str(end);
    out
}

/// `**2 ok, 1 regression** in 1.20s: 6 runs on 2 interpreters`
fn summary_line(results: &Results) -> String {
    let counts = results.counts_text(|v, n| format!("{} {n} {v}", symbol(v)));
    let mut line = format!(
        "**{counts}** in {:.2}s: {} on {}",
        results.duration_s,
        text::count(results.runs.len(), "run", "runs"),
        text::count(results.interpreters.len(), "interpreter", "interpreters")
    );
    if !results.conflicts.is_empty() {
        let n = results.conflicts.len();
        let noun = if n == 1 { "conflict" } else { "conflicts" };
        let _ = write!(line, ", **{n} {CONFLICT} {noun}**");
    }
    if results.partial {
        line.push_str(" (**partial**)");
    }
    line
}

fn matrix(results: &Results) -> String {
    let grid = Grid::new(results);
    let mut out = String::from("| case |");
    for c in &grid.columns {
        let _ = write!(out, " {} |", md_escape(&c.header));
    }
    out.push_str("\n| :--- |");
    for _ in &grid.columns {
        out.push_str(" :-: |");
    }
    out.push('\n');
    let mut rows = Vec::with_capacity(grid.rows.len());
    for row in &grid.rows {
        let mut out = String::new();
        let mut failing = false;
        let name = md_escape(&text::clean(&row.name));
        let link = results
            .cases
            .get(&row.case)
            .filter(|_| row.check.is_none())
            .and_then(|i| i.links.iter().find(|l| is_web_link(l)));
        match link {
            Some(url) => {
                let _ = write!(out, "| [{name}]({}) |", text::link_target(url));
            }
            None => {
                let _ = write!(out, "| {name} |");
            }
        }
        for cell in &row.cells {
            let run = cell.map(|i| &results.runs[i]);
            match run.and_then(|r| Some((r, row.verdict(r)?))) {
                Some((r, v)) => {
                    let mark = if row.check.is_none() && results.conflict_for(r).is_some() {
                        CONFLICT
                    } else {
                        ""
                    };
                    failing |= row.fails(r) || !mark.is_empty();
                    let _ = write!(out, " {}{mark} |", symbol(v));
                }
                None => out.push_str("  |"),
            }
        }
        out.push('\n');
        rows.push((out, failing));
    }
    out.push_str(&bounded_rows(rows));
    let legend: Vec<String> = Verdict::ALL
        .iter()
        .map(|v| format!("{} {v}", symbol(*v)))
        .collect();
    let _ = writeln!(
        out,
        "\n<sub>{} · {CONFLICT} conflict between merged results</sub>",
        legend.join(" · ")
    );
    let named: Vec<String> = grid
        .columns
        .iter()
        .filter(|c| c.header != c.label)
        .map(|c| {
            let gil = c.interpreter.and_then(|i| i.gil_note());
            // Markdown-escaped: inside `<sub>` GitHub still renders Markdown, and a merged
            // JSON's label could be a link.
            format!(
                "{} = {}{}",
                md_escape(&c.header),
                md_escape(&c.label),
                gil.map(|n| format!(" ({})", md_escape(n))).unwrap_or_default()
            )
        })
        .collect();
    if !named.is_empty() {
        let _ = writeln!(out, "<sub>{}</sub>", named.join(" · "));
    }
    out
}

/// The matrix's rows within [`MATRIX`] bytes: all of them when they fit; otherwise those with a
/// failing run, then the others, as many as fit, in their order, and a line saying how many
/// were left out and where every run is.
fn bounded_rows(rows: Vec<(String, bool)>) -> String {
    let all: usize = rows.iter().map(|(r, _)| r.len()).sum();
    if all <= MATRIX {
        return rows.into_iter().map(|(r, _)| r).collect();
    }
    let mut keep = vec![false; rows.len()];
    let mut size = 0;
    for pass in [true, false] {
        for (i, (row, failing)) in rows.iter().enumerate() {
            if *failing == pass && !keep[i] && size + row.len() <= MATRIX {
                keep[i] = true;
                size += row.len();
            }
        }
    }
    let left: Vec<bool> = rows
        .iter()
        .zip(&keep)
        .filter(|(_, k)| !**k)
        .map(|((_, failing), _)| *failing)
        .collect();
    let mut out: String = rows
        .into_iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|((r, _), _)| r)
        .collect();
    let failing_left = left.iter().filter(|f| **f).count();
    let _ = writeln!(
        out,
        "\n{} of {} left out of this matrix to keep the summary under GitHub's 1 MiB ({} with a failing run; rows with one come first): every run is in the JSON, JUnit and HTML reports.",
        left.len(),
        text::count(keep.len(), "row", "rows"),
        failing_left
    );
    out
}

/// One failing run, folded: the summary line shows status, name and explanation; the body its
/// facts and output in a code block.
fn details(v: &RunView<'_>, allowance: usize) -> String {
    let mark = if v.conflict.is_some() {
        CONFLICT
    } else {
        symbol(v.verdict())
    };
    let mut out = format!(
        "<details><summary>{mark} <b>{}</b> <code>{}</code> on <code>{}</code>: {}</summary>\n\n",
        v.status(),
        text::html_line(&v.name),
        text::html_line(v.python()),
        text::html_line(&text::clean_head(&v.explanation(), 300))
    );
    let mut text_block = text::clean_head(&v.plain_facts(), allowance / 4);
    let left = allowance.saturating_sub(text_block.len());
    text_block.push_str(&v.plain_output(left));
    let fence = "`".repeat(longest_run(&text_block, '`').max(2) + 1);
    let _ = writeln!(out, "{fence}text\n{text_block}\n{fence}\n\n</details>\n");
    out
}

fn longest_run(text: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for x in text.chars() {
        run = if x == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// Plain text for a Markdown table cell ([`text::markdown`]): cleaned, on one line, every ASCII
/// punctuation character backslash-escaped (so `|`, `*`, `<` and `[` stay text).
pub fn md_escape(s: &str) -> String {
    text::markdown(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_keeps_what_fits_and_counts_the_rest() {
        let mut out = String::from("head\n");
        let lines = (0..10).map(|i| format!("- line {i}\n"));
        // Room for the head, three lines of 9 bytes and the 120 kept for the note.
        fill(&mut out, lines, 5 + 3 * 9 + 120, 0);
        assert!(out.starts_with("head\n- line 0\n- line 1\n- line 2\n"), "{out}");
        assert!(!out.contains("- line 3"), "{out}");
        assert!(out.ends_with("\n7 more are left out to keep this summary small.\n"), "{out}");
        // What closes the section is kept room for too.
        let mut closed = String::from("head\n");
        fill(&mut closed, (0..10).map(|i| format!("- line {i}\n")), 5 + 3 * 9 + 120, 9);
        assert!(closed.contains("- line 1\n") && !closed.contains("- line 2"), "{closed}");
    }

    #[test]
    fn stays_under_githubs_limit() {
        let results = crate::report::fixtures::failing(300, 20_000);
        let md = render(&results);
        assert!(md.len() < 1024 * 1024, "{} bytes", md.len());
        assert!(md.contains("more failing runs are left out"));
        assert!(!md.contains('\u{0}') && !md.contains('\u{1b}'));
    }

    #[test]
    fn escapes_table_text() {
        assert_eq!(
            md_escape("a|b*c<d>[e]_f\ng"),
            "a\\|b\\*c\\<d\\>\\[e\\]\\_f g"
        );
        assert_eq!(
            md_escape("case[protocol=5,x=a.b-c:d]"),
            "case\\[protocol=5,x=a.b-c:d\\]"
        );
    }

    #[test]
    fn fences_outlast_backticks() {
        assert_eq!(longest_run("a ``` b ````", '`'), 4);
    }
}
