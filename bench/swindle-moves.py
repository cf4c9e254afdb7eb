#!/usr/bin/env python3
"""What the engine's Swindle option changes in a match's positions, and what
it costs.

usage: bench/swindle-moves.py GAMES_FILE [--sow BINARY] [--tables DIR]
                              [--games N] [--time MS]

The positions where a was to move in the first N games (default 30) of a
`sow match --out` games file, each with the game's moves before it as its
history, are given to two `sow engine` processes, one with Swindle false and
one with Swindle true (OwnBook false, Tables DIR, `ucinewgame` before each
position so that no table carries over), each `go movetime MS` (default
1000).  Prints the positions, those where the swindle ran (its `info string
swindle` line), those where it played another move than the engine without
it, and each engine's mean and largest wall time from go to bestmove.  Exit
0; 2 on bad input; 130 on Ctrl-C.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recount import GAME, Args, Progress, die, interrupted, read_games, replay  # noqa: E402,E501


class Engine:
    """A `sow engine` process: options set, then one position at a time."""

    def __init__(self, sow, rules, pits, seeds, tables, swindle):
        try:
            self.p = subprocess.Popen([sow, "engine"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      text=True, bufsize=1)
        except OSError as e:
            die(f"--sow {sow}: {e.strerror}")
        for name, value in (("Rules", rules), ("Pits", pits), ("Seeds", seeds),
                            ("OwnBook", "false"), ("Swindle", swindle),
                            ("Tables", tables or "<empty>")):
            self.say(f"setoption name {name} value {value}")
        self.say("isready")
        self.read_until("readyok")

    def say(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def read_until(self, word):
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                die("sow engine ended early (no '%s')" % word)
            lines.append(line.rstrip("\n"))
            if line.startswith("info string error"):
                die(line.strip()[len("info string error: "):])
            if line.split()[:1] == [word]:
                return lines

    def go(self, opening, moves, ms):
        """(bestmove, the swindle's line or None, seconds)"""
        self.say("ucinewgame")
        self.say(f"position pos {opening}" + (" moves " + " ".join(moves) if moves else ""))
        self.say("isready")
        self.read_until("readyok")
        t0 = time.monotonic()
        self.say(f"go movetime {ms}")
        lines = self.read_until("bestmove")
        dt = time.monotonic() - t0
        sw = next((l for l in lines if l.startswith("info string swindle")), None)
        return lines[-1].split()[1], sw, dt

    def close(self):
        self.say("quit")
        self.p.wait()


ap = Args(usage=__doc__.split("\n\n")[1].strip()[7:])
ap.add_argument("games")
ap.add_argument("--sow", default="build/src/cli/sow")
ap.add_argument("--tables")
ap.add_argument("--games", type=int, default=30, dest="n")
ap.add_argument("--time", type=int, default=1000)
args = ap.parse_args()
if args.n < 1 or args.time < 1:
    die("--games and --time must be at least 1")
lines, (rules, pits, seeds) = read_games(args.games)
games = [g.groups() for g in map(GAME.match, lines) if g][:args.n]
if not games:
    die(f"{args.games}: no games")
off = Engine(args.sow, rules, pits, seeds, args.tables, "false")
on = Engine(args.sow, rules, pits, seeds, args.tables, "true")
n = ran = moved = 0
t_off, t_on = [], []
examples = []
progress = Progress(len(games), "games")
try:
    for num, opening, south, *_, moves in games:
        moves = moves.split()
        path = []  # the position before each move (sow play)
        _, err = replay(args.sow, rules, pits, seeds, opening, moves, path)
        if err:
            die(f"game {num}: {err}")
        for k, pos in enumerate(path[:len(moves)]):
            if (pos.split("/")[2] == "A") != (south == "a"):
                continue  # b to move
            b0, _, d0 = off.go(opening, moves[:k], args.time)
            b1, sw, d1 = on.go(opening, moves[:k], args.time)
            n += 1
            t_off.append(d0)
            t_on.append(d1)
            if sw:
                ran += 1
                if b0 != b1:
                    moved += 1
                    if len(examples) < 5:
                        examples.append(f"game {num} ply {k + 1}: {b0} -> {b1} ({sw[12:]})")
        progress.step()
except KeyboardInterrupt:
    interrupted()
off.close()
on.close()
if not n:
    die("a was never to move")
print(f"positions: {n} where a was to move, in {len(games)} games")
print(f"swindle  : ran in {ran}, played another move in {moved}")
for e in examples:
    print(f"  {e}")
print(f"time off : mean {sum(t_off) / n:.3f} s, largest {max(t_off):.3f} s")
print(f"time on  : mean {sum(t_on) / n:.3f} s, largest {max(t_on):.3f} s")
