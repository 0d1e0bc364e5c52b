//! The search of the package and commit modes: test both ends, then binary-search between
//! them for the first candidate whose outcome differs from the first one's, skipping the
//! candidates that cannot be tested as `git bisect skip` does; while the last candidate's
//! outcome differs from the one just found, search on from there, so that every change the
//! range crosses is named (`1.0 -> 1.2` then `1.4 -> 1.5`), not only the first.

use std::collections::BTreeSet;

use super::key::OutcomeKey;
use super::report::{first_line, Boundary, Point, Step, StepState};
use super::BisectError;

/// Binary search over candidates `0..n` where `0` shows the old outcome and `n - 1` a new one;
/// candidates that cannot be tested are skipped, as `git bisect skip` does.
#[derive(Debug, Clone)]
pub struct Search {
    /// The last candidate known to show the old outcome.
    pub last_old: usize,
    /// The first candidate known to show a new outcome.
    pub first_new: usize,
    skipped: BTreeSet<usize>,
}

impl Search {
    pub fn new(n: usize) -> Search {
        assert!(n >= 2, "a search needs two ends");
        Search::between(0, n - 1)
    }

    /// A search between `last_old` and `first_new`, both tested.
    pub fn between(last_old: usize, first_new: usize) -> Search {
        assert!(last_old < first_new, "a search needs two ends");
        Search {
            last_old,
            first_new,
            skipped: BTreeSet::new(),
        }
    }

    /// The next candidate to test: the untested one nearest the middle of the open range.
    pub fn next(&self) -> Option<usize> {
        let open: Vec<usize> = (self.last_old + 1..self.first_new)
            .filter(|i| !self.skipped.contains(i))
            .collect();
        if open.is_empty() {
            return None;
        }
        let middle = (self.last_old + self.first_new) / 2;
        open.into_iter().min_by_key(|&i| (i.abs_diff(middle), i))
    }

    pub fn old(&mut self, i: usize) {
        self.last_old = i;
    }

    pub fn new_outcome(&mut self, i: usize) {
        self.first_new = i;
    }

    pub fn skip(&mut self, i: usize) {
        self.skipped.insert(i);
    }

    /// Skipped candidates between the two ends: the change may be at any of them.
    pub fn untested(&self) -> Vec<usize> {
        (self.last_old + 1..self.first_new)
            .filter(|i| self.skipped.contains(i))
            .collect()
    }
}

/// Tests one candidate of a package or commit search.
#[allow(async_fn_in_trait)]
pub trait Tester {
    /// A step with the candidate's outcome, or a skip with its reason; an error stops the
    /// search (Ctrl-C).
    async fn test(&mut self, index: usize) -> Result<Step, BisectError>;
}

/// What a package or commit search found: every change it crossed, in order.
pub struct Found {
    pub steps: Vec<Step>,
    pub boundaries: Vec<Boundary>,
    pub conclusion: String,
}

/// The steps so far, each told to `on_step` as it is recorded.
struct Log<'a> {
    steps: Vec<Step>,
    on_step: &'a mut dyn FnMut(&Step),
}

impl Log<'_> {
    /// Record `step` with `state` (when it was tested) and return its outcome.
    fn record(&mut self, mut step: Step, state: StepState) -> Option<OutcomeKey> {
        if step.outcome.is_some() {
            step.state = state;
        }
        (self.on_step)(&step);
        let outcome = step.outcome.clone();
        self.steps.push(step);
        outcome
    }

    /// The search ends here without a boundary.
    fn end(self, conclusion: String) -> Found {
        Found {
            steps: self.steps,
            boundaries: Vec::new(),
            conclusion,
        }
    }

    /// Why the last recorded step could not be tested.
    fn last_reason(&self) -> String {
        let reason = self.steps.last().and_then(|s| s.reason.as_deref());
        first_line(reason.unwrap_or_default())
    }
}

/// Test both ends, then binary-search between them: the first candidate whose outcome differs
/// from the first candidate's. `labels` name the candidates in order, oldest first.
pub async fn search_range<T: Tester>(
    labels: &[String],
    tester: &mut T,
    on_step: &mut dyn FnMut(&Step),
) -> Result<Found, BisectError> {
    let mut log = Log {
        steps: Vec::new(),
        on_step,
    };
    let n = labels.len();
    if n < 2 {
        return Ok(log.end(format!("{n} candidate in the range: nothing to bisect")));
    }
    let Some(old) = log.record(tester.test(0).await?, StepState::Old) else {
        let reason = log.last_reason();
        return Ok(log.end(format!(
            "the good end {} could not be tested: {reason}",
            labels[0]
        )));
    };
    let last = tester.test(n - 1).await?;
    let state = match &last.outcome {
        Some(o) if *o == old => StepState::Old,
        _ => StepState::New,
    };
    let Some(new_end) = log.record(last, state) else {
        let reason = log.last_reason();
        return Ok(log.end(format!(
            "the bad end {} could not be tested: {reason}",
            labels[n - 1]
        )));
    };
    if new_end == old {
        return Ok(log.end(format!(
            "no change: {} and {} both show {old}",
            labels[0],
            labels[n - 1]
        )));
    }
    // What each candidate showed once tested (`Some(None)`: skipped), so that the search of
    // a later change reuses what an earlier one learnt.
    let mut known: Vec<Option<Option<OutcomeKey>>> = vec![None; n];
    known[0] = Some(Some(old.clone()));
    known[n - 1] = Some(Some(new_end.clone()));
    let mut boundaries = Vec::new();
    let mut from = 0;
    // One search per change: from the first candidate with the new outcome, the next change
    // is searched for while the last candidate's outcome still differs from its own.
    while let Some(Some(here)) = known[from].clone() {
        if known[n - 1] == Some(Some(here.clone())) || from == n - 1 {
            break;
        }
        let search = search_from(from, n, &here, &old, &mut known, tester, &mut log).await?;
        boundaries.push(boundary(labels, &search, &known));
        from = search.first_new;
    }
    let conclusion = conclude(&boundaries);
    Ok(Found {
        steps: log.steps,
        boundaries,
        conclusion,
    })
}

