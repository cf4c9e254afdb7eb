#!/usr/bin/env python3
"""The board page in a real browser: headless Chromium driven by Selenium (TAP).

usage: browser.py SOW [--screenshot PNG]

Starts `sow serve` on a free loopback port (killed at the end whatever
happens) and, in the page: loads a permalink and checks the board and the
value table against the API's JSON; plays a move by clicking its hole;
back, forward, play best, the mainline, auto-play to the end of a game;
a game against sow with the values hidden; the rule-set selector; edits a position (and a bad one is refused); imports
an OGN game (oware, and jerin with a FEN) and exports it back; no error in
the browser's console; no sideways scrolling on a phone's width.  With
--screenshot, the board of a game in progress is saved there
(docs/img/board.png).  Every wait is bounded."""
import http.client
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

SOW = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else "build/src/cli/sow")
SHOT = sys.argv[sys.argv.index("--screenshot") + 1] if "--screenshot" in sys.argv else None
n_tests = 0
failed = 0


T0 = time.monotonic()


def ok(cond, desc, why=""):
    global n_tests, failed
    n_tests += 1
    desc += f" [{time.monotonic() - T0:.1f} s]"
    print(f"{'ok' if cond else 'not ok'} {n_tests} - {desc}", flush=True)
    if not cond:
        failed += 1
        for line in str(why).splitlines()[:20]:
            print(f"#   {line}", flush=True)


