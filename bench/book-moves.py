#!/usr/bin/env python3
"""How much of a match the opening book played.

Reads a `sow match --out` file and, for each game, replays its first plies
with `sow play` and asks `sow book probe` whether the book holds each
position where a player was to move.  Prints how many games there are and
how many distinct ones (by their moves), how many of each player's moves
were played in a position the book holds and how many of those were the
book's choice (a move of the best score), and a histogram of a's book
moves a game.

usage: book-moves.py GAMES [--sow SOW] [--book FILE] [--plies N]
Bad input (no such file, no match header, a game that does not replay):
one line, exit 2; Ctrl-C: exit 130.
"""
import argparse
import collections
import re
import subprocess
import sys

GAME = re.compile(r"game (\d+) opening (\S+) South=(a|b) .*?a=[^:]*: ?(.*)$")
HEAD = re.compile(r"rules (\S+) (\d+)x(\d+) seeds (\d+)")


def die(msg):
    print(f"book-moves: {msg}", file=sys.stderr)
    sys.exit(2)


def sow_run(sow, args):
    return subprocess.run([sow] + args, capture_output=True, text=True)


def book_best(out):
    """The moves `sow book probe` printed with the best score (best first):
    those the engine chooses among with BookMargin 0."""
    rows = [l.split() for l in out.splitlines() if l.strip()]
    score = [int(r[1].lstrip("=")) for r in rows]  # ("=-60": exact)
    return [r[0] for r, v in zip(rows, score) if v == score[0]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("games")
    ap.add_argument("--sow", default="sow")
    ap.add_argument("--book", help="a book file (default: sow's own)")
    ap.add_argument("--plies", type=int, default=12, help="plies looked at, default 12")
    o = ap.parse_args()

    try:
        with open(o.games) as f:
            lines = f.read().splitlines()
    except OSError as e:
        die(f"{o.games}: {e.strerror}")
    head = HEAD.search(lines[0]) if lines else None
    if not head:
        die(f"{o.games}: no '# sow match: rules R 2xN seeds S' header")
    rules, pits, seeds = head.group(1), head.group(3), head.group(4)
    common = ["--rules", rules, "--pits", pits, "--seeds", seeds]
    book = ["--book", o.book] if o.book else []

    held = collections.Counter()   # (player) -> moves in a position the book holds
    played = collections.Counter()  # (player) -> of those, a move the book has
    per_game = collections.Counter()
    seqs = set()
    probes = {}
    n = 0
    for line in lines[1:]:
        m = GAME.match(line)
        if not m:
            continue
        n += 1
        opening, south, moves = m.group(2), m.group(3), m.group(4).split()
        seqs.add((opening, tuple(moves)))
        head_moves = moves[:o.plies]
        r = sow_run(o.sow, ["play"] + common + [opening] + head_moves)
        if r.returncode != 0 and head_moves:
            die(f"game {m.group(1)}: does not replay: {r.stderr.strip()}")
        posns = [opening] + [mm.group(1) for mm in
                             (re.match(r"\d+\. \S+ +captured \S+ +(\S+)$", l)
                              for l in r.stdout.splitlines()) if mm]
        k = 0
        for i, mv in enumerate(head_moves):
            pos = posns[i]
            side = pos.split("/")[2]
            who = south if side == "A" else ("b" if south == "a" else "a")
            if pos not in probes:
                pr = sow_run(o.sow, ["book", "probe"] + common + book + [pos])
                probes[pos] = book_best(pr.stdout) if pr.returncode == 0 else None
            bm = probes[pos]
            if bm is None:
                continue
            held[who] += 1
            if mv in bm:
                played[who] += 1
                if who == "a":
                    k += 1
        per_game[k] += 1

    print(f"games    : {n}, {len(seqs)} distinct (by their moves)")
    print(f"positions: {sum(1 for v in probes.values() if v is not None)} of the book's met")
    for who in ("a", "b"):
        print(f"book {who}   : {held[who]} moves in a position the book holds, "
              f"{played[who]} of them the book's choice")
    print("a's book moves a game: " +
          ", ".join(f"{k}: {per_game[k]}" for k in sorted(per_game)))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print("book-moves: interrupted", file=sys.stderr)
        sys.exit(130)
