"""pytest: sow.ogn (game records) and sow.analyse against the `sow` command line.

Run as python/tests/test_sow.py is (tests/install/run.sh):
    SOW_BIN=/prefix/bin/sow PYTHONPATH=/prefix/.../dist-packages python3 -m pytest python/tests

sow.ogn is the OGN reader and writer written a second time, in Python, from
docs/ogn.md; the C one (src/ogn) is what `sow annotate` and `sow play --ogn`
use.  Here the two are held to each other: the same records written byte for
byte, the same malformed records refused with the same line, on the corpus
of tests/ogn and on random damage done to good records.  sow.analyse must
give the values of `sow solve --moves --json` and the shape of sow serve's
GET /api/RULES.
"""
import json
import os
import random
import subprocess
import tempfile

import pytest

import sow
from sowcli import SOW, cli

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "..", "tests", "ogn")


def good_files():
    d = os.path.join(CORPUS, "good")
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".ogn"))


def bad_cases():
    with open(os.path.join(CORPUS, "bad", "expect.txt")) as f:
        return [tuple(line.rstrip("\n").split("\t", 1)) for line in f if line.strip()]


def c_verdict(text: bytes, tmp):
    """What the C reader says of a record: None (read) or its one line."""
    path = os.path.join(tmp, "r.ogn")
    with open(path, "wb") as f:
        f.write(text)
    p = subprocess.run([SOW, "annotate", path, "--time", "0.001"], capture_output=True,
                       timeout=120)
    if p.returncode == 0:
        return None
    err = p.stderr.decode(errors="replace").strip()
    assert p.returncode == 2 and "\n" not in err, err
    prefix = f"sow annotate: {path}:"
    assert err.startswith(prefix), err
    return err[len(prefix):]


def py_verdict(text: bytes):
    try:
        sow.ogn.read(text)
        return None
    except ValueError as e:
        assert "\n" not in str(e)
        return str(e)


# ---- reading and writing -------------------------------------------------------

