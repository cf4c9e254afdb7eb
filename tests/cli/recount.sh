#!/usr/bin/env bash
# bench/recount.py, the second count of a match's result: short matches
# (oware, awari's half seeds, a relay rule set, the move limit) check out
# and give sow match's own summary; a spoilt record of each kind (a move, a
# final score, a point, an end, a game twice, an opening) is found and
# named, exit 1; bad input exit 2 with one line.  bench/opening-values.py:
# perfect players' games all at their openings' values, a changed score named,
# its progress, Ctrl-C (exit 130, one line).  bench/plies-to-tables.py: its
# counts against the games file's own move lists.  bench/book-moves.py: a
# book player's moves where its book holds the position are all the book's
# choice, the other player's are counted too; a damaged --book: exit 2.
# bench/swindle-moves.py: it finds proven positions in a jodu match and
# counts no more than it met; bad input exit 2 with one line.
# TAP on stdout.   usage: tests/cli/recount.sh [SOW]
set -u
SOW=$(realpath "${1:-build/src/cli/sow}")
HERE=$(cd "$(dirname "$0")" && pwd)
RECOUNT="$HERE/../../bench/recount.py"
[ -x "$SOW" ] || { echo "Bail out! no sow executable at $SOW"; exit 1; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
. "$(dirname "$0")/tap.sh"
recount() { python3 "$RECOUNT" "$@" --sow "$SOW" >"$WORK/out" 2>"$WORK/err"; rc=$?; }

# match NAME ARGS...: a short match into $WORK/NAME.txt (and its openings),
# its summary in $WORK/NAME.sum
match() {
    local name=$1; shift
    "$SOW" match --a sow:depth=2 --b greedy --games 8 --unbalanced --out "$WORK/$name.txt" \
        --save-openings "$WORK/$name.open" "$@" >"$WORK/$name.sum" 2>/dev/null
}
for m in "oware" "awari --rules awari" "jodu --rules jodu" "limit --max-plies 12"; do
    set -- $m
    name=$1; shift
    match "$name" "$@"
    check "$name: the match ran" '[ -s "$WORK/$name.txt" ]'
    recount "$WORK/$name.txt" --openings "$WORK/$name.open"
    check "$name: every game checks out, exit 0" '[ $rc -eq 0 ] && grep -q "^checked  : 8 of 8 games" "$WORK/out"' \
        "rc=$rc: $(tail -3 "$WORK/out") $(head -2 "$WORK/err")"
    for f in "a W/D/L" "score a" "elo a-b" "pairs" "elo pairs"; do
        check "$name: '$f' as sow match prints it" \
            '[ "$(grep "^$f" "$WORK/out")" = "$(grep "^$f" "$WORK/$name.sum")" ]' \
            "recount: $(grep "^$f" "$WORK/out"); sow match: $(grep "^$f" "$WORK/$name.sum")"
    done
done
check "limit: the games stopped at the move limit" 'grep -q "(move limit)" "$WORK/limit.txt"'
check "progress on stderr ends with every game replayed" \
    '[ "$(tail -1 "$WORK/err")" = "recount: 8 of 8 games replayed, ETA 0 s" ]' "$(cat "$WORK/err")"
# The interval over pairs, worked by hand: pairs of 1.5 and 1 points are
# samples 3/4 and 1/2, mean 5/8 (+88.7 Elo), spread 1/64, so 5/8 +-
# 1.96 sqrt(1/128) = 0.4518 .. 0.7982 (the games' standard error, here
# 0.1, not used); pairs all alike (4 of 1 point; game 9 has no pair): no
# spread of their own, the games' interval, 1/2 +- 1.96 x 0.1 = 0.304 ..
# 0.696 (-143.9 .. +143.9)
pairs() { (cd "$HERE/../../bench" && python3 -c "import recount; recount.print_pairs($1, 0.1)"); }
check "pairs: the interval over pairs as worked by hand" \
    '[ "$(pairs "{1: 1, 2: 0.5, 3: 0.5, 4: 0.5}" | tail -1)" = "elo pairs: +88.7 (95%: -33.6 .. +238.9)" ]' \
    "$(pairs "{1: 1, 2: 0.5, 3: 0.5, 4: 0.5}")"
check "pairs: every pair alike: the games' interval" \
    '[ "$(pairs "{1: 1, 2: 0, 3: 0, 4: 1, 5: 0.5, 6: 0.5, 7: 1, 8: 0, 9: 1}")" = "pairs    : 4 (a'"'"'s points in the two games 0 / 0.5 / 1 / 1.5 / 2: 0 / 0 / 4 / 0 / 0)
elo pairs: +0.0 (95%: -143.9 .. +143.9)" ]' \
    "$(pairs "{1: 1, 2: 0, 3: 0, 4: 1, 5: 0.5, 6: 0.5, 7: 1, 8: 0, 9: 1}")"

# --tables: the games that reach oware's levels 0..8, scored by perfect
# play from there; the W/D/L counts every game
"$SOW" tables build --seeds 8 --dir "$WORK/tb" >/dev/null 2>&1
recount "$WORK/oware.txt" --tables "$WORK/tb"
re='^tables   : [1-8] games reach levels 0\.\.8 .* a W/D/L ([0-8]) / ([0-8]) / ([0-8]),'
check "--tables: the games reaching levels 0..8 scored from there, every game counted" \
    '[ $rc -eq 0 ] && [[ $(grep "^tables" "$WORK/out") =~ $re ]] &&
     [ $((BASH_REMATCH[1] + BASH_REMATCH[2] + BASH_REMATCH[3])) -eq 8 ]' \
    "rc=$rc: $(grep -A1 "^tables" "$WORK/out") $(head -2 "$WORK/err")"

# spoil NAME SED DESC WANT: game lines of oware.txt changed by SED; the
# recount exits 1 and prints a line matching WANT
spoil() {
    sed "$2" "$WORK/oware.txt" >"$WORK/spoilt.txt"
    recount "$WORK/spoilt.txt" --openings "$WORK/oware.open"
    check "spoilt: $1: exit 1, named" '[ $rc -eq 1 ] && grep -q "$3" "$WORK/out"' \
        "rc=$rc: $(tail -3 "$WORK/out") $(head -2 "$WORK/err")"
}
spoil "a move changed" '/^game 3 /s/: \([1-6]\)A \([1-6]\)B/: \1A 7B/' "^game 3: does not replay"
spoil "a move dropped" '/^game 2 /s/ [1-6][AB]$//' "^game 2: "
spoil "a final score" '/^game 4 /s/final \([0-9.]*\)-/final 99-/' "^game 4: final .*record says 99-"
spoil "a point" '/^game 5 /{s/ a=1:/ a=X:/;s/ a=0:/ a=1:/;s/ a=0.5:/ a=1:/;s/ a=X:/ a=0:/}' "^game 5: a="
spoil "an end" '/^game 6 /s/([^)]*) a=/(move limit) a=/' "^game 6: "
spoil "a game twice" '$p' "played twice"
spoil "an opening" '/^game 7 /s/opening [0-9]/opening 9/' "^game 7: "
# a forfeit before the first move (an engine that never answered) checks
# out; the same game with the point given to the side that forfeited not
sed '/^game 1 /s/final .*$/final 0-0 (a forfeits: no bestmove within 2.0 s) a=0:/' \
    "$WORK/oware.txt" >"$WORK/forfeit.txt"
recount "$WORK/forfeit.txt" --openings "$WORK/oware.open"
check "a forfeit before the first move checks out" '[ $rc -eq 0 ] && grep -q "^checked  : 8 of 8" "$WORK/out"' \
    "rc=$rc: $(tail -3 "$WORK/out") $(head -2 "$WORK/err")"
sed -i '/^game 1 /s/ a=0:/ a=1:/' "$WORK/forfeit.txt"
recount "$WORK/forfeit.txt" --openings "$WORK/oware.open"
check "the forfeit's point given to the side that forfeited: named" \
    '[ $rc -eq 1 ] && grep -q "^game 1: a=1, the forfeit gives a 0" "$WORK/out"' "rc=$rc: $(tail -3 "$WORK/out")"
# bench/opening-values.py: games between two players that see a tiny board
# to its end all end with the score perfect play from their opening gives;
# a final score changed is named, with the side it favours
OV="$HERE/../../bench/opening-values.py"
opv() { python3 "$OV" "$@" --sow "$SOW" --tables "$WORK" --time 2 >"$WORK/out" 2>"$WORK/err"; rc=$?; }
"$SOW" match --rules jodu-starve --pits 3 --seeds 2 --a sow:depth=30 --b sow:depth=30 --games 8 \
    --unbalanced --out "$WORK/perfect.txt" >/dev/null 2>&1
opv "$WORK/perfect.txt"
check "opening-values: perfect players' games all end at the openings' values" \
    '[ $rc -eq 0 ] && grep -q "^perfect  : 8 of 8 games .* a above it in 0, b in 0$" "$WORK/out"' \
    "rc=$rc: $(tail -2 "$WORK/out") $(head -2 "$WORK/err")"
check "opening-values: progress on stderr ends with every opening searched" \
    '[ "$(tail -1 "$WORK/err")" = "opening-values: 4 of 4 openings searched, ETA 0 s" ]' "$(cat "$WORK/err")"
# game 1 (a is South) given two more seeds to South and two fewer to North
awk '/^game 1 /{match($0, /final [0-9]+-[0-9]+ /); split(substr($0, RSTART + 6, RLENGTH - 7), f, "-")
    $0 = substr($0, 1, RSTART - 1) "final " f[1] + 2 "-" f[2] - 2 " " substr($0, RSTART + RLENGTH)} 1' \
    "$WORK/perfect.txt" >"$WORK/spoilt.txt"
