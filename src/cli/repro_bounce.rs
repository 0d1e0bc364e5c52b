//! `crosspickle repro` of a bounce (`relay` and `reload`): the script holds the producers'
//! pickles (the dump's leg, made by crosspickle as for any round trip) and runs the two other
//! legs where they belong: on a consumer, `python repro.py` loads each pickle and relays what
//! it loaded into `relayed-N.pickle`; on the producer, `python repro.py reload PRODUCER` reads
//! back those of the pickles PRODUCER made. [`outputs`] runs both, each consumer's in a folder
//! of its own, and gives each leg's output under its own heading.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use super::repro_script::{python_text, run_script};
use crate::case::{Bounce, Case, Params, Phase};
use crate::python::Interpreter;

/// One pickle the script holds: its producer's label, the run's params, its bytes.
pub struct Pickle {
    pub producer: String,
    pub params: Params,
    pub bytes: Vec<u8>,
}

/// The script of a bounce: `head` (the case's title, links and support modules), the pickles,
/// the codes of the load, the relay and the reload, and the two halves that run them.
pub fn script(
    head: String,
    case: &Case,
    dump: &str,
    load: &str,
    bounce: &Bounce,
    pickles: &[Pickle],
    refused: &[String],
) -> String {
    let mut out = head;
    out.push_str(
        "# The bounce, in three legs. The dump ran on each producer: its pickles are below.\n\
         #   python repro.py                   on a consumer: loads each pickle, then relays what it\n\
         #                                     loaded (pickles it again) into relayed-N.pickle here\n\
         #   python repro.py reload PRODUCER   on that producer: reads back the relayed pickles of\n\
         #                                     the pickles PRODUCER made (every one without PRODUCER)\n\
         # The pickles were made by this code, with the params beside each:\n",
    );
    for line in dump.lines() {
        let _ = writeln!(out, "#     {line}");
    }
    for r in refused {
        let _ = writeln!(out, "# (it made no pickle on {r})");
    }
    let _ = writeln!(out, "import os, sys\nprint(sys.version.split()[0])");
    // Each side sees its own params: the load and the relay the consumer's, the reload the
    // producer's (docs/case-format.md, "Each side's params").
    out.push_str("PICKLES = [\n");
    for p in pickles {
        let _ = writeln!(
            out,
            "    ({}, {}, {}, {}),",
            python_text(&p.producer),
            case.side_params(&p.params, Some(Phase::Load))
                .python_literal(),
            case.side_params(&p.params, Some(Phase::Reload))
                .python_literal(),
            crate::explore::source::bytes(&p.bytes)
        );
    }
    out.push_str("]\n");
    let _ = writeln!(out, "LOAD = {}", python_text(load));
    let _ = writeln!(out, "RELAY = {}", python_text(&bounce.relay));
    let _ = writeln!(out, "RELOAD = {}", python_text(&bounce.reload));
    out.push_str(LEGS);
    out
}

/// The consumer's half (load, relay) and the producer's (reload), by the script's arguments.
const LEGS: &str = r#"def run(code, params, data):
    scope = dict(params)
    scope["__name__"] = "__main__"
    scope["data"] = data
    exec(compile(code, "<case>", "exec"), scope)
    return scope

def failed(leg, e):
    return "%s: %s: %s" % (leg, type(e).__name__, str(e)[:300])

if sys.argv[1:2] != ["reload"]:
    for n, (producer, params, _, data) in enumerate(PICKLES):
        leg = "load"
        try:
            scope = run(LOAD, params, data)
            leg = "relay"
            exec(compile(RELAY, "<case>", "exec"), scope)
            relayed = scope.get("data")
            if not isinstance(relayed, (bytes, bytearray)):
                raise TypeError("relay must leave bytes in `data`, not %s" % type(relayed).__name__)
            f = open("relayed-%d.pickle" % n, "wb")
            f.write(bytes(relayed))
            f.close()
            result = "load ok, relay ok (relayed-%d.pickle)" % n
        except Exception as e:
            result = failed(leg, e)
        print("%s, %s -> %s" % (producer, params, result))
else:
    for n, (producer, relayed_with, params, _) in enumerate(PICKLES):
        name = "relayed-%d.pickle" % n
        if sys.argv[2:] not in ([], [producer]) or not os.path.exists(name):
            continue
        f = open(name, "rb")
        data = f.read()
        f.close()
        try:
            run(RELOAD, params, data)
            result = "reload ok"
        except Exception as e:
            result = failed("reload", e)
        print("%s, %s -> %s: %s" % (producer, relayed_with, name, result))
"#;

/// The script's output for each leg: on each consumer (its load and relay, in a folder of its
/// own), then on each live producer of the pickles, the reload of what that consumer relayed.
/// Each with its heading.
pub async fn outputs(
    script: &str,
    consumers: &[Arc<Interpreter>],
    interpreters: &[Arc<Interpreter>],
    pickles: &[Pickle],
    limit: Duration,
) -> Vec<(String, String)> {
    let mut producers: Vec<&Arc<Interpreter>> = Vec::new();
    for p in pickles {
        let live = interpreters.iter().find(|i| i.label == p.producer);
        if let Some(live) = live.filter(|l| !producers.iter().any(|p| p.label == l.label)) {
            producers.push(live);
        }
    }
    let mut outputs = Vec::new();
    for consumer in consumers {
        let Ok(dir) = tempfile::tempdir() else {
            return outputs;
        };
        let path = dir.path().join("repro.py");
        if std::fs::write(&path, script).is_err() {
            return outputs;
        }
        let text = run_script(consumer, &path, &[], dir.path(), limit).await;
        outputs.push((format!("{} (load and relay)", consumer.label), text));
        for producer in &producers {
            let args = ["reload", producer.label.as_str()];
            let text = run_script(producer, &path, &args, dir.path(), limit).await;
            let heading = format!(
                "{} (reload of what {} relayed)",
                producer.label, consumer.label
            );
            outputs.push((heading, text));
        }
    }
    outputs
}