@pytest.mark.parametrize("path", good_files(), ids=os.path.basename)
def test_good_records_round_trip(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    g = sow.ogn.read(text)
    assert sow.ogn.write(g) == text
    d = g.to_dict()
    assert d["rules"] == g.rules and len(d["moves"]) == len(g.moves)
    assert json.loads(json.dumps(d)) == d


def test_aule_record_contents():
    with open(os.path.join(CORPUS, "good", "aule_game.ogn")) as f:
        g = sow.ogn.read(f.read())
    assert (g.rules, g.pits, g.seeds) == ("oware", 6, 4)
    assert g.tags["South"] == 'Ann "the sower"' and g.tags["North"] == "Bob \\ co"
    assert [m.name for m in g.moves] == list("CcEfAbDaBeFd")
    assert [m.sow for m in g.moves[:4]] == ["3A", "3B", "5A", "6B"]
    m = g.moves[7]
    assert (m.name, m.side, m.captured, m.gain) == ("a", "B", (0, 3), 3)
    assert m.comments == ["North takes 3 from South's first holes"]
    assert str(g.position) == "5,3,4,4,6,1/4,5,6,0,2,5/A/0-3/-"
    # the moves replayed by Position give the same positions
    p = g.start
    for m in g.moves:
        p = p.play(m.sow)
        assert p == m.position


def test_finished_record():
    with open(os.path.join(CORPUS, "good", "aule_end.ogn")) as f:
        g = sow.ogn.read(f.read())
    assert g.end == "over" and g.result == "8-0" and g.worked_result() == "8-0"
    assert str(g.start) == "1,1,0,2,0,1/1,0,0,1,1,0/A/0-0/-"
    with pytest.raises(ValueError, match="the game is over"):
        g.play("A")


GAMES = [
    ("oware", 6, 4, None, "3A 3B 5A 6B 1A 2B 4A 1B 2A 5B 6A 4B"),
    ("oware", 6, 4, "1,1,0,2,0,1/1,0,0,1,1,0/A", "6A 4B 1A 5B 1A 6B"),
    ("awari", 4, 3, None, "2A 3B 4A 1B 1A 2B"),
    ("jerin", 4, 2, None, "1A+2A 1B 4A"),
    ("darra", 3, 4, "2,0,1/0,3,1/B/5-4/A", "2B"),
    ("oware", 1, 4, "1/1/A", "1A 1B 1A"),
]


@pytest.mark.parametrize("rules,pits,seeds,start,moves", GAMES)
def test_writer_is_sow_play_ogn(rules, pits, seeds, start, moves):
    """A game built in Python is written as the C writer writes it."""
    args = ["--rules", rules, "--pits", str(pits), "--seeds", str(seeds)]
    want = cli("play", "--ogn", *args, *([start] if start else []), *moves.split()).stdout
    g = sow.ogn.Game(rules, pits, seeds,
                     start=sow.Position(start, rules=rules, pits=pits, seeds=seeds)
                     if start else None)
    for m in moves.split():
        g.play(m)
    g.update_result()
    assert sow.ogn.write(g) == want
    again = sow.ogn.read(want)
    assert sow.ogn.write(again) == want
    assert [m.sow for m in again.moves] == moves.split()


def test_random_games_match_c_writer():
    rnd = random.Random(5)
    for rules in sow.RULES:
        pits, seeds = rnd.choice([(3, 2), (4, 2), (3, 3), (6, 4)])
        g = sow.ogn.Game(rules, pits, seeds)
        while g.end is None and len(g.moves) < 40 and not g.position.over:
            g.play(rnd.choice(g.position.moves()))
        g.update_result()
        want = cli("play", "--ogn", "--rules", rules, "--pits", str(pits), "--seeds",
                   str(seeds), *[m.sow for m in g.moves]).stdout
        assert sow.ogn.write(g) == want, rules


@pytest.mark.parametrize("name,msg", bad_cases())
def test_bad_corpus_same_line_as_c(name, msg):
    with open(os.path.join(CORPUS, "bad", name), "rb") as f:
        text = f.read()
    with pytest.raises(ValueError) as e:
        sow.ogn.read(text)
    assert str(e.value) == msg


MALFORMED = [
    b'[Event Open]', b'[Event "Open]', b'[Site "C:\\x"]', b'[Event "a\tb"]', b'[ "x"]',
    b'[Event"x"]', b'[Event "x" x]', b'[Date "?"] [Date "?"]', b'[Variant "chess"]',
    b'[Board "3x6"]', b'[Seeds "x"]', b'[Board "2x18"] [Seeds "8"]', b'[FEN "4-4-4-S"]',
    b'[FEN "4-4-4-4-x-4-4-4-4-4-4-4-0-0-S"]', b'[FEN "4,4,4/4,4,4/A"] [Board "2x6"]',
    b'[Board "2x3"] [FEN "4-4-4-4-4-4-4-4-4-4-4-4-0-0-S"]', b'[FEN "4,4,4/4,x,4/A"]',
    b'[FEN "4,4,4/4,4,4/A/0-0/open"]', b'[Result "25:23"]', b'1. G', b'1. a', b'1. C C',
    b'1. Cc', b'1. A+3', b'1. C!!!', b'1. C\x01', b'[Variant "awari"]\n1. 7A',
    b'[Variant "awari"]\n1. C', b'[Variant "jerin"] 1. 1A+3A', b'2. C', b'1. C c 1. E',
    b'1. 2. C', b'1. C c 2.', b'1. C { good', b'1. C { a \x02 }', b'1. C (1. D)',
    b'1. C ; x', b'1. C $2', b'1. C [Event "x"]', b'[Result "25-23"]\n\n1. C',
    b'1. C c 25-23', b'1. C c * C', b'[FEN "1-1-0-2-0-1-1-0-0-1-1-0-0-0-S"]\n1. C',
    b'[FEN "1-1-0-2-0-1-1-0-0-1-1-0-0-0-S"]\n1. F+2 d 2. A e 3. A f 4. A',
    b'[Board "2x1"] [FEN "1/1/A"]\n1. A a 2. A a', b'[Board "2x1"] [FEN "0/2/B"]\n1. a A a',
    b'1. C\x00',
]


def test_malformed_same_line_as_c():
    with tempfile.TemporaryDirectory() as tmp:
        for text in MALFORMED:
            c = c_verdict(text, tmp)
            assert c is not None, text
            assert py_verdict(text) == c, text


def test_damaged_records_same_verdict_as_c():
    """Good records with characters deleted, doubled or replaced: the C and the
    Python reader accept the same ones and refuse the others with the same line."""
    rnd = random.Random(11)
    texts = []
    for path in good_files():
        with open(path, "rb") as f:
            texts.append(f.read())
    alphabet = b' \n{}[]"\\+-.*?!()ABCDEFabcdef0123456789x'
    refused = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(60):
            t = bytearray(rnd.choice(texts))
            for _ in range(rnd.randint(1, 2)):
                k = rnd.randrange(len(t))
                op = rnd.randrange(3)
                if op == 0:
                    del t[k]
                elif op == 1:
                    t.insert(k, t[k])
                else:
                    t[k] = rnd.choice(alphabet)
            c, py = c_verdict(bytes(t), tmp), py_verdict(bytes(t))
            assert py == c, bytes(t)
            refused += c is not None
    assert 10 < refused < 60


def test_play_refuses_illegal_and_names():
    g = sow.ogn.Game()
    g.play("C")
    with pytest.raises(ValueError, match="not legal"):
        g.play("C")  # A's hole: B is to move
    with pytest.raises(ValueError, match="turn"):
        g.play("2A")
    assert g.play("c").sow == "3B"
    with pytest.raises(ValueError):
        g.play(3)


def test_read_refuses_non_text():
    with pytest.raises(ValueError):
        sow.ogn.read(42)
    with pytest.raises(ValueError, match="1:1: the record is longer"):
        sow.ogn.read(b" " * (sow.ogn.MAX_TEXT + 1))


# ---- sow.analyse ------------------------------------------------------------------

POSITIONS = [
    ("oware", "2,2,2/2,2,2/A"),
    ("oware", "1,1,0,2,0,1/1,0,0,1,1,0/A"),
    ("awari", "0,0,1,2,0,3/1,0,0,2,1,0/A"),
    ("jodu", "1,0,2/0,3,1/B"),
    ("darra", "2,0,1/0,3,1/B/5-4/A"),
    ("odu", "2,1,0,1/1,0,2,1/A"),
]


@pytest.mark.parametrize("rules,pos", POSITIONS)
def test_analyse_agrees_with_solve(rules, pos):
    a = sow.analyse(pos, rules=rules, time=20)
    s = json.loads(cli("solve", "--rules", rules, pos, "--moves", "--json").stdout)
    assert set(a) == {"rules", "pits", "pos", "value", "exact", "source", "depth", "over",
                      "best", "moves"}
    assert a["rules"] == rules and a["pos"] == s["position"] and a["pits"] == s["pits"]
    assert a["exact"] is True and a["source"] == "closure" and a["depth"] is None
    assert a["value"] == s["value"] and a["over"] is False
    want = {m["move"]: m["value"] for m in s["moves"]}
    assert {m["move"]: m["value"] for m in a["moves"]} == want
    vals = [m["value"] for m in a["moves"]]
    assert vals == sorted(vals, reverse=True) and a["best"] == a["moves"][0]["move"]
    assert vals[0] == s["value"]
    # each move's position is the one it makes
    p = sow.Position(pos, rules=rules)
    kids = {m: str(c) for m, c, _ in p.children()}
    assert all(m["pos"] == kids[m["move"]] and m["exact"] for m in a["moves"])


def test_analyse_position_object_start_and_over():
    a = sow.analyse(sow.Position("2,2,2/2,2,2/A"), time=5)
    assert a["best"] == "3A" and a["value"] == 6
    over = sow.analyse("1,3,0,2,0,0/0,0,0,0,0,0/A/2-0/-", time=5)
    assert over["over"] is True and over["moves"] == [] and over["best"] is None
    assert over["value"] == 6 and over["exact"] is True


def test_analyse_with_tables_says_so():
    with tempfile.TemporaryDirectory() as d:
        cli("tables", "build", "--rules", "awari", "--seeds", "6", "--dir", d)
        a = sow.analyse("0,0,0,0,3,1/1,0,0,0,0,0/A", rules="awari", tables=d, time=5)
        assert a["source"] == "tables" and a["exact"] and a["value"] == -5


def test_analyse_engine_far_from_the_end():
    a = sow.analyse(None, rules="oware", time=0.2)
    assert a["exact"] is False and a["source"] == "engine"
    assert isinstance(a["depth"], int) and a["depth"] >= 1
    assert len(a["moves"]) == 6 and not any(m["exact"] for m in a["moves"])


def test_analyse_bad_input():
    with pytest.raises(ValueError):
        sow.analyse("4,4/4/A")
    with pytest.raises(ValueError):
        sow.analyse(None, time=0)
    with pytest.raises(ValueError):
        sow.analyse(None, rules="chess")
    with pytest.raises(ValueError):
        sow.analyse(None, tables="/no/such/dir")


def test_module_docstring_examples():
    import doctest
    assert doctest.testmod(sow.ogn).failed == 0
