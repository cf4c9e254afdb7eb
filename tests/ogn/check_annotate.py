#!/usr/bin/env python3
"""sow annotate's values against sow solve --moves --json, move by move.

    check_annotate.py SOW RULES PITS SEEDS NMOVES [--tables DIR]

Plays a fixed game (move (7 i) mod n of each position, from `sow moves`) of at
most NMOVES moves, writes it with `sow play --ogn`, annotates it and checks
every move's comment: its value is the exact value `sow solve --moves` gives
the move played, "best M W" appears exactly when a move is worth more (W the
best value, M a move worth W), the values are marked exact, and the move is
marked '?' exactly when its result for the mover (seeds captured so far plus
the value) is worse than the best move's.  Exit 0, or 1 with what differs.
"""
import json
import re
import subprocess
import sys
import tempfile


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


LETTERS = "ABCDEFGHIJKLMNOPQR"


def sow_name(letter):
    """An oware record's letter as sow's move name: C -> 3A, f -> 6B."""
    return f"{LETTERS.index(letter.upper()) + 1}{'A' if letter.isupper() else 'B'}"


def sign(v):
    return (v > 0) - (v < 0)


def main():
    sow, rules, pits, seeds, nmoves = sys.argv[1:6]
    extra = sys.argv[6:]
    game = ["--rules", rules, "--pits", pits, "--seeds", seeds]
    moves, positions = [], []
    pos = json.loads(run(sow, "moves", *game, "--json"))["position"]
    for i in range(int(nmoves)):
        m = json.loads(run(sow, "moves", *game, "--json", pos))
        if m["over"]:
            break
        positions.append(pos)
        pick = m["moves"][(7 * i) % len(m["moves"])]
        moves.append(pick["move"])
        pos = pick["position"]
        if pos in positions:  # a repetition ends the game
            break
    if len(moves) < 6:
        sys.exit(f"only {len(moves)} moves: too short a game to check")
    record = run(sow, "play", *game, "--ogn", *moves)
    with tempfile.NamedTemporaryFile("w", suffix=".ogn", delete=False) as f:
        f.write(record)
    out = run(sow, "annotate", f.name, "--time", "20", *extra)
    text = " ".join(out.split())
    # move text tokens: a move, its marks, then its comment
    notes = re.findall(r"(\S+?)(\?!|\?)? \{ sow: ([+-]?\d+)(?:, best (\S+) ([+-]?\d+))? (exact|engine d\d+) \}",
                       text)
    if len(notes) != len(moves):
        sys.exit(f"{len(notes)} annotations for {len(moves)} moves:\n{out}")
    for i, (name, mark, v, best, bv, how) in enumerate(notes):
        p = positions[i]
        sol = json.loads(run(sow, "solve", *game, p, "--moves", "--json"))
        vals = {m["move"]: m["value"] for m in sol["moves"]}
        top = max(vals.values())
        side = p.split("/")[2]
        name = name.split("+")[0]
        if rules == "oware":
            name = sow_name(name)
        played = moves[i]
        where = f"move {i + 1} {played} in {p}"
        if name != played:
            sys.exit(f"{where}: annotated move {name}")
        if how != "exact":
            sys.exit(f"{where}: not exact ({how})")
        if int(v) != vals[played]:
            sys.exit(f"{where}: annotated {v}, sow solve says {vals[played]}")
        if (best != "") != (top > vals[played]):
            sys.exit(f"{where}: best '{best}' but the best value is {top}")
        if best:
            if rules == "oware":
                best = sow_name(best)
            if int(bv) != top or vals.get(best) != top:
                sys.exit(f"{where}: best {best} {bv}, sow solve: {vals}")
        sa, sb = (int(x) for x in (p.split("/")[3] if p.count("/") >= 3 else "0-0").split("-"))
        diff = sa - sb if side == "A" else sb - sa
        worse = sign(diff + vals[played]) < sign(diff + top)
        if (mark == "?") != worse:
            sys.exit(f"{where}: mark '{mark}', result worse: {worse}")
    marked = sum(1 for n in notes if n[1] == "?")
    bests = sum(1 for n in notes if n[3])
    print(f"{len(moves)} moves checked, {bests} with a better move, {marked} marked '?'")


if __name__ == "__main__":
    main()
