#!/usr/bin/env python3
"""How often the engine's move at a root the tables hold is worth less than the root.

usage: bench/table-root-moves.py --tables DIR [--sow BINARY] [--time S]
                                 [--positions N] [--seeds LO HI] [--seed K]

Draws N positions of oware 2x6 inside the tables: from the start, random
moves until the board holds at most T seeds (T drawn in LO..HI for each
position; a walk of more than 400 moves, or a game that ends, is dropped).
For each, `sow solve --tables DIR --moves` gives the exact value and every
move's exact value (the closure; a solve over 30 s is skipped), and
`sow solve --tables DIR --time S` the engine's move.  Prints one line per
position where the engine's move is worth less than the position, then
the count of positions, of such moves, and the seeds they give away.
The same --seed draws the same positions with any binary, so that two
engines are compared position by position.
"""
import argparse
import json
import random
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", required=True)
    ap.add_argument("--sow", default="build/src/cli/sow")
    ap.add_argument("--time", default="0.2")
    ap.add_argument("--positions", type=int, default=40)
    ap.add_argument("--seeds", type=int, nargs=2, default=[8, 22], metavar=("LO", "HI"))
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    def sow(*args):
        r = subprocess.run([a.sow, *args], capture_output=True, text=True, timeout=30)
        if r.returncode:
            sys.exit("table-root-moves: sow %s: %s" % (args[0], r.stderr.strip()))
        return json.loads(r.stdout)

    def seeds(p):
        x, y = p.split("/")[:2]
        return sum(map(int, x.split(","))) + sum(map(int, y.split(",")))

    random.seed(a.seed)
    n = worse = lost = skipped = 0
    for _ in range(a.positions):
        p = "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/-"
        target = random.randint(a.seeds[0], a.seeds[1])
        steps = 0
        while True:
            steps += 1
            if steps > 400:
                p = None
                break
            m = sow("moves", "--json", p)
            if m["over"]:
                p = None
                break
            if seeds(p) <= target:
                break
            p = random.choice(m["moves"])["position"]
        if not p:
            continue
        try:
            ex = sow("solve", "--tables", a.tables, "--moves", "--json", p)
        except subprocess.TimeoutExpired:
            skipped += 1
            continue
        en = sow("solve", "--tables", a.tables, "--time", a.time, "--json", p)
        vals = {mv["move"]: mv["value"] for mv in ex["moves"]}
        n += 1
        d = ex["value"] - vals[en["best"]]
        if d > 0:
            worse += 1
            lost += d
            print("worse %s  exact %d by %s, engine %s worth %d"
                  % (p, ex["value"], ex["best"], en["best"], vals[en["best"]]), flush=True)
    print("positions %d (%d skipped: exact solve over 30 s), engine's move worth less: %d, "
          "seeds given away: %d" % (n, skipped, worse, lost))


if __name__ == "__main__":
    main()
