#!/usr/bin/env python3
"""Recount a `sow match --out` games file, the second way to its result.

usage: bench/recount.py GAMES_FILE [--sow BINARY] [--openings FILE] [--tables DIR]

The match runner tallies its games as it plays them.  This script takes only
the file: it replays every game with `sow play` (the rules' move generator,
not the runner nor either engine), checks that every move is legal, that the
game ends where the record says and why, and that the final score and the
point given to player a follow from the moves (a game stopped at the move
limit: its length only); then it counts wins, draws and losses and computes
the Elo difference and its 95% intervals itself, as `sow match` prints them:
from the mean and spread of a's points over the games, and over the
colour-swapped pairs (a pair's two games, one opening, as one sample).
With --openings, each game's opening must be its pair's line of that file.
With --tables DIR (levels 0..N of the rule set), each game that reaches
N seeds on the board is also scored as if both played perfectly from its
first position there (the tables' value, docs/rules.md): the W/D/L and Elo
so, and how many games a's played result fell below or rose above it.
(In oware the repetition rule settles a cycle where it closes, which the
tables' value does not model: a result below it is not always a mistake.)

Output: the summary (as `sow match` prints it), the games by end and by
colour, and one line per game that does not check out; on stderr, the
games replayed so far with an ETA, every 10 s.  Exit status 0 if every game
checks out, 1 if one does not, 2 on bad input, 130 on Ctrl-C (one line
saying how far it got).
"""
import math
import argparse
import os
import re
import subprocess
import sys
import time

HEAD = re.compile(r"^# sow match: rules (\S+) 2x(\d+) seeds (\d+);.*max-plies (\d+)")
GAME = re.compile(r"^game (\d+) opening (\S+)(?: \(South[^)]*\))? South=([ab]) "
                  r"final (\S+)-(\S+) \((.*?)\) a=(\S+):(.*)$")


def tool():
    """The script run (recount, or a tool that imports it): its messages'
    prefix."""
    return os.path.splitext(os.path.basename(sys.argv[0]))[0]


def die(msg):
    print(f"{tool()}: {msg}", file=sys.stderr)
    sys.exit(2)


class Args(argparse.ArgumentParser):
    """The tools' argument parser: a usage error is one line and exit 2."""

    def error(self, message):
        die(message)


def read_games(path):
    """(lines, (rules, pits, seeds)) of a `sow match --out` games file; one
    that cannot be read or has no header ends the tool (one line, exit 2)."""
    try:
        lines = open(path).read().splitlines()
    except OSError as err:
        die(f"{path}: {err.strerror}")
    head = next(filter(None, map(HEAD.match, lines)), None)
    if not head:
        die(f"{path}: no '# sow match:' header")
    return lines, head.groups()[:3]


class Progress:
    """Long work's progress on stderr: every 10 s and at the end, with an
    ETA from the rate so far.  The last one made says how far Ctrl-C came
    (interrupted())."""
    last = None

    def __init__(self, total, what):
        self.total, self.what, self.done = total, what, 0
        self.t0 = self.shown = time.monotonic()
        Progress.last = self

    def step(self):
        self.done += 1
        now = time.monotonic()
        if now - self.shown >= 10 or self.done == self.total:
            self.shown = now
            eta = (now - self.t0) / self.done * (self.total - self.done)
            print(f"{tool()}: {self.done} of {self.total} {self.what}, ETA {eta:.0f} s",
                  file=sys.stderr)


def interrupted():
    """Ctrl-C: one line saying how far the work came, exit 130."""
    p = Progress.last
    print(f"{tool()}: interrupted" + (f" after {p.done} of {p.total} {p.what}" if p else ""),
          file=sys.stderr)
    sys.exit(130)


def run_sow(sow, args):
    """sow ARGS run, its output captured; a sow that cannot be run ends the
    script as bad input (one line, exit 2), not with a traceback."""
    try:
        return subprocess.run([sow] + args, capture_output=True, text=True)
    except OSError as e:
        die(f"--sow {sow}: {e.strerror}")