def which(*names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


class Page:
    def __init__(self, port):
        self.port = port
        o = Options()
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--window-size=1200,1000", "--disable-extensions", "--no-first-run"):
            o.add_argument(a)
        o.binary_location = which("chromium", "chromium-browser", "google-chrome")
        o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.d = webdriver.Chrome(service=Service(which("chromedriver")), options=o)
        self.d.set_page_load_timeout(20)

    def api(self, path, **params):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        try:
            c.request("GET", path + ("?" + urllib.parse.urlencode(params, safe=",/") if params else ""))
            r = c.getresponse()
            return r.status, json.loads(r.read())
        finally:
            c.close()

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def wait(self, cond, seconds=20):
        """cond() truthy within seconds: its value, else None."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                v = cond()
            except Exception:
                v = None
            if v:
                return v
            time.sleep(0.05)
        return None

    def open(self, query):
        self.d.get(f"http://127.0.0.1:{self.port}/{query}")

    def shown(self):
        return self.js("return document.body.dataset.pos")

    def analysed(self, pos):
        return self.wait(lambda: self.js("return document.body.dataset.analysed") == pos)

    def el(self, css):
        return self.d.find_element(By.CSS_SELECTOR, css)

    def els(self, css):
        return self.d.find_elements(By.CSS_SELECTOR, css)

    def text(self, css):
        return self.js("const e = document.querySelector(arguments[0]); return e ? e.textContent : null", css)

    def table(self):
        return self.js("""return [...document.querySelectorAll('#moves tbody tr[data-move]')].map(
            tr => [tr.dataset.move, +tr.dataset.value, tr.dataset.exact === 'true',
                   tr.cells[2].textContent])""")


def outcome(pos, value):
    f = pos.split("/")
    st = [int(x) for x in f[3].split("-")]
    me = 0 if f[2] == "A" else 1
    d = st[me] - st[1 - me] + value
    return "win" if d > 0 else "loss" if d < 0 else "draw"


def table_agrees(page, rules, pos):
    """'' if the page's value table for pos is the API's answer, else why not."""
    st, a = page.api(f"/api/{rules}", pos=pos)
    want = [[m["move"], m["value"], m["exact"], outcome(pos, m["value"])] for m in a["moves"]]
    got = page.table()
    why = [] if got == want else [f"table {got} != API {want}"]
    for m in a["moves"]:
        h = re.match(r"(\d+)([AB])", m["move"])
        if h:
            badge = page.text(f'g.val[data-hole="{h.group(2)}{h.group(1)}"] text')
            if badge is not None and badge.replace("≈", "") != ("+" if m["value"] > 0 else "") + str(m["value"]):
                why.append(f"badge of {m['move']}: {badge} != {m['value']}")
    return "; ".join(why)


def ogn_record(page, moves_n, seed):
    """An oware record of a random game of moves_n moves, as sow writes it
    (docs/ogn.md), and the position it ends in."""
    rng = random.Random(seed)
    st, a = page.api("/api/oware/moves")
    toks, pos = [], a["pos"]
    for i in range(moves_n):
        if not a["moves"]:
            break
        m = rng.choice(a["moves"])
        mover = 0 if a["side"] == "A" else 1
        k, who = int(m["move"][:-1]), m["move"][-1]
        letter = "ABCDEF"[k - 1] if who == "A" else "abcdef"[k - 1]
        if i % 2 == 0:
            toks.append(f"{i // 2 + 1}.")
        toks.append(letter + (f"+{m['captured'][mover]}" if m["captured"][mover] else ""))
        if i == 2:
            toks += ["{", "a", "quiet", "move", "}"]
        pos = m["pos"]
        st, a = page.api("/api/oware/moves", pos=pos)
    return toks, pos


def main():
    work = tempfile.mkdtemp()
    err = open(os.path.join(work, "serve.err"), "w+")
    srv = subprocess.Popen([SOW, "serve", "--port", "0", "--time", "1"], stdout=subprocess.DEVNULL,
                           stderr=err, env={**os.environ, "SOW_TABLES": work + "/none"})
    page = None
    try:
        port = None
        for _ in range(200):
            err.seek(0)
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", err.read())
            if m:
                port = int(m.group(1))
                break
            time.sleep(0.05)
        ok(port, "sow serve listens")
        if not port:
            return
        page = Page(port)
        page.d.set_script_timeout(60)

        # a permalink: the board and the value table
        pos = "1,0,2,0,1,1/0,2,1,0,0,1/A/3-5/-"
        page.open(f"?rules=oware&pos={pos}")
        ok(page.analysed(pos), "a permalink shows its position and its values", page.shown())
        holes = page.js("""return [...document.querySelectorAll('#board g.hole')].map(
            g => g.dataset.hole + '=' + g.querySelector('.seeds').textContent).join(' ')""")
        ok(holes == "A6=1 A5=1 A4=0 A3=2 A2=0 A1=1 B1=0 B2=2 B3=1 B4=0 B5=0 B6=1",
           "the board as sow show draws it: A's holes 6..1, B's 1..6", holes)
        stores = (page.text('[data-store="A"]'), page.text('[data-store="B"]'))
        ok(stores == ("3", "5"), "the captured seeds beside their rows", stores)
        why = table_agrees(page, "oware", pos)
        ok(not why, "every legal move's value as the API answers, coloured win/draw/loss", why)
        playable = sorted(g.get_attribute("data-move") for g in page.els("#board g.hole.playable"))
        ok(playable == ["1A", "3A", "5A", "6A"], "the holes of the legal moves are playable", playable)

        # a move by clicking its hole
        st, legal = page.api("/api/oware/moves", pos=pos)
        after = next(m["pos"] for m in legal["moves"] if m["move"] == "5A")
        page.el('#board g.hole[data-hole="A5"]').click()
        ok(page.analysed(after), "a click on hole 5A plays it", page.shown())
        why = table_agrees(page, "oware", after)
        ok(not why, "the values after the move as the API answers", why)
        href = page.el("#permalink").get_attribute("href")
        ok(urllib.parse.unquote(href).endswith(f"?rules=oware&pos={after}") and
           urllib.parse.unquote(page.js("return location.search")) == f"?rules=oware&pos={after}",
           "the permalink and the address follow the position", href)
        ok(page.text("#game").replace(" ", "").startswith("start1.5A"), "the game so far lists 5A",
           page.text("#game"))

        # back, forward, play best
        page.el("#back").click()
        ok(page.analysed(pos), "back", page.shown())
        page.el("#forward").click()
        ok(page.analysed(after), "forward", page.shown())
        st, a = page.api("/api/oware", pos=after)
        best = next(m["pos"] for m in a["moves"] if m["move"] == a["best"])
        page.el("#best").click()
        ok(page.analysed(best), f"play best plays {a['best']}", page.shown())

        # the mainline
        page.el("#mainline-box summary").click()
        got = page.wait(lambda: page.js(
            "const o = document.getElementById('mainline'); return o.dataset.pos === arguments[0] && o.dataset.moves",
            best))
        st, ml = page.api("/api/oware/mainline", pos=best)
        ok(got == " ".join(m["move"] for m in ml["line"]), "the mainline as GET /api/oware/mainline",
           f"{got} != {ml['line']}")
        page.el("#mainline-box summary").click()

        # auto-play to the end of a small game
        small = "1,0,0/0,0,1/A/0-0/-"
        page.open(f"?rules=oware&pos={small}")
        page.analysed(small)
        page.el("#auto").click()
        over = page.wait(lambda: page.text("#status").startswith("Game over"), 40)
        n_moves = len(page.els("#game button")) - 1
        ok(over and n_moves >= 1 and page.el("#auto").get_attribute("aria-pressed") == "false",
           f"auto-play plays both sides to the end ({n_moves} moves)", page.text("#status"))

        # a game against sow, the values hidden (from a permalink)
        page.open(f"?rules=oware&pos={pos}&sow=B&hide=1")
        page.analysed(pos)
        ok(Select(page.el("#sow-side")).first_selected_option.get_attribute("value") == "B" and
           page.el("#hide-values").is_selected(), "?sow=B&hide=1 sets sow to play B, values hidden")
        hidden = page.js("""return [document.querySelectorAll('#board g.val').length,
            [...document.querySelectorAll('#moves tbody td')].filter(
                td => td.cellIndex > 0 && td.textContent).length,
            getComputedStyle(document.querySelector('.legend')).display,
            getComputedStyle(document.getElementById('mainline-box')).display]""")
        ok(hidden == [0, 0, "none", "none"] and "value" not in page.text("#status"),
           "hidden: no value on the board, in the table, the status, the legend or the mainline",
           f"{hidden} {page.text('#status')}")
        page.el('#board g.hole[data-hole="A5"]').click()
        st, a = page.api("/api/oware", pos=after)
        reply = next(m["pos"] for m in a["moves"] if m["move"] == a["best"])
        got = page.wait(lambda: page.shown() == reply and len(page.els("#game button")) == 3)
        ok(got and page.analysed(reply), f"after 5A sow answers for B with its best move {a['best']}",
           f"{page.shown()} {page.text('#game')}")
        href = urllib.parse.unquote(page.el("#permalink").get_attribute("href"))
        ok(href.endswith(f"?rules=oware&pos={reply}&sow=B&hide=1"), "the permalink keeps sow's side",
           href)
        page.el("#back").click()
        page.analysed(after)
        time.sleep(1.5)
        ok(page.shown() == after and len(page.els("#game button")) == 3,
           "walking back to B's move: sow does not play it again", page.text("#game"))
        page.el("#last").click()
        page.el("#hide-values").click()
        ok(page.wait(lambda: page.js("return document.body.dataset.analysed") == reply and
                     len(page.els("#board g.val")) > 0 and "value" in page.text("#status")),
           "unhidden: the values are back", page.text("#status"))
        Select(page.el("#sow-side")).select_by_value("")

        # the rule-set selector
        Select(page.el("#rules")).select_by_value("awari")
        start = "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/-"
        shown = page.wait(lambda: page.shown() == start and "rules=awari" in page.js("return location.search"))
        ok(shown, "the rule-set selector starts an awari game", page.shown())
        Select(page.el("#pits")).select_by_value("3")
        ok(page.wait(lambda: page.shown() == "4,4,4/4,4,4/A/0-0/-"), "the board-size selector: 2x3",
           page.shown())

        # the editor
        page.open("?rules=darra&pos=1,1,1/1,1,1/A")
        page.analysed("1,1,1/1,1,1/A/0-0/-")
        page.el("#edit summary").click()
        page.el("#edit-empty").click()
        for hole, n in (("A1", "2"), ("B3", "1"), ("A3", "3")):
            e = page.el(f"#edit-{hole}")
            e.clear()
            e.send_keys(n)
        Select(page.el("#edit-side")).select_by_value("B")
        for who, n in (("A", "7"), ("B", "5")):
            e = page.el(f"#edit-store-{who}")
            e.clear()
            e.send_keys(n)
        Select(page.el("#edit-state")).select_by_value("A")
        edited = "2,0,3/0,0,1/B/7-5/A"
        ok(page.el("#edit-token").get_attribute("value") == edited, "the editor writes the token",
           page.el("#edit-token").get_attribute("value"))
        page.el("#edit-apply").click()
        ok(page.analysed(edited), "an edited position is set and analysed", page.shown())
        why = table_agrees(page, "darra", edited)
        ok(not why, "its values as the API answers", why)
        e = page.el("#edit-token")
        e.clear()
        e.send_keys("9,9/9")
        page.el("#edit-apply").click()
        msg = page.wait(lambda: page.text("#edit-error"))
        ok(msg and "position" in msg and page.shown() == edited, "a bad position is refused, with why",
           msg)
        page.el("#edit summary").click()

        # OGN: import an oware game, export it back
        toks, final = ogn_record(page, 14, 7)
        st, fa = page.api("/api/oware/moves", pos=final)
        record = ('[Variant "Oware Abapa"]\n[Event "sow test"]\n[Site "?"]\n[Date "2026.12.05"]\n'
                  '[Round "?"]\n[South "Ann"]\n[North "Bob"]\n[Result "*"]\n\n' + " ".join(toks) + "\n")
        page.open(f"?rules=oware&pos={small}")
        page.analysed(small)
        page.el("#ogn-box summary").click()
        page.el("#ogn-text").clear()
        page.js("document.getElementById('ogn-text').value = arguments[0]", record)
        page.el("#ogn-import").click()
        msg = page.wait(lambda: (page.text("#ogn-error") or "").startswith("imported") and page.text("#ogn-error"))
        ok(msg == "imported: oware 2x6, 14 moves" and page.analysed(final),
           "an OGN game is imported and shown at its end", f"{msg} {page.text('#ogn-error')} {page.shown()}")
        page.el("#ogn-export").click()
        out = page.el("#ogn-text").get_attribute("value")
        lines = out.split("\n")
        head = [ln for ln in lines if ln.startswith("[")]
        body = " ".join(ln for ln in lines if ln and not ln.startswith("[")).split()
        ok(head[:8] == ['[Variant "Oware Abapa"]', '[Event "sow test"]', '[Site "?"]',
                        '[Date "2026.12.05"]', '[Round "?"]', '[South "Ann"]', '[North "Bob"]',
                        '[Result "*"]'] and len(head) == 8,
           "the export keeps the tags, in Aualé's order", out)
        ok(body == toks and all(len(ln) < 80 for ln in lines),
           "the export writes the moves as read (numbers, letters, captures, comments)",
           f"{body}\n!=\n{toks}")
        href = page.el("#ogn-download").get_attribute("href")
        ok(href.startswith("blob:"), "the export can be downloaded", href)

        # OGN: jerin 2x4 from a FEN, sow's move names; and a bad record
        fen = "2,3,1,2/1,2,2,3/A/0-0/-"
        jerin = (f'[Variant "jerin"]\n[Board "2x4"]\n[FEN "{fen}"]\n\n'
                 '1. 2A 2B+4 2. 4A 1B *\n')
        page.el("#ogn-text").clear()
        page.js("document.getElementById('ogn-text').value = arguments[0]", jerin)
        page.el("#ogn-import").click()
        msg = page.wait(lambda: (page.text("#ogn-error") or "").startswith("imported") and page.text("#ogn-error"))
        pos = fen
        for mv in ("2A", "2B", "4A", "1B"):
            st, lg = page.api("/api/jerin/moves", pos=pos)
            pos = next(m["pos"] for m in lg["moves"] if m["move"] == mv)
        ok(msg == "imported: jerin 2x4, 4 moves" and page.shown() == pos and
           Select(page.el("#rules")).first_selected_option.get_attribute("value") == "jerin",
           "a jerin record with its board size and sow's move names", f"{msg} {page.shown()} {pos}")
        page.el("#ogn-export").click()
        out = page.el("#ogn-text").get_attribute("value")
        ok('[Variant "jerin"]' in out and '[Board "2x4"]' in out and f'[FEN "{fen}"]' in out and
           "\n1. 2A 2B+4 2. 4A 1B\n" in out, "its export: Variant, Board, FEN, sow's names", out)
        page.el("#ogn-text").clear()
        page.js("document.getElementById('ogn-text').value = arguments[0]", "1. G\n")
        page.el("#ogn-import").click()
        msg = page.wait(lambda: "not a hole" in (page.text("#ogn-error") or "") and page.text("#ogn-error"))
        ok(msg == "1:4: move 1 'G': not a hole of oware 2x6 (A..F, a..f)" and page.shown() == pos,
           "a bad record is refused with its line and column", msg)

        # the page's OGN writer against sow's own (sow play --ogn), where sow has it
        if "--ogn" in subprocess.run([SOW, "play", "--help"], capture_output=True, text=True).stdout:
            rng, recs = random.Random(5), []
            for k in range(40):
                rules = ["oware", "awari", "jodu", "jodu-ibadan", "jodu-starve", "odu", "jerin", "darra"][k % 8]
                pits, seeds = rng.choice([2, 3, 4, 6]), rng.choice([1, 2, 3, 4])
                st, a = page.api(f"/api/{rules}/moves", pits=pits, seeds=seeds)
                fen = a["pos"] if k % 3 == 0 else None
                moves, seen = [], [a["pos"]]
                for _ in range(rng.randint(1, 80)):
                    if not a["moves"]:
                        break
                    m = rng.choice(a["moves"])
                    moves.append(m["move"])
                    st, a = page.api(f"/api/{rules}/moves", pos=m["pos"])
                    if a["pos"] in seen:
                        break
                    seen.append(a["pos"])
                if not moves:
                    continue
                out = subprocess.run([SOW, "play", "--ogn", "--rules", rules, "--pits", str(pits), "--seeds",
                                      str(seeds), *([fen] if fen else []), *moves],
                                     capture_output=True, text=True, timeout=30)
                recs.append(out.stdout)
            got = page.d.execute_async_script("""
                const [recs, done] = arguments;
                const legal = async (rules, pos, pits, seeds) => {
                  const q = new URLSearchParams(pos ? {pos} : {pits, seeds});
                  const r = await fetch(`api/${rules}/moves?${q}`);
                  const j = await r.json();
                  if (!r.ok) throw new Error(j.error);
                  return j;
                };
                (async () => {
                  const out = [];
                  for (const t of recs) {
                    try { out.push(SowOGN.write(await SowOGN.replay(SowOGN.parse(t), {legal}))); }
                    catch (e) { out.push("error: " + e.message); }
                  }
                  done(out);
                })();""", recs)
            diff = [f"{a}---\n{b}" for a, b in zip(recs, got) if a != b]
            ok(len(recs) >= 30 and not diff,
               f"{len(recs)} records of sow play --ogn read and written back byte for byte", "\n".join(diff[:3]))
        else:
            ok(True, "# SKIP sow play has no --ogn: the writers are not compared")

        # nothing went wrong in the page, and a phone's width does not scroll sideways
        # (the 400 of the bad position above is the one error expected)
        logs = [e for e in page.d.get_log("browser") if e.get("level") == "SEVERE" and not
                (e.get("source") == "network" and "status of 400" in e.get("message", ""))]
        ok(not logs, "no error in the browser's console", "\n".join(str(e) for e in logs))
        page.d.set_window_size(390, 844)
        page.open(f"?rules=jerin&pos={pos}")
        page.analysed(pos)
        w = page.js("return [document.documentElement.scrollWidth, window.innerWidth]")
        ok(w[0] <= w[1], "a phone's width: no sideways scrolling", w)

        if SHOT:
            page.d.set_window_size(1100, 700)
            shot = "2,0,1,1,1,2/0,2,1,0,0,0/A/16-22/-"
            page.open(f"?rules=oware&pos={shot}")
            page.analysed(shot)
            page.el("#mainline-box summary").click()
            page.wait(lambda: page.js("return document.getElementById('mainline').dataset.pos") == shot)
            page.d.save_screenshot(SHOT)
            print(f"# screenshot: {SHOT}")
    except Exception as e:  # a step that could not run: one failure, then the count
        ok(False, f"the steps ran to the end ({type(e).__name__})", str(e))
    finally:
        if page:
            page.d.quit()
        srv.kill()
        srv.wait(10)
        shutil.rmtree(work, ignore_errors=True)
        print(f"1..{n_tests}", flush=True)


if __name__ == "__main__":
    main()
    sys.exit(1 if failed or n_tests == 0 else 0)
