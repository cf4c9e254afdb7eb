#!/usr/bin/env bash
# Bad-input and smoke tests of the sow command line (README "Trust").
#
# usage: tests/cli/run.sh [SOW]     (default: build/src/cli/sow; TAP on stdout)
#
# Every case runs under `timeout` in a scratch directory and checks:
#   bad  STATUS ARGS...   exit STATUS, exactly one line on stderr ("sow ..."),
#                         nothing on stdout, no signal, no core file
#   listing STATUS ARGS.. exit STATUS with a report (verify): <= 1 line on stderr
#   ok   ARGS...          exit 0, something on stdout
#   help ARGS...          exit 0, "usage:" on stdout, nothing on stderr
#   usage ARGS...         exit 2, "usage:" on stderr, nothing on stdout
#   pending "WHY" bad ... a case that documents what should happen but does
#                         not yet: reported as TAP "not ok ... # TODO WHY"
#                         (does not fail the run; it says so when it passes).
#   check DESC CMD...     a shell condition as a case (files left behind, ...)
# A sanitizer report on stderr fails any case.  Adding a case is one line.
# Exit statuses (cli.h): 0 ok, 1 failure while working, 2 bad input, 130 Ctrl-C.
set -u
SOW=$(realpath "${1:-build/src/cli/sow}")
HERE=$(cd "$(dirname "$0")" && pwd)
T=${CLI_TIMEOUT:-30}
[ -x "$SOW" ] || { echo "Bail out! no sow executable at $SOW"; exit 1; }
WORK=$(mktemp -d)
trap 'chmod -R u+rwx "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
ulimit -c 0
# Sanitized builds: failed allocations return NULL as in a normal build, so
# the program's own out-of-memory handling is what gets tested.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1}
export SOW_TABLES="$WORK/no-tables"   # never pick up the repository's tables/

n=0 failed=0 todo=0 PENDING=""
out="$WORK/.out" err="$WORK/.err"

run() { timeout -k 5 "$T" "$SOW" "$@" >"$out" 2>"$err"; rc=$?; }
lines() { awk 'END { print NR }' "$1"; }
desc() { printf '%s' "$*" | tr '\n' ' ' | cut -c1-110; }
report() { # report OK|msg DESC
    n=$((n + 1))
    if [ "$1" = OK ]; then
        if [ -n "$PENDING" ]; then
            echo "ok $n - $2"
            echo "# pending case now passes, drop 'pending': $PENDING"
        else
            echo "ok $n - $2"
        fi
    elif [ -n "$PENDING" ]; then
        todo=$((todo + 1))
        echo "not ok $n - $2 # TODO $PENDING"
        echo "#   $1"
    else
        failed=$((failed + 1))
        echo "not ok $n - $2"
        echo "#   $1"
        sed 's/^/#   stderr: /' "$err" | head -5
        sed 's/^/#   stdout: /' "$out" | head -3
    fi
}
common() { # checks every case shares; prints a reason or nothing
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "hang: killed after ${T}s"
    elif [ "$rc" -gt 128 ] && [ "$rc" -ne 130 ]; then echo "killed by signal $((rc - 128))"
    elif ls core* >/dev/null 2>&1; then echo "core dump"; rm -f core*
    elif grep -qE 'Sanitizer|runtime error:|LeakSanitizer' "$err"; then echo "sanitizer report"
    fi
}
bad() { # bad STATUS ARGS...
    local want=$1; shift
    run "$@"
    local why; why=$(common)
    if [ -z "$why" ]; then
        if [ "$rc" -ne "$want" ]; then why="exit $rc, expected $want"
        elif [ "$(lines "$err")" -ne 1 ]; then why="$(lines "$err") lines on stderr, expected 1"
        elif ! grep -qE '^sow[ :]' "$err"; then why="stderr does not start with 'sow': $(head -c 80 "$err")"
        elif [ -s "$out" ]; then why="partial output on stdout: $(head -c 80 "$out")"
        fi
    fi
    report "${why:-OK}" "$(desc "bad $want: sow $*")"
}
listing() { # listing STATUS ARGS...: a report on stdout, at most one line on stderr
    local want=$1; shift
    run "$@"
    local why; why=$(common)
    [ -z "$why" ] && [ "$rc" -ne "$want" ] && why="exit $rc, expected $want"
    [ -z "$why" ] && [ "$(lines "$err")" -gt 1 ] && why="$(lines "$err") lines on stderr"
    [ -z "$why" ] && [ ! -s "$out" ] && [ ! -s "$err" ] && why="no report and no message"
    report "${why:-OK}" "$(desc "listing $want: sow $*")"
}
ok() {
    run "$@"
    local why; why=$(common)
    [ -z "$why" ] && [ "$rc" -ne 0 ] && why="exit $rc: $(head -c 120 "$err")"
    [ -z "$why" ] && [ ! -s "$out" ] && why="no output"
    report "${why:-OK}" "$(desc "ok: sow $*")"
}
help() {
    run "$@"
    local why; why=$(common)
    [ -z "$why" ] && [ "$rc" -ne 0 ] && why="exit $rc"
    [ -z "$why" ] && ! grep -q 'usage:' "$out" && why="no usage on stdout"
    [ -z "$why" ] && [ -s "$err" ] && why="stderr: $(head -c 80 "$err")"
    report "${why:-OK}" "$(desc "help: sow $*")"
}
usage() {
    run "$@"
    local why; why=$(common)
    [ -z "$why" ] && [ "$rc" -ne 2 ] && why="exit $rc, expected 2"
    [ -z "$why" ] && ! grep -q 'usage:' "$err" && why="no usage on stderr"
    [ -z "$why" ] && [ -s "$out" ] && why="output on stdout"
    report "${why:-OK}" "$(desc "usage: sow $*")"
}
pending() { # pending "WHY" CHECK ARGS...
    PENDING=$1; shift
    "$@"
    PENDING=""
}
check() { # check DESC COMMAND...: a shell condition as a case
    local d=$1; shift
    if "$@"; then report OK "$d"; else report "condition failed: $*" "$d"; fi
}
nofiles() { # no file matching the glob pattern(s) under $WORK (besides the given dir's olds)
    [ -z "$(find "$WORK" -name "$1" -print -quit)" ]
}