def elo(s):
    if s <= 0:
        return -math.inf
    if s >= 1:
        return math.inf
    return 400.0 * math.log10(s / (1.0 - s))  # (as sow match: +0.0 at 1/2)


def print_pairs(points, se):
    """The Elo interval over the colour-swapped pairs (games 2k+1 and 2k+2,
    one opening), as `sow match` prints it: a pair's two games averaged are
    one sample, so what the opening gives the side that is South cancels
    within the pair; every pair alike, the pairs show no spread of their
    own and the interval is the games' (se: its standard error of the mean
    score).  Nothing without a complete pair."""
    pair = [0] * 5  # the pairs by a's points in their two games, 0 .. 2
    for g in points:
        if g % 2 == 1 and g + 1 in points:
            pair[round(2 * (points[g] + points[g + 1]))] += 1
    np_, ps, ps2 = 0, 0.0, 0.0
    for k in range(5):  # (summed as sow match sums them: the same digits)
        x = k / 4.0
        np_ += pair[k]
        ps += pair[k] * x
        ps2 += pair[k] * x * x
    if not np_:
        return
    m = ps / np_
    v = ps2 / np_ - m * m
    e = 1.96 * (math.sqrt(v / np_) if v > 0 else se)
    print(f"pairs    : {np_} (a's points in the two games 0 / 0.5 / 1 / 1.5 / 2: "
          + " / ".join(str(c) for c in pair) + ")")
    print(f"elo pairs: {elo(m):+.1f} (95%: {elo(m - e):+.1f} .. {elo(m + e):+.1f})")


def replay(sow, rules, pits, seeds, opening, moves, path=None):
    """((reason, (final A, final B) or None), None) of the game, or (None,
    an error); the positions from the opening on appended to path."""
    # (a game forfeited before its first move: the opening's moves listed,
    # which says as sow play does whether the game is over there)
    r = run_sow(sow, ["play" if moves else "moves", "--rules", rules, "--pits", pits,
                      "--seeds", seeds, opening] + moves)
    if r.returncode != 0:
        return None, r.stderr.strip() or f"sow play exit {r.returncode}"
    out = r.stdout.splitlines()
    if path is not None:
        path.append(opening)
        path.extend(m.group(1) for m in (re.match(r"\d+\. \S+ +captured \S+ +(\S+)$", l)
                                         for l in out) if m)
    if not moves and not any(l.startswith("game over") for l in out):
        return ("move limit", None), None
    over = [l for l in out if l.startswith("game over")]
    if not over:  # no end: the runner stopped it at its move limit
        return ("move limit", None), None
    m = re.match(r"game over: position repeated; settlement: A takes (\S+), B takes (\S+)$",
                 over[0])
    if m:  # the stores: the last position's fourth field, SA-SB
        last = out[-1].split("/")
        if len(last) < 4:
            return None, f"unexpected last line of sow play: {out[-1]}"
        store = [float(x) for x in last[3].split("-")]
        return ("position repeated", (store[0] + float(m.group(1)),
                                      store[1] + float(m.group(2)))), None
    reason = over[0][len("game over: "):]
    fs = [l for l in out if l.startswith("final score:")]
    m = re.match(r"final score: A (\S+), B (\S+)$", fs[0]) if fs else None
    if not m:
        return None, "sow play printed no final score"
    return (reason, (float(m.group(1)), float(m.group(2)))), None


def seeds_on_board(pos):
    rows = pos.split("/")
    return sum(float(x) for x in rows[0].split(",")) + sum(float(x) for x in rows[1].split(","))


