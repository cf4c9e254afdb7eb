"""sow: two-row mancala games (oware, awari, jodu, odu, jerin, darra) from Python.

Positions, legal moves, exact values with best moves and principal
variations, bounded (engine) searches and endgame-table probes, over the
shared C library libsow.  docs/python.md walks through it.

    >>> import sow
    >>> p = sow.Position("4,4,4,4,4,4/4,4,4,4,4,4/A", rules="oware")
    >>> p.moves()
    ['1A', '2A', '3A', '4A', '5A', '6A']
    >>> q = p.play("3A")
    >>> r = sow.solve(sow.Position("0,0,0,0,0,13/1,0,0,0,0,0/A"), moves=True)
    >>> r.value, r.best, r.pv, r.moves

Values are those of `sow solve`: net seeds the player to move captures from
now on under perfect play.  Bad input (a rule set, a position, a move, a
table directory) raises ValueError with the library's one-line message;
Ctrl-C during a long solve raises KeyboardInterrupt.
"""
import json
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ._sow import ffi, lib

__all__ = ["Position", "Solution", "Tables", "Engine", "solve", "analyse", "ogn", "RULES",
           "__version__", "__commit__"]

__version__ = ffi.string(lib.sowpy_version()).decode()
#: `git describe` of the sources libsow was built from.
__commit__ = ffi.string(lib.sowpy_commit()).decode()

_ERRLEN = 320


def _names():
    out, i = [], 0
    while True:
        s = lib.sowpy_rule_name(i)
        if s == ffi.NULL:
            return tuple(out)
        out.append(ffi.string(s).decode())
        i += 1


#: Canonical names of the rule sets.
RULES = _names()


def _text(arg, what):
    if not isinstance(arg, str):
        raise ValueError(f"{what}: expected a string, got {type(arg).__name__}")
    if "\0" in arg:
        raise ValueError(f"{what}: contains a NUL character")
    return arg.encode()


def _int(arg, what, lo, hi):
    if isinstance(arg, bool) or not isinstance(arg, int):
        raise ValueError(f"{what}: expected a whole number, got {arg!r}")
    if not lo <= arg <= hi:
        raise ValueError(f"{what}: {arg} is not in {lo}..{hi}")
    return arg


class _Rules:
    """A rule set at one board size (libsow's struct ruleset)."""
    _cache: Dict[tuple, "_Rules"] = {}

    def __init__(self, name, pits, seeds):
        err = ffi.new("char[]", _ERRLEN)
        ptr = lib.sowpy_rules_new(_text(name, "rules"), pits, seeds, err, _ERRLEN)
        if ptr == ffi.NULL:
            raise ValueError(ffi.string(err).decode(errors="replace"))
        self.ptr = ffi.gc(ptr, lib.sowpy_rules_free)
        self.name = ffi.string(lib.sowpy_rules_name(ptr)).decode()
        self.pits = lib.sowpy_rules_pits(ptr)
        self.seeds = lib.sowpy_rules_seeds(ptr)

    @classmethod
    def get(cls, name, pits=0, seeds=-1):
        key = (name, pits, seeds)
        r = cls._cache.get(key)
        if r is None:
            r = cls._cache[key] = cls(name, pits, seeds)
        return r


def _err():
    return ffi.new("char[]", _ERRLEN)


def _msg(err):
    return ffi.string(err).decode(errors="replace")


