#!/usr/bin/env bash
# crosspickle for Windows, linked and run under Wine: the x86_64-pc-windows-gnu build (Debian
# sid's Rust with `-Zbuild-std`, as .ci/cross-check.sh installs it, linked by Debian's
# mingw-w64), its unit tests (`cargo test --lib`, Wine as the target's runner), and the commands
# that need no Python, each compared with what the Linux build prints: `--version`, `schema`,
# `init` in a fresh folder, `list` on the folder init wrote, `merge` of two results files,
# `record --check` on the corpus's recorded pickles and on a copy with one pickle changed.
# No Python runs here: there is no Windows Python on this machine, so no case is run on Windows.
#
# Debian 12's Wine (8.0) has no bcryptprimitives.dll, from which Rust's standard library takes
# random bytes on Windows (ProcessPrng), so no Rust program starts under it: .ci/wine/
# bcryptprimitives.c, built here with mingw-w64, stands in for it in the Wine prefix only.
#
# Usage: .ci/wine-check.sh [TOOLCHAIN_DIR]   (default target/cross-rust, where
# .ci/cross-check.sh installed the toolchain; run that first). Needs gcc-mingw-w64-x86-64 and
# wine (which .ci/run installs), and target/debug/crosspickle (the Linux build to compare with).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
dir="${1:-$here/target/cross-rust}"
prefix="$dir/sid"
target=x86_64-pc-windows-gnu
for tool in x86_64-w64-mingw32-gcc x86_64-w64-mingw32-dlltool wine wineboot wineserver; do
  command -v "$tool" >/dev/null ||
    { echo "wine-check: $tool is missing (apt-get install gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64 wine wine64)" >&2; exit 2; }
done
[ -x "$prefix/usr/bin/cargo" ] || { echo "wine-check: no toolchain in $prefix (run .ci/cross-check.sh first)" >&2; exit 2; }
linux="$here/target/debug/crosspickle"
[ -x "$linux" ] || { echo "wine-check: $linux is missing (cargo build first)" >&2; exit 2; }

start=$SECONDS
export RUSTC="$prefix/usr/bin/rustc" RUSTDOC="$prefix/usr/bin/rustdoc" RUSTC_BOOTSTRAP=1
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
export WINEPREFIX="$here/target/wine-prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
work="$here/target/wine-check"
rm -rf "$work"
mkdir -p "$work"
trap 'wineserver -k 2>/dev/null || true' EXIT

# The Wine prefix, once, with the stand-in DLL.
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  echo "wine-check: making the Wine prefix $WINEPREFIX"
  wineboot -i >/dev/null 2>&1 || true
  wineserver -w
fi
x86_64-w64-mingw32-gcc -O2 -shared -o "$work/bcryptprimitives.dll" .ci/wine/bcryptprimitives.c -ladvapi32
cp "$work/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"

cargo_win() {
  "$prefix/usr/bin/cargo" "$@" --quiet --locked -Zbuild-std --target "$target" \
    --target-dir "$here/target/cross-check"
}
echo "wine-check: cargo build --target $target"
cargo_win build --bin crosspickle
exe="$here/target/cross-check/$target/debug/crosspickle.exe"
echo "wine-check: built in $((SECONDS - start)) s"

echo "wine-check: cargo test --lib --target $target, under Wine"
cargo_win test --lib 2>&1 | tee "$work/unit-tests.log" | grep -E '^test result|FAILED|panicked' || true
grep -q '^test result: ok\.' "$work/unit-tests.log" ||
  { echo "wine-check: the unit tests failed under Wine (see $work/unit-tests.log)" >&2; exit 1; }

failed=0
# Run `crosspickle.exe ARGS` in folder DIR under Wine and `crosspickle ARGS` in its twin DIR.linux;
# their exit codes and outputs must be the same (Windows paths aside, given as SED).
same() {
  local name="$1" sed="$2"; shift 2
  local w="$work/$name" l="$work/$name.linux" wcode=0 lcode=0
  mkdir -p "$w" "$l"
  [ -d "$work/input" ] && cp -r "$work/input/." "$w/" && cp -r "$work/input/." "$l/"
  (cd "$w" && wine "$exe" "$@" >"$work/$name.out" 2>"$work/$name.err") || wcode=$?
  (cd "$l" && "$linux" "$@" >"$work/$name.linux.out" 2>"$work/$name.linux.err") || lcode=$?
  code="$wcode"
  sed -i "$sed" "$work/$name.out" "$work/$name.err"
  if [ "$wcode" != "$lcode" ] || ! cmp -s "$work/$name.out" "$work/$name.linux.out"; then
    echo "wine-check: \`crosspickle $*\` on Windows (exit $wcode) is not the Linux one's (exit $lcode):" >&2
    diff "$work/$name.linux.out" "$work/$name.out" | head -20 >&2 || true
    head -5 "$work/$name.err" >&2
    failed=1
    return
  fi
  if ! diff -r -q "$w" "$l" >/dev/null; then
    echo "wine-check: \`crosspickle $*\` wrote other files on Windows:" >&2
    diff -r "$l" "$w" | head -20 >&2 || true
    failed=1
    return
  fi
  echo "wine-check: crosspickle $* — as on Linux (exit $wcode, $(wc -l <"$work/$name.out") lines)"
}

same version "" --version
same schema "" schema
same init "" init
# list and merge read what init wrote and two results files; paths print with `\` on Windows.
cp -r "$work/init" "$work/input"
cp tests/fixtures/results-v1/fixture.json "$work/input/a.json"
cp tests/fixtures/results-v1/fixture.json "$work/input/b.json"
same list 's|\\|/|g' list cases
same merge "" merge a.json b.json --json merged.json
# record --check runs no Python: the corpus's shipped folder of recorded pickles checked against
# the embedded corpus (exit 0), then a copy with one pickle changed (exit 2, naming that file).
rm -rf "$work/input" && mkdir -p "$work/input"
cp -r cases/corpus-pickles "$work/input/pickles"
same record-check 's|\\|/|g' record --check --corpus --pickles pickles
[ "$code" = 0 ] || { echo "wine-check: record --check refused the corpus's folder (exit $code)" >&2; failed=1; }
for f in "$work/input/pickles"/*.pickle; do tampered="$(basename "$f")" && break; done
printf 'x' >>"$work/input/pickles/$tampered"
same record-check-tampered 's|\\|/|g' record --check --corpus --pickles pickles
if [ "$code" != 2 ] || ! grep -q "$tampered" "$work/record-check-tampered.err"; then
  echo "wine-check: record --check on a changed $tampered: exit $code, not 2 naming it:" >&2
  head -5 "$work/record-check-tampered.err" >&2
  failed=1
fi
[ "$failed" = 0 ] || { echo "wine-check: FAILED" >&2; exit 1; }
echo "wine-check: the Windows build's unit tests and Python-free commands pass under Wine ($((SECONDS - start)) s)"
