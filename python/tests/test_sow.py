"""pytest: the Python module `sow` against the `sow` command line.

Run against an installed module and binary (tests/install/run.sh does):
    SOW_BIN=/prefix/bin/sow PYTHONPATH=/prefix/.../dist-packages python3 -m pytest python/tests

The positions are those of the solver's test data (tests/data/perft.txt):
moves and the positions they lead to, perft counts, exact values (for those
small enough to solve in well under a second) and bounded searches must agree
with the CLI; bad input must raise ValueError, never crash the interpreter.
"""
import json
import os
import random
import re
import subprocess
import sys

import pytest

import sow
from sowcli import SOW, cli

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "tests", "data", "perft.txt")


def data_lines():
    out = []
    with open(DATA) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                rules, pits, seeds, pos, depth, count = line.split()
                out.append((rules, int(pits), int(seeds), pos, int(depth), int(count)))
    return out


LINES = data_lines()
# One entry per distinct position of the data (rules, pits, seeds, token or 'start').
POSITIONS = sorted({(r, n, s, p) for r, n, s, p, _, _ in LINES})


def make(rules, pits, seeds, tok):
    return sow.Position(None if tok == "start" else tok, rules=rules, pits=pits, seeds=seeds)


def game_args(rules, pits, seeds, tok):
    a = ["--rules", rules, "--pits", str(pits), "--seeds", str(seeds)]
    return a + ([] if tok == "start" else [tok])


def test_binary_found():
    assert SOW and os.access(SOW, os.X_OK), "set SOW_BIN to the sow executable"


def test_version_matches_cli():
    out = cli("--version").stdout
    assert sow.__version__ in out and sow.__commit__ in out


def test_rules_match_cli():
    err = cli("show", "--rules", "zzq", check=False).stderr
    known = re.search(r"known:\s*([^;)]*)", err).group(1).split()
    assert list(sow.RULES) == known


def test_issue_example():
    p = sow.Position("4,4,4,4,4,4/4,4,4,4,4,4/A", rules="oware")
    assert p.moves() == ["1A", "2A", "3A", "4A", "5A", "6A"]
    q = p.play("3A")
    assert str(q) == "4,4,0,5,5,5/5,4,4,4,4,4/B/0-0/-"
    assert q.side == "B" and q.board == ((4, 4, 0, 5, 5, 5), (5, 4, 4, 4, 4, 4))
    assert p == sow.Position(rules="oware") and hash(p) == hash(sow.Position())


@pytest.mark.parametrize("rules,pits,seeds,tok", POSITIONS)
def test_moves_match_cli(rules, pits, seeds, tok):
    p = make(rules, pits, seeds, tok)
    j = json.loads(cli("moves", "--json", *game_args(rules, pits, seeds, tok)).stdout)
    assert str(p) == j["position"]
    got = [(m, str(c), list(cap)) for m, c, cap in p.children()]
    want = [(m["move"], m["position"], m["captured"]) for m in j["moves"]]
    assert got == want
    assert p.over == j["over"]
    if j["over"]:
        assert p.end == j["end"] and list(p.settlement) == j["settlement"]


def perft(p, depth):
    if depth == 0:
        return 1
    kids = p.children()
    if depth == 1:
        return len(kids)
    return sum(perft(c, depth - 1) for _, c, _ in kids)


@pytest.mark.parametrize("rules,pits,seeds,tok,depth,count",
                         [l for l in LINES if l[4] <= 3])
def test_perft_matches_data(rules, pits, seeds, tok, depth, count):
    assert perft(make(rules, pits, seeds, tok), depth) == count


def small(rules, pits, seeds, tok):
    """Positions the exact solver does in a blink (few seeds on the board)."""
    return make(rules, pits, seeds, tok).seeds_on_board <= 12


@pytest.mark.parametrize("rules,pits,seeds,tok", [q for q in POSITIONS if small(*q)])
def test_exact_solve_matches_cli(rules, pits, seeds, tok):
    p = make(rules, pits, seeds, tok)
    r = sow.solve(p, moves=True)
    j = json.loads(cli("solve", "--json", "--moves", *game_args(rules, pits, seeds, tok)).stdout)
    assert r.exact and j["exact"]
    assert (r.value, r.lower, r.upper) == (j["value"], j["lower"], j["upper"])
    assert r.best == j["best"]
    assert r.pv == j["pv"]
    assert r.moves == {m["move"]: m["value"] for m in j["moves"]}
    if not r.over:
        assert r.moves[r.best] == r.value == max(r.moves.values())
    # The PV is a legal line from p.
    p.play(*r.pv)


@pytest.mark.parametrize("rules,pits,seeds,tok", [q for q in POSITIONS if not small(*q)])
def test_bounded_solve_matches_cli(rules, pits, seeds, tok):
    p = make(rules, pits, seeds, tok)
    r = sow.solve(p, depth=3, hash_mb=1)
    j = json.loads(cli("solve", "--json", "--depth", "3", "--hash", "1",
                       *game_args(rules, pits, seeds, tok)).stdout)
    assert (r.value, r.exact, r.lower, r.upper, r.best) == \
        (j["value"], j["exact"], j["lower"], j["upper"], j["best"])
    if not r.over:
        assert r.best in p.moves()


def test_walk_a_solved_game():
    """Playing the PV, each position's value is minus the last one's plus
    what the move captured (net), down to the end of the game."""
    p = sow.Position("0,0,0,0,3,1/1,0,0,0,0,0/A", rules="awari")
    r = sow.solve(p)
    for mv in r.pv:
        moves = {m: (c, cap) for m, c, cap in p.children()}
        child, cap = moves[mv]
        me = 0 if p.side == "A" else 1
        net = cap[me] - cap[1 - me]
        rc = sow.solve(child)
        if child.seeds_on_board != p.seeds_on_board:  # an exit: values chain exactly
            assert r.value == net - rc.value
        p, r = child, rc
    assert p.over or r.pv_repeats or not r.pv


