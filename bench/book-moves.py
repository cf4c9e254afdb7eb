#!/usr/bin/env python3
"""How much of a match the opening book played.

usage: bench/book-moves.py GAMES_FILE [--sow BINARY] [--book FILE] [--plies N]

Each game of a `sow match --out` games file has its first N plies (default
12) replayed (`sow play`, as bench/recount.py does), and each position where
a player was to move is looked up with `sow book probe` (sow's own book of
the rule set, or FILE).  Prints how many games there are and how many
distinct ones (by their moves), how many of each player's moves were played
in a position the book holds and how many of those were the book's choice (a
move of the best score, what BookMargin 0 plays), and a histogram of a's
book moves a game.  Exit 0; 2 on bad input; 130 on Ctrl-C.
"""
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recount import GAME, Args, Progress, die, interrupted, read_games, replay, run_sow  # noqa: E402,E501


def book_best(out):
    """The moves `sow book probe` printed with the best score (best first):
    those the engine chooses among with BookMargin 0."""
    rows = [l.split() for l in out.splitlines() if l.strip()]
    score = [int(r[1].lstrip("=")) for r in rows]  # ("=-60": exact)
    return [r[0] for r, v in zip(rows, score) if v == score[0]]


ap = Args(usage=__doc__.split("\n\n")[1].strip()[7:])
ap.add_argument("games")
ap.add_argument("--sow", default="build/src/cli/sow")
ap.add_argument("--book")
ap.add_argument("--plies", type=int, default=12)
args = ap.parse_args()
lines, (rules, pits, seeds) = read_games(args.games)
games = [g.groups() for g in map(GAME.match, lines) if g]
common = ["--rules", rules, "--pits", pits, "--seeds", seeds]
book = ["--book", args.book] if args.book else []

held = collections.Counter()  # player -> moves in a position the book holds
chose = collections.Counter()  # player -> of those, the book's choice
per_game = collections.Counter()  # a's book moves in a game -> games
seqs = set()
probes = {}  # position -> the book's choice, None where it does not hold it
progress = Progress(len(games), "games replayed")
try:
    for g in games:
        num, opening, south, moves = g[0], g[1], g[2], g[7].split()
        seqs.add((opening, tuple(moves)))
        path = []
        _, err = replay(args.sow, rules, pits, seeds, opening, moves[:args.plies], path)
        if err:
            die(f"game {num}: {err}")
        k = 0
        for pos, mv in zip(path, moves[:args.plies]):
            who = south if pos.split("/")[2] == "A" else "ab"[south == "a"]
            if pos not in probes:
                r = run_sow(args.sow, ["book", "probe"] + common + book + [pos])
                if r.returncode not in (0, 1):  # (1: not in the book)
                    die(r.stderr.strip() or f"sow book probe exit {r.returncode}")
                probes[pos] = book_best(r.stdout) if r.returncode == 0 else None
            if probes[pos] is None:
                continue
            held[who] += 1
            if mv in probes[pos]:
                chose[who] += 1
                k += who == "a"
        per_game[k] += 1
        progress.step()
except KeyboardInterrupt:
    interrupted()

print(f"games    : {len(games)}, {len(seqs)} distinct (by their moves)")
print(f"positions: {sum(1 for v in probes.values() if v is not None)} of the book's met")
for who in "ab":
    print(f"book {who}   : {held[who]} moves in a position the book holds, "
          f"{chose[who]} of them the book's choice")
print("a's book moves a game: " + ", ".join(f"{k}: {per_game[k]}" for k in sorted(per_game)))
