#!/usr/bin/env bash
# What crosspickle costs, measured side by side in one run, with interleaved repetitions
# (every repetition runs each contender once, in a rotating order) and medians, so that load
# from other work on the machine falls on every contender alike.
#
# 1. 200 trivial runs (`code: pass`, one interpreter, -j JOBS): a plain
#    `seq 200 | xargs -P JOBS -I{} python -c pass` loop (the floor of exec isolation: bare
#    interpreter starts), crosspickle --isolation exec, crosspickle --isolation fork, and a
#    Python loop forking 200 children JOBS at a time, each ending as a quiet forked run does
#    (its atexit handlers, then os._exit: the floor of fork isolation, the bare fork; a floor
#    whose children were finalised cost more than crosspickle's quiet endings).
# 2. The corpus's standard-library `code` runs on PYTHON (every params combination; no
#    `requires`, no round trips): crosspickle --isolation fork and exec against the in-process
#    peer, a loop that runs the same runs one after another in one interpreter without any
#    isolation, as a test runner like pytest does (compile, exec in a fresh `__main__` dict
#    with the params bound, catch what it raises). Reading the cases needs a python3 with
#    PyYAML (Debian's python3-yaml); without it this part is left out.
# 3. The whole corpus (cases/) on every interpreter found, --isolation exec against fork.
# 4. Peak memory of crosspickle and of all its fork servers together (RSS and PSS, sampled
#    every 50 ms) during a corpus run with fork isolation, and of crosspickle for 2,000 runs.
# Wall time and CPU time (of every process involved) are both given: on a machine busy with
# other work, wall time also depends on the scheduler's share (each run's own session is its
# own autogroup, the xargs loop's processes share one).
# The load average is printed before and after.
#
# Usage: benches/overhead.sh [PYTHON] [JOBS] [REPEATS] [CORPUS_REPEATS]
#   defaults: pyenv's python3.12, the number of cores, 7, 3   (builds --release)
#   OVERHEAD_PARTS="trivial peer corpus memory" (the default) chooses the parts to measure;
#   OVERHEAD_BIN=path measures that crosspickle instead of building this one;
#   OVERHEAD_OLD_BIN=path also measures an older build (a release build of an earlier commit)
#   in part 1, interleaved with the others: its row gives its exec ratio to the floor and the
#   two builds' ratio, and a last line puts the two builds' exec ratios to the floor side by
#   side (wall and CPU), so that a change that makes every run dearer shows in its note. On a
#   loaded machine compare the CPU ratios: wall time then depends on the scheduler's share.
# Example, this checkout against the build of an earlier commit, exec isolation only:
#   git worktree add /tmp/old COMMIT && (cd /tmp/old && cargo build --release)
#   OVERHEAD_OLD_BIN=/tmp/old/target/release/crosspickle OVERHEAD_PARTS=trivial \
#     benches/overhead.sh ~/.pyenv/versions/3.12.1/bin/python3.12 2 7
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
  exit 0
fi
root=$(cd "$(dirname "$0")/.." && pwd)
python=${1:-$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.*/bin/python3.12 2>/dev/null | tail -1)}
# PYTHON is a command the floors run as they are: a crosspickle request such as `3.12` is not
# one, and a floor that cannot start would measure nothing (0.01 s) and every ratio with it.
if ! "$python" -c pass >/dev/null 2>&1; then
  echo "overhead: PYTHON \`$python\` does not run \`-c pass\`: give an interpreter's path or command (such as ~/.pyenv/versions/3.12.1/bin/python3.12), not a crosspickle request" >&2
  exit 2
fi
jobs=${2:-$(nproc)}
repeats=${3:-7}
corpus_repeats=${4:-3}
parts=" ${OVERHEAD_PARTS:-trivial peer corpus memory} "
want() { [[ $parts == *" $1 "* ]]; }
cd "$root" # its pythons.toml names the interpreters discovery does not find
old_bin=${OVERHEAD_OLD_BIN:-}
if [[ -n $old_bin && ! -x $old_bin ]]; then
  echo "OVERHEAD_OLD_BIN: $old_bin is not an executable" >&2
  exit 2
fi
if [[ -n ${OVERHEAD_BIN:-} ]]; then
  bin=$OVERHEAD_BIN # another build to measure, main's for one
else
  cargo build --release --quiet
  bin="$root/target/release/crosspickle"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The cache of probes and of the corpus's `requires` environments is kept between runs of
# this script (warm runs are what is measured).
export CROSSPICKLE_CACHE_DIR=${CROSSPICKLE_CACHE_DIR:-$root/target/bench-cache}