POS6=0,0,0,0,1,1/1,0,0,0,0,1/A  # tiny oware endgame: solves instantly
START=4,4,4,4,4,4/4,4,4,4,4,4/A

# ---- global ---------------------------------------------------------------
help --help
help help
usage
bad 2 nope
bad 2 --bogus

# ---- every command has --help ---------------------------------------------
for c in show moves play perft solve tables variants bench; do help $c --help; done
for c in build info stats verify probe; do help tables $c --help; done
for c in atlas play; do help variants $c --help; done

# ---- options every game command takes ---------------------------------------
GAME=(show moves "play 1A" "perft --depth 1" "solve --depth 1" "tables probe")
for c in "${GAME[@]}"; do
    # shellcheck disable=SC2086
    set -- $c
    bad 2 "$@" --rules nope "$POS6"
    bad 2 "$@" --rules
    bad 2 "$@" "$POS6" --rules ''
    bad 2 "$@" --pits 0
    bad 2 "$@" --pits -1
    bad 2 "$@" --pits 19
    bad 2 "$@" --pits 99999999999999999999999
    bad 2 "$@" --pits 6x
    bad 2 "$@" --pits=
    bad 2 "$@" --seeds -1
    bad 2 "$@" --seeds 256
    bad 2 "$@" --seeds 100
    bad 2 "$@" --pits 18 --seeds 8
    bad 2 "$@" --bogus
    bad 2 "$@" --pits 5 "$POS6"
done

# ---- positions: every kind of error, through every command that reads one ----
BADPOS=(
    ''
    '4,4,4,4,4,4'
    '4,4,4,4,4,4/4,4,4,4,4/A'
    '4,4,4,4,4,4/4,4,4,4,4,4,4/A'
    '4,4,4,4,4,4/4,4,4,4,4,4/C'
    '4,4,4,4,4,4/4,4,4,4,4,4/'
    '4,4,4,4,4,4/4,4,4,4,4,4/AB'
    '256,0,0,0,0,0/0,0,0,0,0,0/A'
    '1000,0,0,0,0,0/0,0,0,0,0,0/A'
    '200,0,0,0,0,0/100,0,0,0,0,0/A'
    '4,x,4,4,4,4/4,4,4,4,4,4/A'
    '4,-4,4,4,4,4/4,4,4,4,4,4/A'
    '4,,4,4,4,4/4,4,4,4,4,4/A'
    '4,4,4,4,4,4,/4,4,4,4,4,4/A'
    ' 4,4,4,4,4,4/4,4,4,4,4,4/A'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/1-'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/1'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/x-0'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/99999-0'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/open'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/B'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/Z'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/-/x'
    '1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1/1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1/A'
    $'4,4,4,4,4,4\n/4,4,4,4,4,4/A'
)
for c in show moves "perft --depth 1" "solve --depth 1" "tables probe"; do
    # shellcheck disable=SC2086
    set -- $c
    for p in "${BADPOS[@]}"; do bad 2 "$@" "$p"; done
    bad 2 "$@" "$POS6" "$POS6"