def test_tables_probe_matches_cli_and_solve(tmp_path):
    d = str(tmp_path / "tb")
    cli("tables", "build", "--rules", "awari", "--seeds", "6", "--dir", d)
    t = sow.Tables(d)
    assert t.max_level("awari", 6) == 6
    rnd = random.Random(1)
    for _ in range(20):
        h = [0] * 12
        for _ in range(rnd.randint(1, 6)):
            h[rnd.randrange(12)] += 1
        tok = ",".join(map(str, h[:6])) + "/" + ",".join(map(str, h[6:])) + "/" + rnd.choice("AB")
        p = sow.Position(tok, rules="awari")
        v = t.probe(p)
        out = cli("tables", "probe", "--rules", "awari", "--dir", d, tok).stdout
        assert v == int(re.search(r"^value\s+([+-]?\d+)", out, re.M).group(1))
        assert v == sow.solve(p).value
        assert sow.solve(p, tables=t).value == v
    assert t.probe(sow.Position("1,1,1,1,1,1/1,1,1,1,1,1/A", rules="awari")) is None  # level 12


def test_damaged_table_raises(tmp_path):
    d = tmp_path / "tb"
    cli("tables", "build", "--rules", "oware", "--seeds", "3", "--dir", str(d))
    f = sorted(d.iterdir())[-1]
    data = bytearray(f.read_bytes())
    data[-1] ^= 0xFF
    f.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="checksum|damaged|corrupt"):
        sow.Tables(str(d)).probe(sow.Position(rules="oware"))


def test_engine_go():
    p = sow.Position(rules="oware")
    e = sow.Engine(threads=1, hash_mb=16).position(p)
    r = e.go(movetime=0.2)
    assert r.best in p.moves() and not r.exact and r.lower <= r.upper
    r = e.go(depth=2)
    assert r.depth == 2 and r.best in p.moves()


BAD_TOKENS = ["", "x", "4,4,4/4,4", "4,4,4,4,4,4/4,4,4,4,4,4/C", "4,4,4,4,4,4/4,4,4,4,4,4/A/0",
              "300,0/0,0/A", "-1,0/0,0/A", "1" * 5000, "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/open",
              "/".join(["1"] * 40), "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1/1/A", "\x01\xff"]


@pytest.mark.parametrize("tok", BAD_TOKENS)
def test_bad_position_raises(tok):
    with pytest.raises(ValueError):
        sow.Position(tok, rules="oware")


def test_bad_arguments_raise():
    p = sow.Position()
    cases = [
        lambda: sow.Position(rules="chess"),
        lambda: sow.Position(rules=None),
        lambda: sow.Position(123),
        lambda: sow.Position("1,0/0,1/A\0junk"),
        lambda: sow.Position(pits=0),
        lambda: sow.Position(pits=19),
        lambda: sow.Position(seeds=-3),
        lambda: sow.Position("1,0/0,1/A", pits=6),
        lambda: p.play("7A"),
        lambda: p.play("1B"),
        lambda: p.play(3),
        lambda: sow.solve("4,4/4,4/A"),
        lambda: sow.solve(p, depth=-1),
        lambda: sow.solve(p, depth=2, movetime=1),
        lambda: sow.solve(p, moves=True, depth=2),
        lambda: sow.solve(p, threads=0),
        lambda: sow.Engine().go(),
        lambda: sow.Engine().go(p, movetime=-1),
        lambda: sow.Tables("/nonexistent/dir").probe(p),
        lambda: sow.Tables(None),
        lambda: sow.Tables().probe("start"),
    ]
    for i, f in enumerate(cases):
        with pytest.raises(ValueError):
            f()


def test_max_level_bad_arguments_raise_valueerror(tmp_path):
    # pits past a C int raised OverflowError from cffi
    t = sow.Tables(str(tmp_path))
    for pits in (10**20, -(10**20), 0, 19, -1, 6.0, True, "6", None):
        with pytest.raises(ValueError):
            t.max_level("oware", pits)
    for rules in (None, 6, "chess"):
        with pytest.raises(ValueError):
            t.max_level(rules, 6)
    assert t.max_level("oware", 6) == -1


def test_random_garbage_never_crashes():
    rnd = random.Random(7)
    alphabet = "0123456789,/-ABab+open pas\x00\t"
    for _ in range(2000):
        s = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 40)))
        try:
            p = sow.Position(s, rules=rnd.choice(sow.RULES))
        except ValueError:
            continue
        for m in p.moves():
            p.play(m)
        try:
            p.play(s[:5])
        except ValueError:
            pass


def test_ctrl_c_raises_keyboard_interrupt():
    """SIGINT during a long search stops it: KeyboardInterrupt, no crash, and
    the interpreter's own Ctrl-C handling is back afterwards."""
    code = ("import signal, sow, sys\n"
            "p = sow.Position(rules='oware')\n"
            "print('ready', flush=True)\n"
            "try:\n"
            "    sow.solve(p, movetime=60, hash_mb=8)\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted', flush=True)\n"
            "assert signal.getsignal(signal.SIGINT) is signal.default_int_handler\n"
            "print('handler restored', flush=True)\n")
    import signal
    import time
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ))
    assert p.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=30)
    assert p.returncode == 0, out
    assert out.split("\n")[:2] == ["interrupted", "handler restored"]