make_case() { # $1 = number of runs
  mkdir -p "$work/cases$1"
  { echo "title: trivial"; echo "params:"; printf "  n: ["; seq -s, 1 "$1" | tr -d '\n'; echo "]"; echo "code: pass"; } \
    > "$work/cases$1/trivial.yaml"
}
make_case 200
make_case 2000

measure() { # append "wall cpu" (seconds) of "$@" to file $1
  # CPU is that of every process "$@" waited for, and they for theirs (a fork server reaps its
  # runs, crosspickle its servers): GNU time's, which adds nothing to a fork or an exit, where
  # counting with perf would (and so would slow fork isolation most).
  local out=$1 t0 t1
  shift
  t0=$(date +%s.%N)
  /usr/bin/time -f '%U %S' -o "$work/time.out" "$@" >/dev/null 2>&1 || true
  t1=$(date +%s.%N)
  echo "$(echo "$t1 - $t0" | bc -l) $(awk 'END {print $1 + $2}' "$work/time.out")" >> "$out"
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
wall() { cut -d' ' -f1 "$1" | median; }
cpu() { cut -d' ' -f2 "$1" | median; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

xargs_loop() { seq 200 | xargs -P "$jobs" -I{} "$python" -c pass; }
# shellcheck disable=SC2016
fork_floor='import atexit, os, sys
n, j = int(sys.argv[1]), int(sys.argv[2])
running = started = 0
while started < n or running:
    while running < j and started < n:
        if os.fork() == 0:
            atexit._run_exitfuncs()  # the quiet ending of a forked run, and nothing more
            os._exit(0)
        running += 1
        started += 1
    os.wait()
    running -= 1'

echo "load average before: $(load)   ($(nproc) cores)"

# 1. 200 trivial runs.
if want trivial; then
"$bin" "$work/cases200" --pythons-toml /dev/null --python "$python" >/dev/null 2>&1 || true # warm the probe cache
contenders="xargs exec fork floor"
if [[ -n $old_bin ]]; then
  "$old_bin" "$work/cases200" --pythons-toml /dev/null --python "$python" >/dev/null 2>&1 || true
  contenders="xargs exec old fork floor"
fi
: > "$work/t-xargs"; : > "$work/t-exec"; : > "$work/t-fork"; : > "$work/t-floor"; : > "$work/t-old"
read -r -a order <<< "$contenders"
for i in $(seq "$repeats"); do
  for who in "${order[@]}"; do
    case $who in
      xargs) measure "$work/t-xargs" bash -c "$(declare -f xargs_loop); python=$python jobs=$jobs xargs_loop" ;;
      floor) measure "$work/t-floor" "$python" -c "$fork_floor" 200 "$jobs" ;;
      old) measure "$work/t-old" "$old_bin" "$work/cases200" --pythons-toml /dev/null --python "$python" -j "$jobs" --isolation exec ;;
      *) measure "$work/t-$who" "$bin" "$work/cases200" --pythons-toml /dev/null --python "$python" -j "$jobs" --isolation "$who" ;;
    esac
  done
  order=("${order[@]:1}" "${order[0]}") # the next repetition starts with the next contender
done
tx=$(wall "$work/t-xargs"); te=$(wall "$work/t-exec"); tf=$(wall "$work/t-fork")
cx=$(cpu "$work/t-xargs"); ce=$(cpu "$work/t-exec"); cf=$(cpu "$work/t-fork")
tl=$(wall "$work/t-floor"); cl=$(cpu "$work/t-floor")
printf '200 trivial runs on %s, -j %s (medians of %s interleaved)       wall        CPU\n' "$python" "$jobs" "$repeats"
printf '  xargs -P %s -I{} python -c pass                     %7.2fs  %7.2fs\n' "$jobs" "$tx" "$cx"
printf '  crosspickle --isolation exec                        %7.2fs  %7.2fs   = %.2fx / %.2fx the xargs loop\n' "$te" "$ce" "$(echo "$te / $tx" | bc -l)" "$(echo "$ce / ($cx + 0.000001)" | bc -l)"
if [[ -n $old_bin ]]; then
  to=$(wall "$work/t-old"); co=$(cpu "$work/t-old")
  printf '  the older build, --isolation exec                   %7.2fs  %7.2fs   = %.2fx / %.2fx the xargs loop; this build / the older = %.2fx / %.2fx\n' "$to" "$co" "$(echo "$to / $tx" | bc -l)" "$(echo "$co / ($cx + 0.000001)" | bc -l)" "$(echo "$te / $to" | bc -l)" "$(echo "$ce / ($co + 0.000001)" | bc -l)"
  echo "    (the older build: $old_bin)"
  printf '  exec isolation / the xargs loop, wall and CPU: this build %.2fx / %.2fx, the older build %.2fx / %.2fx\n' \
    "$(echo "$te / $tx" | bc -l)" "$(echo "$ce / ($cx + 0.000001)" | bc -l)" "$(echo "$to / $tx" | bc -l)" "$(echo "$co / ($cx + 0.000001)" | bc -l)"
