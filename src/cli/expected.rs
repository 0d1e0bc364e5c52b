//! `crosspickle list --expected` (and `list -p …`, `list --json`): for each case, what every
//! chosen interpreter (every producer and consumer pair of a round trip) is expected to show
//! and the rule that decides it, without running anything. The cells come from the run's own
//! plan ([`Plan::build`]: which runs are skipped, by which reason or `skip` rule) and from the
//! very rule choice its verdicts use ([`Case::deciding_rule`] on a [`RunSide`]), so that what
//! this prints is what a run decides. Each name or glob a rule's `check` gives has a row of
//! its own under its run's: the rule that decides a named check of that name
//! ([`Case::deciding_check_rule`]).

use std::sync::Arc;

use serde::Serialize;

use crate::case::{Case, Expected, Params, Phase, RunSide};
use crate::python::Interpreter;
use crate::run::plan::{Disposition, Plan, PlannedRun};

/// What the plan and the rules say of one run (one pair of a round trip).
#[derive(Debug, Serialize)]
pub struct Cell {
    pub params: Params,
    /// The interpreter of a plain run; the consumer of a round trip.
    pub python: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dump_python: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_python: Option<String>,
    /// `compare` for the run that holds a live producer's fresh dump against the bytes its
    /// recorded twin made (docs/record.md), decided by the rules of `phase: compare`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<&'static str>,
    /// `run`, `skipped` (the case does not apply, or a `skip` rule decides it before
    /// anything runs) or `env-error` (an interpreter that cannot run).
    pub disposition: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The index in `expect` (from 0) of the rule that decides the run (a round trip's load
    /// phase), `null` for the implicit `pass`; absent where the case does not apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<Option<usize>>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::results::wire::serialize_expected"
    )]
    pub expected: Option<Expected>,
    /// A round trip's dump phase: the rule that decides the pair when its dump does not pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dump_rule: Option<Option<usize>>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::results::wire::serialize_expected"
    )]
    pub dump_expected: Option<Expected>,
    /// The named checks the rules name (`check: NAME`), each with the rule that decides a
    /// check of that name in this run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckCell>,
}

/// What the rules say of a named check in one run: the name (or glob) a rule's `check` gives,
/// the index in `expect` of the rule that decides it (`null` for the implicit `pass`), and for
/// a round trip the rule that decides it when its dump makes it.
#[derive(Debug, Serialize)]
pub struct CheckCell {
    pub check: String,
    pub rule: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dump_rule: Option<Option<usize>>,
}

impl CheckCell {
    /// As [`Cell::symbol`]: the deciding rule's number, `.` the implicit pass, `D/L` for a
    /// round trip whose dump's check another rule decides.
    pub fn symbol(&self) -> String {
        let number = |r: Option<usize>| r.map_or(".".to_string(), |i| (i + 1).to_string());
        match self.dump_rule {
            Some(dump) if dump != self.rule => format!("{}/{}", number(dump), number(self.rule)),
            _ => number(self.rule),
        }
    }
}

/// The names and globs the rules of `case` give in `check`, each once, in file order.
fn check_patterns(case: &Case) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for rule in &case.expect {
        for name in rule.check.iter().flat_map(|c| c.patterns()) {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
    }
    names
}

/// One case's rules and cells.
#[derive(Debug, Serialize)]
pub struct CaseMatrix {
    pub id: String,
    pub title: String,
    pub path: String,
    pub round_trip: bool,
    /// Each rule in words, in file order (`rules[i]` is `expect[i]`).
    pub rules: Vec<String>,
    pub runs: Vec<Cell>,
}

