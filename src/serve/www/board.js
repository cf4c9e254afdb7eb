/* The board as SVG, drawn as `sow show` draws it: A's row on top with its
 * holes N..1 from left to right, B's row below with 1..N, the hole numbers
 * outside the rows, each player's captured seeds at the right end of his
 * row, an arrow at the side to move.  Beside each hole of the player to
 * move, the value of the move that starts there (coloured by what it leads
 * to: win, draw or loss).
 *
 *   SowBoard.draw(svg, {
 *     pits: 6, a: [4,4,4,4,4,4], b: [...], stores: [0, 0], side: "A",
 *     note: "opening double move: due",           // a line under the board, or ""
 *     values: {"A3": {text: "+2", cls: "win est"}},  // by hole, optional
 *     playable: {"A3": "3A"},                      // holes that start a legal move
 *     last: "B2",                                  // the hole played last, or null
 *     editing: false,
 *   });
 *
 * Holes are <g class="hole" data-hole="A3"> (player and hole number), so
 * that a click names its hole; SowBoard.holeOf(event) reads it back. */
"use strict";

const SowBoard = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const CELL = 64;       // one hole's column
  const LABEL = 44;      // the A / B column
  const STORE = 124;     // the captured column and the arrow
  const NUM = 22;        // a row of hole numbers
  const VAL = 26;        // a lane of move values
  const ROW = 68;        // a row of holes

  function el(name, attrs, text) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function draw(svg, b) {
    const n = b.pits;
    const width = LABEL + n * CELL + STORE;
    // rows, top down: A's values, A's hole numbers, A's holes, B's holes,
    // B's hole numbers, B's values (the numbers hug the board)
    const yValA = 0, yNumA = VAL, yRowA = VAL + NUM, yRowB = yRowA + ROW;
    const yNumB = yRowB + ROW, yValB = yNumB + NUM, height = yValB + VAL + (b.note ? 24 : 4);
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("role", "group");
    svg.setAttribute("aria-label", `board, ${b.side} to move`);

    // the wooden board under both rows of holes and the stores
    svg.appendChild(el("rect", {x: LABEL - 6, y: yRowA - 4, width: n * CELL + STORE - 24,
                                height: 2 * ROW + 8, rx: 22, class: "wood"}));
    const rows = [
      {who: "A", y: yRowA, seeds: b.a, yNum: yNumA + NUM - 7, yVal: yValA, order: k => n - 1 - k},
      {who: "B", y: yRowB, seeds: b.b, yNum: yNumB + NUM - 5, yVal: yValB, order: k => k},
    ];
    for (const r of rows) {
      const toMove = b.side === r.who;
      svg.appendChild(el("text", {x: LABEL / 2 - 4, y: r.y + ROW / 2 + 8,
                                  class: "who" + (toMove ? " to-move" : "")}, r.who));
      for (let k = 0; k < n; k++) {
        const i = r.order(k);              // index in the row's own order: hole i+1
        const name = r.who + (i + 1);
        const cx = LABEL + k * CELL + CELL / 2, cy = r.y + ROW / 2;
        svg.appendChild(el("text", {x: cx, y: r.yNum, class: "num"}, String(i + 1)));
        const move = b.playable && b.playable[name];
        const g = el("g", {class: "hole" + (move ? " playable" : "") +
                                  (b.last === name ? " last" : "") + (b.editing ? " editing" : ""),
                           "data-hole": name});
        if (move) {
          g.setAttribute("tabindex", "0");
          g.setAttribute("role", "button");
          g.setAttribute("aria-label", `play ${move}`);
          g.setAttribute("data-move", move);
        }
        g.appendChild(el("circle", {cx, cy, r: CELL / 2 - 7, class: "pit"}));
        g.appendChild(el("text", {x: cx, y: cy + 8, class: "seeds"}, String(r.seeds[i])));
        g.appendChild(el("title", {}, `hole ${name.slice(1)}${r.who}: ${r.seeds[i]} seeds`));
        svg.appendChild(g);
        const v = b.values && b.values[name];
        if (v) {
          const vy = r.yVal + 2;
          const vg = el("g", {class: "val " + v.cls, "data-hole": name});
          vg.appendChild(el("rect", {x: cx - 24, y: vy, width: 48, height: VAL - 5, rx: 8}));
          vg.appendChild(el("text", {x: cx, y: vy + VAL - 11}, v.text));
          svg.appendChild(vg);
        }
      }
      // the store: what this player has captured
      const sx = LABEL + n * CELL + 6, sw = STORE - 42;
      svg.appendChild(el("rect", {x: sx, y: r.y + 8, width: sw, height: ROW - 16, rx: 14,
                                  class: "store" + (toMove ? " to-move" : "")}));
      svg.appendChild(el("text", {x: sx + sw / 2, y: r.y + 26, class: "store-label"}, "captured"));
      svg.appendChild(el("text", {x: sx + sw / 2, y: r.y + ROW - 16, class: "store-count",
                                  "data-store": r.who},
                         String(b.stores[r.who === "A" ? 0 : 1])));
      if (toMove) {
        const ax = sx + sw + 22, ay = r.y + ROW / 2;
        svg.appendChild(el("path", {d: `M${ax} ${ay - 9} l-12 9 l12 9 z`, class: "arrow"}));
      }
    }
    if (b.note)
      svg.appendChild(el("text", {x: width / 2, y: height - 6, class: "note"}, b.note));
  }

  /* The hole ("A3") an event happened on, or null. */
  function holeOf(ev) {
    const g = ev.target.closest && ev.target.closest("[data-hole]");
    return g ? g.getAttribute("data-hole") : null;
  }

  return {draw, holeOf};
})();