done
bad 2 show --rules darra '4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/open'
bad 2 show --rules jerin '4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/A'
ok show --rules jerin '4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/open'
ok show --rules darra '0,0,1,0,0,3/0,0,1,0,0,0/B/20-17/A'
ok show --rules oware '1/1/B/65533-0/-'
bad 2 show --rules oware '1/1/B/65535-65535/-'
bad 2 play 0,0,0,0,0,1/1,1,0,0,0,0/A/65535-0 6A

# ---- play: moves ------------------------------------------------------------
bad 2 play
bad 2 play "$START"
bad 2 play 7A
bad 2 play 0A
bad 2 play -1A
bad 2 play 1B
bad 2 play 1C
bad 2 play 1a
bad 2 play x
bad 2 play ''
bad 2 play 1A+2A
bad 2 play 1A 1A
bad 2 play pass
bad 2 play 1A "$START"
bad 2 play "$START" "$START" 1A
bad 2 play 0,0,0,0,0,0/1,0,0,0,0,0/A 1A
bad 2 play --rules jerin 1A
bad 2 play --rules jerin 1A+3A
bad 2 play --rules jerin 6A+7A
bad 2 play --rules jodu 5,1,4,3,4,1/6,1,7,1,0,1/A 1A
ok play --rules jerin 2A+3A 1B
ok play 1A 1B 2A

# ---- perft ------------------------------------------------------------------
bad 2 perft
bad 2 perft --depth
bad 2 perft --depth -1
bad 2 perft --depth 101
bad 2 perft --depth 99999999999999999999
bad 2 perft --depth 1.5
bad 2 perft --depth 1 --divide=yes
ok perft --depth 3
ok perft --depth 2 --divide --rules darra

# ---- solve ------------------------------------------------------------------
bad 2 solve --threads 0 "$POS6"
bad 2 solve --threads -1 "$POS6"
bad 2 solve --threads 99999 "$POS6"
bad 2 solve --threads two "$POS6"
bad 2 solve --hash 0 "$POS6"
bad 2 solve --hash -5 "$POS6"
bad 2 solve --hash 1e3 "$POS6"
bad 2 solve --hash "$POS6"
bad 2 solve --depth 0 "$POS6"
bad 2 solve --depth -3 "$POS6"
bad 2 solve --depth 99999999 "$POS6"
bad 2 solve --time -1 "$POS6"
bad 2 solve --time abc "$POS6"
bad 2 solve --time 0 "$POS6"
bad 2 solve --depth 3 --time 1 "$POS6"
bad 2 solve --hash 1048576 "$POS6"
bad 2 solve --hash 100000 "$POS6"
ok solve "$POS6"
ok solve --json --moves "$POS6"
ok solve --threads 2 "$POS6"
ok solve --depth 4 "$POS6"
ok solve --rules jodu 0,0,1/1,0,1/A
# the closure's memory budget: refused before the layer that would not fit
bad 2 solve --rules odu --levels 0 --memory 0.004
bad 2 solve --memory 0 "$POS6"
bad 2 solve --memory lots "$POS6"
bad 2 solve --memory 1 --depth 3 "$POS6"
ok solve --memory 0.01 "$POS6"
# solution files: written, answered, damaged or foreign ones refused
ok solve --rules odu --pits 3 --seeds 2 --save s.sol
ok solve --rules odu --pits 3 --seeds 2 --solution s.sol
ok solve --rules odu --pits 3 --seeds 2 --json --solution s.sol 1,0,1/3,3,0/B/4-0/-
bad 2 solve --rules oware --pits 3 --seeds 2 --solution s.sol
bad 2 solve --rules odu --pits 3 --seeds 2 --solution s.sol 9,0,0/0,0,0/A
printf 'not a solution file' > g.sol
bad 2 solve --rules odu --pits 3 --seeds 2 --solution g.sol
head -c 300 s.sol > t.sol
bad 2 solve --rules odu --pits 3 --seeds 2 --solution t.sol
bad 2 solve --solution missing.sol "$POS6"
ok tables probe --rules odu --pits 3 --solution s.sol 2,2,2/2,2,2/A
bad 2 tables probe --rules odu --pits 3 --solution g.sol 2,2,2/2,2,2/A
bad 2 solve --save x.sol --levels 3 "$POS6"
bad 2 solve --save x.sol --solution s.sol "$POS6"
bad 2 solve --save x.sol --depth 2 "$POS6"
bad 2 solve --levels -1 "$POS6"
bad 2 solve --levels many "$POS6"
bad 2 solve --levels 1048577 "$POS6"
bad 2 solve --levels 1000000 "$POS6"
bad 2 solve --levels 4 --depth 3 "$POS6"
bad 2 solve --levels 4 --time 1 "$POS6"
ok solve --levels 0 --moves "$POS6"
ok solve --levels 1 --threads 2 "$POS6"
# the same value and move values with the levels in memory and without them
POS9=2,1,0,1,0,1/0,1,2,0,1,0/B
run solve --json --moves "$POS9"; v_all=$(grep -o '"value".*"nodes"' "$out" | head -c 400)
run solve --json --moves --levels 0 "$POS9"; v_none=$(grep -o '"value".*"nodes"' "$out" | head -c 400)
why=OK; [ -n "$v_all" ] && [ "$v_all" = "$v_none" ] || why="levels in memory: $v_all; closure alone: $v_none"
report "$why" "solve: the same results with and without the levels in memory"