/// The expected matrix of every case on `interpreters`, in the plan's order.
pub fn matrices(
    cases: &[Arc<Case>],
    interpreters: Vec<Interpreter>,
    recorded: &Option<crate::record::Folder>,
) -> Vec<CaseMatrix> {
    let interpreters: Vec<Arc<Interpreter>> = interpreters.into_iter().map(Arc::new).collect();
    // The recorded producers (docs/record.md) produce beside the live ones.
    let mut producers = interpreters.clone();
    producers.extend(super::record::producers(recorded));
    let mut plan = Plan::build(cases, &interpreters, Some(&producers), None, &|_, _| true);
    super::record::keep_recorded_runs(&mut plan, recorded);
    // And the comparisons of live producers with their recorded twins, as `run` adds them.
    plan.add_comparisons(&super::record::twins_of(&plan, recorded));
    cases
        .iter()
        .map(|case| CaseMatrix {
            id: case.id.clone(),
            title: case.title.clone(),
            path: case.path.display().to_string(),
            round_trip: case.is_round_trip(),
            rules: case.expect.iter().map(crate::case::describe_rule).collect(),
            runs: plan
                .runs
                .iter()
                .filter(|r| Arc::ptr_eq(&r.case, case))
                .map(cell)
                .collect(),
        })
        .collect()
}

fn cell(run: &PlannedRun) -> Cell {
    let (disposition, reason) = match &run.disposition {
        Disposition::Execute => ("run", None),
        Disposition::Skip(reason) => ("skipped", Some(reason.clone())),
        Disposition::SkipRule(rule) => ("skipped", rule.reason.clone()),
        Disposition::EnvError(reason) => ("env-error", Some(reason.clone())),
    };
    let mut cell = Cell {
        params: run.params.clone(),
        python: run.interpreter.label.clone(),
        dump_python: run.producer.as_ref().map(|p| p.label.clone()),
        load_python: run.producer.as_ref().map(|_| run.interpreter.label.clone()),
        phase: run.is_comparison().then_some("compare"),
        disposition,
        reason,
        rule: None,
        expected: None,
        dump_rule: None,
        dump_expected: None,
        checks: Vec::new(),
    };
    if matches!(run.disposition, Disposition::Skip(_)) {
        return cell;
    }
    let case = &run.case;
    let decide = |side: RunSide<'_>| {
        let index = case.deciding_rule(&run.params, side);
        (index, case.expected_for(&run.params, side))
    };
    match &run.producer {
        None => {
            let (rule, expected) = decide(RunSide::single(&run.interpreter));
            (cell.rule, cell.expected) = (Some(rule), Some(expected));
        }
        Some(producer) => {
            // A comparison is judged by its own phase; a bounce's pair whose legs all pass by
            // its reload's rule.
            let phase = if run.is_comparison() {
                Phase::Compare
            } else if case.bounce.is_some() {
                Phase::Reload
            } else {
                Phase::Load
            };
            let (rule, expected) = decide(RunSide::pair(producer, &run.interpreter, phase));
            (cell.rule, cell.expected) = (Some(rule), Some(expected));
            let (rule, expected) = decide(RunSide::pair(producer, &run.interpreter, Phase::Dump));
            (cell.dump_rule, cell.dump_expected) = (Some(rule), Some(expected));
        }
    }
    let check_rule =
        |side: RunSide<'_>, name: &str| case.deciding_check_rule(&run.params, side, name);
    cell.checks = check_patterns(case)
        .into_iter()
        .map(|name| match &run.producer {
            None => CheckCell {
                check: name.to_string(),
                rule: check_rule(RunSide::single(&run.interpreter), name),
                dump_rule: None,
            },
            Some(producer) => CheckCell {
                check: name.to_string(),
                rule: check_rule(RunSide::pair(producer, &run.interpreter, Phase::Load), name),
                dump_rule: Some(check_rule(
                    RunSide::pair(producer, &run.interpreter, Phase::Dump),
                    name,
                )),
            },
        })
        .collect();
    cell
}

impl Cell {
    /// The cell in a matrix: `-` where the case does not apply, `!` where an interpreter
    /// cannot run, else the deciding rule's number (from 1; `.` for the implicit `pass`), and
    /// for a round trip whose dump phase another rule decides, `DUMP/LOAD`.
    pub fn symbol(&self) -> String {
        let number = |r: Option<usize>| r.map_or(".".to_string(), |i| (i + 1).to_string());
        match (self.disposition, self.rule, self.dump_rule) {
            ("env-error", _, _) => "!".into(),
            (_, None, _) => "-".into(),
            (_, Some(load), Some(dump)) if dump != load => {
                format!("{}/{}", number(dump), number(load))
            }
            (_, Some(rule), _) => number(rule),
        }
    }
}

