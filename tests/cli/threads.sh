#!/usr/bin/env bash
# The multithreaded paths (Lazy SMP search, parallel table builder and
# verifier) under ThreadSanitizer, driven through the sow command line.
#
# usage: tests/cli/threads.sh SOW     (SOW built with -Db_sanitize=thread, clang)
#
# Why through the CLI: Criterion 2.4's boxfort cannot place its inheritable
# arena inside TSan's address space ("Could not initialize inheritable arena"),
# so the Criterion executables cannot run under TSan at all.  Here the same
# code runs with 2 threads on work big enough for the threads to overlap.
#
# OpenMP: clang's libomp (Debian libomp-14-dev) with its Archer tool
# (libarcher.so, loaded through OMP_TOOL_LIBRARIES), which tells TSan about
# OpenMP's barriers, locks, tasks and reductions; gcc's libgomp is not
# instrumented and gives false reports.  ignore_noninstrumented_modules=1
# keeps the uninstrumented runtime's own internals out of the reports, as
# Archer asks.  A canary (a deliberately racy OpenMP loop, and its race-free
# twin) proves this set-up reports real races and nothing else.
# Any report, a wrong exit status or a value that depends on the thread count
# fails.  TAP on stdout.  Known, reported races are suppressed one by one in
# tsan.supp (listed on every run); a case marked PENDING is a known, reported
# bug: TAP "# TODO", shown but not failing the run.
set -u
SOW=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
ARCHER=${ARCHER:-$(ls /usr/lib/llvm-*/lib/libarcher.so 2>/dev/null | sort -V | tail -1)}
[ -n "$ARCHER" ] || { echo "Bail out! libarcher.so not found (apt-get install libomp-14-dev)"; exit 1; }
export OMP_TOOL_LIBRARIES=$ARCHER
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 ignore_noninstrumented_modules=1 suppressions=$HERE/tsan.supp ${TSAN_OPTIONS:-}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
n=0 failed=0 PENDING=""

t() { # t DESC ARGS...: sow ARGS must exit 0 without a TSan report
    local d=$1; shift
    n=$((n + 1))
    timeout -k 5 300 "$SOW" "$@" >"$WORK/out" 2>"$WORK/err"
    local rc=$?
    if [ "$rc" -eq 0 ] && ! grep -q 'ThreadSanitizer' "$WORK/err"; then
        echo "ok $n - $d"
    elif [ -n "$PENDING" ]; then
        echo "not ok $n - $d (exit $rc) # TODO $PENDING"
        grep -m1 -A12 'WARNING: ThreadSanitizer' "$WORK/err" | sed 's/^/#   /'
    else
        failed=$((failed + 1))
        echo "not ok $n - $d (exit $rc)"
        grep -m1 -A12 'WARNING: ThreadSanitizer' "$WORK/err" | sed 's/^/#   /'
        tail -3 "$WORK/err" | sed 's/^/#   /'
    fi
}
value() { sed -n 's/^value *: *\(-\{0,1\}[0-9]*\).*/\1/p' "$WORK/out"; }
same() { # same DESC ARGS...: solve with 2 threads and 1 thread, same value
    local d=$1; shift
    t "$d, 2 threads" solve --threads 2 "$@"; local v2; v2=$(value)
    t "$d, 1 thread" solve --threads 1 "$@"; local v1; v1=$(value)
    n=$((n + 1))
    if [ -n "$v1" ] && [ "$v1" = "$v2" ]; then echo "ok $n - $d: value $v1 with 1 and 2 threads"
    else failed=$((failed + 1)); echo "not ok $n - $d: value '$v1' with 1 thread, '$v2' with 2"; fi
}

grep -E '^(race|thread|mutex|signal|deadlock|called_from_lib):' "$HERE/tsan.supp" |
    sed 's/^/# known race suppressed (reported, pending fix): /'

# ---- canary: the set-up must see a real race, and only that ----------------
n=$((n + 1))
if clang -g -O1 -fopenmp -fsanitize=thread "$HERE/tsan_canary.c" -o "$WORK/canary" 2>"$WORK/err"; then
    "$WORK/canary" race >/dev/null 2>"$WORK/err"; rc_race=$?
    "$WORK/canary" >/dev/null 2>"$WORK/err2"; rc_clean=$?
    if [ "$rc_race" -eq 66 ] && [ "$rc_clean" -eq 0 ]; then
        echo "ok $n - canary: TSan+Archer reports a real OpenMP race and not a clean reduction"
    else
        failed=$((failed + 1))
        echo "not ok $n - canary: racy loop exit $rc_race (want 66), clean loop exit $rc_clean (want 0)"
        head -5 "$WORK/err2" | sed 's/^/#   /'
    fi
else
    failed=$((failed + 1)); echo "not ok $n - canary does not compile"; sed 's/^/#   /' "$WORK/err"
