#!/usr/bin/env bash
# Bounds files from the command line (TAP on stdout): sow tables build
# --bounds, info, stats, verify (a damaged bounds file: one line naming it,
# exit 2), compress (the bounds stay valid), and sow solve --tables answering
# from them without a search, with the closure's values.
#
# usage: tests/cli/bounds.sh [SOW]     (default: build/src/cli/sow)
set -u
SOW=$(realpath "${1:-build/src/cli/sow}")
[ -x "$SOW" ] || { echo "Bail out! no sow executable at $SOW"; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/no-tables"
export SOW_TABLES="$WORK/no-tables"
. "$(dirname "$0")/tap.sh"

TB=$WORK/tb LOW=$WORK/low
"$SOW" tables build --seeds 9 --dir "$TB" --bounds --threads 1 >"$WORK/out" 2>"$WORK/err"
check_st "build --bounds: exit 0" $? "$(cat "$WORK/err")"
nb=$(ls "$TB"/oware-2x6-*.sowtbb 2>/dev/null | wc -l)
[ "$nb" = 10 ]; check_st "build --bounds: a bounds file per level (10)" $? "$nb files"
# the levels below 9 without bounds: the closure's reference for level 9
mkdir -p "$LOW" && cp "$TB"/oware-2x6-00[0-8].sowtb "$LOW"/

"$SOW" tables build --help 2>&1 | grep -q -- '--bounds'
check_st "tables build --help names --bounds" $?

"$SOW" tables info "$TB" >"$WORK/info" 2>&1
st=$?
grep -q '^oware-2x6-009.sowtbb .*ok (bounds of values' "$WORK/info" && grep -q '^bounds [0-9]* bytes in 10 files' "$WORK/info"
check_st "info lists the bounds files" $((st || $?)) "$(tail -3 "$WORK/info")"

"$SOW" tables stats --dir "$TB" --seeds 9 --json >"$WORK/stats" 2>&1
grep -q '"bounds":{"forced":[0-9]*,"open":[0-9]*}}$' "$WORK/stats"
check_st "stats --json counts the bounds" $? "$(cat "$WORK/stats")"

"$SOW" tables verify "$TB" --threads 1 >"$WORK/verify" 2>&1
check_st "verify: ok with bounds" $? "$(grep -v '^ok' "$WORK/verify")"

# the exact solve over the bounds: no search, the closure's values
POS=1,1,1,1,0,0/1,1,1,1,1,0/B
"$SOW" solve --tables "$TB" --levels 0 --moves --json "$POS" >"$WORK/a" 2>/dev/null
st=$?
"$SOW" solve --tables "$LOW" --levels 0 --moves --json "$POS" >"$WORK/b" 2>/dev/null
strip() { sed 's/,"nodes".*//' "$1"; }
[ $st = 0 ] && grep -q '"nodes":0,' "$WORK/a" && [ "$(strip "$WORK/a")" = "$(strip "$WORK/b")" ]
check_st "solve --tables: a 9-seed position from the bounds, the closure's values" $? \
    "$(cat "$WORK/a")" "$(cat "$WORK/b")"

# tables probe: a move that stays in the level from its result's bounds
# (5A is worth 3, where minus the result's value says 1), as sow solve says
P7=2,0,0,1,2,0/0,0,2,0,0,0/A
probe() { "$SOW" tables probe --dir "$1" "$P7" 2>&1 | sed -n 's/^\([1-6]A\) .* \([-+][0-9]*\)  .*/\1 \2/p' | tr '\n' ' '; }
want=$("$SOW" solve --moves "$P7" 2>/dev/null | sed -n 's/^move \([1-6]A\) *: \(-*[0-9]*\).*/\1 \2/p' | sed 's/ \([0-9]\)/ +\1/' | tr '\n' ' ')
got=$(probe "$TB") plain=$(probe "$LOW")
[ "$got" = "$want" ] && [ "$got" != "$plain" ]
check_st "tables probe: in-level moves from the bounds, sow solve's values" $? "bounds: $got" \
    "solve: $want" "without bounds: $plain"

# damage: a byte of level 7's bounds
BAD=$WORK/bad
cp -r "$TB" "$BAD"
f=$BAD/oware-2x6-007.sowtbb
printf '\x55' | dd of="$f" bs=1 seek=4000 conv=notrunc 2>/dev/null
"$SOW" tables verify "$BAD" --threads 1 >"$WORK/verify" 2>&1
st=$?
lines=$(grep -c "$f" "$WORK/verify")
[ $st = 2 ] && [ "$lines" = 1 ] && grep -q "^BAD  $f: payload damaged" "$WORK/verify"
check_st "verify: a damaged bounds file, one line naming it, exit 2" $? "exit $st" "$(cat "$WORK/verify")"
"$SOW" solve --tables "$BAD" "$POS" >"$WORK/out" 2>"$WORK/err"
st=$?
[ $st = 2 ] && [ ! -s "$WORK/out" ] && [ "$(wc -l <"$WORK/err")" = 1 ] && grep -q "$f" "$WORK/err"
check_st "solve --tables: a damaged bounds file, one line, exit 2" $? "exit $st" "$(cat "$WORK/err")"
"$SOW" tables stats --dir "$BAD" --seeds 7 >"$WORK/out" 2>"$WORK/err"
st=$?
[ $st = 2 ] && [ ! -s "$WORK/out" ] && grep -q "$f" "$WORK/err"
check_st "stats: a damaged bounds file, exit 2" $? "exit $st" "$(cat "$WORK/err")"

# bounds added to levels built without them: the same files
rm -f "$BAD"/*.sowtbb
cp "$TB"/oware-2x6-00[0-9].sowtb "$BAD"/
"$SOW" tables build --seeds 9 --dir "$BAD" --bounds --threads 1 --builder lean >/dev/null 2>&1
st=$?
same=0
for k in 0 1 2 3 4 5 6 7 8 9; do
    cmp -s "$TB/oware-2x6-00$k.sowtbb" "$BAD/oware-2x6-00$k.sowtbb" || same=1
done
[ $st = 0 ] && [ $same = 0 ]
check_st "build --bounds over levels without them: the same bounds files" $? "exit $st"

# compressed levels keep their bounds
"$SOW" tables compress --dir "$BAD" --threads 1 >/dev/null 2>&1 &&
    "$SOW" tables verify "$BAD" --threads 1 >"$WORK/verify" 2>&1
st=$?
"$SOW" solve --tables "$BAD" --levels 0 --moves --json "$POS" >"$WORK/c" 2>/dev/null
[ $st = 0 ] && [ "$(strip "$WORK/c")" = "$(strip "$WORK/a")" ] && grep -q '"nodes":0,' "$WORK/c"
check_st "compressed levels: verify ok, the same answer from the bounds" $? "exit $st" "$(cat "$WORK/c")"

tap_done
