//! The matrix every report draws (terminal, Markdown, HTML): one row per case and param
//! combination (per producer too, for a round trip), one column per interpreter, each cell one
//! run.

use std::collections::HashMap;

use crate::case::run_name;
use crate::python::Interpreter;
use crate::results::Results;

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
                });
                rows.len() - 1
            });
            rows[row].cells[column_of[r.python.as_str()]] = Some(index);
        }
        Grid { columns, rows }
    }
}