opv "$WORK/spoilt.txt"
check "opening-values: a changed final score is named" \
    '[ $rc -eq 0 ] && grep -q "^game 1: .*a gained 4$" "$WORK/out" && grep -q "^perfect  : 7 of 8" "$WORK/out"' \
    "rc=$rc: $(cat "$WORK/out") $(head -2 "$WORK/err")"
# Ctrl-C (SIGINT to its process group, as a terminal sends it; the
# default disposition restored, as a background job of a script ignores
# it) during a search or a replay (a sow that takes 10 s to start): exit
# 130 and one line saying how far it got.  ctrl_c NAME WANT SCRIPT ARGS...
printf '#!/bin/sh\nsleep 10\nexec "%s" "$@"\n' "$SOW" >"$WORK/slow-sow"
chmod +x "$WORK/slow-sow"
ctrl_c() {
    local name=$1 want=$2 pid
    shift 2
    set -m
    env --default-signal=INT python3 "$@" --sow "$WORK/slow-sow" >"$WORK/out" 2>"$WORK/err" &
    pid=$!
    set +m
    sleep 1
    kill -INT -- -"$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    check "$name: Ctrl-C: exit 130, one line" \
        '[ $rc -eq 130 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && grep -qx "$want" "$WORK/err"' \
        "rc=$rc: $(cat "$WORK/err")"
}
ctrl_c opening-values "opening-values: interrupted after 0 of 4 openings searched" \
    "$OV" "$WORK/perfect.txt" --tables "$WORK"
