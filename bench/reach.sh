#!/usr/bin/env bash
# How far one machine gets: the largest level of each rule set's tables built
# from scratch within a wall-clock limit (docs/tables.md "What one machine
# reaches").  A benchmark, not a test: hours per rule set.
#
# usage: bench/reach.sh [RULES...]      (default: all eight rule sets)
#   SOW=build/src/cli/sow   the binary (the first line records the commit)
#   OUT=bench/out/reach     one log per rule set (sow bench tables' output)
#   HOURS=2                 the limit per rule set
#   THREADS=2 PITS=6 SEEDS=28 (the highest level asked for; past the raw
#                           budget the lean builder keeps the lower levels
#                           compressed: oware and awari reach 30, docs/tables.md)
#   MEMORY=GB               the memory limit (sow's --memory; default 3/4 of RAM)
#   KEEP=DIR                keep the levels in DIR/<rules> so that a later run
#                           (another session) resumes: see below
#
# Each rule set runs `sow bench tables --seeds SEEDS` (auto builder: the fast
# one where it fits, the lean one beyond, within 3/4 of RAM) under `timeout -s INT`, so at the
# limit the level in progress is given up.  Without KEEP the temporary
# directory is removed (nothing is kept: 2x6 levels to 28 are about 5.6 GB a
# rule set, 17 GB for darra).  With KEEP the complete levels stay, the log is
# appended to instead of replaced, and the limit of a rerun is HOURS less the
# level seconds its log already holds: the reach is the sum of the levels'
# own times, whichever run built them (each level is built by one process;
# a level interrupted by Ctrl-C or the timeout is rebuilt whole).
# A level the memory budget refuses ends the run early; the summary says
# which limit ended it.  Summary line per rule set: the last complete level,
# the wall seconds summed over the levels built, the positions, the peak RSS
# (/usr/bin/time -v, the largest of the runs) and why it stopped.  The log
# also gets the peak RSS of each level built ("# level N peak RSS kB X":
# the largest of samples every 2 s, taken while that level was the next one).
set -u
SOW=${SOW:-build/src/cli/sow}
OUT=${OUT:-bench/out/reach}
HOURS=${HOURS:-2}
THREADS=${THREADS:-2}
PITS=${PITS:-6}
SEEDS=${SEEDS:-28}
KEEP=${KEEP:-}
MEMORY=${MEMORY:-}
RULES=("$@")
[ ${#RULES[@]} -gt 0 ] || RULES=(oware awari darra jodu jodu-ibadan jodu-starve odu jerin)
mkdir -p "$OUT"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "# commit $commit, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), limit ${HOURS} h, $THREADS threads${MEMORY:+, --memory $MEMORY}${KEEP:+, kept in $KEEP}"
limit=$(awk -v h="$HOURS" 'BEGIN { printf "%d", h * 3600 }')
# rss_levels PID LOG: until PID exits, its RSS every 2 s against the level
# in progress (one past the log's last complete level); then per level the
# largest sample, as "# level N peak RSS kB X" lines on stdout
rss_levels() {
    local pid=$1 log=$2 samples
    samples=$(mktemp)
    while kill -0 "$pid" 2>/dev/null; do
        kb=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
        lv=$(awk '$1 == "level" { l = $2 } END { print (l == "" ? -1 : l) + 1 }' "$log")
        [ -n "$kb" ] && echo "$lv $kb" >>"$samples"
        sleep 2
    done
    awk '{ if ($2 > m[$1]) m[$1] = $2 } END { for (l in m) print "# level " l " peak RSS kB " m[l] }' \
        "$samples" | sort -k3,3n
    rm -f "$samples"
}
# the level seconds a log already holds (its "level N POS positions S s" lines)
spent() {
    [ -f "$1" ] || { echo 0; return; }
    awk '$1 == "level" { s += $5 } END { printf "%d", s }' "$1"
}
for r in "${RULES[@]}"; do
    log="$OUT/$r-2x$PITS.log"
    args=(bench tables --rules "$r" --pits "$PITS" --seeds "$SEEDS" --threads "$THREADS")
    [ -n "$MEMORY" ] && args+=(--memory "$MEMORY")
    secs=$limit
    if [ -n "$KEEP" ]; then
        args+=(--keep "$KEEP")
        secs=$((limit - $(spent "$log")))
    else
        : >"$log"
    fi
    rc=0
    if [ "$secs" -gt 0 ]; then
        echo "# $(date -u '+%F %T') $SOW ${args[*]} (commit $commit, timeout -s INT $secs)" >>"$log"
        timer=()
        [ -x /usr/bin/time ] && timer=(/usr/bin/time -v -o "$OUT/$r-2x$PITS.time")
        timeout -s INT "$secs" "${timer[@]}" "$SOW" "${args[@]}" >>"$log" 2>"$OUT/$r-2x$PITS.err" &
        job=$!
        pid=$job # down the chain timeout, time to sow itself
        for _ in 1 2 3 4 5; do
            [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$(basename "$SOW")" ] && break
            sleep 0.2
            c=$(pgrep -P "$pid" | head -1)
            [ -n "$c" ] && pid=$c
        done
        rss_levels "$pid" "$log" >"$OUT/$r-2x$PITS.rss" &
        wait "$job"
        rc=$?
        wait
        cat "$OUT/$r-2x$PITS.rss" >>"$log"
        awk -F': ' '/Maximum resident/ { print "# peak RSS kB " $2 }' "$OUT/$r-2x$PITS.time" >>"$log" 2>/dev/null
        why="asked-for level reached"
        { [ "$rc" -eq 130 ] || [ "$rc" -eq 124 ]; } && why="time limit"
        [ "$rc" -ne 0 ] && [ "$why" != "time limit" ] && why="stopped: $(tail -1 "$OUT/$r-2x$PITS.err")"
    else
        why="time limit (earlier runs)"
    fi
    awk -v r="$r" -v why="$why" '
        $1 == "level" { last = $2; pos += $3; wall += $5 }
        $2 == "peak" && $4 == "kB" && $5 > rss { rss = $5 }
        END { printf "%-12s last level %3s  %10.0f s  %14.0f positions  peak RSS %s  (%s)\n", r, last, wall, pos,
                     rss ? sprintf("%.2f GB", rss / 1048576) : "?", why }
    ' "$log"
done
