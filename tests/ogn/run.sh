#!/usr/bin/env bash
# sow annotate and sow play --ogn from the command line (docs/ogn.md), TAP.
#
# usage: tests/ogn/run.sh [SOW]     (default: build/src/cli/sow)
#
#  - whole short games of several rule sets annotated with exact values, each
#    move's value, best move and mark checked against sow solve --moves
#    (check_annotate.py); the same with endgame tables: the same record
#  - sow play --ogn through annotate: the same moves back, annotating twice
#    gives what annotating once gives, the good records of tests/ogn/good read
#  - far from the end the engine's estimates, marked as such
#  - every record of tests/ogn/bad refused: exit 2, one line naming the file,
#    line and column, nothing on stdout; bad arguments and paths likewise
#  - -o through fileio: written whole; Ctrl-C leaves no file (130)
set -u
SOW=$(realpath "${1:-build/src/cli/sow}")
HERE=$(cd "$(dirname "$0")" && pwd)
[ -x "$SOW" ] || { echo "Bail out! no sow executable at $SOW"; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
ulimit -c 0

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() {
    n=$((n + 1)) failed=$((failed + 1))
    echo "not ok $n - $1"
    printf '%s\n' "$2" | sed 's/^/#   /'
}
# bad STATUS DESC ARGS...: exit STATUS, one line "sow annotate: ..." or
# "sow play: ..." on stderr, nothing on stdout
bad() {
    local want=$1 desc=$2
    shift 2
    timeout -k 5 60 "$SOW" "$@" >out 2>err
    local rc=$? lines
    lines=$(awk 'END{print NR}' err)
    if [ "$rc" = "$want" ] && [ "$lines" = 1 ] && [ ! -s out ] && grep -q '^sow [a-z]*: ' err; then
        ok "$desc: exit $rc, $(head -c 100 err)"
    else
        notok "$desc" "exit $rc (want $want), $lines lines on stderr: $(head -c 300 err)
stdout: $(head -c 200 out)"
    fi
}

# ---- exact values against sow solve ------------------------------------------
for game in "oware 3 2" "awari 3 2" "jodu 3 3" "darra 3 3" "jodu-starve 3 2"; do
    # shellcheck disable=SC2086
    if msg=$(python3 "$HERE/check_annotate.py" "$SOW" $game 40 2>&1); then
        ok "annotate $game: $msg"
    else
        notok "annotate $game against sow solve --moves" "$msg"
    fi
done

# the same game with endgame tables: the same record
"$SOW" play --ogn --rules oware --pits 3 --seeds 2 1A 1B 2A 2B 3A 3B >g3.ogn
"$SOW" tables build --rules oware --pits 3 --seeds 12 --dir tb >/dev/null 2>&1
"$SOW" annotate g3.ogn >plain.ogn 2>/dev/null
"$SOW" annotate g3.ogn --tables tb >tables.ogn 2>/dev/null
if [ -s plain.ogn ] && cmp -s plain.ogn tables.ogn && grep -q exact tables.ogn; then
    ok "annotate --tables: the same exact values as the solver alone"
else
    notok "annotate --tables" "$(diff plain.ogn tables.ogn | head -20)"
fi
# the levels split between two directories of a tables path: the same record
mkdir tb1 tb2
mv tb/oware-2x3-00[0-5].sowtb tb1/ && mv tb/oware-2x3-*.sowtb tb2/
"$SOW" annotate g3.ogn --tables tb1:tb2 >split.ogn 2>/dev/null
if [ -s split.ogn ] && cmp -s tables.ogn split.ogn; then
    ok "annotate --tables DIR1:DIR2: the same record as one directory"
else
    notok "annotate --tables DIR1:DIR2" "$(diff tables.ogn split.ogn | head -20)"
fi

# ---- play --ogn round trip through annotate -------------------------------------
moves="3A 3B 5A 6B 1A 2B 4A 1B 2A 5B 6A 4B"
# shellcheck disable=SC2086
"$SOW" play --ogn $moves >game.ogn
if head -1 game.ogn | grep -qx '\[Variant "Oware Abapa"\]' &&
    grep -qx '1. C c 2. E f 3. A b 4. D a+3 5. B e 6. F d' game.ogn &&
    grep -qx '\[Result "\*"\]' game.ogn; then
    ok "play --ogn: Aualé's tags and letters"
else
    notok "play --ogn" "$(cat game.ogn)"
fi
"$SOW" annotate game.ogn --time 0.05 -o ann.ogn 2>/dev/null
rc=$?
# the moves back: drop comments, marks and the Annotator tag
strip() { grep -v '^\[Annotator ' "$1" | tr '\n' ' ' | sed 's/{[^}]*}//g; s/[?!]//g' | tr -s ' '; }
if [ $rc = 0 ] && [ "$(strip ann.ogn)" = "$(strip game.ogn)" ] && grep -q 'engine d' ann.ogn; then
    ok "play --ogn | annotate -o: the same moves, engine estimates at 2x6"
else
    notok "play --ogn | annotate -o" "rc $rc
$(strip ann.ogn)
$(strip game.ogn)"
fi
"$SOW" annotate plain.ogn >again.ogn 2>/dev/null
if [ -s again.ogn ] && cmp -s plain.ogn again.ogn; then
    ok "annotating an annotated record replaces sow's comments: the same record"
else
    notok "annotate twice" "$(diff plain.ogn again.ogn | head -20)"
fi
# a finished game: result and final capture as Aualé writes them
"$SOW" play --ogn 1,1,0,2,0,1/1,0,0,1,1,0/A 6A 4B 1A 5B 1A 6B >end.ogn
if grep -qx '\[Result "8-0"\]' end.ogn && grep -qx '\[FEN "1-1-0-2-0-1-1-0-0-1-1-0-0-0-S"\]' end.ogn &&
    grep -qx '1. F+2 d 2. A e 3. A f 8-0' end.ogn && "$SOW" annotate end.ogn >/dev/null 2>&1; then
    ok "play --ogn of a finished game: FEN, Result, result token"
else
    notok "play --ogn of a finished game" "$(cat end.ogn)"
fi
for f in "$HERE"/good/*.ogn; do
    if "$SOW" annotate "$f" --time 0.05 >out 2>/dev/null && [ -s out ]; then
        ok "good/$(basename "$f") annotated"
    else
        notok "good/$(basename "$f")" "$(head -c 300 out)"
    fi
done

# ---- malformed records and bad arguments ------------------------------------------
while IFS=$'\t' read -r file msg; do
    timeout -k 5 60 "$SOW" annotate "$HERE/bad/$file" >out 2>err
    rc=$?
    want="sow annotate: $HERE/bad/$file:$msg"
    if [ $rc = 2 ] && [ ! -s out ] && [ "$(cat err)" = "$want" ]; then
        ok "bad/$file: $msg"
    else
        notok "bad/$file" "exit $rc; stderr: $(cat err)
want: $want"
    fi
done <"$HERE/bad/expect.txt"
bad 2 "no record" annotate
bad 2 "two records" annotate game.ogn game.ogn
bad 2 "missing file" annotate nosuch.ogn
mkdir adir
bad 2 "a directory as the record" annotate adir
mkfifo fifo
bad 2 "a FIFO as the record (not waited on)" annotate fifo
bad 2 "-o a directory" annotate game.ogn -o adir
ln -s game.ogn link.ogn
bad 2 "-o a symbolic link" annotate game.ogn -o link.ogn
bad 2 "--time 0" annotate game.ogn --time 0
bad 2 "--tables missing" annotate game.ogn --tables nosuch
bad 2 "--tables with an empty directory name" annotate game.ogn --tables tb1::tb2
bad 2 "--tables with a missing second directory" annotate game.ogn --tables tb1:nosuch
# the second directory's levels are read: one of them damaged is refused
cp -r tb2 tb2x
printf '\125' | dd of=tb2x/oware-2x3-012.sowtb bs=1 seek=300 conv=notrunc 2>/dev/null
bad 2 "--tables DIR1:DIR2, a level of DIR2 damaged" annotate g3.ogn --tables tb1:tb2x
bad 2 "unknown option" annotate game.ogn --depth 3
bad 2 "play --ogn with an illegal move" play --ogn 3A 3A
bad 2 "play --ogn after the end" play --ogn 1,1,0,2,0,1/1,0,0,1,1,0/A 6A 4B 1A 5B 1A 6B 1A
head -c 1048577 /dev/zero | tr '\0' ' ' >big.ogn
bad 2 "a record over 1 MiB" annotate big.ogn

# ---- Ctrl-C: no output file, no temporary file -----------------------------------
# interrupt SECS ARGS...: sow ARGS... stopped by SIGINT after SECS; rc its status
interrupt() {
    local secs=$1 pid
    shift
    "$SOW" "$@" 2>err &
    pid=$!
    sleep "$secs"
    kill -INT $pid
    wait $pid
    rc=$?
}
interrupt 1 annotate game.ogn --time 5 -o stopped.ogn
left=$(ls stopped.ogn* 2>/dev/null)
if [ $rc = 130 ] && [ -z "$left" ]; then
    ok "Ctrl-C during annotate -o, no move annotated yet: 130, nothing left"
else
    notok "Ctrl-C during annotate -o" "exit $rc, left: $left, stderr: $(cat err)"
fi
# ... after some moves: they go to OUT, and --resume annotates only the others
interrupt 2.2 annotate game.ogn --time 0.3 -o part.ogn
k=$(grep -o '{ sow:' part.ogn 2>/dev/null | wc -l)
if [ $rc = 130 ] && [ "$k" -ge 1 ] && [ "$k" -lt 12 ] &&
    grep -q "interrupted: $k of 12 moves annotated in part.ogn" err && [ -z "$(ls part.ogn.* 2>/dev/null)" ]; then
    ok "Ctrl-C during annotate -o: the $k moves annotated kept in OUT, whole"
else
    notok "Ctrl-C during annotate -o after some moves" "exit $rc, $k moves, stderr: $(cat err)"
fi
cp part.ogn part1.ogn
"$SOW" annotate game.ogn --time 0.05 -o part.ogn --resume 2>err
rc=$?
notes() { tr '\n' ' ' <"$1" | grep -o '{ sow:[^}]*}'; }
if [ $rc = 0 ] && [ "$(notes part.ogn | wc -l)" = 12 ] &&
    [ "$(notes part.ogn | head -n "$k")" = "$(notes part1.ogn)" ] &&
    grep -q "^sow annotate: $k of 12 moves annotated in part.ogn already" err &&
    [ "$(strip part.ogn)" = "$(strip game.ogn)" ]; then
    ok "annotate --resume: the $k comments kept as they were, the other moves annotated"
else
    notok "annotate --resume" "exit $rc, stderr: $(cat err)
$(notes part.ogn)"
fi
bad 2 "--resume without -o" annotate game.ogn --resume
bad 2 "--resume with a missing OUT" annotate game.ogn -o nosuch.ogn --resume
cp part.ogn part2.ogn
bad 2 "--resume with OUT of another game" annotate g3.ogn -o part2.ogn --resume
if cmp -s part.ogn part2.ogn; then ok "--resume refused: OUT left as it was"
else notok "--resume refused: OUT changed" "$(diff part.ogn part2.ogn | head)"; fi

echo "1..$n"
[ $failed = 0 ]
