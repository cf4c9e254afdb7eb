#!/usr/bin/env bash
# The retrograde core at full size (scripts/test --full; docs/testing.md):
#  1. every rule set's 2x6 levels 0..12 built by the fast and by the lean
#     builder, byte-identical, and checked by `sow tables verify`;
#  2. the full odu 2x6 start (4 seeds a hole) solved exactly: the value, every
#     first move's value, and the node counts recorded in tests/data/full.txt.
# usage: tests/full/core.sh SOW_BINARY        (TAP on stdout)
set -uo pipefail
SOW=$(realpath "${1:?usage: tests/full/core.sh SOW_BINARY}")
DATA=$(dirname "$0")/../data/full.txt
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ -z "${2:-}" ] || sed 's/^/# /' <<<"$2"; }

for r in oware awari jodu jodu-ibadan jodu-starve odu jerin darra; do
    out=$("$SOW" tables build --rules "$r" --seeds 12 --builder fast --dir "$T/fast" 2>&1) &&
        out=$("$SOW" tables build --rules "$r" --seeds 12 --builder lean --dir "$T/lean" 2>&1)
    if [ $? -ne 0 ]; then
        notok "$r 2x6 levels 0..12 built" "$out"
        continue
    fi
    if cmp -s <(cd "$T/fast" && ls "$r"-2x6-* | xargs sha256sum) \
        <(cd "$T/lean" && ls "$r"-2x6-* | xargs sha256sum); then
        ok "$r 2x6 levels 0..12: fast and lean builders byte-identical"
    else
        notok "$r 2x6 levels 0..12: fast and lean builders differ"
    fi
done
if out=$("$SOW" tables verify "$T/fast" --threads 2 2>&1); then
    ok "every rule set's 2x6 levels 0..12: verified ($(grep -c '^ok' <<<"$out") levels)"
else
    notok "tables verify" "$(grep -v '^ok' <<<"$out" | tail -5)"
fi

# The full odu start: value, move values, nodes and positions expanded as
# recorded (they do not depend on the threads).
"$SOW" solve --rules odu --threads 2 --moves --json >"$T/odu.json" 2>"$T/odu.err"
# "value moves nodes expanded", as tests/data/full.txt records them
got=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(r["value"], ",".join("%s:%d" % (m["move"], m["value"]) for m in r["moves"]),
      r["nodes"], r["expanded"])' "$T/odu.json" 2>&1)
read -r g_value g_moves g_nodes g_exp <<<"$got"
read -r _ _ _ w_value w_moves w_nodes w_exp <<<"$(grep '^odu 2x6 4 ' "$DATA")"
if [ "$g_value" = "$w_value" ] && [ "$g_moves" = "$w_moves" ]; then
    ok "odu 2x6/4: value $g_value, move values $g_moves"
else
    notok "odu 2x6/4: value and move values '$g_value $g_moves', recorded '$w_value $w_moves'" \
        "$(tail -3 "$T/odu.err")"
fi
if [ "$g_nodes" = "$w_nodes" ] && [ "$g_exp" = "$w_exp" ]; then
    ok "odu 2x6/4: $g_nodes nodes, $g_exp expanded, as recorded"
else
    notok "odu 2x6/4: $g_nodes nodes, $g_exp expanded; recorded $w_nodes, $w_exp"
fi
echo "1..$n"
[ $fails -eq 0 ]