class Position:
    """A position of a rule set: immutable; play() returns a new one.

    Position(token=None, rules="oware", pits=None, seeds=None): token is the
    notation of `sow` (A1,...,AN/B1,...,BN/SIDE[/SA-SB[/STATE]]), None for
    the start position; pits defaults to the token's holes per side (6 for
    the start), seeds (starting seeds per hole) to 4.
    """

    __slots__ = ("_rules", "_pos", "_token")

    def __init__(self, token: Optional[str] = None, rules: str = "oware",
                 pits: Optional[int] = None, seeds: Optional[int] = None):
        p = 0 if pits is None else _int(pits, "pits", 1, 18)
        s = -1 if seeds is None else _int(seeds, "seeds", 0, 255)
        tok = None
        if token is not None:
            tok = _text(token, "position")
            err = _err()
            tp = lib.sowpy_token_pits(tok, err, _ERRLEN)
            if tp < 0:
                raise ValueError("position: " + _msg(err))
            if p and p != tp:
                raise ValueError(f"position has {tp} holes per side but pits is {p}")
            p = tp
        if not isinstance(rules, str):
            raise ValueError(f"rules: expected a rule-set name, got {rules!r}")
        r = _Rules.get(rules, p, s)
        pos = ffi.new("sow_position *")
        if tok is None:
            lib.sowpy_start(r.ptr, pos)
        else:
            err = _err()
            if lib.sowpy_parse(r.ptr, tok, pos, err, _ERRLEN) < 0:
                raise ValueError("position: " + _msg(err))
        self._init(r, pos)

    def _init(self, r, pos):
        self._rules = r
        self._pos = pos
        buf = ffi.new("char[]", lib.SOWPY_POS_LEN)
        lib.sowpy_format(r.ptr, pos, buf, lib.SOWPY_POS_LEN)
        self._token = ffi.string(buf).decode()

    @classmethod
    def _make(cls, r, pos):
        self = cls.__new__(cls)
        self._init(r, pos)
        return self

    # ---- what it is
    @property
    def rules(self) -> str:
        return self._rules.name

    @property
    def pits(self) -> int:
        return self._rules.pits

    @property
    def side(self) -> str:
        """The player to move, 'A' or 'B'."""
        return "AB"[self._pos.side]

    @property
    def stores(self):
        """Seeds already captured by A and by B."""
        return (self._pos.store[0], self._pos.store[1])

    @property
    def board(self):
        """(A's holes 1..N, B's holes 1..N), each a tuple of seed counts."""
        n = self.pits
        h = [lib.sowpy_position_hole(self._pos, i) for i in range(2 * n)]
        return (tuple(h[:n]), tuple(h[n:]))

    @property
    def seeds_on_board(self) -> int:
        return sum(map(sum, self.board))

    def __str__(self):
        return self._token

    def __repr__(self):
        return f"Position({self._token!r}, rules={self.rules!r})"

    def __eq__(self, other):
        return (isinstance(other, Position) and self.rules == other.rules
                and self.pits == other.pits and self._token == other._token)

    def __hash__(self):
        return hash((self.rules, self.pits, self._token))

    def draw(self) -> str:
        """The board as `sow show` draws it."""
        buf = ffi.new("char[]", 4096)
        lib.sowpy_draw(self._rules.ptr, self._pos, buf, 4096)
        return ffi.string(buf).decode()

    # ---- moves
    def _movelist(self):
        ml = ffi.new("struct sowpy_moves *")
        lib.sowpy_moves(self._rules.ptr, self._pos, ml)
        return ml

    def moves(self) -> List[str]:
        """Names of the legal moves ('3A', 'pass', jerin's '2A+3A'); [] if over."""
        ml = self._movelist()
        return [ffi.string(ml.name[i]).decode() for i in range(ml.n)]

    def children(self):
        """[(move, position after it, (seeds A captured, seeds B captured))]."""
        ml = self._movelist()
        out = []
        for i in range(ml.n):
            pos = ffi.new("sow_position *")
            pos[0] = ml.pos[i]
            out.append((ffi.string(ml.name[i]).decode(), Position._make(self._rules, pos),
                        (ml.captured[i][0], ml.captured[i][1])))
        return out

    @property
    def over(self) -> bool:
        return self._movelist().n == 0

    @property
    def end(self) -> Optional[str]:
        """Why the game is over (None if it is not)."""
        ml = self._movelist()
        return ffi.string(ml.end_name).decode() if ml.n == 0 else None

    @property
    def settlement(self):
        """If over: the seeds the board gives A and B; else None."""
        ml = self._movelist()
        return (ml.settle[0], ml.settle[1]) if ml.n == 0 else None

    def play(self, *moves: str) -> "Position":
        """The position after the moves, in turn (each by name)."""
        p = self
        for m in moves:
            name = _text(m, "move").decode().strip()
            for mv, child, _ in p.children():
                if mv.lower() == name.lower():
                    p = child
                    break
            else:
                legal = " ".join(p.moves()) or "none: the game is over"
                raise ValueError(f"move '{name}' is not legal in {p} (legal: {legal})")
        return p


