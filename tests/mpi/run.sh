#!/usr/bin/env bash
# Distributed table builds (docs/distributed.md): level files built by
# `mpirun -np R sow tables build` on loopback ranks must be byte-identical to
# the single-process build, and a rank killed mid-level must fail the whole
# job with no partial level file, the rerun resuming.
# Usage: tests/mpi/run.sh SOW_BINARY   (built with -Dmpi=enabled)
# SOW_MPI_FULL=1: the large matrix (every rule set with 1..4 ranks, 1 and 2
# threads, 2x6 up to 12 seeds and whole 2x3 games): long, run by hand;
# SOW_MPI_RANKS, SOW_MPI_THREADS and SOW_MPI_RULES narrow it ("2 4", "2", "oware").
set -euo pipefail
SOW=$(realpath "${1:?usage: tests/mpi/run.sh SOW_BINARY}")
command -v mpirun >/dev/null || { echo "tests/mpi: mpirun not found (openmpi-bin)"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
MPI=(mpirun --oversubscribe --allow-run-as-root --mca mpi_yield_when_idle 1)
RULES=(oware awari jodu jodu-ibadan jodu-starve odu jerin darra)
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }

# same: every level file of DIR_A is in DIR_B, byte for byte, and no more
same() {
    local a=$1 b=$2 f
    [ "$(ls "$a" | wc -l)" -eq "$(ls "$b" | wc -l)" ] || return 1
    for f in "$a"/*; do cmp -s "$f" "$b/$(basename "$f")" || return 1; done
}

# check RULES PITS SEEDS RANKS THREADS: the ranks' files against the reference
check() {
    local r=$1 p=$2 s=$3 np=$4 th=$5
    local ref="$T/ref-$r-$p-$s" out="$T/mpi-$r-$p-$s-$np-$th"
    [ -d "$ref" ] || "$SOW" tables build --rules "$r" --pits "$p" --seeds "$s" --dir "$ref" \
        --threads 1 >/dev/null 2>&1
    if "${MPI[@]}" -np "$np" "$SOW" tables build --rules "$r" --pits "$p" --seeds "$s" \
        --dir "$out" --threads "$th" >"$T/log" 2>&1 && same "$ref" "$out"; then
        ok "$r 2x$p levels 0..$s, $np ranks x $th threads: byte-identical"
    else
        bad "$r 2x$p levels 0..$s, $np ranks x $th threads"; tail -5 "$T/log"
    fi
    rm -rf "$out"
}

if [ "${SOW_MPI_FULL:-0}" = 1 ]; then
    for r in ${SOW_MPI_RULES:-${RULES[@]}}; do
        for np in ${SOW_MPI_RANKS:-1 2 3 4}; do
            for th in ${SOW_MPI_THREADS:-1 2}; do
                check "$r" 6 12 "$np" "$th"
                check "$r" 3 24 "$np" "$th"
            done
        done
    done
else
    # CI (seconds): oware with every rank count and both thread counts;
    # every other rule set with one rank count each, in turn, on 2x6 and 2x3.
    for np in 1 2 3 4; do for th in 1 2; do check oware 6 6 "$np" "$th"; done; done
    i=0
    for r in "${RULES[@]:1}"; do
        check "$r" 6 5 $((i % 4 + 1)) $((i % 2 + 1))
        check "$r" 3 8 $(((i + 2) % 4 + 1)) $(((i + 1) % 2 + 1))
        i=$((i + 1))
    done
fi

# A rank killed (SIGKILL) in the middle of level 6: the job fails, levels
# 0..5 are complete and nothing of level 6 (nor a temp file) is left; the
# rerun resumes from level 6 and ends byte-identical to the reference.
d="$T/kill"
ref="$T/ref-oware-6-8"
"$SOW" tables build --rules oware --seeds 8 --dir "$ref" --threads 1 >/dev/null 2>&1
if SOW_MPI_TEST_KILL=1:6 "${MPI[@]}" -x SOW_MPI_TEST_KILL -np 3 "$SOW" tables build \
    --seeds 8 --dir "$d" >"$T/log" 2>&1; then
    bad "killed rank: the job succeeded"
elif [ "$(ls "$d" | wc -l)" -ne 6 ] || ls "$d" | grep -q -e '-006' -e tmp; then
    bad "killed rank: left $(ls "$d" | tr '\n' ' ')"
else
    ok "killed rank: the job failed, levels 0..5 kept, no level 6 file"
fi
if "${MPI[@]}" -np 2 "$SOW" tables build --seeds 8 --dir "$d" >"$T/log" 2>&1 &&
    grep -q "level   5: present" "$T/log" && same "$ref" "$d"; then
    ok "rerun after the kill resumed at level 6: byte-identical"
else
    bad "rerun after the kill"; tail -5 "$T/log"
fi
[ "$fails" -eq 0 ] && echo "tests/mpi: all passed" || { echo "tests/mpi: $fails failed"; exit 1; }
