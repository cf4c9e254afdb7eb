#!/usr/bin/env bash
# Fault injection (docs/testing.md "Trust"): SIGKILL a table build at random moments,
# resume it, and require the finished levels to be byte-identical to an
# uninterrupted build; after every kill, `tables info` must find only complete
# level files (a killed build leaves at most a temporary file, never a
# partial level).
#
# usage: tests/cli/faults.sh [SOW]   TAP on stdout
#   SOW_FAULT_SECONDS  how long to keep killing (default 4; CI runs the default)
#   SOW_FAULT_SEED     seed of the kill moments (default: the time)
set -u
SOW=$(realpath "${1:-build/src/cli/sow}")
SECS=${SOW_FAULT_SECONDS:-4}
SEED=${SOW_FAULT_SEED:-$(date +%s)}
RANDOM=$SEED
[ -x "$SOW" ] || { echo "Bail out! no sow executable at $SOW"; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ulimit -c 0
echo "# kill moments seeded with SOW_FAULT_SEED=$SEED"
# Many small levels, each written with fsync: kills land in solving, in
# writing and in renaming.
BUILD=(tables build --rules awari --pits 3 --seeds 16 --threads 1)
n=0 failed=0
report() { # report OK|why DESC
    n=$((n + 1))
    if [ "$1" = OK ]; then echo "ok $n - $2"; else failed=$((failed + 1)); echo "not ok $n - $2"; echo "#   $1"; fi
}
"$SOW" "${BUILD[@]}" --dir "$WORK/ref" >/dev/null 2>&1
report "$([ -f "$WORK/ref/awari-2x3-016.sowtb" ] && echo OK || echo 'reference build failed')" \
    "reference build, uninterrupted"
start=$(date +%s)
round=0
while [ $(( $(date +%s) - start )) -lt "$SECS" ] || [ "$round" -eq 0 ]; do
    round=$((round + 1))
    d="$WORK/r$round"
    kills=0 why=OK
    for _ in $(seq 1 40); do
        "$SOW" "${BUILD[@]}" --dir "$d" >/dev/null 2>&1 &
        pid=$!
        sleep "$(printf '0.%03d' $((RANDOM % 120)))"
        kill -KILL "$pid" 2>/dev/null && kills=$((kills + 1))
        wait "$pid" 2>/dev/null
        if [ -d "$d" ] && ! "$SOW" tables info "$d" >"$WORK/info" 2>&1; then
            why="after kill $kills: tables info: $(grep -m1 BAD "$WORK/info")"
            break
        fi
        [ -f "$d/awari-2x3-016.sowtb" ] && break
    done
    if [ "$why" = OK ] && ! "$SOW" "${BUILD[@]}" --dir "$d" >/dev/null 2>"$WORK/err"; then
        why="resume failed: $(head -c 200 "$WORK/err")"
    fi
    if [ "$why" = OK ]; then
        for f in "$WORK"/ref/*.sowtb; do
            cmp -s "$f" "$d/$(basename "$f")" || { why="$(basename "$f") differs from the reference"; break; }
        done
    fi
    if [ "$why" = OK ] && [ -n "$(find "$d" -name '*.tmp*' -print -quit)" ]; then
        why="temporary files left after the resumed build: $(ls "$d" | grep tmp | head -3)"
    fi
    report "$why" "round $round: $kills SIGKILLs, resumed, byte-identical"
    rm -rf "$d"
done
echo "1..$n"
[ "$failed" -eq 0 ]