/// The matrices as text: per case its rules, numbered, then a row per interpreter (a column
/// per params combination), or for a round trip a matrix per combination, a row per
/// producer and a column per consumer (lettered as the rows are).
pub fn render_text(matrices: &[CaseMatrix], interpreters: &[String]) -> String {
    let mut out = String::from(
        "Cells: the number of the rule that decides (from 1, in file order), `.` the implicit pass, \
         `-` the case does not apply, `!` the interpreter cannot run; a round trip's `D/L`: rule D \
         decides when the dump does not pass, rule L when it does.\n",
    );
    let letters: Vec<String> = (0..interpreters.len()).map(letter).collect();
    for m in matrices {
        out.push_str(&format!("\n{}  {}\n", m.id, m.title));
        for (i, rule) in m.rules.iter().enumerate() {
            out.push_str(&format!("    {}  {rule}\n", i + 1));
        }
        if m.round_trip {
            render_pairs(&mut out, m, interpreters, &letters);
        } else {
            render_runs(&mut out, m, interpreters);
        }
    }
    out
}

/// `a` … `z`, then `aa`, `ab`, …: the column of the interpreter at `index`.
fn letter(index: usize) -> String {
    let alphabet = |i: usize| char::from(b'a' + (i % 26) as u8);
    if index < 26 {
        alphabet(index).to_string()
    } else {
        format!("{}{}", alphabet(index / 26 - 1), alphabet(index))
    }
}

/// The distinct params combinations of `runs`, in order, with their names.
fn combinations(runs: &[Cell]) -> Vec<(&Params, String)> {
    let mut seen: Vec<(&Params, String)> = Vec::new();
    for r in runs {
        if !seen.iter().any(|(p, _)| *p == &r.params) {
            let name = r.params.to_string();
            seen.push((&r.params, name));
        }
    }
    seen
}

fn render_runs(out: &mut String, m: &CaseMatrix, interpreters: &[String]) {
    let combos = combinations(&m.runs);
    let width = interpreters
        .iter()
        .map(|l| l.len())
        .chain(check_names(m).iter().map(|n| n.chars().count() + 5))
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = combos.iter().map(|(_, n)| n.len().max(3)).collect();
    if combos.len() > 1 || !combos.first().is_some_and(|(p, _)| p.is_empty()) {
        let mut header = format!("    {:width$}", "");
        for ((_, name), w) in combos.iter().zip(&widths) {
            header.push_str(&format!("  {name:w$}"));
        }
        out.push_str(header.trim_end());
        out.push('\n');
    }
    for label in interpreters {
        let mut row = format!("    {label:width$}");
        let cells: Vec<Option<&Cell>> = combos
            .iter()
            .map(|(params, _)| {
                m.runs
                    .iter()
                    .find(|r| &r.python == label && &r.params == *params)
            })
            .collect();
        for (cell, w) in cells.iter().zip(&widths) {
            let symbol = cell.map_or(String::new(), Cell::symbol);
            row.push_str(&format!("  {symbol:w$}"));
        }
        out.push_str(row.trim_end());
        out.push('\n');
        // A row per named check the rules name, under the interpreter's.
        for name in check_names(m) {
            let mut row = format!("    {:width$}", format!("  :: {name}"));
            for (cell, w) in cells.iter().zip(&widths) {
                let symbol = cell.map_or(String::new(), |c| check_symbol(c, name));
                row.push_str(&format!("  {symbol:w$}"));
            }
            out.push_str(row.trim_end());
            out.push('\n');
        }
    }
}

/// The check names of a case's cells, each once, in order.
fn check_names(m: &CaseMatrix) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for c in m.runs.iter().flat_map(|r| &r.checks) {
        if !names.contains(&c.check.as_str()) {
            names.push(&c.check);
        }
    }
    names
}

/// The symbol of the named check `name` in `cell` (empty where the case does not apply).
fn check_symbol(cell: &Cell, name: &str) -> String {
    cell.checks
        .iter()
        .find(|c| c.check == name)
        .map_or(String::new(), CheckCell::symbol)
}

