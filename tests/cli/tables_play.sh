#!/usr/bin/env bash
# Tables in play (TAP on stdout): sow engine, sow solve --depth and sow
# match find the endgame tables in the default tables path ($SOW_TABLES,
# here two directories joined by ':', the levels compressed and split
# between them) without being told, probe them, and answer a position that
# the tables know exactly; told none, they do not; a bad directory is one
# line.  sow bench engine --tables compares the node rates.
#
# The position has 13 seeds and its two moves each capture 2: its children
# (11 seeds) lie above the levels the engine solves in memory (0..10 on
# oware 2x6), so an exact answer at depth 1 comes from the tables.
#
# usage: tests/cli/tables_play.sh [SOW]     (default: build/src/cli/sow)
set -u
SOW=$(realpath "${1:-build/src/cli/sow}")
[ -x "$SOW" ] || { echo "Bail out! no sow executable at $SOW"; exit 1; }
WORK=$(mktemp -d)
ENGPID=
trap '[ -n "$ENGPID" ] && kill "$ENGPID" 2>/dev/null; rm -rf "$WORK"' EXIT
. "$(dirname "$0")/tap.sh"

# oware 2x6 levels 0..13, compressed, then split: 0..6 in lo, 7..13 in hi
ALL=$WORK/all LO=$WORK/lo HI=$WORK/hi
"$SOW" tables build --seeds 13 --dir "$ALL" --threads 1 >/dev/null 2>"$WORK/err" &&
    "$SOW" tables compress --dir "$ALL" --threads 1 >/dev/null 2>>"$WORK/err"
check_st "tables 0..13 built and compressed" $? "$(tail -2 "$WORK/err")"
mkdir -p "$LO" "$HI"
cp "$ALL"/oware-2x6-00[0-6].sowtb "$LO"/ && cp "$ALL"/oware-2x6-00[7-9].sowtb "$ALL"/oware-2x6-01[0-3].sowtb "$HI"/
POS=0,0,0,0,2,1/1,2,2,2,2,1/A
V=$("$SOW" tables probe --dir "$ALL" "$POS" | awk '$1 == "value" { print $2 + 0 }')
[ -n "$V" ] && [ "$V" -ne 0 ]
check_st "the tables' value of $POS ($V) is known and not 0" $?

export SOW_TABLES="$LO:$HI"

# ---- sow engine: a coprocess, each go answered before the next line ----
eng_start() {
    coproc ENG { exec "$SOW" engine 2>"$WORK/eng.err"; }
    ENGPID=$ENG_PID
}
eng_send() { printf '%s\n' "$*" >&"${ENG[1]}"; }
# eng_until PATTERN: the lines up to the first matching one, into $OUT
eng_until() {
    local line end=$((SECONDS + 20))
    OUT=
    while [ $SECONDS -le $end ] && IFS= read -r -t 20 line <&"${ENG[0]}"; do
        OUT+="$line"$'\n'
        [[ $line =~ $1 ]] && return 0
    done
    return 1
}
eng_stop() { eng_send quit; wait "$ENGPID" 2>/dev/null; ENGPID=; }

eng_start
eng_send uci
eng_until '^uciok$'
grep -q "^option name Tables type string default $LO:$HI\$" <<<"$OUT" &&
    grep -q '^option name TableCache type spin default 0 min 0 ' <<<"$OUT"
check_st "engine: uci shows the default tables path and TableCache" $? "$OUT"
eng_send "position pos $POS"
eng_send "go depth 1"
eng_until '^bestmove '
grep -q "^info string tables $LO:$HI: levels 0..13\$" <<<"$OUT" &&
    grep -q " score exact $V " <<<"$OUT" && [[ $OUT == *$'\nbestmove '[56]A$'\n' ]]