# ---- tables: sizes, memory, directories ---------------------------------------
bad 2 tables nope
bad 2 tables build
bad 2 tables build --seeds -1 --dir "$WORK/t1"
bad 2 tables build --seeds 128 --dir "$WORK/t1"
bad 2 tables build --seeds 9999999999999 --dir "$WORK/t1"
bad 2 tables build --seeds 3 --threads 0 --dir "$WORK/t1"
bad 2 tables build --seeds 3 --memory 0 --dir "$WORK/t1"
bad 2 tables build --seeds 3 --memory -1 --dir "$WORK/t1"
bad 2 tables build --seeds 3 --memory lots --dir "$WORK/t1"
bad 2 tables build --seeds 3 --dir
bad 2 tables build --seeds 3 --dir "$WORK/t1" extra
bad 2 tables build --seeds 30 --memory 1 --dir "$WORK/t1"
check "refused build (--memory 1) says what fits" grep -qE 'fit|at most|up to' "$err"
check "refused build (--memory 1) is refused up front: no level written" nofiles '*.sowtb'
bad 2 tables build --pits 18 --seeds 127 --dir "$WORK/t1"
check "impossible table size says what fits" grep -qE 'fit|at most|up to' "$err"
check "impossible table size: no file written" nofiles '*.sowtb'
bad 2 tables build --seeds 3 --memory 1000000 --dir "$WORK/t1"
touch "$WORK/afile"
bad 1 tables build --seeds 2 --dir "$WORK/afile"
bad 1 tables build --seeds 2 --dir "$WORK/afile/sub"
bad 2 tables info "$WORK/missing"
bad 2 tables verify "$WORK/missing"
bad 2 tables info "$WORK/afile"
bad 2 tables verify "$WORK/afile"
bad 2 tables stats --seeds 3 --dir "$WORK/missing"
bad 2 tables probe --dir "$WORK/missing" "$POS6"
bad 2 tables stats --dir "$WORK/t1"
bad 2 tables stats --seeds 999 --dir "$WORK/t1"
bad 2 tables probe --dir "$WORK/t1"

