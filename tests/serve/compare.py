#!/usr/bin/env python3
"""The API's answers against `sow solve --moves --json` (tests/serve/run.sh).

usage: compare.py SOW PORT

Walks ~30 positions of small boards (the starts of three rule sets on 2x3x2
and the positions their first two moves reach, from the API's own "pos"
fields) and prints one line per position: "ok DESC" when value, best move,
exactness, every move's value and the mainline agree with sow solve, and the moves come
best first; "not ok DESC: why" otherwise."""
import json
import subprocess
import sys
import urllib.parse
import urllib.request

sow, port = sys.argv[1], sys.argv[2]


def api(rules, pos):
    q = urllib.parse.urlencode({"pos": pos})
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/{rules}?{q}", timeout=10) as r:
        return json.load(r)


def solve(rules, pos):
    out = subprocess.run([sow, "solve", "--rules", rules, pos, "--moves", "--json"],
                         capture_output=True, text=True, timeout=20, check=True).stdout
    return json.loads(out)


def start(rules):
    q = urllib.parse.urlencode({"pits": 3, "seeds": 2})
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/{rules}?{q}", timeout=10) as r:
        return json.load(r)["pos"]


todo = []
for rules in ("oware", "awari", "jerin"):
    level = [start(rules)]
    for depth in range(3):
        todo += [(rules, p) for p in level]
        nxt = []
        for p in level:
            nxt += [m["pos"] for m in api(rules, p)["moves"]]
        level = nxt
        if len([t for t in todo if t[0] == rules]) >= 10:
            break
seen, cases = set(), []
for t in todo:
    if t not in seen:
        seen.add(t)
        cases.append(t)
cases = cases[:30]

for rules, pos in cases:
    desc = f"{rules} {pos}"
    try:
        a, s = api(rules, pos), solve(rules, pos)
        why = []
        if a["value"] != s["value"]:
            why.append(f"value {a['value']} != {s['value']}")
        if a["exact"] is not True or s["exact"] is not True:
            why.append("not exact")
        if a["pos"] != s["position"]:
            why.append(f"pos {a['pos']} != {s['position']}")
        if a["best"] != s["best"]:
            why.append(f"best {a['best']} != {s['best']}")
        am = {m["move"]: m["value"] for m in a["moves"]}
        sm = {m["move"]: m["value"] for m in s["moves"]}
        if am != sm:
            why.append(f"moves {am} != {sm}")
        vals = [m["value"] for m in a["moves"]]
        if vals != sorted(vals, reverse=True):
            why.append(f"not best first: {vals}")
        if a["moves"] and a["moves"][0]["value"] != a["value"]:
            why.append("the first move is not worth the value")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/{rules}/mainline?"
                                    + urllib.parse.urlencode({"pos": pos}), timeout=10) as r:
            line = [m["move"] for m in json.load(r)["line"]]
        if line != s["pv"]:
            why.append(f"mainline {line} != pv {s['pv']}")
        print(f"ok {desc}" if not why else f"not ok {desc}: {'; '.join(why)}", flush=True)
    except Exception as e:  # one failed case, not the run
        print(f"not ok {desc}: {e}", flush=True)
