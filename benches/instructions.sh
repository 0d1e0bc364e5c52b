#!/usr/bin/env bash
# What one exec'd run costs over starting the interpreter, in instructions (valgrind's
# callgrind), which other work on the machine does not change, as it changes wall and CPU time.
# For each PYTHON: a trivial case (`code: pass`) is run twice with --isolation exec (the probe,
# the driver's compiled form and the case's are kept in a cache folder of this script's own),
# then once more with the interpreter started under callgrind through a wrapper that also notes
# the environment crosspickle gave it; then `python -c pass` is counted in that same environment.
# Printed: both counts, their ratio and difference, for this build and, with OVERHEAD_OLD_BIN,
# for an older one beside it.
#
# Usage: benches/instructions.sh PYTHON...   (needs valgrind; builds the debug binary: what
#   is counted is the interpreter's work, not crosspickle's)
#   OVERHEAD_BIN=path counts that crosspickle instead of building this one;
#   OVERHEAD_OLD_BIN=path counts an older build too.
set -euo pipefail
if [[ $# -eq 0 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
  exit 0
fi
command -v valgrind >/dev/null || { echo "valgrind is needed" >&2; exit 3; }
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ -n ${OVERHEAD_BIN:-} ]]; then
  bin=$OVERHEAD_BIN
else
  (cd "$root" && cargo build --quiet)
  bin="$root/target/debug/crosspickle"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/case"
printf 'title: trivial\ncode: pass\n' > "$work/case/trivial.yaml"

count() { # $1 = callgrind's output file: its instruction count
  sed -n 's/^summary: //p' "$1"
}

measure() { # $1 = label, $2 = crosspickle, $3 = python
  local label=$1 cp=$2 python=$3 dir out
  dir=$(mktemp -d "$work/wrap.XXXX")
  out="$dir/cg"
  # The wrapper has the interpreter's name, so that crosspickle sees the same interpreter; it
  # counts a process started on the boot program (`-c` and its text, or its compiled .pyc).
  cat > "$dir/$(basename "$python")" <<EOF
#!/usr/bin/env bash
if [[ -e $dir/count && ( \$1 == -c || \$1 == *.pyc ) ]]; then
  env -0 > "$out.env"
  exec valgrind --tool=callgrind --callgrind-out-file="$out.%p" "$python" "\$@"
fi
exec "$python" "\$@"
EOF
  chmod +x "$dir/$(basename "$python")"
  export CROSSPICKLE_CACHE_DIR="$dir/cache"
  local args=("$work/case" --pythons-toml /dev/null --python "$dir/$(basename "$python")" --isolation exec)
  "$cp" "${args[@]}" >/dev/null 2>&1 || true
  "$cp" "${args[@]}" >/dev/null 2>&1 || true
  touch "$dir/count" # (a file, not a variable: the environment names the case's compiled form)
  "$cp" "${args[@]}" >/dev/null 2>&1 || { echo "$label: the counted run failed" >&2; return 1; }
  local files=("$out".[0-9]*)
  [[ ${#files[@]} -eq 1 ]] || { echo "$label: ${#files[@]} processes counted, not 1 (a compiled form made again?)" >&2; return 1; }
  local run floor
  run=$(count "${files[0]}")
  # The floor, in the environment the run had.
  mapfile -d '' -t env < "$out.env"
  (cd "$dir" && env -i "${env[@]}" valgrind --tool=callgrind --callgrind-out-file="$out.floor" "$python" -c pass >/dev/null 2>&1)
  floor=$(count "$out.floor")
  printf '  %-28s %12d %12d   %.3fx  +%.2f M\n' "$label" "$run" "$floor" \
    "$(echo "$run / $floor" | bc -l)" "$(echo "($run - $floor) / 1000000" | bc -l)"
}

printf '  %-28s %12s %12s   %s\n' "one trivial exec'd run" "instructions" "python -c pass" "ratio, difference"
for python in "$@"; do
  echo "$python"
  measure "this build" "$bin" "$python"
  if [[ -n ${OVERHEAD_OLD_BIN:-} ]]; then
    measure "the older build" "$OVERHEAD_OLD_BIN" "$python"
  fi
done