fi
printf '  crosspickle --isolation fork                        %7.2fs  %7.2fs   exec / fork = %.2fx / %.2fx\n' "$tf" "$cf" "$(echo "$te / $tf" | bc -l)" "$(echo "$ce / ($cf + 0.000001)" | bc -l)"
printf '  python forking 200 children, each ending quietly    %7.2fs  %7.2fs   fork isolation adds %.2f ms wall, %.2f ms CPU a run\n' "$tl" "$cl" "$(echo "($tf - $tl) * 1000 / 200" | bc -l)" "$(echo "($cf - $cl) * 1000 / 200" | bc -l)"

fi

# 2. The corpus's standard-library code runs against the in-process peer.
peer_runs() { # the cases with `code` and no `requires`, copied to $work/peer, and their runs on $python
  python3 - "$root/cases" "$work/peer" <<'PY' || return 1
import os, shutil, sys, yaml
src, dst = sys.argv[1], sys.argv[2]
for folder, _, files in os.walk(src):
    for name in sorted(files):
        if name.endswith((".yaml", ".yml")):
            path = os.path.join(folder, name)
            case = yaml.safe_load(open(path))
            if isinstance(case, dict) and "code" in case and "requires" not in case:
                to = os.path.join(dst, os.path.relpath(path, src))
                os.makedirs(os.path.dirname(to), exist_ok=True)
                shutil.copy(path, to)
PY
  "$bin" "$work/peer" --pythons-toml /dev/null --python "$python" -j "$jobs" --json "$work/peer.json" >/dev/null 2>&1 || true
  # Each run the corpus made (skipped ones are not runs): its code and params, for the peer.
  python3 - "$work/peer.json" "$work/peer" > "$work/peer-runs.json" <<'PY'
import json, os, sys, yaml
results = json.load(open(sys.argv[1]))
paths = {case: info["path"] for case, info in results["cases"].items()}
runs = []
for run in results["runs"]:
    if run["verdict"] == "skipped" or "outcome" not in run:
        continue
    path = paths[run["case"]]
    if not os.path.isabs(path):
        path = os.path.join(os.getcwd(), path)
    case = yaml.safe_load(open(path))
    runs.append({"path": path, "code": case["code"], "preload": case.get("preload", []), "params": run["params"]})
json.dump(runs, sys.stdout)
PY
}
# The in-process peer: every run in this one interpreter, nothing isolated (what a case leaves
# behind, its recursion limit, trace and profile functions, is put back for the next one).
# shellcheck disable=SC2016
peer_loop='import json, sys
runs = json.load(open(sys.argv[1]))
limit = sys.getrecursionlimit()
for run in runs:
    main = dict(run["params"], __name__="__main__", __file__=run["path"], __builtins__=__builtins__)
    try:
        for name in run["preload"]:
            __import__(name)
        exec(compile(run["code"], run["path"], "exec"), main)
    except BaseException:
        pass
    sys.settrace(None)
    sys.setprofile(None)
    sys.setrecursionlimit(limit)'
if ! want peer; then
  :
elif command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null && peer_runs; then
  nruns=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$work/peer-runs.json")
  : > "$work/p-peer"; : > "$work/p-exec"; : > "$work/p-fork"
  for i in $(seq "$repeats"); do
    case $((i % 3)) in
      0) order="peer exec fork" ;;
      1) order="exec fork peer" ;;
      2) order="fork peer exec" ;;
    esac
    for who in $order; do
      case $who in
        peer) measure "$work/p-peer" "$python" -c "$peer_loop" "$work/peer-runs.json" ;;
        *) measure "$work/p-$who" "$bin" "$work/peer" --pythons-toml /dev/null --python "$python" -j "$jobs" --isolation "$who" ;;
      esac
    done
  done
  tp=$(wall "$work/p-peer"); te=$(wall "$work/p-exec"); tf=$(wall "$work/p-fork")
  cp=$(cpu "$work/p-peer"); ce=$(cpu "$work/p-exec"); cf=$(cpu "$work/p-fork")
  printf "the corpus's %s standard-library code runs on %s, -j %s (medians of %s interleaved)   wall  CPU\n" "$nruns" "$python" "$jobs" "$repeats"
  printf '  in one interpreter, no isolation (the in-process peer) %7.2fs  %7.2fs\n' "$tp" "$cp"
  printf '  crosspickle --isolation fork                        %7.2fs  %7.2fs   = %.2fx / %.2fx the in-process peer\n' "$tf" "$cf" "$(echo "$tf / $tp" | bc -l)" "$(echo "$cf / ($cp + 0.000001)" | bc -l)"
  printf '  crosspickle --isolation exec                        %7.2fs  %7.2fs   = %.2fx / %.2fx the in-process peer\n' "$te" "$ce" "$(echo "$te / $tp" | bc -l)" "$(echo "$ce / ($cp + 0.000001)" | bc -l)"
  echo "load average: $(load)"