@dataclass
class Solution:
    """What solve() and Engine.go() find, from the mover's point of view."""
    value: int                 #: exact value, or the heuristic one if not exact
    exact: bool
    lower: int                 #: proven bounds (== value when exact)
    upper: int
    best: Optional[str]        #: None if the game is over
    pv: List[str]              #: principal variation, move names
    moves: Optional[Dict[str, int]] = None   #: every legal move's exact value (moves=True)
    over: bool = False
    depth: int = 0             #: bounded mode: last completed depth
    pv_repeats: bool = False   #: the PV ends because a position repeated
    nodes: int = 0
    expanded: int = 0
    tb_hits: int = 0
    seconds: float = 0.0
    position: Optional[Position] = field(default=None, repr=False)


class Tables:
    """Endgame tables in a directory (`sow tables build --dir DIR`).

    Tables(dir): the files of every rule set and board size are loaded when
    first needed; a damaged or foreign file raises ValueError.
    """

    def __init__(self, dir: str = "tables"):
        self.dir = _text(dir, "tables directory").decode()
        if not os.path.isdir(self.dir):
            # The library reads a missing directory as "no tables"; a typo
            # would then silently solve without them.
            raise ValueError(f"tables {self.dir}: no such directory")
        self._sets = {}

    def _set(self, rules: _Rules):
        key = (rules.name, rules.pits)
        t = self._sets.get(key)
        if t is None:
            err = _err()
            ptr = lib.sowpy_tables_open(rules.ptr, self.dir.encode(), err, _ERRLEN)
            if ptr == ffi.NULL:
                raise ValueError(f"tables {self.dir}: {_msg(err)}")
            t = self._sets[key] = ffi.gc(ptr, lib.sowpy_tables_free)
        return t

    def max_level(self, rules: str = "oware", pits: int = 6) -> int:
        """Highest seed count n with levels 0..n all present, or -1."""
        # checked here as Position's pits are: cffi raises OverflowError
        # for an int past the C int (10**20), and bad input is ValueError
        pits = _int(pits, "pits", 1, 18)
        if not isinstance(rules, str):
            raise ValueError(f"rules: expected a rule-set name, got {rules!r}")
        return lib.sowpy_tables_max_level(self._set(_Rules.get(rules, pits, -1)))

    def probe(self, pos: Position) -> Optional[int]:
        """The value of pos if its level is in the tables, else None."""
        if not isinstance(pos, Position):
            raise ValueError("probe: expected a sow.Position")
        v = ffi.new("int *")
        if lib.sowpy_tables_probe(self._set(pos._rules), pos._pos, v):
            return v[0]
        return None


def _solve(pos, moves=False, threads=1, hash_mb=64, depth=None, movetime=None, tables=None,
           levels=None):
    if not isinstance(pos, Position):
        raise ValueError("solve: expected a sow.Position")
    o = ffi.new("struct sowpy_solve_opts *")
    o.threads = _int(threads, "threads", 1, 1024)
    o.hash_mb = _int(hash_mb, "hash_mb", 1, 1 << 20)
    o.depth = 0 if depth is None else _int(depth, "depth", 1, 1000)
    if movetime is not None:
        if isinstance(movetime, bool) or not isinstance(movetime, (int, float)) \
                or not 0 < movetime < 1e7:
            raise ValueError(f"movetime: expected seconds > 0, got {movetime!r}")
        o.seconds = float(movetime)
    if levels is not None:
        o.levels = -1 if _int(levels, "levels", 0, 1 << 40) == 0 else levels
    o.moves = bool(moves)
    if tables is not None:
        if not isinstance(tables, Tables):
            tables = Tables(tables)
        o.tables = tables._set(pos._rules)
    res = ffi.new("struct sowpy_result *")
    err = _err()
    rc = lib.sowpy_solve(pos._rules.ptr, pos._pos, o, res, err, _ERRLEN)
    if rc == lib.SOWPY_INTERRUPTED:
        raise KeyboardInterrupt
    if rc < 0:
        raise ValueError(_msg(err))
    best = ffi.string(res.best).decode() or None
    return Solution(
        value=res.value, exact=bool(res.exact), lower=res.lower, upper=res.upper,
        best=best, pv=[ffi.string(res.pv[k]).decode() for k in range(res.pv_len)],
        moves={ffi.string(res.move[i]).decode(): res.move_value[i]
               for i in range(res.nmoves)} if moves else None,
        over=bool(res.over), depth=res.depth, pv_repeats=bool(res.pv_repeats),
        nodes=res.nodes, expanded=res.expanded, tb_hits=res.tb_hits,
        seconds=res.seconds, position=pos)