check_st "engine: no Tables option, the default path's tables answer exactly ($V)" $? "$OUT"
eng_send "setoption name Tables value <empty>"
eng_send "position pos $POS"
eng_send "go depth 1"
eng_until '^bestmove '
! grep -q " score exact " <<<"$OUT" && grep -q " score cp " <<<"$OUT"
check_st "engine: Tables <empty>: no tables, the score is not exact" $? "$OUT"
for bad in "$LO::$HI" "$LO:$WORK/none" /dev/null; do
    eng_send "setoption name Tables value $bad"
    eng_send isready
    eng_until '^readyok$'
    [ "$(grep -c '^info string error: ' <<<"$OUT")" = 1 ] &&
        grep -q '^info string error: setoption Tables: ' <<<"$OUT"
    check_st "engine: Tables $bad: one error line" $? "$OUT"
done
eng_stop

# explicit Tables (no default) with a small block cache
export SOW_TABLES="$WORK/no-tables"
eng_start
eng_send "setoption name TableCache value 1"
eng_send "setoption name Tables value $LO:$HI"
eng_send "position pos $POS"
eng_send "go depth 1"
eng_until '^bestmove '
grep -q " score exact $V " <<<"$OUT"
check_st "engine: Tables LO:HI, TableCache 1: exact ($V)" $? "$OUT"
eng_send "setoption name TableCache value lots"
eng_send isready
eng_until '^readyok$'
grep -q '^info string error: setoption TableCache: ' <<<"$OUT"
check_st "engine: TableCache lots: one error line" $? "$OUT"
eng_stop
export SOW_TABLES="$LO:$HI"

# ---- sow solve --depth: the default tables, --no-tables, bad paths ----
"$SOW" solve "$POS" --depth 1 --json >"$WORK/out" 2>"$WORK/err"
grep -q "\"value\":$V,\"exact\":true" "$WORK/out" &&
    grep -q "^sow solve: the engine probes the tables in $LO:$HI (levels 0..13)\$" "$WORK/err"
check_st "solve --depth 1: the default tables, exact ($V), stderr names them" $? \
    "$(cat "$WORK/out" "$WORK/err")"
"$SOW" solve "$POS" --depth 1 --json --no-tables >"$WORK/out" 2>"$WORK/err"
grep -q '"exact":false' "$WORK/out" && ! grep -q "tables" "$WORK/err"
check_st "solve --depth 1 --no-tables: not exact, no tables named" $? "$(cat "$WORK/out" "$WORK/err")"
"$SOW" solve "$POS" --time 0.5 --tables "$HI:$LO" --table-cache 1 --json >"$WORK/out" 2>"$WORK/err"
grep -q "\"value\":$V,\"exact\":true" "$WORK/out"
check_st "solve --time --tables HI:LO --table-cache 1: exact ($V)" $? "$(cat "$WORK/out" "$WORK/err")"
# a cache larger than 3/4 of the machine's memory: refused up front (exit 2)
ram_mb=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo 2>/dev/null)
if [ -n "$ram_mb" ] && [ $((ram_mb * 3 / 4)) -lt 1048576 ]; then
    "$SOW" solve "$POS" --time 0.5 --tables "$HI:$LO" --table-cache 1048576 >"$WORK/out" 2>"$WORK/err"
    r=$?
    [ $r = 2 ] && [ ! -s "$WORK/out" ] && [ "$(wc -l <"$WORK/err")" = 1 ] &&
        grep -q "a block cache of 1048576 MiB does not fit: this machine has" "$WORK/err"
    check_st "solve --table-cache 1048576: exit 2, one line saying what fits" $? "rc $r: $(cat "$WORK/err")"
fi
for bad in "$LO::$HI" "$LO:$WORK/none" "$LO:/dev/null"; do
    "$SOW" solve "$POS" --depth 1 --tables "$bad" >"$WORK/out" 2>"$WORK/err"
    r=$?
    [ $r = 2 ] && [ ! -s "$WORK/out" ] && [ "$(wc -l <"$WORK/err")" = 1 ] &&
        grep -q '^sow solve: --tables ' "$WORK/err"
    check_st "solve --tables $bad: exit 2, one line" $? "rc $r: $(cat "$WORK/err")"
