/* Game records in OGN (docs/ogn.md): Aualé's format for oware, the same
 * shape with sow's move names for the other rule sets.
 *
 *   const rec = SowOGN.parse(text);          // tags, moves as written; throws Error("L:C: ...")
 *   const game = await SowOGN.replay(rec, api);   // the moves checked against sow's rules
 *   const text = SowOGN.write(game);
 *
 * A game (what replay returns and write takes):
 *   {rules: "oware", pits: 6, seeds: 4, start: "4,4,.../A/0-0/-",
 *    tags: [["Event", "?"], ...],         // as read, in order (write fills the rest)
 *    comments: ["..."],                   // before the first move
 *    moves: [{move: "3A", pos: "...", captured: [0, 2], mark: "", comments: []}],
 *    end: null | {why: "...", score: [25, 23]}}   // the game is over after the last move
 *
 * api.legal(rules, pos, pits, seeds) answers as GET /api/RULES/moves does
 * (pos null: the start of that size); it throws an Error with the server's
 * message for a bad rule set or position. */
"use strict";

const SowOGN = (() => {
  const ROSTER = ["Variant", "Event", "Site", "Date", "Round", "South", "North", "Result"];
  const MARKS = ["!!", "??", "!?", "?!", "!", "?"];

  class OgnError extends Error {}

  /* ---- reading ---------------------------------------------------------- */

  /* Characters with their line and column (columns in bytes of UTF-8, as
   * sow's messages count them). */
  function scanner(text) {
    let i = 0, line = 1, col = 1;
    return {
      get i() { return i; },
      peek: (k = 0) => text[i + k],
      done: () => i >= text.length,
      where: () => `${line}:${col}`,
      next() {
        const ch = text[i++];
        if (ch === "\n") { line++; col = 1; return ch; }
        const c = ch.charCodeAt(0);
        col += c < 0x80 ? 1 : c < 0x800 ? 2 : (c >= 0xd800 && c < 0xe000) ? 2 : 3;
        return ch;
      },
    };
  }

  const isSpace = ch => ch === " " || ch === "\t" || ch === "\n" || ch === "\r";
  const fail = (where, msg) => { throw new OgnError(`${where}: ${msg}`); };

  function parseTag(s, rec) {
    const at = s.where();
    s.next(); // [
    while (!s.done() && isSpace(s.peek())) s.next();
    let name = "";
    while (!s.done() && /[A-Za-z0-9_]/.test(s.peek())) name += s.next();
    if (!name) fail(s.where(), "expected a tag name after '['");
    let ws = 0;
    while (!s.done() && isSpace(s.peek())) { s.next(); ws++; }
    if (!ws || s.peek() !== '"') fail(s.where(), `tag ${name}: expected a quoted value`);
    const qat = s.where();
    s.next();
    const vat = s.where(); // a value's errors point at its first character
    let value = "";
    for (;;) {
      if (s.done() || s.peek() === "\n") fail(qat, `tag ${name}: value not closed`);
      const cat = s.where();
      const ch = s.next();
      if (ch === '"') break;
      if (ch === "\\") {
        const e = s.peek();
        if (e !== '"' && e !== "\\") fail(cat, `tag ${name}: bad escape '\\${e || ""}' (only \\" and \\\\)`);
        value += s.next();
      } else if (ch.charCodeAt(0) < 0x20 || ch === "\x7f") {
        fail(s.where(), `tag ${name}: control character in the value`);
      } else {
        value += ch;
      }
    }
    while (!s.done() && isSpace(s.peek())) s.next();
    if (s.peek() !== "]") fail(s.where(), `tag ${name}: expected ']'`);
    s.next();
    if (rec.tags.some(t => t[0] === name)) fail(at, `tag ${name} given twice`);
    rec.tags.push([name, value]);
    rec.at[name] = vat;
  }

  /* The record as written: {tags, at, comments, moves: [{name, capture,
   * mark, comments, at, number}], result, resultAt}.  Nothing is checked
   * against the rules yet (replay does). */
  function parse(text) {
    if (text.length > 1 << 20) throw new OgnError("1:1: the record is longer than 1 MiB");
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    const s = scanner(text);
    const rec = {tags: [], at: {}, comments: [], moves: [], result: null, resultAt: null};
    for (;;) {
      while (!s.done() && isSpace(s.peek())) s.next();
      if (s.peek() !== "[") break;
      parseTag(s, rec);
    }
    let number = null;
    for (;;) {
      while (!s.done() && isSpace(s.peek())) s.next();
      if (s.done()) break;
      const at = s.where();
      const ch = s.peek();
      if (rec.result !== null) fail(at, "nothing may follow the result");
      if (ch === "{") {
        s.next();
        let body = "";
        for (;;) {
          if (s.done()) fail(at, "comment not closed");
          const c = s.next();
          if (c === "}") break;
          body += c;
        }
        const words = body.split(/[ \t\r\n]+/).filter(w => w);
        if (words.length) {
          const c = words.join(" ");
          if (rec.moves.length) rec.moves[rec.moves.length - 1].comments.push(c);
          else rec.comments.push(c);
        }
        continue;
      }
      if (ch === "(") fail(at, "variations are not read");
      if (ch === ";") fail(at, "';' comments are not read (use { })");
      let tok = "";
      while (!s.done() && !isSpace(s.peek()) && s.peek() !== "{" && s.peek() !== "(") tok += s.next();
      if (!tok) continue; // a "(" right after a token: read on the next turn
      if (tok.startsWith("$")) fail(at, "'$' annotations are not read");
      if (tok.includes("(")) fail(at, "variations are not read");
      if (tok.includes(";")) fail(at, "';' comments are not read (use { })");
      const isResult = t => t === "*" || /^\d+(\.5)?-\d+(\.5)?$/.test(t);
      if (isResult(tok)) { // before the move number: "12.5-11.5" is a score
        rec.result = tok;
        rec.resultAt = at;
        continue;
      }
      let m = /^(\d+)\.+(.*)$/.exec(tok);
      if (m) {
        number = {n: parseInt(m[1], 10), at};
        if (!m[2]) continue;
        tok = m[2];
        if (isResult(tok)) fail(at, `'${m[0]}': a move number before the result`);
      }
      m = /^(.+?)(?:\+(\d+(?:\.5)?))?(!!|\?\?|!\?|\?!|!|\?)?$/.exec(tok);
      if (!m) fail(at, `'${tok}': not a move`);
      const i = rec.moves.length;
      if (number && number.n !== Math.floor(i / 2) + 1)
        fail(number.at, `move number ${number.n} where ${Math.floor(i / 2) + 1} was expected`);
      number = null;
      rec.moves.push({name: m[1], capture: m[2] === undefined ? null : parseFloat(m[2]),
                      mark: m[3] || "", comments: [], at, text: tok});
    }
    return rec;
  }

  /* ---- positions and names ---------------------------------------------- */

  /* A position token's fields: {a, b, side, stores, state, pits}. */
  function split(pos) {
    const f = pos.split("/");
    const a = f[0].split(",").map(Number), b = f[1].split(",").map(Number);
    const st = (f[3] || "0-0").split("-").map(Number);
    return {a, b, side: f[2], stores: st, state: f[4] || "-", pits: a.length};
  }

  function startToken(pits, seeds, state) {
    const row = Array(pits).fill(seeds).join(",");
    return `${row}/${row}/A/0-0/${state}`;
  }

  /* Aualé's FEN (holes A1..AN, B1..BN, A's store, B's store, S or N) as a
   * token, or null if it is not one. */
  function fenToToken(fen) {
    const f = fen.trim().split("-");
    if (f.length < 5 || (f.length - 3) % 2) return null;
    const side = f[f.length - 1];
    if (side !== "S" && side !== "N") return null;
    const nums = f.slice(0, -1);
    if (!nums.every(x => /^\d+$/.test(x))) return null;
    const n = (nums.length - 2) / 2;
    return `${nums.slice(0, n).join(",")}/${nums.slice(n, 2 * n).join(",")}/` +
           `${side === "S" ? "A" : "B"}/${nums[2 * n]}-${nums[2 * n + 1]}/-`;
  }

  function tokenToFen(pos) {
    const p = split(pos);
    return [...p.a, ...p.b, ...p.stores, p.side === "A" ? "S" : "N"].join("-");
  }

  const letters = "ABCDEFGHIJKLMNOPQR";

  /* sow's move name as the record writes it (oware: Aualé's letters). */
  function moveText(rules, name) {
    if (rules !== "oware") return name;
    const m = /^(\d+)([AB])$/.exec(name);
    if (!m) return name;
    const l = letters[parseInt(m[1], 10) - 1];
    return m[2] === "A" ? l : l.toLowerCase();
  }

  /* The written name of a move as sow names it, for the side to move, or
   * an error message. */
  function moveName(rules, pits, side, text) {
    if (rules === "oware" && /^[A-Za-z]$/.test(text)) {
      const up = text.toUpperCase(), k = letters.indexOf(up);
      const range = `${letters[0]}..${letters[pits - 1]}, ${letters[0].toLowerCase()}..` +
                    `${letters[pits - 1].toLowerCase()}`;
      if (k < 0 || k >= pits) return {error: `not a hole of oware 2x${pits} (${range})`};
      const who = text === up ? "A" : "B";
      if (who !== side)
        return {error: `it is ${side}'s (${side === "A" ? "South" : "North"}'s) turn`};
      return {name: `${k + 1}${who}`};
    }
    return {name: text};
  }

  function fmt(x) {
    return Number.isInteger(x) ? String(x) : x.toFixed(1);
  }

  /* The score of a game: [A, B] when it is decided, else null (docs/ogn.md
   * "The result"). */
  function score(game) {
    const last = game.moves.length ? game.moves[game.moves.length - 1].pos : game.start;
    const p = split(last);
    if (game.end) return game.end.score;
    const s = split(game.start);
    const total = s.a.concat(s.b).reduce((x, y) => x + y, 0) + s.stores[0] + s.stores[1];
    if (2 * p.stores[0] > total || 2 * p.stores[1] > total) return p.stores.slice();
    return null;
  }

  /* ---- replaying -------------------------------------------------------- */

  function tagOf(rec, name) {
    const t = rec.tags.find(x => x[0] === name);
    return t ? t[1] : null;
  }

  /* The record's moves checked against sow's rules: a game (above). */
  async function replay(rec, api) {
    const where = name => rec.at[name] || "1:1";
    let variant = tagOf(rec, "Variant");
    let rules = "oware";
    if (variant !== null) {
      rules = variant.trim().toLowerCase() === "oware abapa" ? "oware" : variant.trim().toLowerCase();
      if (!/^[a-z0-9_-]{1,32}$/.test(rules))
        fail(where("Variant"), `Variant: unknown rule set '${variant}'`);
    }
    let pits = null, seeds = 4;
    const board = tagOf(rec, "Board");
    if (board !== null) {
      const m = /^2x(\d+)$/.exec(board.trim());
      if (!m || +m[1] < 1 || +m[1] > 18)
        fail(where("Board"), `Board '${board}': expected 2xN, N holes a side in 1..18`);
      pits = +m[1];
    }
    const seedsTag = tagOf(rec, "Seeds");
    if (seedsTag !== null) {
      if (!/^\d+$/.test(seedsTag.trim()) || +seedsTag > 255)
        fail(where("Seeds"), `Seeds '${seedsTag}': expected a whole number in 0..255`);
      seeds = +seedsTag;
    }
    const fen = tagOf(rec, "FEN");
    let start = null;
    if (fen !== null) {
      start = fen.includes("/") ? fen.trim() : fenToToken(fen);
      if (!start)
        fail(where("FEN"), "FEN: expected 2N hole counts, two stores and S or N, separated by " +
                           "'-' (or a position token A1,...,AN/B1,...,BN/SIDE)");
      const n = start.split("/")[0].split(",").length;
      if (pits !== null && n !== pits)
        fail(where("FEN"), `FEN: ${2 * n} holes, but the board has ${2 * pits}`);
      pits = n;
    }
    if (pits === null) pits = 6;

    let first;
    try {
      first = await api.legal(rules, start, pits, seeds);
    } catch (e) {
      if (start) fail(where("FEN"), `FEN: ${e.message}`);
      fail(where(variant !== null ? "Variant" : "Seeds"), `${variant !== null ? "Variant" : "Seeds"}: ${e.message}`);
    }
    rules = first.rules;
    const game = {rules, pits, seeds, start: first.pos, tags: rec.tags.slice(),
                  comments: rec.comments.slice(), moves: [], end: null};
    let cur = first;
    const seen = [first.pos];
    if (first.over) {
      const p = split(first.pos);
      game.end = {why: first.end, score: [p.stores[0] + first.settle[0], p.stores[1] + first.settle[1]]};
    }
    for (let i = 0; i < rec.moves.length; i++) {
      const m = rec.moves[i];
      const label = `move ${i + 1} '${m.text}'`;
      if (game.end) fail(m.at, `${label}: the game is over (${game.end.detail || game.end.why})`);
      const nm = moveName(rules, pits, cur.side, m.name);
      if (nm.error) fail(m.at, `${label}: ${nm.error}`);
      const legal = cur.moves.find(x => x.move === nm.name);
      if (!legal) {
        const names = cur.moves.map(x => moveText(rules, x.move)).join(" ");
        fail(m.at, `${label}: not legal here (legal: ${names})`);
      }
      const next = await api.legal(rules, legal.pos, pits, seeds);
      const mover = cur.side === "A" ? 0 : 1;
      let end = null;
      if (next.over) {
        end = {why: next.end, score: [next.settle[0], next.settle[1]]};
      } else if (seen.includes(next.pos)) {
        const j = seen.indexOf(next.pos);
        end = {why: "position repeated", score: next.repetition.slice(),
               detail: `move ${i + 1} repeated the ${j ? `position after move ${j}` : "start position"}`};
      }
      const p = split(next.pos);
      if (end) end.score = [p.stores[0] + end.score[0], p.stores[1] + end.score[1]];
      const gain = legal.captured[mover] + (end ? end.score[mover] - p.stores[mover] : 0);
      if (m.capture !== null && m.capture !== gain && m.capture !== legal.captured[mover])
        fail(m.at, `${label}: captures ${fmt(gain)}, not ${fmt(m.capture)}`);
      game.moves.push({move: legal.move, pos: next.pos, captured: legal.captured.slice(),
                       mark: m.mark, comments: m.comments.slice()});
      game.end = end;
      seen.push(next.pos);
      cur = next;
    }
    const sc = score(game);
    const want = sc ? `${fmt(sc[0])}-${fmt(sc[1])}` : "*";
    const same = r => {
      if (r === "*") return true;
      const f = r.split("-").map(parseFloat);
      return sc && f[0] === sc[0] && f[1] === sc[1];
    };
    const tagResult = tagOf(rec, "Result");
    if (tagResult !== null && !same(tagResult.trim()))
      fail(where("Result"), sc ? `Result '${tagResult}': the score is ${want}`
                                : `Result '${tagResult}': the game is not finished (*)`);
    if (rec.result !== null && !same(rec.result))
      fail(rec.resultAt, sc ? `result '${rec.result}': the score is ${want}`
                            : `result '${rec.result}': the game is not finished (*)`);
    if (tagResult !== null && rec.result !== null && tagResult.trim() !== rec.result &&
        tagResult.trim() !== "*" && rec.result !== "*")
      fail(rec.resultAt, `result '${rec.result}' and Result '${tagResult}' disagree`);
    return game;
  }

  /* ---- writing ---------------------------------------------------------- */

  function escape(v) {
    return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"');
  }

  /* What the move added to the mover's store (the settlement too when it
   * ended the game). */
  function gain(game, i) {
    const m = game.moves[i];
    const before = i ? game.moves[i - 1].pos : game.start;
    const mover = split(before).side === "A" ? 0 : 1;
    let g = m.captured[mover];
    if (i === game.moves.length - 1 && game.end)
      g += game.end.score[mover] - split(m.pos).stores[mover];
    return g;
  }

  /* The record: Aualé's tags in Aualé's order ('?' where unknown), then
   * Board, Seeds and FEN where they differ from the defaults, then the
   * other tags as read; the move text with numbers, captures, marks and
   * comments, broken before a token that would reach column 80. */
  function write(game) {
    const kept = new Map(game.tags || []);
    const sc = score(game);
    const result = sc ? `${fmt(sc[0])}-${fmt(sc[1])}` : "*";
    const tags = [];
    for (const name of ROSTER) {
      let v = kept.has(name) ? kept.get(name) : "?";
      if (name === "Variant") v = game.rules === "oware" ? "Oware Abapa" : game.rules;
      if (name === "Result") v = result;
      tags.push([name, v]);
    }
    if (game.pits !== 6) tags.push(["Board", `2x${game.pits}`]);
    if (game.seeds !== 4) tags.push(["Seeds", String(game.seeds)]);
    const state = split(game.start).state;
    const ruleStart = startToken(game.pits, game.seeds, game.rules === "jerin" ? "open" : "-");
    if (game.start !== ruleStart)
      tags.push(["FEN", game.rules === "oware" ? tokenToFen(game.start) : game.start]);
    void state;
    for (const [name, v] of game.tags || [])
      if (!ROSTER.includes(name) && !["Board", "Seeds", "FEN"].includes(name)) tags.push([name, v]);

    let out = tags.map(([n, v]) => `[${n} "${escape(v)}"]`).join("\n") + "\n";
    const toks = [];
    const comment = c => { toks.push("{"); toks.push(...c.split(" ")); toks.push("}"); };
    for (const c of game.comments || []) comment(c);
    game.moves.forEach((m, i) => {
      if (i % 2 === 0) toks.push(`${i / 2 + 1}.`);
      const g = gain(game, i);
      toks.push(moveText(game.rules, m.move) + (g > 0 ? `+${fmt(g)}` : "") + (m.mark || ""));
      for (const c of m.comments || []) comment(c);
    });
    if (result !== "*" && game.moves.length) toks.push(result);
    if (toks.length) {
      out += "\n";
      let line = toks[0];
      for (const t of toks.slice(1)) {
        if (line.length + 1 + t.length < 80) line += " " + t;
        else { out += line + "\n"; line = t; }
      }
      out += line + "\n";
    }
    return out;
  }

  return {parse, replay, write, split, score, moveText, fenToToken, tokenToFen, OgnError};
})();
