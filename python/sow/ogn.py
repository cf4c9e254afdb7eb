"""OGN game records (docs/ogn.md): read a record into a Game, write one back.

    >>> import sow
    >>> g = sow.ogn.read('[Variant "Oware Abapa"]\\n\\n1. C c 2. E f\\n')
    >>> g.rules, [m.name for m in g.moves], str(g.moves[-1].position)
    ('oware', ['C', 'c', 'E', 'f'], '6,5,1,6,1,6/6,5,1,6,5,0/A/0-0/-')
    >>> sow.ogn.write(g) == '[Variant "Oware Abapa"]\\n\\n1. C c 2. E f\\n'
    True

The format is Aualé's (an oware record sow writes opens in Aualé, and the
other way round); the other rule sets use sow's move names.  Every move is
replayed with sow's rules; a malformed record raises ValueError with one line
"LINE:COLUMN: what", the same line `sow annotate` prints.  This module is the
reader of the docs written a second time, in Python, over the same rules:
the tests hold it to the C reader (src/ogn) record by record.
"""
import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from . import Position, _Rules, _err, _msg, _ERRLEN
from ._sow import ffi, lib

__all__ = ["Game", "Move", "read", "write", "MAX_TEXT"]

#: Longest record read, bytes.
MAX_TEXT = 1 << 20
LETTERS = "ABCDEFGHIJKLMNOPQR"
ROSTER = ("Event", "Site", "Date", "Round", "South", "North")
_WS = b" \t\n\r\f\v"


@dataclass
class Move:
    """One move of a record."""
    name: str                  #: as the record writes it: "C", "f" (oware), "3A", "pass"
    sow: str                   #: sow's name: "3A"
    side: str                  #: the mover, "A" (South) or "B" (North)
    captured: Tuple[int, int]  #: seeds A and B captured during the move
    gain: float                #: the "+N": the mover's store gain, settlement included
    position: Position         #: after the move
    mark: str = ""             #: "", "!", "?", "!!", "??", "!?", "?!"
    comments: List[str] = field(default_factory=list)  #: the comments after it


