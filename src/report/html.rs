//! `--html FILE`: one self-contained page (inline style and script, a Content-Security-Policy
//! that loads nothing from the network): the matrix of cases × interpreters coloured by
//! verdict ([`Grid`]), filters by verdict and tag, and the details of each run opened by
//! clicking its cell: every fact of its [`RunView`] (the brief ones and the full ones: links,
//! exception, message, signal, tags), then its traceback and output.
//!
//! Every text from the results is cleaned ([`text::clean`]) and HTML-escaped; links are made
//! only of http(s) URLs. The page honours a URL fragment on load and when it changes:
//! `#open=<cell-id>` clicks that cell, `verdict=regression,changed` and `tag=gc` set the
//! filters (joined with `&`). Cell ids are `cell-<name>--<label>`, with every character
//! outside `[A-Za-z0-9._-]` of the run's name and label replaced by `_`.

use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;

use super::grid::{Grid, Row};
use super::text::{self, escape, is_web_link, Budget};
use super::view::{self, RunView, Value};
use crate::errors::Error;
use crate::results::{CaseInfo, Results, RunRecord};
use crate::verdict::Verdict;

/// Bytes of text (message, traceback, output) the details of one run may carry.
pub const PER_RUN: usize = 96 * 1024;
/// Bytes of text the whole page may carry before each run is cut to [`MIN_PER_RUN`].
pub const TOTAL: usize = 24 * 1024 * 1024;
pub const MIN_PER_RUN: usize = 2 * 1024;
/// Above this many runs, the runs that went as expected (ok) get no details of their own: their
/// cell says how they ended, and one shared section shows it.
pub const OK_DETAILS_UP_TO: usize = 1000;
/// Bytes the page is kept to, about: the matrix (some 300 bytes a cell) first, the details of
/// the runs that did not go as expected in what is left, each at least [`FLOOR`].
pub const PAGE: usize = 48 * 1000 * 1000;
const FLOOR: usize = 256;

pub fn write(path: &std::path::Path, results: &Results) -> Result<(), Error> {
    crate::sys::fs::write_atomic(path, render(results).as_bytes())
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))
}

/// Cleaned, then escaped.
fn t(s: &str) -> String {
    escape(&text::clean(s))
}

/// `[A-Za-z0-9._-]` kept, anything else `_`.
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The id of a run's cell: `cell-<name>--<label>`.
pub fn cell_id(r: &RunRecord) -> String {
    format!("cell-{}--{}", slug(&r.name()), slug(&r.python))
}