ctrl_c recount "recount: interrupted after 0 of 8 games replayed" "$RECOUNT" "$WORK/oware.txt"
opv "$WORK/nosuch.txt"
check "opening-values: bad input exit 2, one line" '[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ]' \
    "rc=$rc: $(head -2 "$WORK/err")"
sed '3s/ South=/ Suth=/' "$WORK/perfect.txt" >"$WORK/badline.txt"
opv "$WORK/badline.txt"
check "opening-values: a line it cannot read: exit 2, one line, nothing on stdout" \
    '[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && grep -q "^opening-values: .*cannot read the line" "$WORK/err" && [ ! -s "$WORK/out" ]' \
    "rc=$rc: $(head -2 "$WORK/err") $(head -2 "$WORK/out")"
# a sow that cannot be run: one line, exit 2, from either script
python3 "$OV" "$WORK/perfect.txt" --sow "$WORK/no-such-sow" --tables "$WORK" >"$WORK/out" 2>"$WORK/err"
rc=$?
check "opening-values: a --sow that cannot be run: exit 2, one line" \
    '[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && grep -q "^opening-values: --sow .*no-such-sow" "$WORK/err"' \
    "rc=$rc: $(head -2 "$WORK/err")"
python3 "$RECOUNT" "$WORK/perfect.txt" --sow "$WORK/no-such-sow" >"$WORK/out" 2>"$WORK/err"
rc=$?
check "recount: a --sow that cannot be run: exit 2, one line" \
    '[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && grep -q "^recount: --sow .*no-such-sow" "$WORK/err"' \
    "rc=$rc: $(head -2 "$WORK/err")"