fn render_pairs(out: &mut String, m: &CaseMatrix, interpreters: &[String], letters: &[String]) {
    // Recorded producers (no column: they load nothing) after the live ones, unlettered.
    let mut producers: Vec<(&String, &str)> = interpreters
        .iter()
        .zip(letters)
        .map(|(p, l)| (p, l.as_str()))
        .collect();
    for c in &m.runs {
        if let Some(d) = c.dump_python.as_ref() {
            if !producers.iter().any(|(p, _)| *p == d) {
                producers.push((d, " "));
            }
        }
    }
    let width = producers
        .iter()
        .map(|(p, _)| p.len() + 4)
        .chain(check_names(m).iter().map(|n| n.chars().count() + 6))
        .max()
        .unwrap_or(4);
    for (params, name) in combinations(&m.runs) {
        let cells: Vec<&Cell> = m.runs.iter().filter(|r| &r.params == params).collect();
        let w = cells
            .iter()
            .map(|c| c.symbol().len())
            .chain(
                cells
                    .iter()
                    .flat_map(|c| &c.checks)
                    .map(|c| c.symbol().len()),
            )
            .chain(letters.iter().map(|l| l.len()))
            .max()
            .unwrap_or(1);
        if !name.is_empty() {
            out.push_str(&format!("    [{name}]\n"));
        }
        let mut header = format!("    {:width$}", "dump \\ load");
        for l in letters {
            header.push_str(&format!(" {l:>w$}"));
        }
        out.push_str(&format!("{}\n", header.trim_end()));
        for &(producer, l) in &producers {
            let mut row = format!("    {:width$}", format!("{l}  {producer}"));
            let pairs: Vec<Option<&&Cell>> = interpreters
                .iter()
                .map(|consumer| {
                    cells
                        .iter()
                        .find(|c| c.dump_python.as_ref() == Some(producer) && &c.python == consumer)
                })
                .collect();
            for pair in &pairs {
                let symbol = pair.map_or(String::new(), |c| c.symbol());
                row.push_str(&format!(" {symbol:>w$}"));
            }
            out.push_str(&format!("{}\n", row.trim_end()));
            // A row per named check the rules name, under the producer's.
            for name in check_names(m) {
                let mut row = format!("    {:width$}", format!("   :: {name}"));
                for pair in &pairs {
                    let symbol = pair.map_or(String::new(), |c| check_symbol(c, name));
                    row.push_str(&format!(" {symbol:>w$}"));
                }
                out.push_str(&format!("{}\n", row.trim_end()));
            }
        }
        // The comparisons of live dumps with their recorded twins: no column of their own.
        for c in cells.iter().filter(|c| c.phase == Some("compare")) {
            let producer = c.dump_python.as_deref().unwrap_or("");
            out.push_str(&format!(
                "    compare  {producer} -> {}  {}\n",
                c.python,
                c.symbol()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_go_on_past_z() {
        assert_eq!(letter(0), "a");
        assert_eq!(letter(25), "z");
        assert_eq!(letter(26), "aa");
        assert_eq!(letter(27), "ab");
        assert_eq!(letter(52), "ba");
    }

    fn cell(
        disposition: &'static str,
        rule: Option<Option<usize>>,
        dump: Option<Option<usize>>,
    ) -> Cell {
        Cell {
            params: Params::default(),
            python: "x".into(),
            dump_python: None,
            load_python: None,
            phase: None,
            disposition,
            reason: None,
            rule,
            expected: None,
            dump_rule: dump,
            dump_expected: None,
            checks: Vec::new(),
        }
    }

    #[test]
    fn symbols() {
        assert_eq!(cell("run", Some(None), None).symbol(), ".");
        assert_eq!(cell("run", Some(Some(0)), None).symbol(), "1");
        assert_eq!(cell("skipped", None, None).symbol(), "-");
        assert_eq!(cell("env-error", Some(None), None).symbol(), "!");
        assert_eq!(cell("run", Some(Some(2)), Some(Some(2))).symbol(), "3");
        assert_eq!(cell("run", Some(None), Some(Some(0))).symbol(), "1/.");
        let check = |rule, dump_rule| CheckCell {
            check: "c".into(),
            rule,
            dump_rule,
        };
        assert_eq!(check(None, None).symbol(), ".");
        assert_eq!(check(Some(1), Some(Some(1))).symbol(), "2");
        assert_eq!(check(Some(1), Some(None)).symbol(), "./2");
    }
}