/// Binary-search `from..n` for the first candidate whose outcome differs from `here`, the
/// outcome at `from` (steps are `old` or `new` against `old`, the first candidate's).
async fn search_from<T: Tester>(
    from: usize,
    n: usize,
    here: &OutcomeKey,
    old: &OutcomeKey,
    known: &mut [Option<Option<OutcomeKey>>],
    tester: &mut T,
    log: &mut Log<'_>,
) -> Result<Search, BisectError> {
    let mut search = Search::between(from, n - 1);
    while let Some(i) = search.next() {
        let outcome = match &known[i] {
            Some(outcome) => outcome.clone(),
            None => {
                let step = tester.test(i).await?;
                let state = match &step.outcome {
                    None => StepState::Skip,
                    Some(o) if o == old => StepState::Old,
                    Some(_) => StepState::New,
                };
                let outcome = log.record(step, state);
                known[i] = Some(outcome.clone());
                outcome
            }
        };
        match outcome {
            None => search.skip(i),
            Some(o) if o == *here => search.old(i),
            Some(_) => search.new_outcome(i),
        }
    }
    Ok(search)
}

/// One sentence for every change found, in order.
fn conclude(boundaries: &[Boundary]) -> String {
    let one = |b: &Boundary| {
        if b.untested.is_empty() {
            format!("at {}", b.first_new.label)
        } else {
            format!(
                "after {}, at one of {} untested or at {}",
                b.last_old.label,
                b.untested.len(),
                b.first_new.label
            )
        }
    };
    match boundaries {
        [] => "no change found".to_string(),
        [b] => format!("the outcome changed {}", one(b)),
        all => format!(
            "the outcome changed {} times: {}",
            all.len(),
            all.iter()
                .map(|b| format!(
                    "{} ({} -> {})",
                    one(b),
                    b.last_old.outcome,
                    b.first_new.outcome
                ))
                .collect::<Vec<_>>()
                .join(", then ")
        ),
    }
}

/// Where a finished search stopped.
fn boundary(labels: &[String], search: &Search, known: &[Option<Option<OutcomeKey>>]) -> Boundary {
    let point = |i: usize| Point {
        label: labels[i].clone(),
        outcome: known[i]
            .clone()
            .flatten()
            .expect("both ends of the boundary were tested"),
        subject: None,
    };
    Boundary {
        last_old: point(search.last_old),
        first_new: point(search.first_new),
        untested: search
            .untested()
            .into_iter()
            .map(|i| labels[i].clone())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_search(n: usize, change_at: usize, skip: &[usize]) -> (usize, usize, Vec<usize>, usize) {
        let mut s = Search::new(n);
        let mut steps = 0;
        while let Some(i) = s.next() {
            steps += 1;
            if skip.contains(&i) {
                s.skip(i);
            } else if i < change_at {
                s.old(i);
            } else {
                s.new_outcome(i);
            }
        }
        (s.last_old, s.first_new, s.untested(), steps)
    }

    #[test]
    fn finds_the_change() {
        for n in 2..40 {
            for change in 1..n {
                let (old, new, untested, steps) = run_search(n, change, &[]);
                assert_eq!((old, new), (change - 1, change), "n={n} change={change}");
                assert!(untested.is_empty());
                assert!(
                    steps <= (n as f64).log2().ceil() as usize + 1,
                    "n={n} steps={steps}"
                );
            }
        }
    }

    #[test]
    fn skips_like_git_bisect() {
        // The change is at 5; 5 cannot be tested: the answer is "4, then one of 5 or 6".
        let (old, new, untested, _) = run_search(10, 5, &[5]);
        assert_eq!((old, new, untested), (4, 6, vec![5]));
        // A skipped candidate away from the change does not matter.
        let (old, new, untested, _) = run_search(10, 7, &[3, 4]);
        assert_eq!((old, new, untested), (6, 7, vec![]));
    }
}
