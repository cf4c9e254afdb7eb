#!/usr/bin/env bash
# The engine against an earlier commit's engine, as a player gets each: both
# run as `sow engine` (cmd: players, so the old one needs no code of now),
# each with its own defaults; the new one also with the tables a player
# builds (`sow tables build --seeds 24 && sow tables compress`, README; in
# odu and jerin also the solved start's solution file), the old one with
# none.  1 s of wall time a move, one thread each, one game a core at once
# (one engine thinks in each game), colour-swapped pairs of balanced
# openings.  docs/engine.md "Matches".
#
# Resumable, across sessions and machines: the games go to OUT as they end,
# and a later run (any commit) plays only the games OUT lacks.  The players'
# commands are the same text on every run (relative to WORK), the openings a
# file kept beside OUT (made by the first run), so the header and openings
# match; each run's header line names the commit that played.  Ctrl-C stops
# the match (exit 130) with every finished game kept.  A complete match is
# then counted the second way, by bench/recount.py (every game replayed).
#
# usage: bench/vs-old.sh RULES [SOW_BINARY]
#   BASE=10a932c      the old commit (built once into WORK with meson)
#   GAMES=400         games in all (even)
#   TABLES=24         the new engine's tables: levels 0..TABLES of RULES,
#                     built and compressed into WORK once (TABLES=none: none)
#   TIME=1000         ms a move
#   CONCURRENCY=2     games at once: one a core (one engine thinks in each game)
#   WORK=~/.cache/sow-vs-old   binaries, tables, the old commit's build
#   OUT=bench/results/vs-$BASE-$RULES-${TIME}ms.txt   the games
#   OPEN=${OUT%.txt}-openings.txt   the openings (made by the first run if absent;
#                     an earlier match's file replays its openings)
# Cost at 1 s a move, two games at once: oware about 110 games an hour, awari
# about 95 (games of 125 plies), so 400 games take 4 hours or more of two
# cores; CONCURRENCY=8 on 8 free cores plays them four times as fast.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RULES=${1:?usage: bench/vs-old.sh RULES [SOW_BINARY]}
SOW=$(realpath "${2:-build/src/cli/sow}")
BASE=${BASE:-10a932c}
GAMES=${GAMES:-400}
TABLES=${TABLES:-24}
TIME=${TIME:-1000}
CONCURRENCY=${CONCURRENCY:-2}
WORK=${WORK:-$HOME/.cache/sow-vs-old}
OUT=$(realpath -m "${OUT:-bench/results/vs-$BASE-$RULES-${TIME}ms.txt}")
OPEN=$(realpath -m "${OPEN:-${OUT%.txt}-openings.txt}")
mkdir -p "$WORK"

# The old engine: its commit's source in a worktree, built without the
# parts it does not need here, the binary kept and the worktree removed.
old=$WORK/sow-$BASE
if [ ! -x "$old" ]; then
    src=$WORK/src-$BASE
    [ ! -e "$src" ] || git worktree remove --force "$src" 2>/dev/null || rm -rf "$src"
    git worktree prune # (a build stopped before: its worktree)
    git worktree add --detach "$src" "$BASE" >&2
    (cd "$src" && meson setup buildo -Dbuildtype=release -Dtests=disabled -Dmpi=disabled \
        -Dpython=disabled >&2 && ninja -C buildo >&2)
    cp "$src/buildo/src/cli/sow" "$old.tmp" && mv "$old.tmp" "$old"
    git worktree remove --force "$src"
fi
cp "$SOW" "$WORK/sow-new.tmp" && mv "$WORK/sow-new.tmp" "$WORK/sow-new"

# The new engine's tables (a build resumes and skips the levels present).
tb="env -u SOW_TABLES" # (WORK has no ./tables: no tables)
if [ "$TABLES" != none ]; then
    "$SOW" tables build --rules "$RULES" --seeds "$TABLES" --dir "$WORK/tables-$RULES" >&2
    "$SOW" tables compress --rules "$RULES" --dir "$WORK/tables-$RULES" >&2
    tb="env SOW_TABLES=tables-$RULES"
    # odu and jerin: their solved start (about a minute on 2 threads,
    # docs/solutions.md) as its solution file in the tables directory, where
    # the engine finds it
    sol=$WORK/tables-$RULES/$RULES-2x6-048.sowsol
    case $RULES in odu | jerin)
        [ -s "$sol" ] || "$SOW" solve --rules "$RULES" --threads 2 --save "$sol" >&2 ;;
    esac
fi

# The openings, once: the match's own balanced openings for GAMES games,
# saved (a one-ply match of the greedy player makes them at once).
if [ ! -s "$OPEN" ]; then
    "$SOW" match --rules "$RULES" --games "$GAMES" --a greedy --b greedy --max-plies 1 \
        --save-openings "$OPEN.tmp" >/dev/null
    mv "$OPEN.tmp" "$OPEN"
fi

resume=()
[ -s "$OUT" ] && resume=(--resume)
cd "$WORK" # the players' commands relative to here, the same on every run
"$SOW" match --rules "$RULES" --games "$GAMES" --concurrency "$CONCURRENCY" --time "$TIME" \
    --openings "$OPEN" --a "cmd:$tb ./sow-new engine" \
    --b "cmd:env -u SOW_TABLES ./sow-$BASE engine" --out "$OUT" "${resume[@]}"
# The match complete: its file counted the second way (every game replayed)
echo "== bench/recount.py $OUT"
python3 "$ROOT/bench/recount.py" "$OUT" --openings "$OPEN" --sow "$SOW"
