#!/usr/bin/env bash
# The evaluation's weights files (docs/engine.md "Evaluation"): the fitter
# (bench/eval_fit.c) on small tables reproduces a committed fixture byte for
# byte, refuses bad input with one line and exit 2; sow match refuses a
# damaged, missing or non-regular weights file with one line and exit 2,
# and plays with a good one.  TAP on stdout.
# usage: tests/cli/eval.sh [SOW] [SOW-EVAL-FIT]
set -u
SOW=$(realpath "${1:-build/src/cli/sow}")
FIT=$(realpath "${2:-build/bench/sow-eval-fit}")
DATA=$(cd "$(dirname "$0")/../data" && pwd)
[ -x "$SOW" ] || { echo "Bail out! no sow executable at $SOW"; exit 1; }
[ -x "$FIT" ] || { echo "Bail out! no sow-eval-fit executable at $FIT"; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && echo "#   $2"; }
check() { if eval "$2"; then ok "$1"; else notok "$1" "${3:-}"; fi; }

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

echo "1..$n"
[ $failed -eq 0 ]
