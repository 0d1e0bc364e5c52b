#!/usr/bin/env bash
# What crosspickle costs on top of the Python processes it runs.
#
# 1. 200 trivial runs (`code: pass`) on one interpreter, against
#    a. a plain `xargs -P` loop of `python -c pass` (the floor: bare interpreter start-up), and
#    b. the same loop running crosspickle's own driver on the same code (the same Python
#       processes, so the difference is the harness alone);
# 2. the seed cases on every interpreter found, against an `xargs -P` loop running the same
#    driver processes;
# 3. crosspickle's peak memory for 200 and 2,000 runs (it must stay flat as runs grow).
#
# Usage: benches/overhead.sh [PYTHON] [JOBS] [REPEATS]   (run from anywhere; builds --release)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=${1:-$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.11.*/bin/python3.11 2>/dev/null | tail -1)}
jobs=${2:-$(nproc)}
repeats=${3:-5}
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/release/crosspickle"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CROSSPICKLE_CACHE_DIR="$work/cache"

# The driver as crosspickle embeds it, and a case file, for the baseline loops.
cp "$root/src/run/driver.py" "$work/driver.py"
mkdir -p "$work/runs"
echo pass > "$work/case.py"

make_case() { # $1 = number of runs
  mkdir -p "$work/cases$1"
  { echo "title: trivial"; echo "params:"; printf "  n: ["; seq -s, 1 "$1" | tr -d '\n'; echo "]"; echo "code: pass"; } \
    > "$work/cases$1/trivial.yaml"
}
make_case 200
make_case 2000

best() { # best wall time of $repeats runs of "$@", in seconds
  local best=999999 t0 t1 t
  for _ in $(seq "$repeats"); do
    t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s.%N)
    t=$(echo "$t1 - $t0" | bc -l)
    if (( $(echo "$t < $best" | bc -l) )); then best=$t; fi
  done
  echo "$best"
}

bare_loop() { seq 200 | xargs -P "$jobs" -I{} "$python" -c pass; }
driver_loop() {
  seq 200 | xargs -P "$jobs" -I{} sh -c 'd=$(mktemp -d "$0/runs/XXXXXX"); cd "$d"; PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1 PYTHONFAULTHANDLER=1 "$1" "$0/driver.py" "$0/case.py" "$d/result" "{u\"n\": {}}"; rm -rf "$d"' "$work" "$python"
}
harness() { "$bin" "$work/cases200" --pythons-toml /dev/null --python "$python" -j "$jobs"; }

"$bin" "$work/cases200" --pythons-toml /dev/null --python "$python" -j "$jobs" >/dev/null  # warm the probe cache
t_bare=$(best bare_loop)
t_driver=$(best driver_loop)
t_harness=$(best harness)
printf '200 trivial runs on %s, -j %s (best of %s)\n' "$python" "$jobs" "$repeats"
printf '  python -c pass loop      %.3fs\n' "$t_bare"
printf '  driver loop (same procs) %.3fs\n' "$t_driver"
printf '  crosspickle              %.3fs   = %.2fx the python -c loop, %.2fx the driver loop\n' \
  "$t_harness" "$(echo "$t_harness / $t_bare" | bc -l)" "$(echo "$t_harness / $t_driver" | bc -l)"

# Seed cases on every interpreter: the same driver processes from a plain loop.
seeds=("$root/cases/gc/reducer-override-cycle.yaml" "$root/cases/customisation/dispatch-table-class-attribute.yaml" "$root/cases/customisation/dispatch-table-descriptor-set.yaml")
"$bin" "${seeds[@]}" --json "$work/seeds.json" -j "$jobs" >/dev/null || true
"$python" - "$work/seeds.json" "$root" "$work" > "$work/seed-jobs.txt" <<'PY'
import json, sys, os
results = json.load(open(sys.argv[1]))
exe = {i["label"]: i["executable"] for i in results["interpreters"]}
work = sys.argv[3]
# one line per executed run: interpreter, case file, params literal
for r in results["runs"]:
    if r["verdict"] == "skipped":
        continue
    params = "{" + ", ".join("u%s: u%s" % (json.dumps(k), json.dumps(v)) for k, v in r["params"].items()) + "}"
    print("%s\t%s\t%s" % (exe[r["python"]], os.path.join(work, "code", r["case"] + ".py"), params))
PY
mkdir -p "$work/code"
for f in "${seeds[@]}"; do
  id=$(basename "$f" .yaml)
  "$python" -c 'import sys
lines = open(sys.argv[1]).read().split("\n")
start = lines.index("code: |") + 1
out = []
for l in lines[start:]:
    if l and not l.startswith("  "): break
    out.append(l[2:])
open(sys.argv[2], "w").write("\n".join(out))' "$f" "$work/code/$id.py"
done
seed_loop() {
  tr '\t' '\001' < "$work/seed-jobs.txt" | xargs -P "$jobs" -d '\n' -I{} sh -c 'IFS=$(printf "\001"); set -- $1; d=$(mktemp -d "'"$work"'/runs/XXXXXX"); cd "$d"; cp "$2" case.py; PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1 PYTHONFAULTHANDLER=1 "$1" "'"$work"'/driver.py" "$d/case.py" "$d/result" "$3"; rm -rf "$d"' _ {}
}
seed_harness() { "$bin" "${seeds[@]}" -j "$jobs"; }
t_seed_loop=$(best seed_loop)
t_seed=$(best seed_harness)
printf 'seed cases on every interpreter (%s processes), -j %s\n' "$(wc -l < "$work/seed-jobs.txt")" "$jobs"
printf '  driver loop (same procs) %.3fs\n' "$t_seed_loop"
printf '  crosspickle              %.3fs   = %.2fx\n' "$t_seed" "$(echo "$t_seed / $t_seed_loop" | bc -l)"

# Memory: peak RSS for 200 and 2,000 runs.
for n in 200 2000; do
  kb=$( (/usr/bin/time -f '%M' "$bin" "$work/cases$n" --pythons-toml /dev/null --python "$python" -j "$jobs" >/dev/null) 2>&1 | tail -1)
  printf 'peak memory, %5s runs: %s kB\n' "$n" "$kb"
done
