#!/usr/bin/env bash
# Where an exec'd run's wall time goes around its interpreter, from the kernel's own events
# (perf's sched tracepoints, recorded for the whole machine): for 200 trivial runs
# (`code: pass`, `--isolation exec`, -j JOBS) and for the `seq 200 | xargs -P JOBS -I{}
# python -c pass` loop, the medians (and quartiles) over the runs of
#   fork->exec        the launcher's fork of a child to the child's exec of python;
#   exec->exit        the child's life: its exec to its exit_group;
#   exit->next fork   a child's exit_group to the launcher's next fork (at -j 1: the same
#                     slot's next run);
#   exit->next exec   the same, to that next child's exec: the time a slot holds no python.
# Each is measured REPEATS times, the contenders interleaved; the load average is printed, as
# other work on the machine moves all of these (least the counts of the runs).
#
# Usage: benches/gaps.sh [PYTHON] [JOBS] [REPEATS]   (defaults: pyenv's 3.12, 1, 2; needs
#   perf with the sched tracepoints, as root)
#   OVERHEAD_BIN=path measures that crosspickle instead of building this one (release);
#   OVERHEAD_OLD_BIN=path measures an older build beside it.
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
  exit 0
fi
command -v perf >/dev/null || { echo "perf is needed" >&2; exit 3; }
root=$(cd "$(dirname "$0")/.." && pwd)
python=${1:-$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.*/bin/python3.12 2>/dev/null | tail -1)}
if ! "$python" -c pass >/dev/null 2>&1; then
  echo "gaps: PYTHON \`$python\` does not run \`-c pass\`: give an interpreter's path" >&2
  exit 2
fi
jobs=${2:-1}
repeats=${3:-2}
if [[ -n ${OVERHEAD_BIN:-} ]]; then
  bin=$OVERHEAD_BIN
else
  (cd "$root" && cargo build --release --quiet)
  bin="$root/target/release/crosspickle"
fi
old_bin=${OVERHEAD_OLD_BIN:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CROSSPICKLE_CACHE_DIR=${CROSSPICKLE_CACHE_DIR:-$root/target/bench-cache}
mkdir -p "$work/cases"
{ echo "title: trivial"; echo "params:"; printf "  n: ["; seq -s, 1 200 | tr -d '\n'; echo "]"; echo "code: pass"; } \
  > "$work/cases/trivial.yaml"
events=sched:sched_process_fork,sched:sched_process_exec,syscalls:sys_enter_exit_group
perf record -q -o "$work/probe.data" -e "$events" -a -- true >/dev/null 2>&1 ||
  { echo "gaps: perf cannot record $events here (root is needed)" >&2; exit 3; }

analyse() { # $1 = perf's data, $2 = the launcher's program, $3 = python: the medians
  perf script -i "$1" 2>/dev/null | python3 -c '
import bisect, re, statistics as st, sys
launcher, child = sys.argv[1][:15], sys.argv[2][:15]
line = re.compile(r"^\s*(.+?)\s+(\d+)\s+\[\d+\]\s+([\d.]+):\s+(\S+):\s*(.*)$")
forks, execs, exits, launches = {}, {}, {}, []
for text in sys.stdin:
    m = line.match(text)
    if not m:
        continue
    comm, pid, t, event, rest = m.group(1), int(m.group(2)), float(m.group(3)), m.group(4), m.group(5)
    if event == "sched:sched_process_fork" and comm == launcher:
        forks[int(re.search(r"child_pid=(\d+)", rest).group(1))] = t
        launches.append(t)
    elif event == "sched:sched_process_exec" and rest.split()[0].endswith("/" + sys.argv[2]):
        execs.setdefault(pid, t)
    elif event == "syscalls:sys_enter_exit_group" and comm == child:
        exits.setdefault(pid, t)
runs = [p for p in execs if p in forks and p in exits]
launches.sort()
by_fork = {t: p for p, t in forks.items()}
def show(name, xs):
    if len(xs) < 3:
        print("  %-16s n/a" % name); return
    q = st.quantiles(xs, n=4)
    print("  %-16s %6.3f ms  (quartiles %.3f, %.3f; %d)" % (name, st.median(xs) * 1e3, q[0] * 1e3, q[2] * 1e3, len(xs)))
nxt_fork, nxt_exec = [], []
for p in runs:
    i = bisect.bisect_right(launches, exits[p])
    if i < len(launches):
        nxt_fork.append(launches[i] - exits[p])
        q = by_fork.get(launches[i])
        if q in execs:
            nxt_exec.append(execs[q] - exits[p])
print("  %d runs" % len(runs))
show("fork->exec", [execs[p] - forks[p] for p in runs])
show("exec->exit", [exits[p] - execs[p] for p in runs])
show("exit->next fork", nxt_fork)
show("exit->next exec", nxt_exec)
' "$(basename "$2")" "$(basename "$3")"
}

record() { # $1 = label, then the command
  local label=$1
  shift
  perf record -q -o "$work/$label.data" -e "$events" -a -- "$@" >/dev/null 2>&1 || true
}

"$bin" "$work/cases" --pythons-toml /dev/null --python "$python" --isolation exec >/dev/null 2>&1 || true # warm
[[ -n $old_bin ]] && { "$old_bin" "$work/cases" --pythons-toml /dev/null --python "$python" --isolation exec >/dev/null 2>&1 || true; }
echo "200 trivial runs on $python, -j $jobs; $(nproc) cores"
for i in $(seq "$repeats"); do
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
  record xargs bash -c "seq 200 | xargs -P $jobs -I{} $python -c pass"
  echo "xargs -P $jobs -I{} python -c pass:"
  analyse "$work/xargs.data" xargs "$python"
  record exec "$bin" "$work/cases" --pythons-toml /dev/null --python "$python" --isolation exec -j "$jobs"
  echo "crosspickle ($bin):"
  analyse "$work/exec.data" "$bin" "$python"
  if [[ -n $old_bin ]]; then
    record old "$old_bin" "$work/cases" --pythons-toml /dev/null --python "$python" --isolation exec -j "$jobs"
    echo "older crosspickle ($old_bin):"
    analyse "$work/old.data" "$old_bin" "$python"
  fi
done
