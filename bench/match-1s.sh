#!/usr/bin/env bash
# The engine's strength target: the engine at 1 s per move against the
# bounded mode (the threshold search) at 1 s per move, 100 games of oware
# (50 balanced openings, colours swapped), one thread each, two games at
# once.  --clock cpu: a move's second is the thinking thread's CPU time, so
# the result is an idle machine's whatever else runs (docs/engine.md,
# "Matches"); the match takes about 11,500 CPU seconds (games average ~115
# plies), i.e. 1.6 hours of two idle cores, longer on a shared machine.
#
# Resumable: the games are appended to the results file as they end; run
# the script again (any session, any commit whose engine and threshold
# search are the same) and it plays only the games the file lacks.  Each
# run's header line in the file names the commit that played.
#
# usage: bench/match-1s.sh [SOW_BINARY [GAMES_FILE]]
set -euo pipefail
cd "$(dirname "$0")/.."
SOW=${1:-build/src/cli/sow}
OUT=${2:-bench/results/match-oware-engine-vs-threshold-1s-cpu.txt}
resume=()
[ -s "$OUT" ] && resume=(--resume)
exec "$SOW" match --rules oware --a sow:time=1000 --b threshold:time=1000 --games 100 \
    --concurrency 2 --clock cpu --out "$OUT" "${resume[@]}"