pub fn render(results: &Results) -> String {
    let mut grid = Grid::new(results);
    // The rows with a failing run first (in their order), so the page opens on them: each
    // with its checks' rows, which are judged with it.
    let mut fails = false;
    let keys: Vec<bool> = grid
        .rows
        .iter()
        .map(|row| {
            if row.check.is_none() {
                fails = row_fails(results, row);
            }
            !fails
        })
        .collect();
    let mut keyed: Vec<(bool, Row)> = keys.into_iter().zip(grid.rows).collect();
    keyed.sort_by_key(|(key, _)| *key);
    grid.rows = keyed.into_iter().map(|(_, row)| row).collect();
    let ids = cell_ids(results);
    let mut out = String::with_capacity(64 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let title = if results.partial {
        "crosspickle results (partial)"
    } else {
        "crosspickle results"
    };
    let _ = writeln!(
        out,
        "<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>"
    );
    let _ = writeln!(out, "<header>\n<h1>{title}</h1>");
    if results.partial {
        let reason = results.partial_reason.as_deref().unwrap_or("interrupted");
        let _ = writeln!(
            out,
            "<p class=\"banner partial\" id=\"partial\"><strong>Partial results:</strong> {}. Not every planned run is here.</p>",
            t(reason)
        );
    }
    out.push_str(&summary(results));
    let omit_ok = results.runs.len() > OK_DETAILS_UP_TO;
    if omit_ok {
        let _ = writeln!(
            out,
            "<p class=\"note\" id=\"holds\">This page holds the details of every run that did not go as expected ({} runs in all: the details of those that went as expected are left out, their cells say so); every run is in the JSON report.</p>",
            results.runs.len()
        );
    }
    out.push_str(&conflicts(results, &ids));
    out.push_str("</header>\n");
    out.push_str(&filters(results));
    out.push_str(&matrix(results, &grid, &ids));
    out.push_str(&interpreters(results));

    out.push_str("<aside id=\"details-panel\" hidden aria-live=\"polite\">\n<button type=\"button\" id=\"close-details\" aria-label=\"Close\">×</button>\n");
    let detailed = |v: &RunView<'_>| !omit_ok || v.verdict() != Verdict::Ok || v.conflict.is_some();
    let mut budget = details_budget(results, view::views(results).filter(detailed).count());
    for (v, id) in view::views(results).zip(&ids) {
        if !detailed(&v) {
            continue;
        }
        let info = results.cases.get(&v.record.case);
        let section = details(&v, info, id, budget.allowance());
        budget.spend(section.len());
        out.push_str(&section);
    }
    if omit_ok {
        out.push_str("<section id=\"details-ok\" class=\"details\" hidden>\n<h2><span class=\"chip v-ok\">ok</span> <span class=\"what\"></span></h2>\n<p>This run went as expected; its details are left out of a page of this many runs (they are in the JSON report).</p>\n</section>\n");
    }
    out.push_str("</aside>\n");
    let _ = writeln!(out, "<script>{SCRIPT}</script>\n</body>\n</html>");
    out
}

/// The budget of the details' text: [`TOTAL`], or what the matrix leaves of [`PAGE`], with at
/// least [`FLOOR`] (up to [`MIN_PER_RUN`]) set aside for each of the `detailed` runs.
fn details_budget(results: &Results, detailed: usize) -> Budget {
    let room = PAGE.saturating_sub(results.runs.len() * 300);
    let floor = (room / 2 / detailed.max(1)).clamp(FLOOR, MIN_PER_RUN);
    let total = TOTAL.min(room.saturating_sub(floor * detailed));
    Budget::new(total, PER_RUN.min(total.max(floor)), floor)
}

/// The id of each run's cell, unique, in run order.
fn cell_ids(results: &Results) -> Vec<String> {
    let mut ids: Vec<String> = Vec::with_capacity(results.runs.len());
    let mut taken: HashSet<String> = HashSet::new();
    for r in &results.runs {
        let base = cell_id(r);
        let mut id = base.clone();
        let mut n = 2;
        while !taken.insert(id.clone()) {
            id = format!("{base}-{n}");
            n += 1;
        }
        ids.push(id);
    }
    ids
}

/// The banner listing the runs merged inputs disagree about, each linking to its cell.
fn conflicts(results: &Results, ids: &[String]) -> String {
    if results.conflicts.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<div class=\"banner conflicts\" id=\"conflicts\"><strong>{} conflicts between merged results</strong> (each counts as a failure):<ul>\n",
        results.conflicts.len()
    );
    for c in &results.conflicts {
        let run = results.runs.iter().position(|r| c.concerns(r));
        let name = match run {
            Some(i) => format!(
                "<a href=\"#open={}\">{}</a>",
                escape(&ids[i]),
                t(&results.runs[i].name())
            ),
            None => t(&c.case),
        };
        let _ = writeln!(
            out,
            "<li>{name} on {}: {}</li>",
            t(&c.python),
            escape(&text::clean_head(&c.describe(), 4096))
        );
    }
    out.push_str("</ul></div>\n");
    out
}

fn summary(results: &Results) -> String {
    let mut out = String::from("<p class=\"summary\" id=\"summary\">");
    for (v, n) in results.counts() {
        let _ = write!(out, "<span class=\"chip v-{v}\">{n} {v}</span> ");
    }
    if results.runs.is_empty() {
        out.push_str("no runs ");
    }
    let _ = write!(
        out,
        "in {:.2}s: {} on {}, crosspickle {}",
        results.duration_s,
        text::count(results.runs.len(), "run", "runs"),
        text::count(results.interpreters.len(), "interpreter", "interpreters"),
        t(&results.crosspickle_version)
    );
    out.push_str("</p>\n");
    out
}