fi

# ---- table builder and verifier, 2 threads ------------------------------------
TB="$WORK/tb"
t "tables build oware 2x6 levels 0..8, 2 threads" tables build --threads 2 --seeds 8 --dir "$TB"
t "tables build darra 2x6 levels 0..6, 2 threads" tables build --rules darra --threads 2 --seeds 6 --dir "$TB"
t "tables build jodu 2x4 levels 0..6, 2 threads" tables build --rules jodu --pits 4 --threads 2 --seeds 6 --dir "$TB"
t "tables verify, 2 threads" tables verify --threads 2 "$TB"
# compressed levels: one block cache shared by the probing threads
TBZ="$WORK/tbz"; cp -r "$TB" "$TBZ"
t "tables compress, 2 threads" tables compress --threads 2 --dir "$TBZ"
# the lean builder's rounds (unmoves; relay edges on disk), 2 threads
t "tables build --builder lean oware 2x6 levels 0..9, 2 threads" tables build --builder lean --threads 2 --seeds 9 --dir "$WORK/tbl"
t "tables build --builder lean jodu 2x4 levels 0..7, 2 threads" tables build --builder lean --rules jodu --pits 4 --threads 2 --seeds 7 --dir "$WORK/tbl"

# ---- Lazy SMP search, 2 threads, shared transposition table --------------------
same "solve oware" 0,0,1,2,1,1/1,0,2,0,0,1/A
same "solve oware with tables" --tables "$TB" 0,0,1,2,1,2/1,0,2,0,1,1/B
same "solve awari" --rules awari 1,0,2,0,1,1/1,1,0,2,0,1/A
same "solve jodu (relay, endless sowings)" --rules jodu 0,1,1,2,1,1/1,0,2,0,0,1/A
same "solve darra (last-capturer state)" --rules darra 1,0,2,1,0,3/0,1,1,0,2,0/B/0-0/A
# the closure's concurrent expansion (the positions above go through levels in memory)
same "solve oware, closure alone" --levels 0 0,0,1,2,1,0/1,0,2,0,0,1/A
same "solve jodu, closure alone" --levels 0 --rules jodu 0,1,0,2,1,1/1,0,1,0,0,1/A
# levels past 2^16 positions: the closure's threaded level retrograde
same "solve oware, closure alone, threaded level retrograde" --levels 0 1,1,1,1,1,1/1,1,1,1,1,0/A
same "solve oware, closure above compressed tables" --levels 0 --tables "$TBZ" 0,0,1,2,1,1/1,0,2,0,1,0/B
t "engine with compressed tables --depth 10, 2 threads" solve --threads 2 --depth 10 --tables "$TBZ" 0,0,1,2,1,2/1,0,2,0,1,1/B
t "solve --depth 8 (bounded), 2 threads" solve --threads 2 --depth 8
t "variants play, 2 threads" variants play --rules oware --pits 3 --seeds 2 --games 20 --threads 2
# ---- the alpha-beta engine (docs/engine.md): Lazy SMP, protocol thread, match workers
t "engine: solve --time 2, 2 threads" solve --threads 2 --time 2
t "engine: jodu --depth 9, 2 threads" solve --rules jodu --threads 2 --depth 9
t "engine: threshold twin --depth 6, 2 threads" solve --threads 2 --depth 6 --threshold
t "engine: match, 2 games at once, 2-thread engines" match --a sow:depth=4,threads=2 --b greedy --games 4 --concurrency 2
printf 'setoption name Threads value 2\nisready\nposition startpos\ngo infinite\nstop\ngo depth 9\nisready\nquit\n' >"$WORK/proto"
t "engine: protocol, go infinite then stop, 2 threads" engine <"$WORK/proto"
# a root the tables hold, told by its closure (no bounds files): the
# closure's OpenMP threads under its watch, then the search among the moves
# kept; and a stop arriving while the closure is built
t "engine: table root told by its closure, 2 threads" solve --threads 2 --time 3 --tables "$TB" 0,2,4,0,0,2/0,0,0,0,0,0/A
printf 'setoption name Threads value 2\nsetoption name Tables value %s\nisready\nposition pos 0,2,4,0,0,2/0,0,0,0,0,0/A\ngo infinite\nstop\nisready\nquit\n' "$TB" >"$WORK/proto"
t "engine: protocol, stop during a table root's closure, 2 threads" engine <"$WORK/proto"
# engine-speed: superseded iterations (Lazy SMP) and the lockstep turns
t "engine: bench --threads 2 (supersede, adopt)" bench engine --rules oware,jodu --depth 9 --threads 2
t "engine: bench --threads 2 --lockstep" bench engine --rules oware,darra --depth 9 --threads 2 --lockstep

echo "1..$n"
echo "# $n cases, $failed failed"
[ "$failed" -eq 0 ]
