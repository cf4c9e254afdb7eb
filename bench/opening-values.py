#!/usr/bin/env python3
"""Score a match's games against their openings' exact values.

usage: bench/opening-values.py GAMES_FILE --sow BINARY --tables DIR [--time S]

For each opening of a `sow match --out` games file, `sow solve --time S
--tables DIR` is asked for the opening position's value; where it proves
the value exact (a search whose every leaf is a game end or a table entry),
perfect play from the opening gives a known final score.  Each game's final
score is compared with it: a game that ends with that score was played
perfectly by both sides from the opening on (neither gained), one above or
below names the side that erred.  A match whose games all end so cannot be
won by either engine from those openings.  Games ended by a repetition are
counted apart, not compared: where the rules settle a cycle otherwise than
the value's model of it (oware, docs/rules.md), the final score is not the
value's.  So are games stopped at the move limit or forfeited.

Output: one line per game that differs, then the counts; on stderr, the
openings searched so far with an ETA, every 10 s.  Exit status 0, 2 on bad
input, 130 on Ctrl-C (one line saying how far it got).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# one reader of the games-file format, one way to run sow and to fail
from recount import GAME, Args, Progress, die, interrupted, read_games, run_sow  # noqa: E402


ap = Args(usage=__doc__.split("\n\n")[1].strip()[7:])
ap.add_argument("games")
ap.add_argument("--sow", required=True)
ap.add_argument("--tables", required=True)
ap.add_argument("--time", default="5")
args = ap.parse_args()

lines, (rules, pits, seeds) = read_games(args.games)
values = {}  # opening -> value for the player to move, or None (not proven)
n = exact_games = same = cycles = unfinished = 0
gained = {"a": 0, "b": 0}
games = []  # every line read before the first search: bad input leaves no partial output
for line in lines:
    if line.startswith("#") or not line.strip():
        continue
    g = GAME.match(line)
    if not g:
        die(f"{args.games}: cannot read the line '{line[:60]}...'")
    games.append(g.groups()[:6])
progress = Progress(len({g[1] for g in games}), "openings searched")


def search(num, pos):
    """The opening's value for the player to move, None where not proven."""
    r = run_sow(args.sow, ["solve", "--rules", rules, "--pits", pits, "--seeds", seeds, pos,
                           "--time", args.time, "--tables", args.tables])
    if r.returncode != 0:
        die(f"game {num}: {r.stderr.strip()}")
    v = re.search(r"^value\s*:\s*(-?\d+) \(exact", r.stdout, re.M)
    progress.step()
    return int(v.group(1)) if v else None


for num, pos, south, fa, fb, why in games:
    if pos not in values:
        try:
            values[pos] = search(num, pos)
        except KeyboardInterrupt:
            interrupted()
    n += 1
    if values[pos] is None:
        continue
    if why == "position repeated":
        cycles += 1
        continue
    if why == "move limit" or " forfeits" in why:  # not played to the end
        unfinished += 1
        continue
    exact_games += 1
    f = pos.split("/")
    sa, sb = (int(x) for x in f[3].split("-")) if len(f) > 3 else (0, 0)
    want = sa - sb + (values[pos] if f[2] == "A" else -values[pos])  # South minus North
    got = int(float(fa)) - int(float(fb))
    if got == want:
        same += 1
        continue
    # South is player A; the side that ended above perfect play gained
    winner = south if got > want else ("b" if south == "a" else "a")
    gained[winner] += 1
    print(f"game {num}: final {fa}-{fb}, perfect play from the opening {want:+d} for South; "
          f"{winner} gained {abs(got - want)}")
proven = sum(v is not None for v in values.values())
print(f"games    : {n}, {len(values)} openings, {proven} with values proven exact "
      f"(sow solve --time {args.time} --tables {args.tables})")
print(f"perfect  : {same} of {exact_games} games end with the score perfect play from the "
      f"opening gives; a above it in {gained['a']}, b in {gained['b']}"
      + (f"; {cycles} ended by repetition, not compared" if cycles else "")
      + (f"; {unfinished} not played to the end, not compared" if unfinished else ""))
