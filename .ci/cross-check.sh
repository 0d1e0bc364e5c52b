#!/usr/bin/env bash
# Type-check crosspickle for macOS and Windows from Linux: `cargo check` (lib, bin and the unit
# tests) for aarch64-apple-darwin, x86_64-apple-darwin and x86_64-pc-windows-msvc, so that code
# outside `cfg(unix)` that uses a Unix-only API (or a Windows side that does not build) fails
# CI. Nothing is linked or run: no macOS or Windows linker is needed, and nothing here says the
# code works there. x86_64-pc-windows-gnu is left to .ci/wine-check.sh, which builds the binary
# and the unit tests for it with this toolchain (a check of its own would only repeat that).
#
# The machine's rustup has the standard library for its own target only, so the standard library
# is built from source (`-Zbuild-std`, allowed on a release compiler by RUSTC_BOOTSTRAP=1) with
# Debian sid's rustc, cargo and rust-src, which are one release and their sources. Debian 12
# cannot install them with apt (they need a newer C library), so they are downloaded with an apt
# configuration of our own (its own sources list and lists folder: the machine's apt is left as
# it is), unpacked with `dpkg-deb -x` into DIR, and rustc, rustdoc and cargo are pointed at the
# prefix's loader and libraries (patchelf). A second run finds the stamp and installs nothing.
#
# The standard library of x86_64-pc-windows-gnu needs x86_64-w64-mingw32-dlltool even to be
# checked (Debian's binutils-mingw-w64-x86-64, which .ci/run installs).
#
# Usage: .ci/cross-check.sh [--force] [DIR]   (DIR default: target/cross-rust; the check's own
# target folder is target/cross-check). CROSSPICKLE_CROSS_TARGETS overrides the target list.
# The Debian mirror is the one the machine's own apt sources name (CROSSPICKLE_DEBIAN_MIRROR
# overrides it).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
force=0
dir=""
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "cross-check: unknown option $arg (see --help)" >&2; exit 2 ;;
    *) [ -z "$dir" ] || { echo "cross-check: one DIR only" >&2; exit 2; }; dir="$arg" ;;
  esac
done
dir="${dir:-$here/target/cross-rust}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
targets="${CROSSPICKLE_CROSS_TARGETS:-aarch64-apple-darwin x86_64-apple-darwin x86_64-pc-windows-msvc}"

# What is installed: these packages of sid and what they depend on (apt resolves it).
pkgs="rustc cargo rust-src"
spec="$(printf '%s\n' "layout 1" "$dir" "sid: $pkgs")"
stamp="$dir/installed.stamp"
prefix="$dir/sid"
libdir="$prefix/usr/lib/x86_64-linux-gnu"

case " $targets " in
  *-windows-gnu*) command -v x86_64-w64-mingw32-dlltool >/dev/null ||
    { echo "cross-check: x86_64-w64-mingw32-dlltool is missing (apt-get install binutils-mingw-w64-x86-64)" >&2; exit 2; } ;;
esac

exec 9>"$dir/.lock"
flock 9

installed() {
  [ -f "$stamp" ] && [ "$(sed -n '1,/^--$/p' "$stamp" | sed '$d')" = "$spec" ] &&
    "$prefix/usr/bin/rustc" -V >/dev/null 2>&1 && "$prefix/usr/bin/cargo" -V >/dev/null 2>&1
}

# The machine's Debian mirror: the first URI of its sources whose suite is its own codename.
find_mirror() {
  local codename mirror="${CROSSPICKLE_DEBIAN_MIRROR:-}"
  codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
  [ -n "$mirror" ] || mirror="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v c="$codename" '
      /^URIs:/ { uri = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == c) { print uri; exit } }
      /^$/ { uri = "" }')"
  [ -n "$mirror" ] || mirror="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk -v c="$codename" '
      $1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                    if ($(i + 1) == c) { print $i; exit } }')"
  [ -n "$mirror" ] || { echo "cross-check: no Debian mirror found in /etc/apt/sources.list*; set CROSSPICKLE_DEBIAN_MIRROR" >&2; exit 2; }
  echo "$mirror"
}

