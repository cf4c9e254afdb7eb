#!/usr/bin/env bash
# The evaluation's weights files (docs/engine.md "Evaluation"): the fitter
# (bench/eval_fit.c) on small tables reproduces a committed fixture byte for
# byte, refuses bad input with one line and exit 2; sow match refuses a
# damaged, missing or non-regular weights file with one line and exit 2,
# and plays with a good one; sow engine's Weights option takes a file,
# and the default evaluation is the committed file (oware, awari, darra,
# jodu, jodu-starve) or the classic weights (jodu-ibadan).  TAP on stdout.
# usage: tests/cli/eval.sh [SOW] [SOW-EVAL-FIT]
set -u
SOW=$(realpath "${1:-build/src/cli/sow}")
FIT=$(realpath "${2:-build/bench/sow-eval-fit}")
DATA=$(cd "$(dirname "$0")/../data" && pwd)
[ -x "$SOW" ] || { echo "Bail out! no sow executable at $SOW"; exit 1; }
[ -x "$FIT" ] || { echo "Bail out! no sow-eval-fit executable at $FIT"; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
. "$(dirname "$0")/tap.sh"

# bad CMD...: exit 2, one line on stderr, nothing on stdout
bad() {
    local what=$1; shift
    "$@" >"$WORK/out" 2>"$WORK/err" </dev/null
    local rc=$?
    check "$what: exit 2, one line" '[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && [ ! -s "$WORK/out" ]' \
        "rc=$rc: $(head -3 "$WORK/err")"
}

T="$WORK/tables"
"$SOW" tables build --rules oware --seeds 10 --threads 1 --dir "$T" >/dev/null 2>&1
check "tables of oware levels 0..10 built" '[ $? -eq 0 ]'

# ---- the fitter: the committed small fixture, byte for byte ----
FIXTURE="$DATA/eval-fit-oware-small.weights"
"$FIT" --rules oware --tables "$T" --levels 4..10 --samples 20000 --seed 7 \
    --out "$WORK/small.weights" >"$WORK/report"
check "fit of levels 4..10: exit 0" '[ $? -eq 0 ]'
check "fit reproduces $(basename "$FIXTURE") byte for byte" 'cmp -s "$WORK/small.weights" "$FIXTURE"' \
    "$(diff "$WORK/small.weights" "$FIXTURE" | head -5)"
check "fit report: held-out RMSE of classic and fitted weights" \
    'grep -q "classic .*RMSE" "$WORK/report" && grep -q "fitted .*RMSE" "$WORK/report"'
"$FIT" --rules oware --tables "$T" --levels 4..10 --samples 20000 --seed 8 --out "$WORK/s8.weights" >/dev/null
check "another seed, another fit" '! cmp -s "$WORK/s8.weights" "$FIXTURE"'

bad "fit without --seed" "$FIT" --rules oware --tables "$T" --levels 4..10 --samples 100
bad "fit of absent levels" "$FIT" --rules oware --tables "$T" --levels 4..11 --samples 100 --seed 1
bad "fit --levels 9..4" "$FIT" --rules oware --tables "$T" --levels 9..4 --samples 100 --seed 1
bad "fit --without colour" "$FIT" --rules oware --tables "$T" --levels 4..10 --samples 100 --seed 1 --without colour
bad "fit --rules chess" "$FIT" --rules chess --tables "$T" --levels 4..10 --samples 100 --seed 1
bad "fit --out a directory" "$FIT" --rules oware --tables "$T" --levels 4..10 --samples 100 --seed 1 --out "$WORK"

# ---- sow match with weights files ----
m() { "$SOW" match --rules oware --games 2 --concurrency 1 --unbalanced \
    --a "sow:depth=2,hash=1,weights=$1" --b sow:depth=2,hash=1; }
m "$FIXTURE" >"$WORK/mout" 2>&1
check "match with a weights file: exit 0" '[ $? -eq 0 ] && grep -q "^score a" "$WORK/mout"' "$(tail -3 "$WORK/mout")"
m 12/12/10/40/0/10/30 >"$WORK/mout" 2>&1
check "match with the seven classic weights: exit 0" '[ $? -eq 0 ]' "$(tail -3 "$WORK/mout")"
sed 's/^hole 3 /hole 9 /' "$FIXTURE" >"$WORK/d1.weights"
bad "match with a damaged weights file (hole line)" m "$WORK/d1.weights"
check "the reason names the line" 'grep -q "d1.weights:[0-9]*: expected .hole 3" "$WORK/err"' "$(cat "$WORK/err")"
sed 's/^tempo .*/tempo many/' "$FIXTURE" >"$WORK/d2.weights"
bad "match with a damaged weights file (tempo)" m "$WORK/d2.weights"
head -c 200 "$FIXTURE" >"$WORK/d3.weights"
bad "match with a truncated weights file" m "$WORK/d3.weights"
head -c 3000 /dev/urandom >"$WORK/d4.weights"
bad "match with a binary file as weights" m "$WORK/d4.weights"
bad "match with a missing weights file" m "$WORK/missing.weights"
bad "match with a directory as weights" m "$WORK"
bad "match with six classic weights" m 1/2/3/4/5/6

# ---- sow engine: the Weights option takes a file; a damaged one is an error line ----
out=$(printf 'setoption name OwnBook value false\nsetoption name Weights value %s\nisready\nsetoption name Weights value %s\nisready\nposition startpos\ngo depth 3\nquit\n' \
    "$FIXTURE" "$WORK/d1.weights" | timeout 20 "$SOW" engine 2>&1)
check "engine: Weights FILE accepted, a damaged one refused naming the line, search goes on" \
    '[ "$(grep -c "error" <<<"$out")" -eq 1 ] && grep -q "error: setoption Weights: .*d1.weights:[0-9]*:" <<<"$out" && grep -q "^bestmove" <<<"$out"' "$out"

# the score of a depth-2 search of rule set R's start under Weights V
# (empty: the default); quit only once bestmove is out (quit stops a search)
score2() {
    local set="" fifo="$WORK/in.$1.$RANDOM" out="$WORK/eout" i
    [ -n "$2" ] && set="setoption name Weights value $2\n"
    mkfifo "$fifo"
    timeout 30 "$SOW" engine <"$fifo" >"$out" 2>&1 &
    local pid=$!
    exec 3>"$fifo"
    printf "setoption name OwnBook value false\nsetoption name Rules value %s\n${set}position startpos\ngo depth 2\n" "$1" >&3
    for i in $(seq 200); do grep -q '^bestmove' "$out" && break; sleep 0.1; done
    echo quit >&3
    exec 3>&-
    wait $pid
    rm -f "$fifo"
    awk '/^info depth 2 / {for (i = 1; i < NF; i++) if ($i == "cp") print $(i + 1)}' "$out"
}
EVAL_DIR="$DATA/../../tables/eval"
for rc in oware:12,12,10,40,0,10,30 awari:12,12,10,40,0,10,30 darra:8,12,20,40,0,10,20 \
    jodu:30,10,20,40,15,10,20 jodu-starve:15,10,20,40,15,10,20; do
    r=${rc%%:*}
    d=$(score2 $r "") f=$(score2 $r "$EVAL_DIR/$r-2x6.weights") c=$(score2 $r "${rc#*:}")
    check "engine $r: the default evaluation is tables/eval/$r-2x6.weights ($d = $f), not the classic ($c)" \
        '[ -n "$d" ] && [ "$d" = "$f" ] && [ "$d" != "$c" ]'
done
d=$(score2 jodu-ibadan "") c=$(score2 jodu-ibadan 8,10,20,40,15,10,20)
check "engine jodu-ibadan: the default evaluation is the classic ($d = $c)" '[ -n "$d" ] && [ "$d" = "$c" ]'

tap_done
