#!/usr/bin/env bash
# Install the newest Pythons into a private prefix, from Debian's newer suites, on Debian 12:
#   CPython 3.14 and 3.15 and their debug builds (3.14d, 3.15d), from sid;
#   PyPy 3.11 7.3.x without `_pickle`, from trixie; PyPy 3.11 8.x with `_pickle`, from sid;
#   free-threaded CPython 3.13t, built here (`--disable-gil`) from Debian sid's source package
#   of python3.13 3.13.15 (see ft_builds below for 3.14t/3.15t), into DIR/ft/3.13t.
# Debian 12 cannot install these with apt (they need a newer C library), so they are downloaded
# with an apt configuration of our own (its own sources list and lists folder: the machine's apt
# is left as it is), unpacked with `dpkg-deb -x` into DIR/<suite>/, and each interpreter binary
# is pointed at the prefix's loader and libraries (patchelf --set-interpreter, and
# --force-rpath: a DT_RUNPATH would not reach the dependencies of extension modules). ensurepip
# is pointed at the prefix's wheels, sitecustomize at the prefix's /etc.
#
# Every interpreter is verified before DIR/pythons.toml is written: each extension module of its
# standard library imports, with nothing loaded from the host's libraries (LD_DEBUG=libs); a
# multiprocessing spawn child runs; `-m venv` gives a venv whose pip is the prefix's and installs
# a wheel; sys.prefix lies in DIR. A second run finds the stamp and does nothing.
#
# The free-threaded builds: `apt-get source` (the private configuration's deb-src of sid) of a
# python3.X source package, unpacked without Debian's patches (their layout is not the
# free-threaded one); the host's compiler and -dev
# packages (installed with the machine's apt when missing, which needs root); `nice make -j2`;
# installed into DIR/ft/3.Xt and pointed at the sid prefix's loader, libraries and pip wheels,
# then verified as the others are. DIR/ft/3.Xt/built.stamp names the source version it was
# built from: a second run does not build again (nor does reinstalling the other interpreters).
#
# Usage: .ci/newest-pythons.sh [--force] [DIR]     (DIR default: target/newest-pythons)
# The Debian mirror is the one the machine's own apt sources name (CROSSPICKLE_DEBIAN_MIRROR
# overrides it).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
force=0
dir=""
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "newest-pythons: unknown option $arg (see --help)" >&2; exit 2 ;;
    *) [ -z "$dir" ] || { echo "newest-pythons: one DIR only" >&2; exit 2; }; dir="$arg" ;;
  esac
done
dir="${dir:-$here/target/newest-pythons}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

# What goes where. A change here changes the stamp, so the next run installs again.
libs="libc6 libgcc-s1 libssl3t64 libffi8 libexpat1 libzstd1 zlib1g libbz2-1.0 liblzma5
      libsqlite3-0 libncursesw6 libtinfo6 libreadline8t64 libuuid1 libgdbm6t64 libdb5.3t64
      python3-pip-whl python3-setuptools-whl"
cpython_versions="3.14 3.15"
sid_pkgs="$libs pypy3 pypy3-lib pypy3-venv"
for v in $cpython_versions; do
  sid_pkgs="$sid_pkgs python$v python$v-minimal libpython$v-minimal libpython$v-stdlib"
  sid_pkgs="$sid_pkgs python$v-venv python$v-dbg libpython$v-dbg"
done
trixie_pkgs="$libs pypy3 pypy3-lib pypy3-venv"
# name in pythons.toml | prefix | binary in the prefix
interpreters="sid-python3.14|sid|usr/bin/python3.14
sid-python3.14d|sid|usr/bin/python3.14d
sid-python3.15|sid|usr/bin/python3.15
sid-python3.15d|sid|usr/bin/python3.15d
sid-pypy3.11|sid|usr/bin/pypy3.11
trixie-pypy3.11|trixie|usr/bin/pypy3.11"
spec="$(printf '%s\n' "layout 1" "$dir" "sid: $(echo $sid_pkgs)" "trixie: $(echo $trixie_pkgs)" "$interpreters")"
stamp="$dir/installed.stamp"

exec 9>"$dir/.lock"
flock 9