done
# $SOW_TABLES naming a missing directory: a note on stderr (a typo would
# otherwise play without tables in silence), the work done without tables
for cmd in "solve $POS --depth 1 --json" "match --a sow:depth=1 --b sow:depth=1 --games 2 --unbalanced"; do
    # shellcheck disable=SC2086
    SOW_TABLES="$LO:$WORK/typo" "$SOW" $cmd >"$WORK/out" 2>"$WORK/err"
    r=$?
    [ $r = 0 ] && [ "$(grep -c "^sow ${cmd%% *}: note: \$SOW_TABLES: $WORK/typo: no such directory; no tables used\$" "$WORK/err")" = 1 ]
    check_st "${cmd%% *}, \$SOW_TABLES naming a missing directory: one note, no tables" $? \
        "rc $r: $(cat "$WORK/err")"
done
printf 'isready\nquit\n' | SOW_TABLES="$WORK/typo" "$SOW" engine >"$WORK/out" 2>"$WORK/err"
grep -q '^readyok' "$WORK/out" && grep -q "^sow engine: note: \$SOW_TABLES: $WORK/typo: no such directory" "$WORK/err"
check_st "engine, \$SOW_TABLES naming a missing directory: a note on stderr" $? "$(cat "$WORK/out" "$WORK/err")"
# a damaged level in the default path: named as the default path, not as
# an option the user did not type
mkdir "$WORK/dmg" && cp "$HI"/*.sowtb "$WORK/dmg"/ &&
    printf '\125' | dd of="$WORK/dmg/oware-2x6-013.sowtb" bs=1 seek=300 conv=notrunc 2>/dev/null
SOW_TABLES="$LO:$WORK/dmg" "$SOW" solve "$POS" --depth 1 >"$WORK/out" 2>"$WORK/err"
r=$?
[ $r = 2 ] && [ ! -s "$WORK/out" ] && [ "$(wc -l <"$WORK/err")" = 1 ] &&
    grep -q "^sow solve: the default tables path $LO:$WORK/dmg: .*oware-2x6-013.sowtb" "$WORK/err"
check_st "solve, a damaged level in the default path: exit 2, one line naming the path" $? \
    "rc $r: $(cat "$WORK/err")"

# ---- sow match: a sow player without tables= plays with the default ones ----
"$SOW" match --a sow:depth=1 --b sow:depth=1,tables= --games 2 --unbalanced \
    >"$WORK/out" 2>"$WORK/err"
r=$?
[ $r = 0 ] && grep -q "^sow match: player a probes the tables in $LO:$HI (levels 0..13)\$" "$WORK/err" &&
    ! grep -q "player b probes" "$WORK/err"
check_st "match: a takes the default tables, b (tables=) none" $? "rc $r: $(cat "$WORK/err")"
"$SOW" match --a "sow:depth=1,tables=$LO:$WORK/none" --b greedy --games 2 >"$WORK/out" 2>"$WORK/err"
r=$?
[ $r = 2 ] && [ ! -s "$WORK/out" ] && [ "$(wc -l <"$WORK/err")" = 1 ]
check_st "match: tables=LO:NONE: exit 2, one line" $? "rc $r: $(cat "$WORK/err")"

# ---- sow bench engine --tables: the rates with and without ----
"$SOW" bench engine --rules oware --depth 6 >"$WORK/b0" 2>/dev/null
"$SOW" bench engine --rules oware --depth 6 --tables "$LO:$HI" >"$WORK/b1" 2>"$WORK/err"
r=$?
[ $r = 0 ] && grep -q '^Nodes/CPU second: [0-9]* without tables, [0-9]* with them (cache cold), [0-9]* (warm): [0-9.]*, [0-9.]* of the rate' "$WORK/b1" &&
    grep -q '^Tables          : .* (levels 0..13 ' "$WORK/b1" &&
    [ "$(grep '^Nodes searched' "$WORK/b0")" = "$(grep '^Nodes searched' "$WORK/b1")" ]
check_st "bench engine --tables: both rates; the signature is the one without tables" $? \
    "rc $r: $(cat "$WORK/b1")"

tap_done