fn filters(results: &Results) -> String {
    let counts = results.counts();
    let mut out = String::from(
        "<form id=\"filters\" onsubmit=\"return false\">\n<fieldset><legend>Verdicts</legend>\n",
    );
    for (v, n) in &counts {
        let _ = writeln!(
            out,
            "<label class=\"chip v-{v}\"><input type=\"checkbox\" name=\"verdict\" value=\"{v}\" checked> {v} ({n})</label>"
        );
    }
    out.push_str("<button type=\"button\" id=\"only-failing\">failing only</button> <button type=\"button\" id=\"show-all\">all</button>\n</fieldset>\n");
    let tags: BTreeSet<&String> = results.cases.values().flat_map(|c| c.tags.iter()).collect();
    if !tags.is_empty() {
        out.push_str("<fieldset><legend>Tags (any of)</legend>\n");
        for tag in tags {
            let _ = writeln!(
                out,
                "<label><input type=\"checkbox\" name=\"tag\" value=\"{}\"> {}</label>",
                t(tag),
                t(tag)
            );
        }
        out.push_str("</fieldset>\n");
    }
    out.push_str("</form>\n");
    out
}

fn matrix(results: &Results, grid: &Grid<'_>, ids: &[String]) -> String {
    let mut out = String::new();
    let failing = grid
        .rows
        .iter()
        .filter(|r| r.check.is_none() && row_fails(results, r))
        .count();
    if failing > 0 {
        let _ = writeln!(
            out,
            "<p class=\"note\" id=\"failing-first\">{} with a failing run first, then the {} others.</p>",
            text::count(failing, "row", "rows"),
            grid.rows.iter().filter(|r| r.check.is_none()).count() - failing
        );
    }
    out.push_str("<div id=\"matrix-wrap\">\n<table id=\"matrix\">\n<thead><tr><th scope=\"col\">case</th>");
    for c in &grid.columns {
        let title = match c.interpreter {
            Some(i) => format!("{} ({})", c.label, i.executable.display()),
            None => c.label.clone(),
        };
        let _ = write!(
            out,
            "<th scope=\"col\" title=\"{}\">{}</th>",
            t(&title),
            t(&c.header)
        );
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &grid.rows {
        out.push_str(&row_header(results, row));
        out.push_str("</th>");
        for cell in &row.cells {
            let shown = cell.and_then(|i| Some((i, row.verdict(&results.runs[i])?)));
            match (shown, &row.check) {
                (Some((i, v)), Some(check)) => {
                    // A check's cell opens its run's details, where the check is told.
                    let r = &results.runs[i];
                    let label = format!("{} :: {check} on {}: {v}", r.name(), r.python);
                    let _ = write!(
                        out,
                        "<td><button type=\"button\" class=\"cell check v-{v}\" data-verdict=\"{v}\" data-details=\"details-{}\" title=\"{}\" aria-expanded=\"false\">{}</button></td>",
                        escape(&ids[i]),
                        t(&label),
                        v.symbol(),
                    );
                }
                (Some((i, v)), None) => {
                    let r = &results.runs[i];
                    let conflict = results.conflict_for(r).is_some();
                    let label = format!("{} on {}: {}", r.name(), r.python, v);
                    let _ = write!(
                        out,
                        "<td><button type=\"button\" class=\"cell v-{v}{}\" id=\"{}\" data-verdict=\"{v}\" data-details=\"details-{}\" title=\"{}\" aria-expanded=\"false\">{}{}</button></td>",
                        if conflict { " conflict" } else { "" },
                        escape(&ids[i]),
                        escape(&ids[i]),
                        t(&label),
                        v.symbol(),
                        if conflict { "!" } else { "" }
                    );
                }
                (None, _) => out.push_str("<td></td>"),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</div>\n<p class=\"legend\">");
    for v in Verdict::ALL {
        let _ = write!(out, "<span class=\"chip v-{v}\">{} {v}</span> ", v.symbol());
    }
    out.push_str("<span class=\"chip conflict\">! conflict</span></p>\n");
    out
}

/// Whether a row holds a run that fails (or that merged inputs disagree about).
fn row_fails(results: &Results, row: &Row) -> bool {
    row.cells.iter().flatten().any(|&i| {
        let r = &results.runs[i];
        row.fails(r) || (row.check.is_none() && results.conflict_for(r).is_some())
    })
}

/// A row's opening and its header cell: the case named and linked to its first web link,
/// the other links numbered, its title; its tags for the filters.
fn row_header(results: &Results, row: &Row) -> String {
    let info = results.cases.get(&row.case);
    let tags: Vec<String> = info.map(|i| i.tags.clone()).unwrap_or_default();
    let tags_json = serde_json::to_string(&tags).unwrap_or_else(|_| "[]".into());
    let failing = match row_fails(results, row) {
        true => " class=\"failing\"",
        false => "",
    };
    let mut out = format!(
        "<tr data-tags=\"{}\"{failing}><th scope=\"row\">",
        t(&tags_json)
    );
    if row.check.is_some() {
        // A named check's row, under its run's: its name alone.
        let _ = write!(out, "<span class=\"check-name\">{}</span>", t(&row.name));
        return out;
    }
    let links: Vec<&String> = info
        .map(|i| i.links.iter().filter(|l| is_web_link(l)).collect())
        .unwrap_or_default();
    match links.first() {
        Some(url) => {
            let _ = write!(
                out,
                "<a class=\"case-link\" href=\"{}\">{}</a>",
                escape(url.trim()),
                t(&row.name)
            );
        }
        None => {
            let _ = write!(out, "<span class=\"case-name\">{}</span>", t(&row.name));
        }
    }
    for (n, url) in links.iter().enumerate().skip(1) {
        let _ = write!(
            out,
            " <a class=\"more-link\" href=\"{}\">[{}]</a>",
            escape(url.trim()),
            n + 1
        );
    }
    if let Some(info) = info {
        let _ = write!(out, "<div class=\"case-title\">{}</div>", t(&info.title));
    }
    out
}

fn interpreters(results: &Results) -> String {
    if results.interpreters.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<details id=\"interpreters\"><summary>Interpreters</summary>\n<table><thead><tr><th>label</th><th>version</th><th>implementation</th><th>executable</th><th>found by</th><th>note</th></tr></thead><tbody>\n",
    );
    for i in &results.interpreters {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            t(&i.label),
            t(&i.version.to_string()),
            i.implementation,
            i.implementation_version.as_deref().map(|v| format!(" {}", t(v))).unwrap_or_default(),
            t(&i.executable.display().to_string()),
            t(&i.sources.join(", ")),
            t(i.unusable.as_deref().or(i.gil_note()).unwrap_or(""))
        );
    }
    out.push_str("</tbody></table></details>\n");
    out
}

/// The hidden section a cell opens: the run's facts, then its traceback and output.
fn details(
    v: &RunView<'_>,
    info: Option<&CaseInfo>,
    id: &str,
    allowance: usize,
) -> String {
    let mut out = format!(
        "<section id=\"details-{}\" class=\"details\" hidden>\n<h2><span class=\"chip v-{}{}\">{}</span> {} <small>on {}</small></h2>\n<dl>\n",
        escape(id),
        v.verdict(),
        if v.conflict.is_some() { " conflict" } else { "" },
        v.status(),
        t(&v.name),
        t(v.python())
    );
    for fact in &v.facts {
        let _ = writeln!(
            out,
            "<dt>{}</dt><dd class=\"{}\">{}</dd>",
            fact.label,
            fact.label.replace(' ', "-"),
            value(&fact.value, allowance / 8)
        );
    }
    out.push_str("</dl>\n");
    let each = allowance / (v.output.len() + 2);
    if v.fails() {
        out.push_str(&source(v, info, each));
    }
    for section in &v.output {
        let _ = writeln!(
            out,
            "<h3>{name}</h3>\n<pre class=\"{name}\">{}</pre>",
            escape(&section.cut(each)),
            name = section.name
        );
    }
    out.push_str("</section>\n");
    out
}

/// The case file, its lines numbered, the line of the rule that decided the run marked (and
/// scrolled to when the run is opened), in at most `budget` bytes around that line; nothing
/// when the results do not hold the file (a report of merged JSON).
fn source(v: &RunView<'_>, info: Option<&CaseInfo>, budget: usize) -> String {
    let Some((info, text)) = info.and_then(|i| Some((i, i.source.as_deref()?))) else {
        return String::new();
    };
    let rule = v.record.expected.line;
    let lines: Vec<&str> = text.lines().collect();
    // Lines around the rule's, as many as the budget holds (about 80 bytes a line).
    let room = (budget / 80).max(20);
    let centre = rule.unwrap_or(1).saturating_sub(1);
    let start = centre.saturating_sub(room / 2);
    let end = (start + room).min(lines.len());
    let mut out = format!(
        "<h3>case file <small>{}{}</small></h3>\n<pre class=\"source\">",
        t(&info.path),
        rule.map(|l| format!(", the rule that decided it at line {l}"))
            .unwrap_or_default()
    );
    for (n, line) in lines.iter().enumerate().take(end).skip(start) {
        let number = n + 1;
        let marked = match Some(number) == rule {
            true => " rule",
            false => "",
        };
        let _ = write!(
            out,
            "<span class=\"line{marked}\" data-line=\"{number}\"><span class=\"n\">{number:>4}</span> {}</span>",
            t(line)
        );
    }
    out.push_str("</pre>\n");
    out
}

/// A fact's value as HTML; a block gets at most `block_budget` bytes.
fn value(value: &Value, block_budget: usize) -> String {
    match value {
        Value::Text(s) => t(s),
        Value::Noted(s, note) => format!("{} <small>{}</small>", t(s), t(note)),
        Value::Code(s) => format!("<code>{}</code>", t(s)),
        Value::Block(s) => format!("<pre>{}</pre>", escape(&text::clean_head(s, block_budget))),
        Value::Links(links) => {
            let links: Vec<String> = links
                .iter()
                .map(|l| {
                    if is_web_link(l) {
                        format!("<a href=\"{}\">{}</a>", escape(l.trim()), t(l))
                    } else {
                        t(l)
                    }
                })
                .collect();
            links.join("<br>")
        }
    }
}

const STYLE: &str = r#"
:root { --ok:#1a7f37; --xfail:#0a7ea4; --regression:#cf222e; --fixed:#bc4c00; --changed:#8250df; --skipped:#8c959f; --env-error:#a40e26; --flaky:#9a6700; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 1.5rem 2rem; color: #1f2328; }
h1 { font-size: 1.5rem; margin: 1rem 0 .5rem; }
.banner { padding: .6rem .8rem; border-radius: 6px; margin: .5rem 0; }
.banner.partial { background: #fff8c5; border: 1px solid #d4a72c; }
.banner.conflicts { background: #ffebe9; border: 1px solid #cf222e; }
.chip { display: inline-block; padding: 0 .45rem; border-radius: 1rem; color: #fff; margin: .1rem 0; }
.chip.v-ok { background: var(--ok); } .chip.v-xfail { background: var(--xfail); }
.chip.v-regression { background: var(--regression); } .chip.v-fixed { background: var(--fixed); }
.chip.v-changed { background: var(--changed); } .chip.v-skipped { background: var(--skipped); }
.chip.v-env-error { background: var(--env-error); } .chip.v-flaky { background: var(--flaky); } .chip.conflict { background: #000; }
form fieldset { display: inline-block; border: 1px solid #d0d7de; border-radius: 6px; margin: 0 .5rem .5rem 0; }
form label { margin-right: .4rem; cursor: pointer; }
table#matrix { border-collapse: collapse; margin-top: .5rem; }
#matrix th, #matrix td { border: 1px solid #d0d7de; padding: 2px 4px; text-align: center; }
#matrix thead th { position: sticky; top: 0; background: #f6f8fa; font-weight: 600; }
#matrix tbody th { text-align: left; font-weight: normal; max-width: 38rem; }
.case-title { color: #656d76; font-size: .85em; }
.check-name { white-space: pre; }
.cell { width: 2.2rem; height: 1.8rem; border: 0; border-radius: 4px; color: #fff; font: bold 13px ui-monospace, monospace; cursor: pointer; }
.cell.v-ok { background: var(--ok); } .cell.v-xfail { background: var(--xfail); }
.cell.v-regression { background: var(--regression); } .cell.v-fixed { background: var(--fixed); }
.cell.v-changed { background: var(--changed); } .cell.v-skipped { background: var(--skipped); }
.cell.v-env-error { background: var(--env-error); } .cell.v-flaky { background: var(--flaky); }
.cell.conflict { outline: 3px dashed #000; }
.cell.dim { opacity: .15; }
.cell.selected { outline: 3px solid #0969da; outline-offset: 1px; }
body.panel-open { margin-right: calc(min(44rem, 50vw) + 1.5rem); }
#details-panel { position: fixed; top: 0; right: 0; bottom: 0; width: min(44rem, 50vw); overflow: auto; background: #fff; border-left: 2px solid #d0d7de; box-shadow: -4px 0 12px rgba(0,0,0,.12); padding: 0 1rem 1rem; }
#close-details { position: sticky; top: .5rem; float: right; font-size: 1.4rem; border: 0; background: none; cursor: pointer; }
.details h2 { font-size: 1.1rem; margin-top: 1rem; }
.details dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem .8rem; }
.details dt { font-weight: 600; } .details dd { margin: 0; overflow-wrap: anywhere; }
.details pre { background: #f6f8fa; padding: .5rem; overflow: auto; max-height: 24rem; white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
.legend { color: #656d76; }
#matrix-wrap { overflow-x: auto; max-width: 100%; }
#matrix tr.failing th { border-left: 4px solid var(--regression); }
.note { color: #656d76; }
.details pre.source { max-height: 30rem; white-space: pre; }
.source .line { display: block; }
.source .n { color: #8c959f; user-select: none; }
.source .line.rule { background: #ffebe9; outline: 1px solid #cf222e; font-weight: 600; }
"#;

const SCRIPT: &str = r#"
(function () {
  'use strict';
  var panel = document.getElementById('details-panel');
  function cells() { return Array.prototype.slice.call(document.querySelectorAll('#matrix .cell')); }
  function boxes(name) { return Array.prototype.slice.call(document.querySelectorAll('#filters input[name="' + name + '"]')); }
  function setHash() {
    var parts = [];
    if (panel.dataset.open) parts.push('open=' + encodeURIComponent(panel.dataset.open));
    var v = boxes('verdict');
    if (v.some(function (b) { return !b.checked; })) parts.push('verdict=' + v.filter(function (b) { return b.checked; }).map(function (b) { return b.value; }).join(','));
    var tags = boxes('tag').filter(function (b) { return b.checked; }).map(function (b) { return encodeURIComponent(b.value); });
    if (tags.length) parts.push('tag=' + tags.join(','));
    history.replaceState(null, '', parts.length ? '#' + parts.join('&') : location.pathname + location.search);
  }
  function open(cell) {
    cells().forEach(function (c) { c.classList.remove('selected'); c.setAttribute('aria-expanded', 'false'); });
    Array.prototype.forEach.call(panel.querySelectorAll('section.details'), function (s) { s.hidden = true; });
    var section = document.getElementById(cell.dataset.details);
    if (!section && cell.dataset.verdict === 'ok') {
      // A page of many runs: a run that went as expected has no details of its own.
      section = document.getElementById('details-ok');
      if (section) section.querySelector('.what').textContent = cell.title;
    }
    if (!section) return;
    section.hidden = false;
    panel.hidden = false;
    document.body.classList.add('panel-open');
    panel.dataset.open = cell.id;
    cell.classList.add('selected');
    cell.setAttribute('aria-expanded', 'true');
    panel.scrollTop = 0;
    // The matrix now ends where the panel starts: bring the cell into its view.
    cell.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    var rule = section.querySelector('.source .line.rule');
    if (rule) { var pre = rule.parentNode; pre.scrollTop = rule.offsetTop - pre.offsetTop - pre.clientHeight / 3; }
  }
  function close() {
    panel.hidden = true;
    document.body.classList.remove('panel-open');
    delete panel.dataset.open;
    cells().forEach(function (c) { c.classList.remove('selected'); c.setAttribute('aria-expanded', 'false'); });
    setHash();
  }
  function applyFilters() {
    var verdicts = boxes('verdict').filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
    var tags = boxes('tag').filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
    Array.prototype.forEach.call(document.querySelectorAll('#matrix tbody tr'), function (row) {
      var any = false;
      Array.prototype.forEach.call(row.querySelectorAll('.cell'), function (c) {
        var on = verdicts.indexOf(c.dataset.verdict) >= 0;
        c.classList.toggle('dim', !on);
        any = any || on;
      });
      var rowTags = [];
      try { rowTags = JSON.parse(row.dataset.tags || '[]'); } catch (e) { rowTags = []; }
      var tagOk = tags.length === 0 || tags.some(function (t) { return rowTags.indexOf(t) >= 0; });
      row.hidden = !(any && tagOk);
    });
  }
  function fromHash() {
    var state = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      var i = kv.indexOf('=');
      if (i > 0) state[kv.slice(0, i)] = kv.slice(i + 1);
    });
    if (state.verdict !== undefined) {
      var want = state.verdict.split(',');
      boxes('verdict').forEach(function (b) { b.checked = want.indexOf(b.value) >= 0; });
    }
    if (state.tag !== undefined) {
      var tags = state.tag.split(',').map(decodeURIComponent);
      boxes('tag').forEach(function (b) { b.checked = tags.indexOf(b.value) >= 0; });
    }
    applyFilters();
    if (state.open) {
      var cell = document.getElementById(decodeURIComponent(state.open));
      if (cell && cell.classList.contains('cell')) {
        cell.click();
        cell.scrollIntoView({ block: 'center', inline: 'nearest' });
      }
    }
  }
  document.getElementById('matrix').addEventListener('click', function (e) {
    var cell = e.target.closest('.cell');
    if (!cell) return;
    open(cell);
    setHash();
  });
  document.getElementById('close-details').addEventListener('click', close);
  document.addEventListener('keydown', function (e) { if (e.key === 'Escape' && !panel.hidden) close(); });
  document.getElementById('filters').addEventListener('change', function () { applyFilters(); setHash(); });
  document.getElementById('only-failing').addEventListener('click', function () {
    boxes('verdict').forEach(function (b) { b.checked = ['regression', 'fixed', 'changed', 'env-error'].indexOf(b.value) >= 0; });
    applyFilters(); setHash();
  });
  document.getElementById('show-all').addEventListener('click', function () {
    boxes('verdict').forEach(function (b) { b.checked = true; });
    boxes('tag').forEach(function (b) { b.checked = false; });
    applyFilters(); setHash();
  });
  window.addEventListener('hashchange', fromHash);
  fromHash();
}());
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_escaped() {
        let results = crate::report::fixtures::failing(400, 70_000);
        let html = render(&results);
        assert!(html.len() < 30 * 1024 * 1024, "{} bytes", html.len());
        assert!(!html.contains("<b>") && !html.contains('\u{0}'));
        assert_eq!(
            html.matches("<section id=\"details-cell-case_i_").count(),
            400
        );
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("case[p=a b] 3.8 -> 3.12"), "case_p_a_b__3.8_-__3.12");
    }
}
