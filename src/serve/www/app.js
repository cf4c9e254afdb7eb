/* sow's board page: the position on the board, every legal move with its
 * value from the JSON API, the game so far, the mainline, an editor, game
 * records in OGN, a permalink for every position (?rules=R&pos=TOKEN, and
 * &sow=A|B&hide=1 for a game against sow with the values hidden).
 *
 * The API (docs/serve.md): GET api/rules (the rule sets), api/R/moves?pos=
 * (the legal moves and the positions they make: cheap, so the board is
 * drawn at once), api/R?pos= (every move's value: may take the server's
 * time budget), api/R/mainline?pos= (the principal variation).
 *
 * For the browser test (tests/serve/browser.py) the body carries
 * data-pos (the position shown) and data-analysed (the position whose
 * values are shown). */
"use strict";

(() => {
  const $ = id => document.getElementById(id);
  const S = {
    rulesList: [],           // /api/rules
    game: null,              // as SowOGN.replay makes it
    ply: 0,                  // moves of the game on the board
    legal: new Map(),        // "rules pos" -> api/R/moves answer
    values: new Map(),       // "rules pos" -> api/R answer
    seq: 0,                  // the position shown (stale answers are dropped)
    ctl: null,               // the analysis under way
    auto: false, autoTimer: null, wantBest: false,
    sowSide: "",             // "A" or "B": sow answers that side's moves
    hide: false,             // the values kept from the player
    tokenEdited: false,
  };

  /* ---- the API ------------------------------------------------------------ */

  async function api(path, params, signal) {
    const q = new URLSearchParams();
    for (const k in params) if (params[k] !== null && params[k] !== undefined) q.set(k, params[k]);
    const qs = q.toString();
    const r = await fetch(path + (qs ? "?" + qs : ""), {signal, cache: "no-store"});
    let j;
    try {
      j = await r.json();
    } catch (e) {
      throw new Error(`${r.status} ${r.statusText}`);
    }
    if (!r.ok) throw new Error(j.error || `${r.status} ${r.statusText}`);
    return j;
  }

  const rulesPath = rules => "api/" + encodeURIComponent(rules);

  async function legal(rules, pos, pits, seeds) {
    const key = `${rules} ${pos}`;
    if (pos && S.legal.has(key)) return S.legal.get(key);
    const j = await api(rulesPath(rules) + "/moves", pos ? {pos} : {pits, seeds});
    S.legal.set(`${j.rules} ${j.pos}`, j);
    return j;
  }

  /* ---- the game ----------------------------------------------------------- */

  function newGame(rules, pits, seeds, start) {
    return {rules, pits, seeds, start, tags: [], comments: [], moves: [], end: null};
  }

  const posAt = ply => (ply ? S.game.moves[ply - 1].pos : S.game.start);
  const current = () => posAt(S.ply);
  const split = SowOGN.split;

  /* The game is over at the position shown: no legal move, or (at the end
   * of the game) a position repeated. */
  function endHere(L) {
    if (S.ply === S.game.moves.length && S.game.end) return S.game.end;
    if (L.over) {
      const p = split(L.pos);
      return {why: L.end, score: [p.stores[0] + L.settle[0], p.stores[1] + L.settle[1]]};
    }
    return null;
  }

  /* Play move (a sow name) at the position shown: the moves after it are
   * dropped unless it is the one the game goes on with. */
  async function play(move) {
    const g = S.game, pos = current();
    const L = await legal(g.rules, pos);
    if (endHere(L)) return;
    const m = L.moves.find(x => x.move === move);
    if (!m) return;
    if (S.ply < g.moves.length && g.moves[S.ply].move === move) {
      S.ply++;
      return show();
    }
    g.moves.length = S.ply;
    const next = await legal(g.rules, m.pos);
    const seen = [g.start, ...g.moves.map(x => x.pos)];
    const p = split(next.pos);
    let end = null;
    if (next.over) end = {why: next.end, score: [p.stores[0] + next.settle[0], p.stores[1] + next.settle[1]]};
    else if (seen.includes(next.pos))
      end = {why: "position repeated", score: [p.stores[0] + next.repetition[0], p.stores[1] + next.repetition[1]]};
    g.moves.push({move, pos: next.pos, captured: m.captured.slice(), mark: "", comments: []});
    g.end = end;
    S.ply++;
    return show();
  }

  async function playBest() {
    const a = S.values.get(`${S.game.rules} ${current()}`);
    if (a && a.best) return play(a.best);
    S.wantBest = true; // when the values come
  }

  /* ---- showing a position -------------------------------------------------- */

  const sign = v => (v > 0 ? "+" : "") + v;
  const fmt = x => (Number.isInteger(x) ? String(x) : x.toFixed(1));

  /* win / draw / loss for the player to move at pos if he nets value */
  function outcome(pos, value) {
    const p = split(pos), me = p.side === "A" ? 0 : 1;
    const d = p.stores[me] - p.stores[1 - me] + value;
    return d > 0 ? "win" : d < 0 ? "loss" : "draw";
  }

  const holeOfMove = name => {
    const m = /^(\d+)([AB])/.exec(name);
    return m ? m[2] + m[1] : null;
  };

  function noteOf(rules, state) {
    if (rules === "jerin" && state === "open") return "opening double move: due";
    if (rules === "darra" && (state === "A" || state === "B")) return `${state} captured last`;
    return "";
  }

  function drawBoard(L, a, end) {
    const p = split(L.pos), playable = {}, values = {};
    if (!end)
      for (const m of L.moves) {
        const h = holeOfMove(m.move);
        if (h && !playable[h]) playable[h] = m.move;
      }
    if (a && !end && !S.hide)
      for (const m of a.moves) {
        const h = holeOfMove(m.move);
        if (h && !values[h])
          values[h] = {text: (m.exact ? "" : "≈") + sign(m.value),
                       cls: outcome(L.pos, m.value) + (m.exact ? "" : " est")};
      }
    const lastMove = S.ply ? holeOfMove(S.game.moves[S.ply - 1].move) : null;
    SowBoard.draw($("board"), {pits: p.pits, a: p.a, b: p.b, stores: p.stores, side: p.side,
                               note: noteOf(L.rules, p.state), values, playable, last: lastMove});
  }

  function statusText(L, a, end) {
    const p = split(L.pos);
    if (end) {
      const [sa, sb] = end.score;
      const r = sa > sb ? "A wins" : sa < sb ? "B wins" : "a draw";
      return `Game over (${end.why}): A ${fmt(sa)} – B ${fmt(sb)}, ${r}.`;
    }
    let t = `${p.side} to move`;
    if (S.hide) {
      if (sowToMove(p)) t += a ? " · sow plays" : " · sow is thinking…";
    } else if (a) {
      const o = outcome(L.pos, a.value);
      const how = a.exact ? `exact, ${a.source}` : `estimate, engine depth ${a.depth}`;
      t += ` · value ${sign(a.value)} (${how}) → ${p.side} ${o === "win" ? "wins" : o === "loss" ? "loses" : "draws"}`;
    } else {
      t += " · thinking…";
    }
    return t;
  }

  function fillTable(L, a, end) {
    const tb = $("moves").tBodies[0];
    tb.textContent = "";
    const row = cells => {
      const tr = document.createElement("tr");
      for (const [text, cls] of cells) {
        const td = document.createElement("td");
        td.textContent = text;
        if (cls) td.className = cls;
        tr.appendChild(td);
      }
      tb.appendChild(tr);
      return tr;
    };
    if (end) { row([["game over", "muted"]]).firstChild.colSpan = 4; return; }
    if (!a || S.hide) {
      for (const m of L.moves) {
        const tr = row([[m.move], [S.hide ? "" : "…"], [""], [""]]);
        tr.dataset.move = m.move;
      }
      return;
    }
    for (const m of a.moves) {
      const o = outcome(L.pos, m.value), est = m.exact ? "" : " est";
      const tr = row([[m.move], [(m.exact ? "" : "≈") + sign(m.value), o + est], [o, o + est],
                      [m.exact ? `exact (${a.source})` : `estimate (engine d${a.depth})`, est.trim()]]);
      tr.dataset.move = m.move;
      tr.dataset.value = m.value;
      tr.dataset.exact = m.exact;
      if (m.move === a.best) tr.classList.add("best");
    }
  }

  function fillGame() {
    const ol = $("game");
    ol.textContent = "";
    const item = (label, ply, n) => {
      const li = document.createElement("li");
      if (n) {
        const s = document.createElement("span");
        s.className = "n";
        s.textContent = n;
        li.appendChild(s);
      }
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = label;
      b.dataset.ply = ply;
      if (ply === S.ply) b.className = "current";
      li.appendChild(b);
      ol.appendChild(li);
    };
    item("start", 0);
    S.game.moves.forEach((m, i) => {
      const cap = m.captured[0] + m.captured[1];
      item(m.move + (cap ? ` (+${cap})` : ""), i + 1, i % 2 === 0 ? `${i / 2 + 1}.` : "");
    });
    if (S.game.end) {
      const li = document.createElement("li");
      li.className = "small";
      li.textContent = `(${S.game.end.why}) ${fmt(S.game.end.score[0])}-${fmt(S.game.end.score[1])}`;
      ol.appendChild(li);
    }
  }

  function permalink() {
    const pos = current();
    const safe = /^[0-9A-Za-z,\/-]+$/.test(pos) ? pos : encodeURIComponent(pos);
    const url = `?rules=${encodeURIComponent(S.game.rules)}&pos=${safe}` +
                (S.sowSide ? `&sow=${S.sowSide}` : "") + (S.hide ? "&hide=1" : "");
    $("permalink").href = url;
    $("permalink").textContent = location.origin + location.pathname + url;
    history.replaceState(null, "", url);
  }

  function buttons(end) {
    $("first").disabled = $("back").disabled = S.ply === 0;
    $("forward").disabled = $("last").disabled = S.ply >= S.game.moves.length;
    $("best").disabled = !!end;
  }

  /* Draw the position shown, then ask for its values (and the mainline if
   * it is open); auto-play goes on from there. */
  async function show() {
    const seq = ++S.seq;
    if (S.ctl) S.ctl.abort();
    clearTimeout(S.autoTimer);
    const g = S.game, pos = current();
    let L;
    try {
      L = await legal(g.rules, pos);
    } catch (e) {
      $("status").textContent = `error: ${e.message}`;
      return;
    }
    if (seq !== S.seq) return;
    const end = endHere(L);
    const key = `${g.rules} ${pos}`;
    let a = S.values.get(key) || null;
    drawBoard(L, a, end);
    $("status").textContent = statusText(L, a, end);
    fillTable(L, a, end);
    fillGame();
    permalink();
    buttons(end);
    syncSetup();
    if (!$("edit").open) fillEditor(pos);
    document.body.dataset.pos = pos;
    delete document.body.dataset.analysed;
    if ($("mainline-box").open) mainline(seq);
    if (end) {
      setAuto(false);
      document.body.dataset.analysed = pos;
      return;
    }
    if (!a) {
      S.ctl = new AbortController();
      try {
        a = await api(rulesPath(g.rules), {pos}, S.ctl.signal);
      } catch (e) {
        if (seq === S.seq && e.name !== "AbortError") $("status").textContent = `error: ${e.message}`;
        return;
      }
      if (a.exact) S.values.set(key, a);
      if (seq !== S.seq) return;
      drawBoard(L, a, end);
      $("status").textContent = statusText(L, a, end);
      fillTable(L, a, end);
    }
    document.body.dataset.analysed = pos;
    if (S.wantBest) {
      S.wantBest = false;
      if (a.best) return play(a.best);
    }
    if ((S.auto || sowToMove(split(pos))) && a.best) S.autoTimer = setTimeout(() => play(a.best), 600);
  }

  /* sow moves where the side it plays is to move at the end of the game
   * (walking back through the game only shows it; playing from there goes
   * on from the new end). */
  const sowToMove = p => S.sowSide === p.side && S.ply === S.game.moves.length;

  function setOpponent(side, hide) {
    S.sowSide = side === "A" || side === "B" ? side : "";
    S.hide = !!hide;
    $("sow-side").value = S.sowSide;
    $("hide-values").checked = S.hide;
    document.body.classList.toggle("hide-values", S.hide);
  }

  async function mainline(seq) {
    const g = S.game, pos = current();
    const ol = $("mainline");
    ol.textContent = "";
    $("mainline-info").textContent = "thinking…";
    let a;
    try {
      a = await api(rulesPath(g.rules) + "/mainline", {pos});
    } catch (e) {
      if (seq === S.seq) $("mainline-info").textContent = `error: ${e.message}`;
      return;
    }
    if (seq !== S.seq) return;
    const why = {over: "the game ends", repetition: "a position repeats", cut: "the line is cut"};
    $("mainline-info").textContent =
      `${a.exact ? "exact" : "engine estimate"}, value ${sign(a.value)}; ${why[a.end] || a.end}. ` +
      "Click a move to play the line up to it.";
    a.line.forEach((m, i) => {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "button";
      b.textContent = m.move;
      b.dataset.index = i;
      li.appendChild(b);
      ol.appendChild(li);
    });
    ol.dataset.moves = a.line.map(m => m.move).join(" ");
    ol.dataset.pos = pos;
  }

  async function playLine(moves) {
    for (const m of moves) {
      const before = S.ply;
      await play(m);
      if (S.ply === before) break;
    }
  }

  function setAuto(on) {
    S.auto = on;
    $("auto").setAttribute("aria-pressed", on ? "true" : "false");
    if (!on) clearTimeout(S.autoTimer);
  }

  /* ---- rule set and size ------------------------------------------------- */

  function ruleInfo(name) {
    return S.rulesList.find(r => r.name === name) || {states: ["-"], pits: 6, seeds: 4};
  }

  function fillSizes() {
    const pits = +$("pits").value || 6;
    const maxSeeds = Math.floor(255 / (2 * pits));
    const cur = +$("seeds").value;
    $("seeds").textContent = "";
    for (let s = 0; s <= Math.min(maxSeeds, 20); s++) $("seeds").add(new Option(String(s), String(s)));
    $("seeds").value = String(Math.min(isNaN(cur) ? 4 : cur, Math.min(maxSeeds, 20)));
  }

  function syncSetup() {
    $("rules").value = S.game.rules;
    $("pits").value = String(S.game.pits);
    fillSizes();
    $("seeds").value = String(S.game.seeds);
  }

  async function startNew(rules, pits, seeds, pos) {
    setAuto(false);
    const L = await legal(rules, pos || null, pits, seeds);
    S.game = newGame(L.rules, L.pits, seeds, L.pos);
    S.ply = 0;
    return show();
  }

  /* ---- the editor ---------------------------------------------------------- */

  function fillEditor(pos) {
    const p = split(pos), grid = $("edit-grid");
    grid.textContent = "";
    grid.style.gridTemplateColumns = `2rem repeat(${p.pits}, minmax(0, 1fr))`;
    const add = (who, order) => {
      const l = document.createElement("span");
      l.className = "who";
      l.textContent = who;
      grid.appendChild(l);
      for (let k = 0; k < p.pits; k++) {
        const i = order(k);
        const inp = document.createElement("input");
        inp.type = "number";
        inp.min = "0";
        inp.max = "255";
        inp.id = `edit-${who}${i + 1}`;
        inp.value = String((who === "A" ? p.a : p.b)[i]);
        inp.setAttribute("aria-label", `hole ${i + 1}${who}`);
        grid.appendChild(inp);
      }
    };
    add("A", k => p.pits - 1 - k);
    add("B", k => k);
    $("edit-side").value = p.side;
    $("edit-store-A").value = String(p.stores[0]);
    $("edit-store-B").value = String(p.stores[1]);
    const st = $("edit-state");
    st.textContent = "";
    for (const s of ruleInfo(S.game.rules).states) st.add(new Option(s, s));
    st.value = p.state;
    $("edit-token").value = pos;
    S.tokenEdited = false;
    $("edit-error").textContent = "";
  }

  function editorToken() {
    const pits = S.game.pits, num = id => Math.max(0, parseInt($(id).value, 10) || 0);
    const row = who => Array.from({length: pits}, (_, i) => num(`edit-${who}${i + 1}`)).join(",");
    return `${row("A")}/${row("B")}/${$("edit-side").value}/` +
           `${num("edit-store-A")}-${num("edit-store-B")}/${$("edit-state").value || "-"}`;
  }

  async function applyEditor() {
    const tok = S.tokenEdited ? $("edit-token").value.trim() : editorToken();
    $("edit-error").textContent = "";
    try {
      const L = await legal(S.game.rules, tok);
      setAuto(false);
      S.game = newGame(L.rules, L.pits, S.game.seeds, L.pos);
      S.ply = 0;
      fillEditor(L.pos);
      await show();
    } catch (e) {
      $("edit-error").textContent = e.message;
    }
  }

  /* ---- OGN ----------------------------------------------------------------- */

  async function importOgn(text) {
    $("ogn-error").textContent = "";
    try {
      const rec = SowOGN.parse(text);
      const game = await SowOGN.replay(rec, {legal});
      setAuto(false);
      S.game = game;
      S.ply = game.moves.length;
      await show();
      $("ogn-error").textContent = `imported: ${game.rules} 2x${game.pits}, ${game.moves.length} moves`;
      $("ogn-error").className = "small";
    } catch (e) {
      $("ogn-error").className = "error";
      $("ogn-error").textContent = e.message;
    }
  }

  function exportOgn() {
    const text = SowOGN.write(S.game);
    $("ogn-text").value = text;
    const a = $("ogn-download");
    if (a.dataset.url) URL.revokeObjectURL(a.dataset.url);
    a.dataset.url = URL.createObjectURL(new Blob([text], {type: "text/plain"}));
    a.href = a.dataset.url;
    return text;
  }

  /* ---- wiring -------------------------------------------------------------- */

  function wire() {
    $("board").addEventListener("click", ev => {
      const h = SowBoard.holeOf(ev);
      const g = h && $("board").querySelector(`.hole[data-hole="${h}"]`);
      if (g && g.dataset.move) play(g.dataset.move);
    });
    $("board").addEventListener("keydown", ev => {
      if ((ev.key === "Enter" || ev.key === " ") && ev.target.dataset && ev.target.dataset.move) {
        ev.preventDefault();
        play(ev.target.dataset.move);
      }
    });
    $("moves").addEventListener("click", ev => {
      const tr = ev.target.closest("tr[data-move]");
      if (tr) play(tr.dataset.move);
    });
    $("game").addEventListener("click", ev => {
      const b = ev.target.closest("button[data-ply]");
      if (b) { S.ply = +b.dataset.ply; show(); }
    });
    $("mainline").addEventListener("click", ev => {
      const b = ev.target.closest("button[data-index]");
      if (!b) return;
      const moves = $("mainline").dataset.moves.split(" ").slice(0, +b.dataset.index + 1);
      playLine(moves);
    });
    $("mainline-box").addEventListener("toggle", () => { if ($("mainline-box").open) mainline(S.seq); });
    $("first").onclick = () => { S.ply = 0; show(); };
    $("back").onclick = () => { if (S.ply > 0) { S.ply--; show(); } };
    $("forward").onclick = () => { if (S.ply < S.game.moves.length) { S.ply++; show(); } };
    $("last").onclick = () => { S.ply = S.game.moves.length; show(); };
    $("best").onclick = () => playBest();
    $("sow-side").addEventListener("change", () => { setOpponent($("sow-side").value, S.hide); show(); });
    $("hide-values").addEventListener("change", () => {
      setOpponent(S.sowSide, $("hide-values").checked);
      show();
    });
    $("auto").onclick = () => {
      setAuto(!S.auto);
      if (S.auto) playBest();
    };
    document.addEventListener("keydown", ev => {
      if (ev.target.closest("input, textarea, select") || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const k = {ArrowLeft: "back", ArrowRight: "forward", Home: "first", End: "last", b: "best"}[ev.key];
      if (k && !$(k).disabled) { ev.preventDefault(); $(k).click(); }
    });
    $("setup").addEventListener("submit", ev => {
      ev.preventDefault();
      startNew($("rules").value, +$("pits").value, +$("seeds").value).catch(e => {
        $("status").textContent = `error: ${e.message}`;
      });
    });
    $("rules").addEventListener("change", () => {
      const r = ruleInfo($("rules").value);
      $("pits").value = String(r.pits);
      fillSizes();
      $("seeds").value = String(r.seeds);
      $("setup").requestSubmit();
    });
    $("pits").addEventListener("change", () => { fillSizes(); $("setup").requestSubmit(); });
    $("seeds").addEventListener("change", () => $("setup").requestSubmit());
    $("edit-form").addEventListener("submit", ev => { ev.preventDefault(); applyEditor(); });
    $("edit-form").addEventListener("input", ev => {
      if (ev.target.id === "edit-token") { S.tokenEdited = true; return; }
      S.tokenEdited = false;
      $("edit-token").value = editorToken();
    });
    $("edit-form").addEventListener("change", ev => {
      if (ev.target.tagName === "SELECT") { S.tokenEdited = false; $("edit-token").value = editorToken(); }
    });
    $("edit-empty").onclick = () => {
      for (const inp of $("edit-grid").querySelectorAll("input")) inp.value = "0";
      S.tokenEdited = false;
      $("edit-token").value = editorToken();
    };
    $("edit-reset").onclick = () => fillEditor(current());
    $("edit").addEventListener("toggle", () => { if ($("edit").open) fillEditor(current()); });
    $("ogn-import").onclick = () => importOgn($("ogn-text").value);
    $("ogn-export").onclick = () => exportOgn();
    $("ogn-download").addEventListener("click", () => exportOgn());
    $("ogn-file").addEventListener("change", () => {
      const f = $("ogn-file").files[0];
      if (!f) return;
      const r = new FileReader();
      r.onload = () => { $("ogn-text").value = r.result; importOgn(r.result); };
      r.readAsText(f);
    });
  }

  async function main() {
    wire();
    try {
      const j = await api("api/rules", {});
      S.rulesList = j.rules;
      for (const r of j.rules) $("rules").add(new Option(r.name, r.name));
      for (let n = 1; n <= j.max_pits; n++) $("pits").add(new Option(String(n), String(n)));
    } catch (e) {
      $("status").textContent = `error: ${e.message}`;
      return;
    }
    const q = new URLSearchParams(location.search);
    const rules = q.get("rules") || "oware", pos = q.get("pos");
    setOpponent(q.get("sow"), q.get("hide") === "1");
    const r = ruleInfo(rules);
    const pits = q.get("pits") ? +q.get("pits") : r.pits, seeds = q.get("seeds") ? +q.get("seeds") : r.seeds;
    try {
      await startNew(rules, pits, seeds, pos);
    } catch (e) {
      await startNew("oware", 6, 4, null);
      $("status").textContent = `${rules} ${pos || ""}: ${e.message} (the oware start instead)`;
    }
  }

  main();
})();
