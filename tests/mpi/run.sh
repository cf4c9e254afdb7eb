#!/usr/bin/env bash
# Distributed table builds (docs/distributed.md): level files built by
# `mpirun -np R sow tables build` on loopback ranks must be byte-identical to
# the single-process build, with both distributed builders (stored edges,
# "fast", and unmoves, "lean"); a rank killed mid-level must fail the whole
# job with no partial level file, the rerun resuming; Ctrl-C through
# scripts/sow-mpirun must end the job with status 130, the same way.
# Usage: tests/mpi/run.sh SOW_BINARY   (built with -Dmpi=enabled)
#
# CI (default; the step's time is in docs/distributed.md "Tests"): the 8
# (ranks, threads) pairs of 1..4 ranks x 1..2 threads are dealt to the 8 rule
# sets in turn, each rule set building its whole 2x3 game (levels 0..24) and
# 2x6 levels 0..8 with two different pairs, half of the 2x3 games with owned
# lower levels; the lean builder on the rule sets it handles; oware 2x6
# levels 0..12 (lean with owned lower levels; and lean then fast around a
# Ctrl-C); a killed rank.
# SOW_MPI_FULL=1: the whole matrix the issue names (every rule set, 2x6 up to
# 12 seeds and whole 2x3 games, 1..4 ranks x 1..2 threads, fast and lean
# where lean applies): long, run by hand; SOW_MPI_RANKS, SOW_MPI_THREADS and
# SOW_MPI_RULES narrow it ("2 4", "2", "oware"), SOW_MPI_FULL_LOWER=owned
# runs it with owned lower levels.
set -euo pipefail
SOW=$(realpath "${1:?usage: tests/mpi/run.sh SOW_BINARY}")
WRAP=$(realpath "$(dirname "$0")/../../scripts/sow-mpirun")
command -v mpirun >/dev/null || { echo "tests/mpi: mpirun not found (openmpi-bin)"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# Ranks outnumber the cores here: idle ranks and OpenMP threads yield
# instead of spinning (spinning makes oversubscribed runs 5-10x slower).
export OMP_WAIT_POLICY=passive
# SOW_MPI_LOWER=owned: lower levels kept as slices by their owners, the
# probes batched by owner (docs/distributed.md); unset or empty: the default.
# SOW_MPI_TEST_PIECE: owned lower levels' probes in batches of this many own
# entries (default 2^22), small here so that levels of 2x3 >= 20 and 2x6 >= 10
# take several batches.
export SOW_MPI_LOWER= SOW_MPI_TEST_PIECE=20000
MPIOPT=(--oversubscribe --allow-run-as-root --mca mpi_yield_when_idle 1 -x OMP_WAIT_POLICY
    -x SOW_MPI_LOWER -x SOW_MPI_TEST_PIECE)
MPI=(mpirun "${MPIOPT[@]}")
RULES=(oware awari jodu jodu-ibadan jodu-starve odu jerin darra)
fails=0
ok() { echo "ok - $* (${SECONDS}s)"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
lean_ok() { case $1 in oware | awari | darra) return 0 ;; esac; return 1; }

# same: every level file of DIR_A is in DIR_B, byte for byte, and no more
same() {
    local a=$1 b=$2 f
    [ "$(ls "$a" | wc -l)" -eq "$(ls "$b" | wc -l)" ] || return 1
    for f in "$a"/*; do cmp -s "$f" "$b/$(basename "$f")" || return 1; done
}

# check RULES PITS SEEDS RANKS THREADS [BUILDER [LOWER]]: the ranks' files
# against the single-process reference (built once per rule set and board)
check() {
    local r=$1 p=$2 s=$3 np=$4 th=$5 b=${6:-auto} low=${7:-}
    local ref="$T/ref-$r-$p-$s" out="$T/mpi-$r-$p-$s-$np-$th-$b"
    [ -d "$ref" ] || "$SOW" tables build --rules "$r" --pits "$p" --seeds "$s" --dir "$ref" \
        --threads 2 >/dev/null 2>&1
    if SOW_MPI_LOWER=$low "${MPI[@]}" -np "$np" "$SOW" tables build --rules "$r" --pits "$p" \
        --seeds "$s" --dir "$out" --threads "$th" --builder "$b" >"$T/log" 2>&1 &&
        same "$ref" "$out"; then
        ok "$r 2x$p levels 0..$s, $np ranks x $th threads, $b${low:+, $low lower levels}: byte-identical"
    else
        bad "$r 2x$p levels 0..$s, $np ranks x $th threads, $b${low:+, $low lower levels}"
        tail -5 "$T/log"
    fi
    rm -rf "$out"
}

if [ "${SOW_MPI_FULL:-0}" = 1 ]; then
    for r in ${SOW_MPI_RULES:-${RULES[@]}}; do
        for np in ${SOW_MPI_RANKS:-1 2 3 4}; do
            for th in ${SOW_MPI_THREADS:-1 2}; do
                for b in fast lean; do
                    [ $b = fast ] || lean_ok "$r" || continue
                    check "$r" 6 12 "$np" "$th" $b ${SOW_MPI_FULL_LOWER:-}
                    check "$r" 3 24 "$np" "$th" $b ${SOW_MPI_FULL_LOWER:-}
                done
            done
        done
    done
else
    i=0
    for r in "${RULES[@]}"; do
        # pair k = (k % 4 + 1 ranks, k / 4 + 1 threads): rule set i gets
        # pairs i (2x3) and i + 3 (2x6), so both boards see all 8 pairs
        # pairs i (2x3) and i + 3 (2x6), so both boards see all 8 pairs;
        # odd i: the 2x3 game with owned lower levels
        a=$i c=$(((i + 3) % 8)) low=
        [ $((i % 2)) = 1 ] && low=owned
        check "$r" 3 24 $((a % 4 + 1)) $((a / 4 + 1)) fast $low
        check "$r" 6 8 $((c % 4 + 1)) $((c / 4 + 1)) fast
        if lean_ok "$r"; then
            check "$r" 3 24 $(((a + 1) % 4 + 1)) $(((a + 5) / 4 % 2 + 1)) lean $low
        fi
        i=$((i + 1))
    done
    # (2x6 levels 0..12 with stored edges: the Ctrl-C case's rerun below)
    check oware 6 12 3 2 lean owned
fi

# A rank killed (SIGKILL) in the middle of level 6: the job fails, levels
# 0..5 are complete and nothing of level 6 (nor a temp file) is left; the
# rerun (the other builder, another rank count, the lower levels read into
# owned slices) resumes from level 6 and ends byte-identical to the reference.
d="$T/kill"
ref="$T/ref-oware-6-8"
[ -d "$ref" ] || "$SOW" tables build --rules oware --seeds 8 --dir "$ref" --threads 2 >/dev/null 2>&1
if SOW_MPI_TEST_KILL=1:6 "${MPI[@]}" -x SOW_MPI_TEST_KILL -np 3 "$SOW" tables build \
    --seeds 8 --dir "$d" >"$T/log" 2>&1; then
    bad "killed rank: the job succeeded"
elif [ "$(ls -A "$d" | grep -v lock | wc -l)" -ne 6 ] || ls -A "$d" | grep -q -e '-006' -e tmp; then
    bad "killed rank: left $(ls -A "$d" | tr '\n' ' ')"
else
    ok "killed rank: the job failed, levels 0..5 kept, no level 6 file"
fi
if SOW_MPI_LOWER=owned "${MPI[@]}" -np 2 "$SOW" tables build --seeds 8 --dir "$d" \
    --builder lean >"$T/log" 2>&1 && grep -q "level   5: present" "$T/log" && same "$ref" "$d"; then
    ok "rerun after the kill (lean, owned lower levels) resumed at level 6: byte-identical"
else
    bad "rerun after the kill"; tail -5 "$T/log"
fi

# Ctrl-C (SIGINT to scripts/sow-mpirun, as a terminal sends it) once level 9
# is on disk: the job exits 130, no temporary or partial level file; the
# rerun resumes and ends byte-identical.
d="$T/intr"
ref="$T/ref-oware-6-12"
[ -d "$ref" ] || "$SOW" tables build --rules oware --seeds 12 --dir "$ref" --threads 2 >/dev/null 2>&1
set -m # a background job that can be sent SIGINT
# env --default-signal: a shell started with SIGINT ignored (a background
# job of a non-interactive shell, as CI may run this) passes that on, and a
# script cannot trap a signal ignored at its entry; a terminal's never is.
env --default-signal=INT "$WRAP" "${MPIOPT[@]}" -np 2 "$SOW" tables build --seeds 12 --dir "$d" --threads 1 \
    --builder lean >"$T/log" 2>&1 &
pid=$!
set +m
for _ in $(seq 600); do [ -e "$d/oware-2x6-009.sowtb" ] && break; sleep 0.1; done
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
kept=$(ls "$d" | grep -c 'sowtb$' || true)
if [ "$rc" -ne 130 ]; then
    bad "Ctrl-C: exit status $rc, not 130"; tail -5 "$T/log"
elif ls -A "$d" | grep -q tmp || [ "$kept" -ge 13 ]; then
    bad "Ctrl-C: left $(ls -A "$d" | tr '\n' ' ')"
elif ! cmp -s "$ref/oware-2x6-009.sowtb" "$d/oware-2x6-009.sowtb"; then
    bad "Ctrl-C: level 9 differs"
else
    ok "Ctrl-C: exit 130, levels 0..$((kept - 1)) kept, no temporary file"
fi
if "${MPI[@]}" -np 3 "$SOW" tables build --seeds 12 --dir "$d" --threads 2 --builder fast \
    >"$T/log" 2>&1 &&
    grep -q "level   9: present" "$T/log" && same "$ref" "$d"; then
    ok "rerun after Ctrl-C (3 ranks x 2 threads, fast) resumed: byte-identical"
else
    bad "rerun after Ctrl-C"; tail -5 "$T/log"
fi
[ "$fails" -eq 0 ] && echo "tests/mpi: all passed" || { echo "tests/mpi: $fails failed"; exit 1; }
