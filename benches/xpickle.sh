#!/usr/bin/env bash
# crosspickle's bounces against its peer, CPython's test_xpickle, on the peer's own pairs.
#
# 1. The peer. test_xpickle (CPython 3.14 and 3.15, `-u xpickle`) bounces pickletester's
#    objects through a worker of each older version: pickled here (the C pickler and the Python
#    one, each protocol the worker has), loaded and pickled again by the worker, loaded here.
#    It ships in Debian sid's libpython3.15-testsuite, which this script downloads with an apt
#    configuration of its own (as .ci/newest-pythons.sh does: its own sources list and lists,
#    the machine's Debian mirror) and unpacks into PEER_DIR (default: beside the newest
#    Pythons, NEWEST/../xpickle-peer). The package's version must be the installed 3.15's.
#    test_xpickle finds its workers as `python2.7` and `python3.X` on PATH: PEER_DIR/bin links
#    those names to pyenv's 2.7 and 3.6 to 3.13 and the newest prefix's 3.14 (3.2 to 3.5 are
#    not here, and the peer skips them, saying so). It runs with the newest prefix's 3.15,
#    under benches/xpickle/peer.py, which counts its bounces and worker starts.
# 2. The same work as a crosspickle case, benches/xpickle/pickletester.yaml: pickletester's objects
#    written out in the case, each a named check, bounced with relay/reload, each protocol,
#    the C and the Python pickler as dump_params, on the same pairs (3.15 produces and reloads,
#    2.7 and 3.6 to 3.14 load and relay), -j JOBS.
# Each is timed with /usr/bin/time (wall, and the CPU of the process and every child it
# waited for; crosspickle by benches/xpickle/own_cpu.py, which counts the same and also
# crosspickle's own process apart), and the two are compared per transfer (a bounce of one object: the peer's
# bounces, crosspickle's named checks whose reload ran). The load average is printed before
# and after: on a shared machine compare CPU, not wall.
#
# Usage: benches/xpickle.sh [JOBS]     (default 2)
#   CROSSPICKLE_NEWEST_PYTHONS  the newest Pythons' prefix (.ci/newest-pythons.sh; default
#                               target/newest-pythons); PEER_DIR where the peer goes;
#   XPICKLE_PARTS="peer crosspickle" (the default) chooses the parts; CROSSPICKLE_BIN=path
#   measures that build instead of building --release; XPICKLE_OUT=dir keeps the outputs
#   (the peer's log and counts, crosspickle's JSON) there instead of a temporary folder.
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
  exit 0
fi
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${1:-2}
parts=" ${XPICKLE_PARTS:-peer crosspickle} "
want() { [[ $parts == *" $1 "* ]]; }
newest=$(cd "${CROSSPICKLE_NEWEST_PYTHONS:-$root/target/newest-pythons}" && pwd)
py315="$newest/sid/usr/bin/python3.15"
[[ -x $py315 ]] || { echo "xpickle: no $py315 (run .ci/newest-pythons.sh first)" >&2; exit 3; }
peer_dir=${PEER_DIR:-$(dirname "$newest")/xpickle-peer}
pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
out=${XPICKLE_OUT:-$(mktemp -d)}
mkdir -p "$out"
fmt='%e %U %S %M'

# The worker versions and where each is: pyenv's, and the newest prefix's 3.14.
workers=()
for v in 2.7 3.6 3.7 3.8 3.9 3.10 3.11 3.12 3.13; do
  bin=$(ls -d "$pyenv_root"/versions/"$v".*/bin/python"$v" 2>/dev/null | tail -1)
  [[ -n $bin ]] && workers+=("$v=$bin") || echo "xpickle: no python$v in pyenv, left out"
done
workers+=("3.14=$newest/sid/usr/bin/python3.14")

fetch_peer() {
  local want_version have stamp="$peer_dir/installed.stamp"
  want_version=$(sed -n 's/^sid libpython3.15-stdlib //p' "$newest/installed.stamp")
  if [[ -f $stamp && $(cat "$stamp") == "libpython3.15-testsuite $want_version" ]]; then
    return 0
  fi
  local mirror codename apt_dir="$peer_dir/apt"
  mirror=${CROSSPICKLE_DEBIAN_MIRROR:-}
  if [[ -z $mirror ]]; then
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v c="$codename" '
        /^URIs:/ { uri = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == c) { print uri; exit } }
        /^$/ { uri = "" }')
  fi
  [[ -n $mirror ]] || { echo "xpickle: no Debian mirror found; set CROSSPICKLE_DEBIAN_MIRROR" >&2; exit 3; }
  rm -rf "$peer_dir"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
  printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s sid main\n' "$mirror" \
    >"$apt_dir/sources.list"
  : >"$apt_dir/status"
  local apt_opts=(
    -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/none"
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::State::status=$apt_dir/status"
    -o "Dir::Cache=$apt_dir/cache" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root"
    -o "Acquire::Languages=none"
  )
  echo "xpickle: sid's package lists from $mirror"
  apt-get "${apt_opts[@]}" -qq update
  (cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" -qq download "libpython3.15-testsuite=$want_version")
  dpkg-deb -x "$apt_dir"/debs/libpython3.15-testsuite_*.deb "$peer_dir"
  rm -rf "$apt_dir"
  echo "libpython3.15-testsuite $want_version" >"$stamp"
}

# The pickletester tests whose objects benches/xpickle/*.yaml write out.
same_tests="test_ints test_int_pickling_efficiency test_long test_float test_unicode test_bytes
  test_bytearray test_short_tuples test_singletons test_bytes_memoization
  test_bytearray_memoization test_unicode_memoization test_misc test_builtin_exceptions
  test_builtin_functions test_builtin_types"