install_toolchain() {
  local start=$SECONDS mirror apt_dir
  mirror="$(find_mirror)"
  # A private apt: its own sources list, lists, cache and (empty) status; the machine's
  # config (proxies) still applies.
  apt_dir="$dir/apt"
  rm -rf "$prefix" "$apt_dir/debs"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs" "$prefix"
  printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s sid main\n' "$mirror" \
    >"$apt_dir/sources.list"
  : >"$apt_dir/status"
  local apt_opts=(
    -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/none"
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::State::status=$apt_dir/status"
    -o "Dir::Cache=$apt_dir/cache" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root"
    -o "Acquire::Languages=none"
    -o "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false"
    -o "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false"
    -o "Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false"
    -o "Acquire::IndexTargets::deb::DEP-11-icons-hidpi::DefaultEnabled=false"
    -o "Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled=false"
  )
  echo "cross-check: package lists of sid from $mirror"
  apt-get "${apt_opts[@]}" -qq update
  # Everything the packages need, as apt would install it on an empty system.
  local closure
  closure="$(apt-get "${apt_opts[@]}" -s install --no-install-recommends $pkgs | awk '/^Inst /{ print $2 }')"
  [ -n "$closure" ] || { echo "cross-check: apt resolved nothing for $pkgs" >&2; exit 1; }
  echo "cross-check: downloading $(echo $closure | wc -w) packages of sid"
  (cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" -qq download $(printf '%s/sid ' $closure))
  : >"$dir/.versions"
  local deb
  for deb in "$apt_dir/debs"/*.deb; do
    dpkg-deb -x "$deb" "$prefix"
    echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)" >>"$dir/.versions"
  done
  rm -rf "$apt_dir/debs"
  # The programs use the prefix's loader and libraries (its C library is newer than the
  # machine's); a library's own RUNPATH (LLVM's) would hide the programs' RPATH from its
  # dependencies, so it is pointed at its own folder.
  local bin lib
  for bin in rustc rustdoc cargo; do
    patchelf --set-interpreter "$libdir/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$libdir" \
      "$prefix/usr/bin/$bin"
  done
  for lib in "$libdir"/*.so*; do
    [ -L "$lib" ] || [ -z "$(patchelf --print-rpath "$lib" 2>/dev/null)" ] || patchelf --set-rpath '$ORIGIN' "$lib"
  done
  "$prefix/usr/bin/rustc" -V && "$prefix/usr/bin/cargo" -V
  [ -f "$prefix/usr/lib/rustlib/src/rust/library/Cargo.lock" ] ||
    { echo "cross-check: rust-src has no library/Cargo.lock" >&2; exit 1; }
  { echo "$spec"; echo "--"; cat "$dir/.versions"; } >"$stamp"
  echo "cross-check: toolchain installed in $prefix ($((SECONDS - start)) s)"
}

if [ "$force" = 1 ] || ! installed; then
  rm -f "$stamp"
  install_toolchain
fi
exec 9>&-

# The check. The standard library of each target is built once into the target folder and
# reused; the checked code runs no build script or proc macro of the target (those are built
# for this machine, with its `cc`).
cd "$here"
export RUSTC="$prefix/usr/bin/rustc" RUSTDOC="$prefix/usr/bin/rustdoc" RUSTC_BOOTSTRAP=1
failed=""
log="$here/target/cross-check.log"
mkdir -p "$here/target"
for target in $targets; do
  # One pass with the test profile: the lib and the binary as their unit tests see them, which
  # type-checks every item of the normal build too (the code has no `cfg(not(test))`), and
  # builds the standard library and the dependencies once per target, not twice.
  for what in "--lib --bins --profile test"; do
    echo "cross-check: cargo check --target $target $what"
    status=0
    "$prefix/usr/bin/cargo" check --quiet --locked -Zbuild-std --target "$target" \
      --target-dir "$here/target/cross-check" $what --message-format short >"$log" 2>&1 || status=$?
    grep -v '^ *\(Compiling\|Checking\|Downloaded\|Downloading\|Updating\|Locking\)' "$log" || true
    [ "$status" = 0 ] || failed="$failed $target($what)"
  done
done
if [ -n "$failed" ]; then
  echo "cross-check: FAILED for$failed" >&2
  exit 1
fi
echo "cross-check: crosspickle type-checks for $targets"