def tables_top(sow, d, rules, pits):
    """The highest level N with levels 0..N of rules 2xpits in d, whole."""
    r = run_sow(sow, ["tables", "info", d])
    if r.returncode != 0:
        die(f"--tables {d}: {r.stderr.strip() or 'sow tables info failed'}")
    have = {int(m.group(1)) for m in (re.match(rf"{re.escape(rules)}-2x{pits}-(\d+)\.sowtb .* ok", l)
                                      for l in r.stdout.splitlines()) if m}
    top = -1
    while top + 1 in have:
        top += 1
    if top < 0:
        die(f"--tables {d}: no level 0 of {rules} 2x{pits}")
    return top


def tables_points(sow, rules, pits, d, pos, south):
    """a's point if both play perfectly from pos (the tables' value), and
    a's net seeds so."""
    r = run_sow(sow, ["tables", "probe", "--rules", rules, "--pits", pits, "--dir", d, pos])
    m = re.search(r"^value\s+([+-]?\d+)", r.stdout, re.M)
    if r.returncode != 0 or not m:
        die(f"sow tables probe {pos}: {r.stderr.strip() or 'no value'}")
    rows = pos.split("/")
    v, n = int(m.group(1)), seeds_on_board(pos)
    sa, sb = (float(x) for x in rows[3].split("-"))
    va = v if rows[2] == "A" else -v
    fa, fb = sa + (n + va) / 2, sb + (n - va) / 2
    mine, theirs = (fa, fb) if south == "a" else (fb, fa)
    return (1.0 if mine > theirs else 0.0 if mine < theirs else 0.5), mine - theirs