class Game:
    """A game record: tags, start position, moves with their comments.

    Game(rules="oware", pits=6, seeds=4, start=None) is a new record with
    Aualé's tags (Variant Event Site Date Round South North Result, "?" where
    nothing is known; Board, Seeds, FEN where not the default), as
    `sow play --ogn` writes; play() adds moves.
    """

    def __init__(self, rules: str = "oware", pits: int = 6, seeds: int = 4,
                 start: Optional[Position] = None):
        self._r = _Rules.get(rules, pits, seeds)
        self.start = start if start is not None else Position(rules=rules, pits=pits,
                                                              seeds=seeds)
        self.tags = {"Variant": "Oware Abapa" if self.rules == "oware" else self.rules}
        for t in ROSTER:
            self.tags[t] = "?"
        self.tags["Result"] = "*"
        if self.pits != 6:
            self.tags["Board"] = f"2x{self.pits}"
        if self.seeds != 4:
            self.tags["Seeds"] = str(self.seeds)
        if self.start != Position(rules=self.rules, pits=self.pits, seeds=self.seeds):
            self.tags["FEN"] = _fen(self.start)
        self.comments: List[str] = []   #: before the first move
        self.moves: List[Move] = []
        self.end: Optional[str] = None  #: None, "over" or "repetition" after the last move
        self.result = "*"

    @property
    def rules(self) -> str:
        return self._r.name

    @property
    def pits(self) -> int:
        return self._r.pits

    @property
    def seeds(self) -> int:
        return self._r.seeds

    @property
    def position(self) -> Position:
        """The position after the moves."""
        return self.moves[-1].position if self.moves else self.start

    def _over(self, num, written):
        """Why move num cannot be played (the game is over), or None."""
        if self.end == "repetition":
            if self._repeated_at == 0:
                return (f"move {num} '{written}': the game is over (move {len(self.moves)} "
                        "repeated the start position)")
            return (f"move {num} '{written}': the game is over (move {len(self.moves)} "
                    f"repeated the position after move {self._repeated_at})")
        p = self.position
        if p.over:
            return f"move {num} '{written}': the game is over ({p.end})"
        return None

    def _play(self, sow_name: str, written: str) -> Move:
        num = len(self.moves) + 1
        why = self._over(num, written)
        if why:
            raise ValueError(why)
        p = self.position
        for mv, child, cap in p.children():
            if mv == sow_name:
                break
        else:
            legal = " ".join(_name(self.rules, p.side, m) for m in p.moves())
            raise ValueError(f"move {num} '{written}': not legal here (legal: {legal})")
        side = p.side
        m = Move(name=_name(self.rules, side, mv), sow=mv, side=side, captured=cap, gain=0,
                 position=child)
        self.moves.append(m)
        # repetition: the same position (stores and all) earlier in the record
        self.end = None
        earlier = [self.start] + [x.position for x in self.moves[:-1]]
        for j in range(len(earlier) - 1, -1, -1):
            if earlier[j].stores != child.stores:
                break
            if earlier[j] == child:
                self.end, self._repeated_at = "repetition", j
                break
        me = "AB".index(side)
        settle2 = (0, 0)
        if self.end == "repetition":
            settle2 = _repetition2(child)
        elif child.over:
            self.end = "over"
            settle2 = tuple(2 * s for s in child.settlement)
        m.gain = (2 * cap[me] + settle2[me]) / 2
        if m.gain == int(m.gain):
            m.gain = int(m.gain)
        return m

    def play(self, move: str) -> Move:
        """Play a move (sow's name "3A", or for oware a letter "C"/"c") after
        the last one; ValueError if it is not legal or the game is over."""
        if not isinstance(move, str):
            raise ValueError(f"move: expected a name, got {move!r}")
        p = self.position
        if self.rules == "oware" and len(move) == 1 and move.upper() in LETTERS:
            name = _sow_name(move)
        else:
            err, out = _err(), ffi.new("char[]", 32)
            if lib.sowpy_move_parse(p._rules.ptr, p._pos, move.encode(), out, 32, err,
                                    _ERRLEN) < 0:
                raise ValueError(_msg(err))
            name = ffi.string(out).decode()
        return self._play(name, move)

    def worked_result(self) -> str:
        """The result the moves give: "*" or "A-B" (docs/ogn.md "The result")."""
        sc2 = self._result2()
        if sc2 is None:
            return "*"
        return f"{_half(sc2[0])}-{_half(sc2[1])}"

    def _result2(self):
        p = self.position
        sc2 = [2 * p.stores[0], 2 * p.stores[1]]
        if self.end == "over":
            s = p.settlement
            return (sc2[0] + 2 * s[0], sc2[1] + 2 * s[1])
        if self.end == "repetition":
            s = _repetition2(p)
            return (sc2[0] + s[0], sc2[1] + s[1])
        total = self.start.seeds_on_board + sum(self.start.stores)
        if 2 * p.stores[0] > total or 2 * p.stores[1] > total:
            return tuple(sc2)
        return None

    def update_result(self) -> str:
        """Set result and the Result tag to what the moves give."""
        self.result = self.tags["Result"] = self.worked_result()
        return self.result

    def to_dict(self) -> dict:
        """The record as plain data: tags, rules, pits, seeds, start, moves
        [{name, sow, side, captured, gain, mark, comments, position}],
        comments, end, result."""
        return {
            "tags": dict(self.tags), "rules": self.rules, "pits": self.pits,
            "seeds": self.seeds, "start": str(self.start), "comments": list(self.comments),
            "moves": [{"name": m.name, "sow": m.sow, "side": m.side,
                       "captured": list(m.captured), "gain": m.gain, "mark": m.mark,
                       "comments": list(m.comments), "position": str(m.position)}
                      for m in self.moves],
            "end": self.end, "result": self.result,
        }


