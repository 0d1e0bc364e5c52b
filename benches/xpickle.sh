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
# 2. The same work as crosspickle cases, benches/xpickle/*.yaml: pickletester's objects
#    written out in the cases, each a named check, bounced with relay/reload, each protocol,
#    the C and the Python pickler as dump_params, on the same pairs (3.15 produces and reloads,
#    2.7 and 3.6 to 3.14 load and relay), -j JOBS.
# Each is timed with /usr/bin/time (wall, and the CPU of the process and every child it
# waited for), and the two are compared per transfer (a bounce of one object: the peer's
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

run_peer() {
  fetch_peer
  rm -rf "$peer_dir/bin" && mkdir -p "$peer_dir/bin"
  local w
  for w in "${workers[@]}"; do ln -s "${w#*=}" "$peer_dir/bin/python${w%%=*}"; done
  echo "== the peer: test_xpickle of libpython3.15-testsuite $(cut -d' ' -f2 "$peer_dir/installed.stamp"), $("$py315" -V)"
  echo "   workers: $(cd "$peer_dir/bin" && echo *)"
  local status=0
  (cd "$out" && PATH="$peer_dir/bin:$PATH" XPICKLE_PEER_PATH="$peer_dir/usr/lib/python3.15/test" \
    XPICKLE_COUNTS="$out/peer-counts.json" \
    /usr/bin/time -o "$out/peer-time" -f "$fmt" \
    "$py315" "$root/benches/xpickle/peer.py" -u xpickle -v test_xpickle >"$out/peer.log" 2>&1) || status=$?
  grep -E '^(Ran |OK|FAILED|Total duration|Result)' "$out/peer.log" | sed 's/^/   /'
  [[ $status == 0 ]] || echo "   (test_xpickle exited $status: see $out/peer.log)"
  read -r peer_wall peer_user peer_sys peer_rss < <(tail -1 "$out/peer-time")
  read -r peer_bounces peer_starts < <("$py315" -c '
import json, sys
c = json.load(open(sys.argv[1]))
print(c["bounces"], c["worker_starts"])' "$out/peer-counts.json")
  echo "   skipped: $(grep -c ' skipped ' "$out/peer.log") tests ($(grep -o "skipped '[^']*'" "$out/peer.log" | sort | uniq -c | sort -rn | head -3 | tr -s ' ' | paste -sd';'))"
  printf '   %s s wall, %s s CPU (%s user + %s system), %s bounces, %s worker starts\n' \
    "$peer_wall" "$(echo "$peer_user + $peer_sys" | bc)" "$peer_user" "$peer_sys" "$peer_bounces" "$peer_starts"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
want peer && run_peer
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "outputs in $out"
