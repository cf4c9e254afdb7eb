#!/usr/bin/env bash
# The install proof (TAP; meson test --suite install, run by scripts/test):
# meson install into a temporary DESTDIR, then, against the installed tree
# only: the files are there (soname, headers, sow.pc, man page, completions,
# Python package); the shared library exports the public API and hides the
# rest; examples/solve.c compiles with `pkg-config --cflags --libs sow` (and
# statically with --static) and agrees with `sow solve`; `man -l` renders the
# page without warnings and clidoc/check.py holds for the installed page and
# completions; the installed Python module loads the installed libsow and
# passes its pytest suite and docs/python.md's doctest; `ninja uninstall` leaves nothing behind.
#
# usage: tests/install/run.sh BUILD_DIR SOURCE_DIR PYTHON
set -uo pipefail
# meson test points LD_LIBRARY_PATH at the build tree: use the installed tree only.
unset LD_LIBRARY_PATH
B=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
PY=$3
D=$(mktemp -d "${TMPDIR:-/tmp}/sow-install.XXXXXX")
W=$(mktemp -d "${TMPDIR:-/tmp}/sow-install-work.XXXXXX")
trap 'rm -rf "$D" "$W"' EXIT

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ $# -gt 1 ] && printf '# %s\n' "$2" | head -40; }
check() { # check "what" command...
    local what=$1; shift
    local out
    if out=$("$@" 2>&1); then ok "$what"; else notok "$what" "$out"; fi
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

opt() { # the value of a meson option of this build
    "$PY" -c 'import json, sys
for o in json.load(sys.stdin):
    if o["name"] == sys.argv[1]: print(o["value"])' "$1" < "$B/meson-info/intro-buildoptions.json"
}
prefix=$(opt prefix)
libdir=$prefix/$(opt libdir)
case $(opt libdir) in /*) libdir=$(opt libdir) ;; esac
P=$D$prefix
L=$D$libdir

check "meson install --destdir" meson install -C "$B" --no-rebuild --destdir "$D" --quiet

# ---- files
for f in bin/sow include/sow/sow.h include/sow/position.h include/sow/rules.h include/sow/search.h \
         include/sow/tables_probe.h include/sow/status.h include/sow/export.h include/sow/version.h \
         share/man/man1/sow.1 share/bash-completion/completions/sow \
         share/zsh/site-functions/_sow; do
    [ -f "$P/$f" ] && ok "installed $f" || notok "installed $f"
done
for f in libsow.a libsow.so pkgconfig/sow.pc; do
    [ -e "$L/$f" ] && ok "installed $f" || notok "installed $f in $L"
done
soname=$(readelf -d "$L/libsow.so" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libsow.so.0 ] && ok "soname libsow.so.0" || notok "soname libsow.so.0" "got '$soname'"
real=$(readlink -f "$L/libsow.so")
case $real in *libsow.so.0.*) ok "libsow.so -> $(basename "$real")" ;; *) notok "versioned libsow.so" "$real" ;; esac
out=$("$P/bin/sow" --version)
case $out in "sow "*"(git "*")") ok "sow --version: $out" ;; *) notok "sow --version" "$out" ;; esac

# ---- what the shared library exports
syms=$(nm -D --defined-only "$L/libsow.so" | awk '{print $3}')
missing=""
for s in sow_version sow_commit sow_status_name rules_init rules_start rules_find_move \
         rules_end_name sow_rule_names pos_token_pits pos_parse pos_format move_parse \
         move_format search_new search_free search_solve search_move_values search_last_error \
         tb_open tb_close tb_probe tb_max_level; do
    grep -qx "$s" <<< "$syms" || missing="$missing $s"
done
[ -z "$missing" ] && ok "libsow.so exports the public API" || notok "libsow.so exports the public API" "missing:$missing"
# Exactly what the installed headers declare SOW_API is exported (OpenMP's
# named-critical locks aside, which must be shared across modules).
api=$(cat "$P"/include/sow/*.h | grep -v "^ *#" | grep -o 'SOW_API[^(;[]*[ *][a-z_][a-z0-9_]* *[([]' |
      sed -E 's/.*[ *]([a-z_][a-z0-9_]*) *[(\[]$/\1/' | sort -u)
exported=$(nm -D --defined-only "$L/libsow.so" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' |
           grep -v '^\.gomp_critical' | sort -u)
extra=$(comm -13 <(echo "$api") <(echo "$exported") | head -8 | tr '\n' ' ')
lacking=$(comm -23 <(echo "$api") <(echo "$exported") | tr '\n' ' ')

[ -z "$extra" ] && ok "libsow.so hides everything not declared SOW_API" ||
    notok "libsow.so hides everything not declared SOW_API" "exported: $extra..."
[ -z "$lacking" ] && ok "every SOW_API declaration is exported ($(echo "$api" | grep -c .) symbols)" ||
    notok "every SOW_API declaration is exported" "missing: $lacking"

# ---- examples/solve.c against the installed sow.pc
export PKG_CONFIG_PATH=$L/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
flags=$(pkg-config --cflags --libs sow 2>&1) && ok "pkg-config --cflags --libs sow: $flags" ||
    notok "pkg-config --cflags --libs sow" "$flags"
v=$(pkg-config --modversion sow 2>&1)
case $("$P/bin/sow" --version) in "sow $v "*) ok "pkg-config --modversion sow: $v = sow --version" ;;
    *) notok "pkg-config --modversion sow = sow --version" "$v" ;; esac
check "cc examples/solve.c \$(pkg-config --cflags --libs sow)" \
    cc -std=c11 -Wall -Wextra -Werror "$SRC/examples/solve.c" $flags -o "$W/solve"
pos=0,0,1,2,0,3/1,0,0,0,1,0/A
want=$("$P/bin/sow" solve --rules awari "$pos" | sed -n 's/^value *: \(-*[0-9]*\).*/\1/p')
got=$(LD_LIBRARY_PATH=$L "$W/solve" awari "$pos" 2>&1 | sed -n 's/^value \(-*[0-9]*\)$/\1/p')
[ -n "$want" ] && [ "$got" = "$want" ] && ok "examples/solve (shared) value $got = sow solve" ||
    notok "examples/solve (shared) value = sow solve" "got '$got' want '$want'"
after=$(LD_LIBRARY_PATH=$L "$W/solve" awari "$pos" 4A | sed -n 's/^after 4A: //p')
want=$("$P/bin/sow" play --rules awari "$pos" 4A | tail -1)
[ -n "$after" ] && [ "$after" = "$want" ] && ok "examples/solve plays 4A as sow play" ||
    notok "examples/solve plays 4A as sow play" "got '$after' want '$want'"
LD_LIBRARY_PATH=$L "$W/solve" awari "1,2/3" >/dev/null 2>&1
[ $? -eq 2 ] && ok "examples/solve: bad position, exit 2" || notok "examples/solve: bad position, exit 2"
sflags=$(pkg-config --cflags --libs --static sow | sed "s#-lsow#$L/libsow.a#")
check "examples/solve.c linked statically (pkg-config --static)" \
    cc -std=c11 "$SRC/examples/solve.c" $sflags -o "$W/solve-static"
got=$("$W/solve-static" awari "$pos" 2>&1 | sed -n 's/^value \(-*[0-9]*\)$/\1/p')
[ "$got" = "$(LD_LIBRARY_PATH=$L "$W/solve" awari "$pos" | sed -n 's/^value //p')" ] &&
    ok "static example agrees" || notok "static example agrees" "$got"
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# ---- man page and completions, as installed
if command -v man >/dev/null; then
    out=$(MANWIDTH=100 MANPAGER=cat LC_ALL=C.UTF-8 man --warnings -l "$P/share/man/man1/sow.1" 2>&1 >/dev/null)
    [ -z "$out" ] && ok "man -l sow.1: no warnings" || notok "man -l sow.1: no warnings" "$out"
    lines=$(MANWIDTH=100 MANPAGER=cat man -l "$P/share/man/man1/sow.1" 2>/dev/null | wc -l)
    [ "$lines" -gt 100 ] && ok "man -l sow.1: $lines lines" || notok "man -l sow.1 renders" "$lines lines"
else
    skip "man -l sow.1" "man-db not installed (scripts/setup installs it)"
fi
check "clidoc/check.py on the installed page and completions" \
    "$PY" "$SRC/clidoc/check.py" "$P/bin/sow" "$P/share/man/man1/sow.1" \
    "$P/share/bash-completion/completions/sow" "$P/share/zsh/site-functions/_sow"

# ---- the Python module, as installed
init=$(find "$D" -path '*/sow/__init__.py' | head -1)
if [ -z "$init" ]; then
    skip "Python module" "not built (-Dpython, python3-cffi, python3-dev)"
else
    site=$(dirname "$(dirname "$init")")
    export PYTHONDONTWRITEBYTECODE=1
    out=$(cd "$W" && PYTHONPATH=$site "$PY" -c '
import sow
maps = open("/proc/self/maps").read()
libs = {l.split()[-1] for l in maps.splitlines() if "libsow.so" in l}
print(sow.__file__, *libs)' 2>&1)
    case $out in
        "$D"*" $D"*libsow.so*) ok "import sow: $out" ;;
        *) notok "import sow loads the installed libsow" "$out" ;;
    esac
    if "$PY" -c 'import pytest' 2>/dev/null; then
        out=$(cd "$W" && SOW_BIN=$P/bin/sow PYTHONPATH=$site "$PY" -m pytest -q -p no:cacheprovider \
            "$SRC/python/tests" 2>&1)
        [ $? -eq 0 ] && ok "pytest python/tests: $(tail -1 <<< "$out")" ||
            notok "pytest python/tests" "$(tail -40 <<< "$out")"
        # docs/python.md is a doctest: its outputs are what the module prints.
        out=$(cd "$W" && SOW_BIN=$P/bin/sow PYTHONPATH=$site "$PY" -m pytest -q -p no:cacheprovider \
            --doctest-glob='*.md' "$SRC/docs/python.md" 2>&1)
        [ $? -eq 0 ] && ok "doctest docs/python.md: $(tail -1 <<< "$out")" ||
            notok "doctest docs/python.md" "$(tail -40 <<< "$out")"
    else
        skip "pytest python/tests" "no pytest for $PY (python3-pytest)"
    fi
fi

# ---- uninstall
check "ninja uninstall" ninja -C "$B" uninstall
left=$(find "$D" -mindepth 1 \( -type f -o -type l \) 2>/dev/null | head)
[ -z "$left" ] && ok "nothing left after uninstall" || notok "nothing left after uninstall" "$left"

echo "1..$n"
[ $fails -eq 0 ]
