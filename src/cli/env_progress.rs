//! Environments for `requires` being made, shown as they go: on a terminal, a bar with the
//! count made and the ones under way (above the run's bar); otherwise a line per environment
//! as it is made or fails, with the count, its time and what it holds, so that a CI log is
//! never silent for the minutes a large set takes.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::env::{BuildEvent, BuildProgress};

/// What shows `total` environments being made, and the bars the run's own bar is drawn among
/// (on a terminal).
pub fn shown(total: usize) -> (BuildProgress, Option<MultiProgress>) {
    let done = Arc::new(Mutex::new(0usize));
    if !std::io::stderr().is_terminal() {
        let progress = BuildProgress::new(move |event| {
            if let BuildEvent::Finished {
                interpreter,
                requirements,
                result,
                seconds,
            } = event
            {
                let n = {
                    let mut done = done.lock().expect("no panics while locked");
                    *done += 1;
                    *done
                };
                let what = what(interpreter, requirements);
                match result {
                    Ok(()) => eprintln!("note: environment {n} of {total} made in {seconds:.1}s: {what}"),
                    Err(e) => eprintln!(
                        "note: environment {n} of {total} could not be made ({seconds:.1}s): {what}: {}",
                        crate::report::text::clean(e.to_string().lines().next().unwrap_or(""))
                    ),
                }
            }
        });
        return (progress, None);
    }
    let bars = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
    let bar = bars.add(ProgressBar::new(total as u64));
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] environments {pos}/{len} {wide_msg}",
        )
        .expect("valid template"),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let under_way = Arc::new(Mutex::new(Vec::<String>::new()));
    let progress = BuildProgress::new(move |event| {
        let mut under_way = under_way.lock().expect("no panics while locked");
        match event {
            BuildEvent::Started {
                interpreter,
                requirements,
            } => under_way.push(what(interpreter, requirements)),
            BuildEvent::Finished {
                interpreter,
                requirements,
                ..
            } => {
                let what = what(interpreter, requirements);
                if let Some(i) = under_way.iter().position(|w| *w == what) {
                    under_way.remove(i);
                }
                bar.inc(1);
                if bar.position() >= total as u64 {
                    bar.finish_and_clear();
                }
            }
        }
        bar.set_message(match under_way.as_slice() {
            [] => String::new(),
            [one] => format!("making {one}"),
            [one, rest @ ..] => format!("making {one} and {} more", rest.len()),
        });
    });
    (progress, Some(bars))
}

/// An environment in words: `cpython-3.12.1 with numpy==2.0, six`.
fn what(interpreter: &str, requirements: &[String]) -> String {
    crate::report::text::clean(&format!("{interpreter} with {}", requirements.join(", ")))
}