# run_peer NAME [REGRTEST ARGS]: the peer under /usr/bin/time; sets NAME_cpu and NAME_bounces.
run_peer() {
  local name=$1 status=0 w
  shift
  fetch_peer
  rm -rf "$peer_dir/bin" && mkdir -p "$peer_dir/bin"
  for w in "${workers[@]}"; do ln -s "${w#*=}" "$peer_dir/bin/python${w%%=*}"; done
  echo "== the peer ($name): test_xpickle of libpython3.15-testsuite $(cut -d' ' -f2 "$peer_dir/installed.stamp"), $("$py315" -V)${*:+, $*}"
  echo "   workers: $(cd "$peer_dir/bin" && ls | sort -V | paste -sd' ')"
  (cd "$out" && PATH="$peer_dir/bin:$PATH" XPICKLE_PEER_PATH="$peer_dir/usr/lib/python3.15/test" \
    XPICKLE_COUNTS="$out/$name-counts.json" \
    /usr/bin/time -o "$out/$name-time" -f "$fmt" \
    "$py315" "$root/benches/xpickle/peer.py" -u xpickle -v "$@" test_xpickle >"$out/$name.log" 2>&1) || status=$?
  grep -E '^(Ran |OK|FAILED)' "$out/$name.log" | sed 's/^/   /' || true
  [[ $status == 0 ]] || echo "   (test_xpickle exited $status: see $out/$name.log)"
  local wall user sys rss bounces starts
  read -r wall user sys rss < <(tail -1 "$out/$name-time")
  read -r bounces starts < <("$py315" -c '
import json, sys
c = json.load(open(sys.argv[1]))
print(c["bounces"], c["worker_starts"])' "$out/$name-counts.json")
  printf '   %s s wall, %s s CPU (%s user + %s system), %s bounces, %s worker starts: %.1f us CPU a bounce\n' \
    "$wall" "$(echo "$user + $sys" | bc)" "$user" "$sys" "$bounces" "$starts" "$(echo "($user + $sys) * 1000000 / $bounces" | bc -l)"
  printf -v "${name}_cpu" %s "$(echo "$user + $sys" | bc)"
  printf -v "${name}_bounces" %s "$bounces"
}

run_crosspickle() {
  local bin=${CROSSPICKLE_BIN:-} status=0 w pythons=$py315
  if [[ -z $bin ]]; then
    (cd "$root" && cargo build --release --quiet)
    bin="$root/target/release/crosspickle"
  fi
  for w in "${workers[@]}"; do pythons="$pythons,${w#*=}"; done
  echo "== crosspickle: benches/xpickle/*.yaml, 3.15 producing and reloading, the workers loading and relaying, -j $jobs ($bin)"
  # The cases by absolute path: their support file is found beside them.
  (cd "$out" && python3 "$root/benches/xpickle/own_cpu.py" "$out/crosspickle-time" \
    "$bin" run --pythons-toml /dev/null --pythons-toml "$newest/pythons.toml" -p "$pythons" \
    -j "$jobs" --json "$out/crosspickle.json" "$root"/benches/xpickle/*.yaml >"$out/crosspickle.log" 2>&1) || status=$?
  tail -1 "$out/crosspickle.log" | sed 's/^/   /'
  [[ $status == 0 ]] || echo "   (crosspickle exited $status: see $out/crosspickle.log)"
  local wall user sys own_user own_sys rss
  read -r wall user sys own_user own_sys rss <"$out/crosspickle-time"
  # A transfer is a bounce of one object: a named check of a reload that ran (not skipped).
  read -r crosspickle_bounces pairs < <("$py315" -c '
import json, sys
runs = [r for r in json.load(open(sys.argv[1]))["runs"] if r["verdict"] != "skipped"]
print(sum(1 for r in runs for c in r.get("checks", ()) if c["phase"] == "reload" and c["verdict"] != "skipped"), len(runs))' "$out/crosspickle.json")
  crosspickle_cpu=$(echo "$user + $sys" | bc)
  printf '   %s s wall, %s s CPU (%s user + %s system), %s pairs run, %s bounces: %.1f us CPU a bounce\n' \
    "$wall" "$crosspickle_cpu" "$user" "$sys" "$pairs" "$crosspickle_bounces" "$(echo "$crosspickle_cpu * 1000000 / $crosspickle_bounces" | bc -l)"
  printf "   of which crosspickle's own process %s s (%s user + %s system, %.0f%%), the interpreters %s s; its peak RSS %s MB\n" \
    "$(echo "$own_user + $own_sys" | bc)" "$own_user" "$own_sys" "$(echo "($own_user + $own_sys) * 100 / $crosspickle_cpu" | bc -l)" \
    "$(echo "$crosspickle_cpu - $own_user - $own_sys" | bc)" "$((rss / 1024))"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
if want peer; then
  run_peer peer
  match=()
  for t in $same_tests; do match+=(-m "$t"); done
  run_peer peer_same "${match[@]}"
fi
want crosspickle && run_crosspickle
if want peer && want crosspickle; then
  printf '== CPU a bounce, crosspickle / the peer on the same objects: %.2fx (the whole peer: %.2fx)\n' \
    "$(echo "($crosspickle_cpu / $crosspickle_bounces) / ($peer_same_cpu / $peer_same_bounces)" | bc -l)" \
    "$(echo "($crosspickle_cpu / $crosspickle_bounces) / ($peer_cpu / $peer_bounces)" | bc -l)"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "outputs in $out"
