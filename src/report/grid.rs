//! The matrix every report draws (terminal, Markdown, HTML): one row per case and param
//! combination (per producer too, for a round trip), one column per interpreter, each cell one
//! run; under a row whose runs made named checks, a row per check name (`  :: NAME`), each
//! cell that check's verdict in that run.

use std::collections::HashMap;

use crate::case::run_name;
use crate::python::Interpreter;
use crate::results::{Results, RunRecord};
use crate::verdict::Verdict;

/// One interpreter column.
#[derive(Debug)]
pub struct Column<'a> {
    /// The interpreter's label, as runs name it.
    pub label: String,
    /// A short header: `3.8.18`, `pp3.9.18`, `3.11.2d`.
    pub header: String,
    /// Its facts, when the results have them.
    pub interpreter: Option<&'a Interpreter>,
}

/// One row: a case with one param combination (and one producer, for a round trip).
#[derive(Debug)]
pub struct Row {
    /// `id[params]`, and ` 3.8.18 ->` for a round trip's producer.
    pub name: String,
    pub case: String,
    /// Per column, the index of its run in `Results::runs`.
    pub cells: Vec<Option<usize>>,
    /// A named check's row: the check's name; its cells are its runs' (the row above's).
    pub check: Option<String>,
}

impl Row {
    /// What the cell of run `r` shows: the run's verdict ([`RunRecord::shown_verdict`]), or on
    /// a check's row the check's (the worst of its checks of that name), `None` when the run
    /// made no check of that name.
    pub fn verdict(&self, r: &RunRecord) -> Option<Verdict> {
        match &self.check {
            None => Some(r.shown_verdict()),
            Some(name) => r
                .checks
                .iter()
                .filter(|c| &c.name == name)
                .map(|c| c.verdict)
                .max_by_key(|v| v.severity()),
        }
    }

    /// Whether the cell of run `r` fails: the run (or one of its checks), or on a check's row
    /// that check.
    pub fn fails(&self, r: &RunRecord) -> bool {
        match &self.check {
            None => r.fails(),
            Some(_) => self.verdict(r).is_some_and(|v| v.fails_run()),
        }
    }
}

#[derive(Debug)]
pub struct Grid<'a> {
    pub columns: Vec<Column<'a>>,
    pub rows: Vec<Row>,
}

impl<'a> Grid<'a> {
    pub fn new(results: &'a Results) -> Self {
        let mut columns: Vec<Column<'a>> = results
            .interpreters
            .iter()
            .map(|i| Column {
                label: i.label.clone(),
                header: if i.unusable.is_some() {
                    i.label.clone()
                } else {
                    i.short_label()
                },
                interpreter: Some(i),
            })
            .collect();
        for r in &results.runs {
            if !columns.iter().any(|c| c.label == r.python) {
                columns.push(Column {
                    label: r.python.clone(),
                    header: r.python.clone(),
                    interpreter: None,
                });
            }
        }
        let column_of: HashMap<&str, usize> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.label.as_str(), i))
            .collect();
        // A producer is named by its column's header, when it has a column.
        let header_of = |label: &str| match column_of.get(label) {
            Some(&c) => columns[c].header.clone(),
            None => label.to_string(),
        };
        let mut rows: Vec<Row> = Vec::new();
        let mut row_of: HashMap<String, usize> = HashMap::new();
        for (index, r) in results.runs.iter().enumerate() {
            let producer = r.dump_python.as_deref().map(header_of);
            let name = run_name(&r.case, &r.params, producer.as_deref(), None);
            let row = *row_of.entry(name.clone()).or_insert_with(|| {
                rows.push(Row {
                    name,
                    case: r.case.clone(),
                    cells: vec![None; columns.len()],
                    check: None,
                });
                rows.len() - 1
            });
            rows[row].cells[column_of[r.python.as_str()]] = Some(index);
        }
        // Each row's named checks, in the order its runs made them, a row each under it.
        let mut with_checks = Vec::with_capacity(rows.len());
        for row in rows {
            let mut names: Vec<&str> = Vec::new();
            for &i in row.cells.iter().flatten() {
                for c in &results.runs[i].checks {
                    if !names.contains(&c.name.as_str()) {
                        names.push(&c.name);
                    }
                }
            }
            let checks: Vec<Row> = names
                .into_iter()
                .map(|name| Row {
                    name: format!("  :: {name}"),
                    case: row.case.clone(),
                    cells: row.cells.clone(),
                    check: Some(name.to_string()),
                })
                .collect();
            with_checks.push(row);
            with_checks.extend(checks);
        }
        Grid {
            columns,
            rows: with_checks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::CheckRecord;

    #[test]
    fn each_check_has_a_row_under_its_runs() {
        let check = |name: &str, verdict| CheckRecord {
            name: name.into(),
            verdict,
            expected: crate::case::Expected::default_pass(),
            observed: crate::outcome::Observed::new(crate::case::OutcomeKind::Pass, 0.0),
        };
        let mut a = RunRecord::for_tests("c", "x", Verdict::Ok);
        a.checks = vec![check("one", Verdict::Ok), check("two", Verdict::Regression)];
        let mut b = RunRecord::for_tests("c", "y", Verdict::Ok);
        b.checks = vec![
            check("three", Verdict::Skipped),
            check("one", Verdict::Xfail),
        ];
        let plain = RunRecord::for_tests("d", "x", Verdict::Ok);
        let mut results = Results::new();
        results.runs = vec![a, b, plain];
        let grid = Grid::new(&results);
        let names: Vec<&str> = grid.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["c", "  :: one", "  :: two", "  :: three", "d"]);
        let shown = |row: &Row| -> Vec<Option<Verdict>> {
            row.cells
                .iter()
                .map(|c| c.and_then(|i| row.verdict(&results.runs[i])))
                .collect()
        };
        assert_eq!(
            shown(&grid.rows[0]),
            [Some(Verdict::Regression), Some(Verdict::Ok)]
        );
        assert_eq!(
            shown(&grid.rows[1]),
            [Some(Verdict::Ok), Some(Verdict::Xfail)]
        );
        assert_eq!(shown(&grid.rows[2]), [Some(Verdict::Regression), None]);
        assert!(grid.rows[2].fails(&results.runs[0]) && !grid.rows[1].fails(&results.runs[0]));
    }
}
