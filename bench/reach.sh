#!/usr/bin/env bash
# How far one machine gets: the largest level of each rule set's tables built
# from scratch within a wall-clock limit (docs/tables.md "What one machine
# reaches"; issue 13).  A benchmark, not a test: hours per rule set.
#
# usage: bench/reach.sh [RULES...]      (default: all eight rule sets)
#   SOW=build/src/cli/sow   the binary (the first line records the commit)
#   OUT=bench/out/reach     one log per rule set (sow bench tables' output)
#   HOURS=2                 the limit per rule set
#   THREADS=2 PITS=6 SEEDS=28 (the highest level asked for: on 2x6, 28 is the
#                           last level one process indexes, < 2^31 entries)
#
# Each rule set runs `sow bench tables --seeds SEEDS` (auto builder: the fast
# one where it fits, the lean one beyond, within 3/4 of RAM) under `timeout -s INT`, so at the
# limit the level in progress is given up and the temporary directory removed
# (nothing is kept: 2x6 levels to 30 are about 11 GB).  A level the memory
# budget refuses ends the run early; the summary says which limit ended it.
# Summary line per rule set: the last complete level, the wall seconds summed
# over the levels built, the positions, the peak RSS (/usr/bin/time -v) and
# why it stopped.
set -u
SOW=${SOW:-build/src/cli/sow}
OUT=${OUT:-bench/out/reach}
HOURS=${HOURS:-2}
THREADS=${THREADS:-2}
PITS=${PITS:-6}
SEEDS=${SEEDS:-28}
RULES=("$@")
[ ${#RULES[@]} -gt 0 ] || RULES=(oware awari darra jodu jodu-ibadan jodu-starve odu jerin)
mkdir -p "$OUT"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "# commit $commit, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), limit ${HOURS} h, $THREADS threads"
secs=$(awk -v h="$HOURS" 'BEGIN { printf "%d", h * 3600 }')
for r in "${RULES[@]}"; do
    log="$OUT/$r-2x$PITS.log"
    args=(bench tables --rules "$r" --pits "$PITS" --seeds "$SEEDS" --threads "$THREADS")
    echo "# $SOW ${args[*]} (timeout -s INT $secs)" >"$log"
    timer=()
    [ -x /usr/bin/time ] && timer=(/usr/bin/time -v -o "$OUT/$r-2x$PITS.time")
    timeout -s INT "$secs" "${timer[@]}" "$SOW" "${args[@]}" >>"$log" 2>"$OUT/$r-2x$PITS.err"
    rc=$?
    rss=$(awk -F': ' '/Maximum resident/ { printf "%.2f GB", $2 / 1048576 }' "$OUT/$r-2x$PITS.time" 2>/dev/null)
    why="asked-for level reached"
    [ "$rc" -eq 130 ] || [ "$rc" -eq 124 ] && why="time limit"
    [ "$rc" -ne 0 ] && [ "$why" != "time limit" ] && why="stopped: $(tail -1 "$OUT/$r-2x$PITS.err")"
    awk -v r="$r" -v why="$why" '
        $1 == "level" { last = $2; pos += $3; wall += $5 }
        END { printf "%-12s last level %3s  %10.0f s  %14.0f positions  peak RSS %s  (%s)\n", r, last, wall, pos, rss, why }
    ' rss="${rss:-?}" "$log"
done