def _half(v2):
    return f"{v2 // 2}.5" if v2 % 2 else str(v2 // 2)


def _repetition2(p):
    """The repetition settlement of p for A and B, doubled (rules.md)."""
    a, b = (sum(row) for row in p.board)
    if p.rules == "awari":  # split evenly
        return (a + b, a + b)
    return (2 * a, 2 * b)


def _sow_name(letter):
    return f"{LETTERS.index(letter.upper()) + 1}{'A' if letter.isupper() else 'B'}"


def _name(rules, side, sow_name):
    """sow's move name as the record writes it."""
    if rules == "oware" and re.fullmatch(r"\d+[AB]", sow_name):
        k = int(sow_name[:-1]) - 1
        return LETTERS[k] if side == "A" else LETTERS[k].lower()
    return sow_name


def _fen(p):
    if p.rules != "oware" or not str(p).endswith("/-"):
        return str(p)
    a, b = p.board
    return "-".join(str(x) for x in a + b + p.stores) + ("-S" if p.side == "A" else "-N")


# ---- reading -----------------------------------------------------------------


class _Bad(Exception):
    pass


class _Reader:
    def __init__(self, data: bytes):
        self.s, self.i, self.line, self.col = data, 0, 1, 1

    def peek(self):
        return self.s[self.i] if self.i < len(self.s) else -1

    def adv(self):
        if self.i >= len(self.s):
            return
        if self.s[self.i] == 10:
            self.line, self.col = self.line + 1, 1
        else:
            self.col += 1
        self.i += 1

    def ws(self):
        while self.peek() >= 0 and self.peek() in _WS:
            self.adv()

    def here(self):
        return (self.line, self.col)


def _bad(at, msg):
    raise _Bad(f"{at[0]}:{at[1]}: {msg}")


def _ctl(c):
    return 0 <= c < 0x20 or c == 0x7F


def _parse_half(s):
    m = re.fullmatch(r"(\d+)(\.5)?", s)
    if not m or len(m.group(1)) > 6:
        return None
    return 2 * int(m.group(1)) + (1 if m.group(2) else 0)


def _parse_score(s):
    if "-" not in s:
        return None
    a, b = s.split("-", 1)
    a2, b2 = _parse_half(a), _parse_half(b)
    return None if a2 is None or b2 is None else (a2, b2)


def _text(b: bytes) -> str:
    return b.decode("utf-8", errors="surrogateescape")


def _read_tag(r, tags, where):
    opened = r.here()
    r.adv()
    r.ws()
    nat, n0 = r.here(), r.i
    while r.peek() >= 0 and (chr(r.peek()).isalnum() and r.peek() < 128 or r.peek() == 95):
        r.adv()
    if r.i == n0:
        _bad(nat, "tag: expected a name after '['")
    if r.i - n0 >= 64:
        _bad(nat, "tag: the name is longer than 63 characters")
    name = r.s[n0:r.i].decode()
    before = r.i
    r.ws()
    if r.peek() != 34:
        _bad(r.here(), f"tag {name}: expected a quoted value")
    if r.i == before:
        _bad(r.here(), f"tag {name}: expected a space before the value")
    q = r.here()
    r.adv()
    vat = r.here()
    v = bytearray()
    while True:
        c = r.peek()
        if c < 0 or c in (10, 13):
            _bad(q, f"tag {name}: value not closed")
        if c == 34:
            break
        if c == 92:
            bs = r.here()
            r.adv()
            d = r.peek()
            if d not in (34, 92):
                if d < 0 or _ctl(d):
                    _bad(bs, f"tag {name}: bad escape (only \\\" and \\\\)")
                _bad(bs, f"tag {name}: bad escape '\\{_text(bytes([d]))}' (only \\\" and \\\\)")
            v.append(d)
            r.adv()
            continue
        if _ctl(c):
            _bad(r.here(), f"tag {name}: control character in the value")
        v.append(c)
        r.adv()
    r.adv()
    r.ws()
    if r.peek() != 93:
        _bad(r.here(), f"tag {name}: expected ']'")
    r.adv()
    if name in tags:
        _bad(opened, f"tag {name} given twice")
    tags[name] = _text(bytes(v))
    where[name] = vat


def _aule_fen(f, pits):
    """Aualé's FEN as sow's token: (token, pits), or raise ValueError(why)."""
    shape = ("expected 2N hole counts, two stores and S or N, separated by '-' "
             "(or a position token A1,...,AN/B1,...,BN/SIDE)")
    fields = f.split("-")
    v = []
    for k, x in enumerate(fields[:-1]):
        if not re.fullmatch(r"[0-9]{1,5}", x):
            raise ValueError(f"field {k + 1} '{x[:8]}': expected a number")
        if len(v) == 38:
            raise ValueError("more than 36 holes")
        v.append(int(x))
    if fields[-1] not in ("S", "N"):
        raise ValueError(shape)
    holes = len(v) - 2
    if holes < 2 or holes % 2:
        raise ValueError(shape)
    if pits and holes != 2 * pits:
        raise ValueError(f"{holes} holes, but the board has {2 * pits}")
    n = holes // 2
    tok = (",".join(map(str, v[:n])) + "/" + ",".join(map(str, v[n:holes])) + "/" +
           ("A" if fields[-1] == "S" else "B") + f"/{v[holes]}-{v[holes + 1]}")
    return tok, n


def _setup(tags, where):
    name = "oware"
    if "Variant" in tags:
        name = tags["Variant"].encode(errors="surrogateescape")[:47].lower().decode(
            errors="surrogateescape")
        if name == "oware abapa":
            name = "oware"
        try:
            _Rules.get(name, 0, -1)
        except ValueError as e:
            _bad(where["Variant"], f"Variant: {e}")
    pits, seeds = 0, 4
    if "Board" in tags:
        v = tags["Board"]
        m = re.fullmatch(r"2x(\d+)", v)
        if not m or not 1 <= int(m.group(1)) <= 18:
            _bad(where["Board"], f"Board '{v}': expected 2xN, N holes a side in 1..18")
        pits = int(m.group(1))
    if "Seeds" in tags:
        v = tags["Seeds"]
        if not re.fullmatch(r"\d+", v) or int(v) > 255:
            _bad(where["Seeds"], f"Seeds '{v}': expected a whole number in 0..255")
        seeds = int(v)
    fen = tags.get("FEN")
    tok = None
    if fen is not None:
        at = where["FEN"]
        if len(fen.encode()) >= 192:
            _bad(at, "FEN: longer than 191 characters")
        if "/" in fen:
            err = _err()
            fp = lib.sowpy_token_pits(fen.encode(), err, _ERRLEN)
            if fp < 0:
                _bad(at, f"FEN: {_msg(err)}")
            if pits and fp != pits:
                _bad(at, f"FEN: {fp} holes a side, but Board is 2x{pits}")
            tok = fen
        else:
            try:
                tok, fp = _aule_fen(fen, pits)
            except ValueError as e:
                _bad(at, f"FEN: {e}")
        pits = fp
    try:
        _Rules.get(name, pits, seeds)
    except ValueError as e:
        at = where.get("Seeds") or where.get("Board") or where.get("Variant") or where["FEN"]
        _bad(at, f"Board 2x{pits or 6}, Seeds {seeds}: {e}")
    g = Game(name, pits or 6, seeds)
    if tok is not None:
        try:
            g.start = Position(tok, rules=name, pits=pits, seeds=seeds)
        except ValueError as e:
            msg = str(e)
            _bad(where["FEN"], f"FEN: {msg[10:] if msg.startswith('position: ') else msg}")
    if "Result" in tags and tags["Result"] != "*" and _parse_score(tags["Result"]) is None:
        _bad(where["Result"], f"Result '{tags['Result']}': expected * or a score like 25-23")
    g.tags = tags
    return g


def _read_move(g, tok: bytes, at):
    num = len(g.moves) + 1
    written = _text(tok[:40]) + ("..." if len(tok) > 40 else "")
    end = len(tok)
    while end > 0 and tok[end - 1] in b"!?":
        end -= 1
    if len(tok) - end > 2:
        _bad(at, f"move {num} '{written}': a mark is one of ! ? !! ?? !? ?!")
    mark = tok[end:].decode()
    cap2 = None
    plus = tok.rfind(b"+", 0, end)
    if plus >= 0:
        c2 = _parse_half(_text(tok[plus + 1:end]))
        if c2 is not None:
            cap2, end = c2, plus
    if end == 0 or end >= 32:
        _bad(at, f"move {num} '{written}': expected a move")
    name = _text(tok[:end])
    p = g.position
    turn = "A's (South's)" if p.side == "A" else "B's (North's)"
    why = g._over(num, written)
    if why:
        _bad(at, why)
    last = LETTERS[g.pits - 1]
    if g.rules == "oware" and len(name) == 1 and name.isascii() and name.isalpha():
        k = ord(name.lower()) - ord("a")
        side = "A" if name.isupper() else "B"
        if k >= g.pits:
            _bad(at, f"move {num} '{written}': not a hole of oware 2x{g.pits} "
                     f"(A..{last}, a..{last.lower()})")
        if side != p.side:
            _bad(at, f"move {num} '{written}': it is {turn} turn")
        sow_name = f"{k + 1}{side}"
    else:
        err, out = _err(), ffi.new("char[]", 32)
        if lib.sowpy_move_parse(p._rules.ptr, p._pos, name.encode(errors="surrogateescape"),
                                out, 32, err, _ERRLEN) < 0:
            msg = _msg(err)
            i = msg.find("': ")
            why = msg[i + 3:] if i >= 0 else msg
            if "turn" in why:
                _bad(at, f"move {num} '{written}': it is {turn} turn")
            if g.rules == "oware":
                _bad(at, f"move {num} '{written}': expected a hole A..{last} (South), "
                         f"a..{last.lower()} (North)")
            _bad(at, f"move {num} '{written}': {why}")
        sow_name = ffi.string(out).decode()
    try:
        m = g._play(sow_name, written)
    except ValueError as e:
        _bad(at, str(e))
    me = "AB".index(m.side)
    if cap2 is not None and cap2 != round(2 * m.gain) and cap2 != 2 * m.captured[me]:
        _bad(at, f"move {num} '{written}': captures {_half(round(2 * m.gain))}, "
                 f"not {_half(cap2)}")
    m.mark = mark


def _check_result(g, r):
    if r == "*":
        return None
    got, want = _parse_score(r), g._result2()
    if want is None:
        return "the game is not finished (*)"
    if tuple(want) != tuple(got):
        return f"the moves give {g.worked_result()}"
    return None


def _parse(data: bytes) -> Game:
    if len(data) > MAX_TEXT:
        raise _Bad(f"1:1: the record is longer than {MAX_TEXT} bytes")
    nul = data.find(b"\0")
    if nul >= 0:
        r = _Reader(data[:nul])
        while r.i < nul:
            r.adv()
        _bad(r.here(), "a NUL byte in the record")
    r = _Reader(data)
    if data.startswith(b"\xef\xbb\xbf"):
        r.i = 3
    tags, where = {}, {}
    while True:
        r.ws()
        if r.peek() != 91:
            break
        _read_tag(r, tags, where)
    g = _setup(tags, where)
    number = have_result = False
    nat = resat = None
    numval, result = 0, ""
    while True:
        r.ws()
        c = r.peek()
        if c < 0:
            break
        at = r.here()
        if have_result:
            _bad(at, "nothing may follow the result")
        if c == 123:  # {
            r.adv()
            t0 = r.i
            while r.peek() >= 0 and r.peek() != 125:
                d = r.peek()
                if _ctl(d) and d not in _WS:
                    _bad(r.here(), "control character in a comment")
                r.adv()
            if r.peek() < 0:
                _bad(at, "comment not closed")
            text = " ".join(re.split(r"[ \t\n\r\f\v]+", _text(data[t0:r.i]).strip(" \t\n\r\f\v")))
            if text:
                (g.moves[-1].comments if g.moves else g.comments).append(text)
            r.adv()
            continue
        if c == 40:
            _bad(at, "variations are not read")
        if c == 91:
            _bad(at, "a tag after the move text")
        if c == 59:
            _bad(at, "';' comments are not read (use { })")
        if c == 36:
            _bad(at, "'$' annotations are not read")
        t0 = r.i
        while r.peek() >= 0 and r.peek() not in _WS and r.peek() not in (123, 40):
            r.adv()
        tok = data[t0:r.i]
        m = re.match(rb"(\d+)(\.+)", tok)
        if m and (m.end() == len(tok) or not tok[m.end():m.end() + 1].isdigit()):
            d = len(m.group(1))
            v = 1000000 if d > 6 else int(m.group(1))
            want = len(g.moves) // 2 + 1
            if number:
                _bad(nat, f"move number {numval} without a move")
            if v != want:
                _bad(at, f"move number {v} where {want} was expected")
            number, nat, numval = True, at, v
            if m.end() == len(tok):
                continue
            at = (at[0], at[1] + m.end())
            tok = tok[m.end():]
        tb = _text(tok[:39])
        if tok == b"*" or (len(tok) < 40 and b"-" in tok and tok[:1].isdigit()
                           and _parse_score(tb) is not None):
            if number:
                _bad(nat, f"move number {numval} without a move")
            have_result, resat, result = True, at, tb
            continue
        number = False
        if any(_ctl(x) for x in tok):
            _bad(at, "control character in the move text")
        _read_move(g, tok, at)
    if number:
        _bad(nat, f"move number {numval} without a move")
    rt = g.tags.get("Result")
    if rt is not None:
        no = _check_result(g, rt)
        if no:
            _bad(where["Result"], f"Result '{rt}': {no}")
    if have_result:
        no = _check_result(g, result)
        if no:
            _bad(resat, f"result '{result}': {no}")
        if rt is not None:
            a, b = rt == "*", result == "*"
            if a != b or (not a and _parse_score(rt) != _parse_score(result)):
                _bad(resat, f"result '{result}' disagrees with the Result tag '{rt}'")
    g.result = rt if rt is not None else result if have_result else "*"
    return g


def read(text) -> Game:
    """Parse a record (str or bytes): a Game, or ValueError("LINE:COL: what")."""
    if isinstance(text, str):
        data = text.encode("utf-8", errors="surrogateescape")
    elif isinstance(text, (bytes, bytearray)):
        data = bytes(text)
    else:
        raise ValueError(f"ogn.read: expected text, got {type(text).__name__}")
    try:
        return _parse(data)
    except _Bad as e:
        raise ValueError(str(e)) from None


# ---- writing -------------------------------------------------------------------


def write(game: Game) -> str:
    """The record as text, as sow and Aualé write it (docs/ogn.md "Writing")."""
    if not isinstance(game, Game):
        raise ValueError("ogn.write: expected a sow.ogn.Game")
    out = []
    for name, value in game.tags.items():
        out.append(f'[{name} "' + value.replace("\\", "\\\\").replace('"', '\\"') + '"]\n')
    tokens = []

    def comment(text):
        tokens.append("{")
        tokens.extend(text.split(" "))
        tokens.append("}")

    for c in game.comments:
        comment(c)
    for i, m in enumerate(game.moves):
        if i % 2 == 0:
            tokens.append(f"{i // 2 + 1}.")
        g2 = round(2 * m.gain)
        tokens.append(m.name + (f"+{_half(g2)}" if g2 > 0 else "") + m.mark)
        for c in m.comments:
            comment(c)
    if game.result != "*":
        tokens.append(game.result)
    if tokens:
        if game.tags:
            out.append("\n")
        line, width = "", 0  # columns are bytes, as the C writer counts them
        for t in tokens:
            n = len(t.encode(errors="surrogateescape"))
            if line and width + 1 + n < 80:
                line, width = line + " " + t, width + 1 + n
            else:
                if line:
                    out.append(line + "\n")
                line, width = t, n
        out.append(line + "\n")
    return "".join(out)
