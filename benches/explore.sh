#!/usr/bin/env bash
# What `crosspickle explore` finds and what it costs, in one run of
# `crosspickle explore --seed SEED --time SECONDS` on every interpreter of the machine (this
# checkout's pythons.toml and, when present, the newest ones .ci/newest-pythons.sh installs):
#   values explored and values per second (the time spent observing them, shrinking apart),
#   findings and time per finding (the run's wall time over its findings), the time spent
#   shrinking, and explore's own CPU share: crosspickle's CPU time over that of crosspickle and
#   every interpreter it ran (as its summary reports it, from /proc), besides GNU time's total.
# Then every case file it wrote is run with `crosspickle run` on the same interpreters: each
# must pass as written (the verdicts are counted).
# The load average is printed before and after (the machine may be busy with other work).
#
# Usage: benches/explore.sh [SECONDS] [SEED] [OUT]
#   defaults: 600, 1, target/bench-explore   (builds --release unless CROSSPICKLE_BIN names a
#   binary; OUT keeps the case files, the --json report and the run's JSON)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
seed=${2:-1}
out=${3:-$root/target/bench-explore}
cd "$root" # its pythons.toml names the interpreters discovery does not find
# CROSSPICKLE_BIN: a binary to measure instead of this checkout's release build.
if [ -z "${CROSSPICKLE_BIN:-}" ]; then
  cargo build --release --quiet
fi
bin=${CROSSPICKLE_BIN:-$root/target/release/crosspickle}
export CROSSPICKLE_NEWEST_PYTHONS=${CROSSPICKLE_NEWEST_PYTHONS:-$root/target/newest-pythons}
tomls=(--pythons-toml pythons.toml)
if [ -f "$CROSSPICKLE_NEWEST_PYTHONS/pythons.toml" ]; then
  tomls+=(--pythons-toml "$CROSSPICKLE_NEWEST_PYTHONS/pythons.toml")
fi
export CROSSPICKLE_CACHE_DIR=${CROSSPICKLE_CACHE_DIR:-$root/target/bench-cache}
rm -rf "$out"
mkdir -p "$out"
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "load average before: $(load)   ($(nproc) cores)"
code=0
/usr/bin/time -f '%e %U %S' -o "$out/time" \
  "$bin" explore "${tomls[@]}" --seed "$seed" --time "$seconds" \
  --out "$out/cases" --json "$out/explore.json" > "$out/summary.txt" 2> "$out/stderr" || code=$?
echo "load average after explore: $(load)"
if [ "$code" -gt 1 ]; then
  echo "crosspickle explore ended with $code:" >&2
  cat "$out/stderr" >&2
  exit "$code"
fi
head -1 "$out/summary.txt"

python3 - "$out" <<'EOF'
import json, re, sys
out = sys.argv[1]
r = json.load(open(out + "/explore.json"))
wall, user, system = (float(x) for x in open(out + "/time").read().splitlines()[-1].split())
summary = open(out + "/summary.txt").read()
share = re.search(r"explore's own CPU ([0-9.]+)%", summary)
shrinking = re.search(r"shrinking ([0-9.]+) s", summary)
n = len(r["findings"])
by = {}
for f in r["findings"]:
    by[f["oracle"]] = by.get(f["oracle"], 0) + 1
print("interpreters:        %d" % len(r["interpreters"]))
print("values:              %d in %.1f s" % (r["values"], r["seconds"]))
print("values per second:   %.2f (observing; shrinking %s s)" % (r["values_per_second"], shrinking.group(1) if shrinking else "?"))
print("findings:            %d (%s)" % (n, ", ".join("%s %d" % kv for kv in sorted(by.items()))))
print("time per finding:    %s" % ("%.1f s" % (r["seconds"] / n) if n else "-"))
print("stability groups:    %d" % len(r["stability"]))
print("CPU, every process:  %.1f s (%.2f cores over %.1f s)" % (user + system, (user + system) / wall, wall))
if share:
    print("explore's own CPU:   %s%% (%.1f s)" % (share.group(1), float(share.group(1)) / 100 * (user + system)))
EOF

code=0
"$bin" run "${tomls[@]}" "$out/cases" --json "$out/run.json" > "$out/run.txt" 2>&1 || code=$?
echo "load average after run: $(load)"
tail -1 "$out/run.txt"
python3 - "$out/run.json" "$code" <<'EOF'
import collections, json, sys
runs = json.load(open(sys.argv[1]))["runs"]
verdicts = collections.Counter(r["verdict"] for r in runs)
print("the case files with crosspickle run: exit %s, %s" % (sys.argv[2], dict(sorted(verdicts.items()))))
EOF