# ---- tables: damaged, truncated, foreign and other-version files ---------------
TB="$WORK/tb"
run tables build --rules oware --pits 2 --seeds 4 --dir "$TB"
check "tables build oware 2x2 levels 0..4 (exit $rc)" test "$rc" -eq 0 -a -f "$TB/oware-2x2-004.sowtb"
check "tables build leaves no temporary file" nofiles '*.tmp'
ok tables info "$TB"
ok tables verify "$TB"
ok tables stats --pits 2 --seeds 4 --dir "$TB"
ok tables probe --pits 2 --dir "$TB" 1,1/1,1/A
ok solve --tables "$TB" 1,1/1,1/A
bad 2 solve --tables "$WORK/missing" 1,1/1,1/A
bad 2 solve --tables "$WORK/afile" 1,1/1,1/A
damaged() { # damaged NAME HOW: a copy of the level set with level 4 spoilt by HOW
    local d="$WORK/$1"; rm -rf "$d"; cp -r "$TB" "$d"
    python3 "$HERE/spoil_table.py" "$d/oware-2x2-004.sowtb" "$2" "${3:-}"
}
run tables build --rules jodu --pits 2 --seeds 4 --dir "$WORK/tbj"
run tables build --rules oware --pits 3 --seeds 4 --dir "$WORK/tb3"
for how in truncated header-only short-header empty trailing payload-bit header-bit magic \
           fixed-version fixed-scheme fixed-encoding fixed-entries fixed-rules \
           "other-file $WORK/tbj/jodu-2x2-004.sowtb" "other-file $TB/oware-2x2-003.sowtb" \
           "other-file $WORK/tb3/oware-2x3-004.sowtb"; do
    # shellcheck disable=SC2086
    damaged d $how
    bad 2 tables probe --pits 2 --dir "$WORK/d" 2,1/1,0/A
    bad 2 solve --tables "$WORK/d" 2,1/1,0/A
    bad 2 tables stats --pits 2 --seeds 4 --dir "$WORK/d"
    listing 2 tables verify "$WORK/d"
done
damaged d fixed-value
bad 2 tables probe --pits 2 --dir "$WORK/d" 2,1/1,0/A
check "damaged files were left as they were (no repair, no temp files)" nofiles '*.tmp'

# ---- interrupted build: exit 130, only complete levels, resumes ----------------
timeout --preserve-status -k 10 -s INT 2 "$SOW" tables build --rules oware --seeds 20 --memory 8 --dir "$WORK/int" >"$out" 2>"$err"
rc=$?
check "Ctrl-C during tables build exits 130 (got $rc)" test "$rc" -eq 130
check "interrupted build leaves no temporary file" nofiles '*.tmp'
ok tables verify "$WORK/int"
ok tables build --rules oware --seeds 3 --dir "$WORK/int"

# ---- unreadable directory (needs a non-root user: root reads everything) --------
if [ "$(id -u)" -ne 0 ]; then
    mkdir -p "$WORK/locked" && cp "$TB"/* "$WORK/locked/" && chmod 000 "$WORK/locked"
    bad 2 tables probe --pits 2 --dir "$WORK/locked" 2,1/1,0/A
    bad 1 tables build --pits 2 --seeds 5 --dir "$WORK/locked"
    chmod 755 "$WORK/locked"
else
    echo "# unreadable-directory cases skipped: running as root"
fi

# ---- variants and bench -----------------------------------------------------
usage variants
bad 2 variants nope
bad 2 variants atlas --rules nope
bad 2 variants atlas --pits x
bad 2 variants atlas --pits 0
bad 2 variants atlas --seeds 3-1
bad 2 variants atlas --budget -1
bad 2 variants play --games -1
bad 2 variants play --games 0
bad 1 variants atlas --rules oware --pits 1 --seeds 1 --csv "$WORK/afile/x.csv"
check "no partial csv" nofiles 'x.csv'
bad 2 bench nope
bad 2 bench movegen --rules nope
bad 2 bench search --repeat 0
bad 2 bench search --repeat x
bad 2 bench search --file "$WORK/missing.txt"
printf '# two small positions\noware 6 0,0,0,2,1,1/1,0,2,0,0,1/A\njodu 4 1,0,2,0/1,1,0,1/A\n' >"$WORK/bench.txt"
printf 'oware six 1,1/1,1/A\n' >"$WORK/badbench.txt"
bad 2 bench search --file "$WORK/badbench.txt"
ok bench search --file "$WORK/bench.txt" --repeat 2
why=OK; grep -q 'Values and nodes identical with 1 and 2 threads: yes' "$out" || why="no identity line"
report "$why" "bench search: values and nodes identical with 1 and 2 threads"

echo "1..$n"
echo "# $n cases, $failed failed, $todo pending"
[ "$failed" -eq 0 ]
