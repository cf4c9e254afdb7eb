#!/usr/bin/env python3
"""How long a match's games take to reach the tables.

usage: bench/plies-to-tables.py GAMES_FILE --level L [--sow BINARY]

Every game of a `sow match --out` games file is replayed (`sow play`, as
bench/recount.py does).  From each position with more than L seeds on the
board, the moves its side still makes before the board holds L or fewer
(where tables of levels 0..L answer every position, and the engine's move
costs no time) are counted: half the plies to that point, rounded up.  A
game that never gets there counts to its end.  Printed by seeds on the
board: the positions, the mean and median of those moves, and the seeds
above L plus 5, in 6..30 (the moves to go of a time allocation tried
and not kept: bench/results/2026-12-07-timeman-tables.md).  Exit 0; 2
on bad input; 130 on Ctrl-C.
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recount import GAME, Args, Progress, die, interrupted, read_games, replay, seeds_on_board  # noqa: E402,E501


ap = Args(usage=__doc__.split("\n\n")[1].strip()[7:])
ap.add_argument("games")
ap.add_argument("--level", type=int, required=True)
ap.add_argument("--sow", default="build/src/cli/sow")
args = ap.parse_args()
lines, (rules, pits, seeds) = read_games(args.games)
games = [g.groups() for g in map(GAME.match, lines) if g]
if not games:
    die(f"{args.games}: no games")
progress = Progress(len(games), "games replayed")
left = {}  # seeds on the board -> moves its side made before the tables
first = []  # from each opening: moves a side before the tables
try:
    for g in games:
        path = []
        res, err = replay(args.sow, rules, pits, seeds, g[1], g[7].split(), path)
        if err:
            die(f"game {g[0]}: {err}")
        n = [seeds_on_board(p) for p in path]
        end = next((i for i, s in enumerate(n) if s <= args.level), len(n) - 1)
        for i in range(end):
            left.setdefault(int(n[i]), []).append((end - i + 1) // 2)
        first.append((end + 1) // 2)
        progress.step()
except KeyboardInterrupt:
    interrupted()
print(f"games    : {len(games)} ({rules} 2x{pits}), tables 0..{args.level}")
print(f"openings : {statistics.mean(first):.1f} moves a side before the tables on average "
      f"(median {statistics.median(first):g}, {min(first)}..{max(first)})")
print("seeds  positions  moves a side before the tables: mean  median  seeds-L+5 (6..30)")
for s in sorted(left, reverse=True):
    v = left[s]
    print(f"{s:5d}  {len(v):9d}  {statistics.mean(v):36.1f}  {statistics.median(v):6g}  "
          f"{min(30, max(6, s - args.level + 5)):17d}")
