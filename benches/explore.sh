#!/usr/bin/env bash
# What `crosspickle explore` costs and finds, in one run of
# `crosspickle explore --seed SEED --time SECONDS` on the interpreters given (by default every
# interpreter of the machine: this checkout's pythons.toml and, when present, the newest ones
# of CROSSPICKLE_NEWEST_PYTHONS):
#   values per second over the whole run (values over the run's time, shrinking included),
#   while observing, and per CPU second of every process (what free cores would give); the time spent shrinking, the findings shrunk and the time per shrink;
#   crosspickle's own CPU as a share of the total (its own rusage against its children's, as
#   its summary reports it from /proc/self/stat), the total CPU of every process (GNU time),
#   crosspickle's peak RSS (VmHWM of its own process, read every 0.5 s, with its RSS then in
#   OUT/rss.tsv: seconds since the start, RSS and peak in KB), the findings;
# then the floor: the pickle operations alone on the same values, in one loop per interpreter
# (every value built, pickled with every protocol the interpreter has and both picklers, and
# each pickle loaded with both unpicklers, on that interpreter; the C ones only on a debug build
# whose release build ran the Python ones for it, as explore does (its report's
# c_pickler_only); no comparison, no process but the loop's), its CPU time, and explore's CPU
# over it as a ratio.
# With EXPLORE_RUN_CASES=1, every case file written is then run with `crosspickle run` on the
# same interpreters (the verdicts are counted): this takes long on many interpreters.
# The load average is printed before and after (the machine may be busy with other work).
#
# Usage: benches/explore.sh [SECONDS] [SEED] [OUT] [PYTHON...]
#   defaults: 600, 1, target/bench-explore, every interpreter; PYTHON is a --python request
#   (builds --release unless CROSSPICKLE_BIN names a binary; OUT keeps the case files, the
#   --json report, the values and the floor's figures)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
seed=${2:-1}
out=${3:-$root/target/bench-explore}
shift $(($# < 3 ? $# : 3))
cd "$root" # its pythons.toml names the interpreters discovery does not find
# CROSSPICKLE_BIN: a binary to measure instead of this checkout's release build.
if [ -z "${CROSSPICKLE_BIN:-}" ]; then
  cargo build --release --quiet
fi
bin=${CROSSPICKLE_BIN:-$root/target/release/crosspickle}
export CROSSPICKLE_NEWEST_PYTHONS=${CROSSPICKLE_NEWEST_PYTHONS:-$root/target/newest-pythons}
select=(--pythons-toml pythons.toml)
if [ -f "$CROSSPICKLE_NEWEST_PYTHONS/pythons.toml" ]; then
  select+=(--pythons-toml "$CROSSPICKLE_NEWEST_PYTHONS/pythons.toml")
fi
for p in "$@"; do select+=(--python "$p"); done
export CROSSPICKLE_CACHE_DIR=${CROSSPICKLE_CACHE_DIR:-$root/target/bench-cache}
rm -rf "$out"
mkdir -p "$out"
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "load average before: $(load)   ($(nproc) cores)"
code=0
/usr/bin/time -f '%e %U %S' -o "$out/time" \
  "$bin" explore "${select[@]}" --seed "$seed" --time "$seconds" \
  --out "$out/cases" --json "$out/explore.json" > "$out/summary.txt" 2> "$out/stderr" &
timed=$!
# crosspickle's own peak RSS: the child of GNU time (whatever its binary is named), read until
# it ends.
peak=0
began=$(date +%s.%N)
: > "$out/rss.tsv"
while kill -0 "$timed" 2> /dev/null; do
  pid=$(pgrep -P "$timed" | head -1 || true)
  if [ -n "$pid" ]; then
    read -r rss hwm < <(awk '/^VmRSS:/ {r=$2} /^VmHWM:/ {h=$2} END {print r, h}' "/proc/$pid/status" 2> /dev/null || true)
    if [ -n "${hwm:-}" ]; then
      awk -v now="$(date +%s.%N)" -v began="$began" -v rss="$rss" -v hwm="$hwm" \
        'BEGIN {printf "%.1f\t%s\t%s\n", now - began, rss, hwm}' >> "$out/rss.tsv"
      if [ "$hwm" -gt "$peak" ]; then peak=$hwm; fi
    fi
  fi
  sleep 0.5
done
wait "$timed" || code=$?
echo "$peak" > "$out/peak-rss-kb"
echo "load average after explore: $(load)"
if [ "$code" -gt 1 ] && [ "$code" -ne 130 ]; then
  echo "crosspickle explore ended with $code:" >&2
  cat "$out/stderr" >&2
  exit "$code"
fi
head -1 "$out/summary.txt"

# The floor: the same values' pickle operations, one loop per interpreter, two at once.
values=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["values"])' "$out/explore.json")
"$bin" explore --pythons-toml /dev/null --seed "$seed" --count "$values" \
  --emit-values "$out/values.jsonl"
{
  cat src/explore/prelude.py
  cat << 'EOF'


def _floor(path):
    import json
    import os
    import pickle
    sources = [json.loads(line)["source"] for line in open(path)]
    has_c = True
    try:
        loads_with(dumps_with(1, 2, "c"), "c")
    except ImportError:
        has_c = False
    picklers = ("c", "py") if has_c else ("py",)
    if sys.argv[2:] == ["c"]:
        picklers = ("c",)
    before = os.times()
    ops = 0
    for src in sources:
        ns = {"range_": range_, "__name__": "__explore__"}
        try:
            exec(compile(src, "<value>", "exec"), ns)
        except Exception:
            continue
        value = ns["value"]
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            for which in picklers:
                ops += 1
                try:
                    data = dumps_with(value, protocol, which)
                except Exception:
                    continue
                for unpickler in picklers:
                    ops += 1
                    try:
                        loads_with(data, unpickler)
                    except Exception:
                        pass
    after = os.times()
    print("%d %.3f" % (ops, (after[0] - before[0]) + (after[1] - before[1])))


_floor(sys.argv[1])
EOF
} > "$out/floor.py"
"$bin" pythons "${select[@]}" --json > "$out/pythons.json" 2> /dev/null || true
python3 - "$out" << 'EOF' > "$out/interpreters.txt"
import json, sys
out = sys.argv[1]
r = json.load(open(out + "/explore.json"))
found = {}
try:
    for p in json.load(open(out + "/pythons.json")).get("interpreters", []):
        found[p.get("label")] = p.get("path") or p.get("executable")
except Exception:
    pass
c_only = r.get("c_pickler_only") or {}
for label in r["interpreters"]:
    print("%s %s %s" % (label, found.get(label) or "-", "c" if label in c_only else "both"))
EOF
: > "$out/floor.txt"
while read -r label path which; do
  if [ "$path" = - ]; then
    echo "floor: no path for $label (crosspickle pythons --json); left out" >&2
    continue
  fi
  echo "$label $path $which"
done < "$out/interpreters.txt" | xargs -P 2 -L 1 sh -c \
  '"$2" "$0/floor.py" "$0/values.jsonl" "$3" 2>/dev/null | sed "s/^/$1 /" >> "$0/floor.txt"' "$out"
echo "load average after the floor: $(load)"

python3 - "$out" << 'EOF'
import json, os, re, sys
out = sys.argv[1]
r = json.load(open(out + "/explore.json"))
wall, user, system = (float(x) for x in open(out + "/time").read().splitlines()[-1].split())
total = user + system
cores = os.cpu_count() or 1
summary = open(out + "/summary.txt").read()
share = re.search(r"explore's own CPU ([0-9.]+)%", summary)
peak = int(open(out + "/peak-rss-kb").read())
floor = [line.split() for line in open(out + "/floor.txt") if len(line.split()) == 3]
floor_cpu = sum(float(f[2]) for f in floor)
n = len(r["findings"])
by = {}
for f in r["findings"]:
    by[f["oracle"]] = by.get(f["oracle"], 0) + 1
shrinks = r.get("shrinks", 0)
print("interpreters:          %d" % len(r["interpreters"]))
print("values:                %d in %.1f s (wall %.1f s)" % (r["values"], r["seconds"], wall))
print("values/s, whole run:   %.2f (shrinking included; over %.1f s of wall time with the interpreters' probe: %.2f)" % (
    r["values"] / r["seconds"], wall, r["values"] / wall))
print("values per CPU second: %.1f (of every process; x%d cores if they were free: %.0f values/s)" % (
    r["values"] / total, cores, r["values"] / total * cores))
print("values/s, observing:   %.2f" % r["values_per_second"])
# The distinct values among them (the generator draws small values again; a run observes a
# value drawn again once, its report's "repeated").
distinct = len(set(json.loads(line)["source"] for line in open(out + "/values.jsonl")))
print("distinct values:       %d (%.2f/s over the whole run); drawn again and not observed again: %s" % (
    distinct, distinct / r["seconds"], r.get("repeated", "- (every value observed)")))
print("shrinking:             %.1f s, %d findings shrunk, %s per shrink" % (
    r["shrinking_seconds"], shrinks, "%.2f s" % (r["shrinking_seconds"] / shrinks) if shrinks else "-"))
print("findings:              %d (%s)" % (n, ", ".join("%s %d" % kv for kv in sorted(by.items()))))
print("stability groups:      %d" % len(r["stability"]))
print("CPU, every process:    %.1f s (%.2f cores over %.1f s)" % (total, total / wall, wall))
if share:
    print("crosspickle's own CPU: %s%% (%.1f s)" % (share.group(1), float(share.group(1)) / 100 * total))
print("crosspickle peak RSS:  %.1f MB" % (peak / 1024.0))
print("floor:                 %.1f s CPU for the same %d values' pickle operations on %d interpreters (%d operations)" % (
    floor_cpu, r["values"], len(floor), sum(int(f[1]) for f in floor)))
if floor_cpu > 0:
    print("explore over floor:    %.1fx the CPU; the floor's rate on %d free cores: %.0f values/s" % (
        total / floor_cpu, cores, r["values"] / (floor_cpu / cores)))
EOF

if [ "${EXPLORE_RUN_CASES:-0}" = 1 ]; then
  code=0
  "$bin" run "${select[@]}" "$out/cases" --json "$out/run.json" > "$out/run.txt" 2>&1 || code=$?
  echo "load average after run: $(load)"
  tail -1 "$out/run.txt"
  python3 - "$out/run.json" "$code" << 'EOF'
import collections, json, sys
runs = json.load(open(sys.argv[1]))["runs"]
verdicts = collections.Counter(r["verdict"] for r in runs)
print("the case files with crosspickle run: exit %s, %s" % (sys.argv[2], dict(sorted(verdicts.items()))))
EOF
fi