bad() {
    recount "$@"
    check "bad input: recount $*: exit 2, one line" '[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ]' \
        "rc=$rc: $(head -2 "$WORK/err")"
}
bad "$WORK/nosuch.txt"
grep -v '^#' "$WORK/oware.txt" >"$WORK/nohead.txt"
bad "$WORK/nohead.txt"
bad "$WORK/oware.txt" --frob
bad "$WORK/oware.txt" --tables "$WORK/no-such-dir"
bad "$WORK/oware.txt" --tables "$WORK"
# bench/plies-to-tables.py: with tables of level 0 no game reaches them,
# so from each opening a side makes half its game's moves (rounded up),
# and the positions counted are every position but the last: both from
# the games file's move lists
PT="$HERE/../../bench/plies-to-tables.py"
python3 "$PT" "$WORK/oware.txt" --level 0 --sow "$SOW" >"$WORK/out" 2>"$WORK/err"; rc=$?
want=$(awk -F: '/^game/ { n = split($2, m, " "); s += n; h += int((n + 1) / 2); g++ }
    END { printf "%.1f %d", h / g, s }' "$WORK/oware.txt")
got="$(sed -n 's/^openings : \([0-9.]*\) moves a side.*/\1/p' "$WORK/out") $(awk '$1 ~ /^[0-9]+$/ { s += $2 } END { print s }' "$WORK/out")"
check "plies-to-tables: level 0, the moves and positions the games file lists ($want)" \
    '[ $rc -eq 0 ] && [ "$got" = "$want" ] && grep -q "^games    : 8 (oware 2x6), tables 0..0" "$WORK/out"' \
    "rc=$rc: got $got; $(head -3 "$WORK/out") $(head -2 "$WORK/err")"
python3 "$PT" "$WORK/oware.txt" --sow "$SOW" >/dev/null 2>"$WORK/err"; rc=$?
check "plies-to-tables: no --level, exit 2 and one line" '[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ]' \
    "rc=$rc: $(cat "$WORK/err")"
# bench/book-moves.py: a player with sow's oware book against one without,
# both from the start: a's first move as South and its reply to the other's
# first move as North are book positions (the book holds the start and
# every position after one move of the book's), so a meets at least two and
# plays the book's choice in each
BM="$HERE/../../bench/book-moves.py"
echo "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/-" >"$WORK/start.open"
"$SOW" match --a sow:depth=2,book=builtin --b sow:depth=2 --games 2 --max-plies 20 \
    --openings "$WORK/start.open" --out "$WORK/book.txt" >/dev/null 2>&1
python3 "$BM" "$WORK/book.txt" --sow "$SOW" >"$WORK/out" 2>"$WORK/err"; rc=$?
read -r held chose < <(sed -n 's/^book a   : \([0-9]*\) moves in a position the book holds, \([0-9]*\) of them.*/\1 \2/p' "$WORK/out")
check "book-moves: a's moves in the book's positions are all its choice (${chose:-?} of ${held:-?})" \
    '[ $rc -eq 0 ] && [ "${held:-0}" -ge 2 ] && [ "$held" = "$chose" ] && grep -q "^games    : 2, " "$WORK/out"' \
    "rc=$rc: $(cat "$WORK/out") $(head -2 "$WORK/err")"
check "book-moves: b's moves in the book's positions counted" \
    'grep -q "^book b   : [1-9][0-9]* moves in a position the book holds" "$WORK/out"' "$(cat "$WORK/out")"
python3 "$BM" "$WORK/nohead.txt" --sow "$SOW" >/dev/null 2>"$WORK/err"; rc=$?
check "book-moves: no match header, exit 2 and one line" '[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ]' \
    "rc=$rc: $(cat "$WORK/err")"
head -c 100 /dev/urandom >"$WORK/bad.sowbook"
python3 "$BM" "$WORK/book.txt" --sow "$SOW" --book "$WORK/bad.sowbook" >/dev/null 2>"$WORK/err"; rc=$?
check "book-moves: a damaged --book, exit 2 and one line" '[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ]' \
    "rc=$rc: $(cat "$WORK/err")"
# bench/swindle-moves.py: a short jodu match ends in positions the
# engine's own small levels prove, where the swindle runs
SM="$HERE/../../bench/swindle-moves.py"
"$SOW" match --rules jodu --a sow:depth=2 --b sow:depth=2 --games 2 --out "$WORK/jodu-sw.txt" \
    >/dev/null 2>&1
python3 "$SM" "$WORK/jodu-sw.txt" --sow "$SOW" --time 100 >"$WORK/out" 2>"$WORK/err"; rc=$?
read -r pos < <(sed -n 's/^positions: \([0-9]*\) where a was to move.*/\1/p' "$WORK/out")
read -r ran moved < <(sed -n 's/^swindle  : ran in \([0-9]*\), played another move in \([0-9]*\)$/\1 \2/p' "$WORK/out")
check "swindle-moves: ran in proven positions (${ran:-?} of ${pos:-?}, ${moved:-?} moved)" \
    '[ $rc -eq 0 ] && [ "${ran:-0}" -ge 1 ] && [ "$ran" -le "$pos" ] && [ "${moved:-9}" -le "$ran" ] && grep -q "^time on  : mean " "$WORK/out"' \
    "rc=$rc: $(cat "$WORK/out") $(head -2 "$WORK/err")"
for bad in "$WORK/nohead.txt" "$WORK/jodu-sw.txt --games 0" "$WORK/jodu-sw.txt --tables $WORK/nosuch"; do
    python3 "$SM" $bad --sow "$SOW" --time 50 >/dev/null 2>"$WORK/err"; rc=$?
    check "swindle-moves: bad input ${bad#"$WORK/"}, exit 2 and one line" \
        '[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ]' "rc=$rc: $(cat "$WORK/err")"
done
tap_done