else
  echo "the in-process peer is left out: it reads the cases with a python3 that has PyYAML (python3-yaml)"
fi

# 3. The whole corpus, both isolations.
if want corpus; then
"$bin" "$root/cases" -j "$jobs" >/dev/null 2>&1 || true # warm: probes and the environments of `requires`
: > "$work/c-exec"; : > "$work/c-fork"
for i in $(seq "$corpus_repeats"); do
  if ((i % 2)); then order="exec fork"; else order="fork exec"; fi
  for iso in $order; do measure "$work/c-$iso" "$bin" "$root/cases" -j "$jobs" --isolation "$iso"; done
done
ce=$(wall "$work/c-exec"); cf=$(wall "$work/c-fork"); ue=$(cpu "$work/c-exec"); uf=$(cpu "$work/c-fork")
summary=$("$bin" "$root/cases" -j "$jobs" --isolation fork 2>/dev/null | tail -1 || true)
printf 'the corpus on every interpreter found, -j %s (medians of %s interleaved): %s\n' "$jobs" "$corpus_repeats" "$summary"
printf '  --isolation exec %7.2fs wall %7.2fs CPU\n' "$ce" "$ue"
printf '  --isolation fork %7.2fs wall %7.2fs CPU   exec / fork = %.2fx / %.2fx\n' "$cf" "$uf" "$(echo "$ce / $cf" | bc -l)" "$(echo "$ue / ($uf + 0.000001)" | bc -l)"

fi

# 4. Memory: crosspickle's peak, and all fork servers together, sampled during a corpus run.
if want memory; then
"$bin" "$root/cases" -j "$jobs" --isolation fork > /dev/null 2>&1 &
pid=$!
python3 - "$pid" > "$work/servers" <<'PY'
import os, sys, time
parent = sys.argv[1]
peak_rss = peak_pss = peak_n = 0
self_peak = 0
while os.path.exists("/proc/%s" % parent):
    rss = pss = n = 0
    try:
        status = open("/proc/%s/status" % parent).read()
        self_peak = max(self_peak, int(status.split("VmHWM:")[1].split()[0]))
    except (OSError, IndexError):
        pass
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = open("/proc/%s/stat" % pid).read()
            if stat.rsplit(")", 1)[1].split()[1] != parent:
                continue
            argv = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")
            if len(argv) < 2 or argv[1] != b"-c":
                continue
            for line in open("/proc/%s/smaps_rollup" % pid):
                if line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1])
            n += 1
        except (OSError, IndexError):
            continue
    peak_rss, peak_pss, peak_n = max(peak_rss, rss), max(peak_pss, pss), max(peak_n, n)
    time.sleep(0.05)
print("%d %d %d %d" % (self_peak, peak_n, peak_rss, peak_pss))
PY
wait "$pid" || true
read -r self_kb servers rss_kb pss_kb < "$work/servers"
printf 'memory during the corpus run with fork servers: crosspickle %.1f MB; servers at most %s alive, together at most %.1f MB RSS, %.1f MB PSS\n' \
  "$(echo "$self_kb / 1024" | bc -l)" "$servers" "$(echo "$rss_kb / 1024" | bc -l)" "$(echo "$pss_kb / 1024" | bc -l)"
kb=$( (/usr/bin/time -f '%M' "$bin" "$work/cases2000" --pythons-toml /dev/null --python "$python" -j "$jobs" --isolation fork >/dev/null) 2>&1 | tail -1)
printf 'crosspickle peak memory for 2,000 runs: %.1f MB\n' "$(echo "$kb / 1024" | bc -l)"
fi

echo "load average after: $(load)"