if [ "$force" = 0 ] && [ -f "$stamp" ] && [ "$(sed -n '1,/^--$/p' "$stamp" | sed '$d')" = "$spec" ]; then
  ok=1
  while IFS='|' read -r _ prefix bin; do
    [ -x "$dir/$prefix/$bin" ] && "$dir/$prefix/$bin" -c pass 2>/dev/null || ok=0
  done <<<"$interpreters"
  if [ "$ok" = 1 ]; then
    binaries=installed
  else
    echo "newest-pythons: $dir is incomplete, installing again"
  fi
fi
start=$SECONDS

# Sets up the private apt (below) the first time it is called.
private_apt() {
  [ -z "${apt_opts+set}" ] || return 0

  # The machine's Debian mirror: the first URI of its sources whose suite is its own codename.
  mirror="${CROSSPICKLE_DEBIAN_MIRROR:-}"
  if [ -z "$mirror" ]; then
    codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
    mirror="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v c="$codename" '
        /^URIs:/ { uri = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == c) { print uri; exit } }
        /^$/ { uri = "" }')"
  fi
  if [ -z "$mirror" ]; then
    mirror="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk -v c="$codename" '
        $1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                      if ($(i + 1) == c) { print $i; exit } }')"
  fi
  if [ -z "$mirror" ]; then
    echo "newest-pythons: no Debian mirror found in /etc/apt/sources.list*; set CROSSPICKLE_DEBIAN_MIRROR" >&2
    exit 2
  fi

  # A private apt: its own sources list, lists, cache and (empty) status; the machine's config
  # (proxies) still applies.
  apt_dir="$dir/apt"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  {
    printf 'deb [signed-by=%s] %s %s main\n' "$keyring" "$mirror" sid "$keyring" "$mirror" trixie
    # The free-threaded builds' source packages.
    printf 'deb-src [signed-by=%s] %s %s main\n' "$keyring" "$mirror" sid
  } >"$apt_dir/sources.list"
  : >"$apt_dir/status"
  apt_opts=(
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
  echo "newest-pythons: package lists of sid and trixie from $mirror"
  apt-get "${apt_opts[@]}" -qq update
}