def solve(pos: Position, moves: bool = False, threads: int = 1,
          tables=None, levels: Optional[int] = None,
          depth: Optional[int] = None, movetime: Optional[float] = None,
          hash_mb: int = 64) -> Solution:
    """Solve pos as `sow solve` does.

    Exact by default: value, best move, principal variation to the end of the
    game, and with moves=True every legal move's exact value.  depth (plies)
    or movetime (seconds) give a bounded search instead (exact is then False;
    lower/upper are the proven bounds; hash_mb sizes its transposition
    table).  tables: a Tables or a directory.
    levels: exact mode's in-memory levels in positions (0: none; `sow solve
    --levels` counts millions).
    """
    if depth is not None and movetime is not None:
        raise ValueError("depth and movetime exclude each other")
    return _solve(pos, moves=moves, threads=threads, hash_mb=hash_mb, depth=depth,
                  movetime=movetime, tables=tables, levels=levels)


class Engine:
    """A bounded searcher for positions beyond exact reach.

    Engine(threads=1, hash_mb=64, tables=None); go(pos, movetime=S) or
    go(pos, depth=D) returns a Solution with the best move found, the
    heuristic value and the bounds it proved (exact when the search closed).
    position(pos) sets the position go() uses when it is given none.
    """

    def __init__(self, threads: int = 1, hash_mb: int = 64, tables=None):
        self.threads = _int(threads, "threads", 1, 1024)
        self.hash_mb = _int(hash_mb, "hash_mb", 1, 1 << 20)
        self.tables = tables if tables is None or isinstance(tables, Tables) else Tables(tables)
        self._pos = None

    def position(self, pos: Position) -> "Engine":
        if not isinstance(pos, Position):
            raise ValueError("position: expected a sow.Position")
        self._pos = pos
        return self

    def go(self, pos: Optional[Position] = None, movetime: Optional[float] = None,
           depth: Optional[int] = None) -> Solution:
        """Search for movetime seconds or to depth plies (default: 1 second)."""
        pos = pos if pos is not None else self._pos
        if pos is None:
            raise ValueError("go: no position (pass one, or call position() first)")
        if depth is not None and movetime is not None:
            raise ValueError("depth and movetime exclude each other")
        if depth is None and movetime is None:
            movetime = 1.0
        return _solve(pos, threads=self.threads, hash_mb=self.hash_mb, depth=depth,
                      movetime=movetime, tables=self.tables)


def analyse(pos=None, rules: str = "oware", pits: Optional[int] = None,
            seeds: Optional[int] = None, tables=None, time: float = 1.0,
            threads: int = 1) -> dict:
    """Every move's value, as `sow serve` answers GET /api/RULES, without a server.

    pos: a Position, a position token, or None for the start (rules, pits and
    seeds as for Position; a Position brings its own).  Exact where the exact
    solver (with tables: a Tables or a directory) finishes within half of
    `time` seconds, else the engine's estimate in the other half.  Returns
    the answer's JSON object as a dict: rules, pits, pos, value, exact,
    source ("tables", "closure" or "engine"), depth (None if exact), over,
    best, moves [{move, value, exact, pos}] best first.  Values are for the
    player to move; a move's value for its mover.
    """
    if not isinstance(pos, Position):
        pos = Position(pos, rules=rules, pits=pits, seeds=seeds)
    if isinstance(time, bool) or not isinstance(time, (int, float)) or not 0 < time < 1e7:
        raise ValueError(f"time: expected seconds > 0, got {time!r}")
    t = ffi.NULL
    if tables is not None:
        if not isinstance(tables, Tables):
            tables = Tables(tables)
        t = tables._set(pos._rules)
    out = ffi.new("char **")
    err = _err()
    rc = lib.sowpy_analyse(pos._rules.ptr, pos._pos, float(time),
                           _int(threads, "threads", 1, 1024), t, out, err, _ERRLEN)
    if rc == lib.SOWPY_INTERRUPTED:
        raise KeyboardInterrupt
    if rc < 0:
        raise ValueError(_msg(err))
    try:
        return json.loads(ffi.string(out[0]).decode())
    finally:
        lib.sowpy_free(out[0])


from . import ogn  # noqa: E402  (sow.ogn: game records; it uses the names above)