def main():
    args = sys.argv[1:]
    sow, openings, path, tdir = "build/src/cli/sow", None, None, None
    while args:
        a = args.pop(0)
        if a == "--sow" and args:
            sow = args.pop(0)
        elif a == "--openings" and args:
            openings = args.pop(0)
        elif a == "--tables" and args:
            tdir = args.pop(0)
        elif a.startswith("-"):
            die(f"unknown option '{a}' (usage: bench/recount.py GAMES [--sow B] "
                "[--openings F] [--tables DIR])")
        elif path is None:
            path = a
        else:
            die(f"unexpected argument '{a}'")
    if path is None:
        die("usage: bench/recount.py GAMES_FILE [--sow BINARY] [--openings FILE] "
            "[--tables DIR]")
    try:
        lines = open(path).read().splitlines()
        ops = None
        if openings:
            ops = [l.split("#")[0].strip() for l in open(openings)]
            ops = [o for o in ops if o]
    except OSError as e:
        die(f"{e.filename}: {e.strerror}")

    heads = [HEAD.match(l) for l in lines if l.startswith("#")]
    if not heads or not all(heads):
        die(f"{path}: no 'sow match' header line, or one this script cannot read")
    rules, pits, seeds, maxplies = heads[0].groups()
    if any(h.groups() != heads[0].groups() for h in heads):
        die(f"{path}: header lines of different matches")
    top = tables_top(sow, tdir, rules, pits) if tdir else -1
    tw = [0, 0, 0]  # --tables: a's results, perfect play from the tables on
    tin = tbelow = tabove = tnet = 0

    w = d = l = 0
    sum2 = 0.0
    by_end, by_colour, bad, seen = {}, {"a": [0.0, 0], "b": [0.0, 0]}, [], set()
    points = {}  # game: a's point
    progress = Progress(sum(1 for ln in lines if ln.strip() and not ln.startswith("#")),
                        "games replayed")
    for line in lines:
        if line.startswith("#") or not line.strip():
            continue
        m = GAME.match(line)
        if not m:
            die(f"{path}: cannot read the line '{line[:60]}...'")
        g, opening, south, fa, fb, how, pts, moves = m.groups()
        g, fa, fb, pts, moves = int(g), float(fa), float(fb), float(pts), moves.split()
        if g in seen:
            bad.append(f"game {g}: played twice")
        seen.add(g)
        points[g] = pts
        why = None
        if ops is not None and (len(ops) < (g + 1) // 2 or ops[(g - 1) // 2] != opening):
            why = "its opening is not its pair's line of the openings file"
        if (south == "a") != (g % 2 == 1):
            why = why or f"South={south} in game {g} (a is South in odd games)"
        forfeit = re.match(r"([ab]) forfeits", how)
        posns = []
        got, err = replay(sow, rules, pits, seeds, opening, moves, posns)
        tpts = pts
        first = next((q for q in posns if seeds_on_board(q) <= top), None) if not err else None
        if first is not None and not forfeit:
            tpts, tn = tables_points(sow, rules, pits, tdir, first, south)
            tin += 1
            tbelow += pts < tpts
            tabove += pts > tpts
            if got and got[1] is not None:
                final = got[1]
                tnet += ((final[0] - final[1]) * (1 if south == "a" else -1)) - tn
        tw[int(2 * tpts)] += 1
        if err:
            why = why or f"does not replay: {err}"
        elif forfeit:
            want = 0.0 if forfeit.group(1) == "a" else 1.0
            if got[0] != "move limit":
                why = why or f"forfeited in a finished game ({got[0]})"
            elif pts != want:
                why = why or f"a={pts:g}, the forfeit gives a {want:g}"
        else:
            end, final = got
            if end == "move limit":
                if len(moves) != int(maxplies) or how != "move limit":
                    why = why or f"not over after {len(moves)} moves, the record says '{how}'"
            elif end != how:
                why = why or f"ends by '{end}', the record says '{how}'"
            elif final != (fa, fb):
                why = why or f"final {final[0]:g}-{final[1]:g}, the record says {fa:g}-{fb:g}"
            if final is not None:
                mine, theirs = final if south == "a" else final[::-1]
                want = 1.0 if mine > theirs else 0.0 if mine < theirs else 0.5
                if pts != want:
                    why = why or f"a={pts:g}, its final score gives a {want:g}"
        if why:
            bad.append(f"game {g}: {why}")
        w, d, l = w + (pts == 1), d + (pts == 0.5), l + (pts == 0)
        sum2 += pts * pts
        key = "forfeit" if forfeit else how
        by_end[key] = by_end.get(key, 0) + 1
        by_colour["a" if south == "a" else "b"][0] += pts
        by_colour["a" if south == "a" else "b"][1] += 1
        progress.step()

    n = w + d + l
    if n == 0:
        die(f"{path}: no games")
    s = (w + 0.5 * d) / n
    var = sum2 / n - s * s
    if var <= 0:  # one result throughout: count half a point more (as sow match)
        s1 = (w + 0.5 * d + 0.5) / (n + 1)
        var = s1 * (1 - s1)
    se = math.sqrt(var / n)
    print(f"rules    : {rules} 2x{pits} seeds {seeds}")
    print(f"games    : {n}, replayed with {sow} play")
    print(f"a W/D/L  : {w} / {d} / {l}")
    print(f"score a  : {w + 0.5 * d:.1f} / {n} ({100 * s:.1f}%)")
    print(f"elo a-b  : {elo(s):+.1f} (95%: {elo(s - 1.96 * se):+.1f} .. {elo(s + 1.96 * se):+.1f})")
    print_pairs(points, se)
    print("ends     : " + ", ".join(f"{k} {v}" for k, v in sorted(by_end.items())))
    print(f"a South  : {by_colour['a'][0]:g} of {by_colour['a'][1]} points; "
          f"a North: {by_colour['b'][0]:g} of {by_colour['b'][1]}")
    if tdir:
        tn_ = sum(tw)
        ts = (tw[2] + 0.5 * tw[1]) / tn_
        print(f"tables   : {tin} games reach levels 0..{top} ({tdir}); with perfect play from "
              f"the first position there, a W/D/L {tw[2]} / {tw[1]} / {tw[0]}, "
              f"{100 * ts:.1f}%, Elo {elo(ts):+.1f}")
        print(f"           a's played result below that in {tbelow} games, above in {tabove}; "
              f"a's net seeds {tnet:+g} against it")
    for b in bad:
        print(b)
    print(f"checked  : {n - len(bad)} of {n} games check out")
    return 1 if bad else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        interrupted()