# Download and unpack one suite's packages into DIR/<suite>.
install_prefix() {
  local suite="$1" pkgs="$2" prefix="$dir/$1"
  local debs="$apt_dir/debs/$suite"
  rm -rf "$prefix" "$debs"
  mkdir -p "$prefix" "$debs"
  echo "newest-pythons: downloading $(echo $pkgs | wc -w) packages from $suite"
  (cd "$debs" && apt-get "${apt_opts[@]}" -qq download $(printf "%s/$suite " $pkgs))
  for deb in "$debs"/*.deb; do
    dpkg-deb -x "$deb" "$prefix"
    echo "$suite $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)" >>"$dir/.versions-$suite"
  done
  rm -rf "$debs"
  echo "newest-pythons: $suite unpacked ($((SECONDS - start)) s so far)"
  local libdir="$prefix/usr/lib/x86_64-linux-gnu"
  # ensurepip looks for wheels in WHEEL_PKG_DIR: the host's, unless pointed here.
  local f
  for f in "$prefix"/usr/lib/python3.*/_sysconfigdata*.py "$prefix"/usr/lib/pypy3.*/_sysconfigdata*.py; do
    [ -f "$f" ] && grep -q "'WHEEL_PKG_DIR'" "$f" || continue
    sed -i "s|'WHEEL_PKG_DIR': '/usr/share/python-wheels/'|'WHEEL_PKG_DIR': '$prefix/usr/share/python-wheels/'|" "$f"
    grep -q "'WHEEL_PKG_DIR': '$prefix/" "$f" || { echo "newest-pythons: no WHEEL_PKG_DIR in $f" >&2; exit 1; }
  done
  grep -q "'WHEEL_PKG_DIR': '$prefix/" "$prefix"/usr/lib/pypy3.*/_sysconfigdata*.py ||
    { echo "newest-pythons: PyPy's WHEEL_PKG_DIR was not found in $suite" >&2; exit 1; }
  # sitecustomize.py is an absolute symlink into /etc: point it at the prefix's /etc.
  for f in "$prefix"/usr/lib/python3.*/sitecustomize.py; do
    [ -L "$f" ] || continue
    local target
    target="$(readlink "$f")"
    case "$target" in /*) ln -sfn "$prefix$target" "$f" ;; esac
  done
  local name p bin
  while IFS='|' read -r name p bin; do
    [ "$p" = "$suite" ] || continue
    [ -f "$prefix/$bin" ] || { echo "newest-pythons: $bin is not in the $suite packages" >&2; exit 1; }
    # $ORIGIN stays first for PyPy, whose binary finds libpypy3.*-c.so next to itself.
    local rpath
    rpath="$(patchelf --print-rpath "$prefix/$bin")"
    rpath="${rpath:+$rpath:}$libdir"
    patchelf --set-interpreter "$libdir/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$rpath" "$prefix/$bin"
  done <<<"$interpreters"
}

# Build free-threaded CPython 3.X (from the source package python3.X=VERSION) into DIR/ft/3.Xt.
build_free_threaded() {
  local v="$1" srcver="$2" ft="$dir/ft/$1t" src="$dir/ft/src-$1" tree log step
  rm -rf "$ft" "$src"
  mkdir -p "$src"
  private_apt
  echo "newest-pythons: building free-threaded $v from the source package python$v $srcver"
  # Debian's patches are left out: they give the default install scheme and site.py Debian's
  # layout, which knows no free-threaded lib/python3.Xt (a venv's site-packages would not be
  # on its sys.path, nor ensurepip's pip).
  tree="$src/python$v"
  (cd "$src" && apt-get "${apt_opts[@]}" -qq source --download-only "python$v=$srcver" &&
     dpkg-source --skip-patches -x "python${v}_${srcver#*:}.dsc" "$tree") >"$src/source.log" 2>&1 ||
    { tail -20 "$src/source.log" >&2; echo "newest-pythons: apt-get source python$v=$srcver failed" >&2; exit 1; }
  [ -x "$tree/configure" ] || { echo "newest-pythons: no configure in the source of python$v ($src)" >&2; exit 1; }
  for step in "configure|./configure --prefix=$ft $ft_configure" "build|make -j2" "install|make install"; do
    log="$src/${step%%|*}.log"
    (cd "$tree" && nice ${step#*|} >"$log" 2>&1) ||
      { tail -30 "$log" >&2; echo "newest-pythons: '${step#*|}' of free-threaded $v failed (log: $log)" >&2; exit 1; }
    echo "newest-pythons: free-threaded $v: ${step%%|*} done ($((SECONDS - start)) s so far)"
  done
  [ -x "$ft/bin/python${v}t" ] || { echo "newest-pythons: make install gave no $ft/bin/python${v}t" >&2; exit 1; }
  rm -rf "$src"
}

# The libraries a free-threaded build links that the sid prefix lacks (its _dbm links
# gdbm's ndbm compatibility library, Debian's links Berkeley DB), from sid, into
# DIR/ft/3.Xt/runtime; then the binary is pointed at the sid prefix's loader and libraries
# and at these. Done again when the list changes.
ft_runtime() {
  local ft="$dir/ft/$1t" runtime="$dir/ft/$1t/runtime" deb
  if [ "$(cat "$runtime/.packages" 2>/dev/null)" != "$ft_runtime_pkgs" ]; then
    private_apt
    rm -rf "$runtime" "$runtime.partial"
    mkdir -p "$runtime.partial/debs"
    (cd "$runtime.partial/debs" && apt-get "${apt_opts[@]}" -qq download $(printf "%s/sid " $ft_runtime_pkgs))
    for deb in "$runtime.partial/debs"/*.deb; do dpkg-deb -x "$deb" "$runtime.partial"; done
    rm -rf "$runtime.partial/debs"
    echo "$ft_runtime_pkgs" >"$runtime.partial/.packages"
    mv "$runtime.partial" "$runtime"
  fi
  patchelf --set-interpreter "$dir/sid/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --force-rpath \
    --set-rpath "$dir/sid/usr/lib/x86_64-linux-gnu:$runtime/usr/lib/x86_64-linux-gnu" "$ft/bin/python$1t"
}

# The host's compiler and -dev packages the free-threaded builds need, installed with the
# machine's apt when missing (as root; CI is).
ensure_build_deps() {
  local missing=() pkg
  for pkg in $ft_build_deps; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -gt 0 ] || return 0
  if [ "$(id -u)" != 0 ]; then
    echo "newest-pythons: the free-threaded builds need: apt-get install ${missing[*]} (as root)" >&2
    exit 2
  fi
  echo "newest-pythons: installing the build dependencies ${missing[*]} with the machine's apt"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

if [ "${binaries:-}" != installed ]; then
  rm -f "$stamp" "$dir"/.versions-*
  private_apt
  install_prefix sid "$sid_pkgs"
  install_prefix trixie "$trixie_pkgs"
  to_verify="$(sed 's/^\([^|]*\)|\([^|]*\)|.*$/&|\2/' <<<"$interpreters")"
else
  to_verify=""
fi

# The free-threaded builds: 3.X=VERSION builds the source package python3.X=VERSION of sid; a
# bare 3.X, the version of python3.X the sid prefix holds (so that 3.X and 3.Xt differ in the
# GIL only). The mirror this was written on serves no source of python3.14 or python3.15 (404
# for every version sid's and forky's Sources list), so the one built is 3.13t from sid's
# python3.13 3.13.15-1, whose source it serves; add "3.14" here where the mirror has it. Each
# build's stamp names its source version and the configure options.
ft_builds="3.13=3.13.15-1"
ft_configure="--disable-gil --without-ensurepip --disable-test-modules --without-system-libmpdec
  --with-wheel-pkg-dir=$dir/sid/usr/share/python-wheels"
ft_configure="$(echo $ft_configure)"
ft_build_deps="gcc make pkg-config dpkg-dev patchelf libssl-dev libffi-dev zlib1g-dev libbz2-dev
  liblzma-dev libsqlite3-dev libncurses-dev libreadline-dev uuid-dev libgdbm-dev
  libgdbm-compat-dev libdb-dev libzstd-dev"
ft_runtime_pkgs="libgdbm-compat4t64"
ft_interpreters=""
ft_versions=""
for build in $ft_builds; do
  v="${build%%=*}"
  ft_versions="$ft_versions $v"
  if [ "$build" != "$v" ]; then
    srcver="${build#*=}"
  else
    srcver="$({ cat "$dir"/.versions-sid "$stamp" 2>/dev/null || true; } | sed -n "s/^sid python$v //p" | head -1)"
    [ -n "$srcver" ] || { echo "newest-pythons: no python$v in the sid prefix's versions" >&2; exit 1; }
  fi
  ft_interpreters="$ft_interpreters${ft_interpreters:+$'\n'}ft-python${v}t|ft/${v}t|bin/python${v}t"
  ft_spec="$(printf '%s\n' "ft layout 2" "python$v $srcver, without Debian's patches" "configure: $ft_configure")"
  ft_stamp="$dir/ft/${v}t/built.stamp"
  if [ "$force" = 0 ] && [ -f "$ft_stamp" ] && [ "$(cat "$ft_stamp")" = "$ft_spec" ] &&
     "$dir/ft/${v}t/bin/python${v}t" -c pass 2>/dev/null; then
    continue
  fi
  # Built by an earlier run whose verification failed: verified again, not built again.
  pending="$dir/ft/${v}t/.built.stamp-pending"
  if [ "$force" = 1 ] || [ ! -f "$pending" ] || [ "$(cat "$pending")" != "$ft_spec" ] ||
     ! "$dir/ft/${v}t/bin/python${v}t" -c pass 2>/dev/null; then
    ensure_build_deps
    build_free_threaded "$v" "$srcver"
    printf '%s\n' "$ft_spec" >"$pending"
  fi
  ft_runtime "$v"
  to_verify="$to_verify${to_verify:+$'\n'}ft-python${v}t|ft/${v}t|bin/python${v}t|sid"
done

if [ -z "$to_verify" ]; then
  echo "newest-pythons: already installed in $dir (nothing to do; --force reinstalls)"
  exit 0
fi

# Verify each interpreter.
verify_dir="$dir/.verify"
rm -rf "$verify_dir"
mkdir -p "$verify_dir"
cat >"$verify_dir/check.py" <<'EOF'
# Run by newest-pythons.sh on each installed interpreter: import every extension module of the
# standard library, the ones CI needs by name, run a multiprocessing spawn child.
import importlib, importlib.machinery, json, multiprocessing, os, sys, sysconfig

prefix = os.path.realpath(sys.argv[1])
def inside(path):
    path = os.path.realpath(path)
    return path == prefix or path.startswith(prefix + os.sep)

assert inside(sys.prefix), "sys.prefix %s is not in %s" % (sys.prefix, prefix)
assert inside(sys.executable), sys.executable
outside = [p for p in sys.path[1:] if p and not inside(p)]
assert not outside, "sys.path outside the prefix: %r" % outside

pypy = sys.implementation.name == "pypy"
needed = ["ssl", "_ctypes", "sqlite3", "lzma", "bz2", "zlib", "readline", "hashlib", "pyexpat",
          "_curses", "decimal", "multiprocessing.synchronize", "uuid", "dbm", "zoneinfo"]
if not pypy:
    needed += ["_decimal", "_hashlib", "_uuid", "_pickle", "_multiprocessing", "_posixshmem"]
    if sys.version_info >= (3, 14):
        needed.append("_zstd")
for name in needed:
    importlib.import_module(name)
import ctypes
assert ctypes.CDLL(None).strlen(b"abc") == 3

# Every extension module of the standard library (tkinter aside: Tk is not installed).
suffixes = sorted(importlib.machinery.EXTENSION_SUFFIXES, key=len, reverse=True)
stdlib = sysconfig.get_paths()["stdlib"]
dirs = [(stdlib, "")] + [(os.path.join(stdlib, d), d + ".") for d in sorted(os.listdir(stdlib))
                         if os.path.isdir(os.path.join(stdlib, d)) and d.isidentifier()]
dirs += [(d, "") for d in sys.path if os.path.basename(d) == "lib-dynload"]
imported = []
for folder, package in dirs:
    for f in sorted(os.listdir(folder)):
        for suffix in suffixes:
            if f.endswith(suffix):
                name = f[: -len(suffix)]
                if "." not in name and "tkinter" not in name:
                    importlib.import_module(package + name)
                    imported.append(package + name)
                break
assert len(imported) >= 10, imported

def child(queue):
    import ssl
    queue.put((sys.executable, sys.prefix, ssl.OPENSSL_VERSION))

if __name__ == "__main__":
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    p = ctx.Process(target=child, args=(queue,))
    p.start()
    got = queue.get(timeout=60)
    p.join(60)
    assert p.exitcode == 0, p.exitcode
    assert got[0] == sys.executable and got[1] == sys.prefix, got
    try:
        import _pickle
        c_pickle = "_pickle"
    except ImportError:
        c_pickle = None
    print(json.dumps({"version": sys.version.split()[0], "implementation": sys.implementation.name,
                      "debug": hasattr(sys, "gettotalrefcount"), "c_pickle": c_pickle,
                      "extension_modules": len(imported), "openssl": got[2]}))
EOF

# One interpreter's checks; prints "ok: ..." or "FAILED: why". Run for all of them at once,
# as many at a time as there are cores. LIBS (4th argument) is the prefix whose loader,
# libraries and pip wheels it runs with: its own, or sid's for a free-threaded build.
verify() {
  local name="$1" p="$2" bin="$3" libs="$dir/$4"
  local py="$dir/$p/$bin" prefix="$dir/$p"
  local log="$verify_dir/ld-$name" why="" out="" host="" own=0 f prog
  local venv wheels pip_whl pip_version v
  if [ "$(patchelf --print-interpreter "$py")" != "$libs/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" ]; then
    why="its loader is not the prefix's"
  elif ! out="$(cd "$verify_dir" && LD_DEBUG=libs LD_DEBUG_OUTPUT="$log" "$py" check.py "$prefix" 2>&1)"; then
    why="the check failed: $out"
  else
    # Every object ld.so initialised in the interpreter's processes (the spawn child's too)
    # must come from the prefix (or LIBS). Logs of host programs it runs (uname, gcc) are not its own.
    for f in "$log".*; do
      prog="$(sed -n 's/.*initialize program: //p' "$f" | head -1)"
      case "$(realpath -q "$prog" || true)" in "$prefix"/*) ;; *) continue ;; esac
      own=$((own + 1))
      host="$host$(sed -n 's/.*calling init: //p' "$f" | sort -u | while read -r so; do
        case "$(realpath "$so")" in "$prefix"/* | "$libs"/*) ;; *) echo " $so" ;; esac; done)"
    done
    if [ -n "$host" ]; then
      why="libraries loaded from the host:$host"
    elif [ "$own" -lt 2 ]; then
      why="LD_DEBUG logs of $own of its processes, not 2 (is LD_DEBUG honoured?)"
    fi
  fi
  if [ -z "$why" ]; then
    # A venv whose pip is the prefix's (not the host's) and installs a wheel.
    venv="$verify_dir/venv-$name"
    wheels="$libs/usr/share/python-wheels"
    pip_whl="$(cd "$wheels" && ls pip-*.whl)"
    pip_version="${pip_whl#pip-}"
    pip_version="${pip_version%%-*}"
    if ! v="$("$py" -m venv "$venv" 2>&1 && "$venv/bin/python" -m pip --version 2>&1)"; then
      why="venv or its pip failed: $v"
    elif [[ "$v" != "pip $pip_version from $venv/"* ]]; then
      why="the venv's pip is not the prefix's pip $pip_version: $v"
    elif ! v="$("$venv/bin/python" -m pip install -q --no-index --find-links "$wheels" setuptools 2>&1 &&
                "$venv/bin/python" -c 'import setuptools, sys; assert sys.prefix != sys.base_prefix' 2>&1)"; then
      why="pip install in the venv failed: $v"
    fi
  fi
  if [ -n "$why" ]; then
    echo "FAILED: $why"
    return 1
  fi
  # Byte-compile the standard library once: cases run with PYTHONDONTWRITEBYTECODE=1 and
  # would otherwise compile pickle.py on every run (debug builds share their release's pyc).
  "$py" -m compileall -q -j0 "$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')" >/dev/null 2>&1 || true
  echo "ok ($((SECONDS - start)) s so far): $out ($pip_whl in a venv)"
}

jobs_max="$(nproc 2>/dev/null || echo 2)"
while IFS='|' read -r name p bin libs; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  verify "$name" "$p" "$bin" "$libs" >"$verify_dir/result-$name" 2>&1 &
done <<<"$to_verify"
wait
failed=0
while IFS='|' read -r name p bin libs; do
  result="$(cat "$verify_dir/result-$name")"
  case "$result" in
    ok*) echo "newest-pythons: $name $result" ;;
    *) echo "newest-pythons: $name ($dir/$p/$bin) $result" >&2; failed=1 ;;
  esac
done <<<"$to_verify"
[ "$failed" = 0 ] || { echo "newest-pythons: not installed (see above)" >&2; exit 1; }

rm -rf "$verify_dir"

{
  echo "# Written by .ci/newest-pythons.sh: the interpreters it installed and verified."
  echo "# Use with: crosspickle --pythons-toml $dir/pythons.toml"
  echo "[pythons]"
  while IFS='|' read -r name p bin; do
    echo "\"$name\" = \"$p/$bin\""
  done <<<"$interpreters"$'\n'"$ft_interpreters"
} >"$dir/pythons.toml.new"
mv "$dir/pythons.toml.new" "$dir/pythons.toml"
if [ "${binaries:-}" != installed ]; then
  {
    echo "$spec"
    echo "--"
    cat "$dir"/.versions-*
  } >"$stamp"
fi
for v in $ft_versions; do
  [ ! -f "$dir/ft/${v}t/.built.stamp-pending" ] || mv "$dir/ft/${v}t/.built.stamp-pending" "$dir/ft/${v}t/built.stamp"
done
rm -f "$dir"/.versions-*
rm -rf "$dir/apt"
echo "newest-pythons: installed in $dir in $((SECONDS - start)) s; $(du -sh "$dir" | cut -f1) on disk; see $dir/pythons.toml"
