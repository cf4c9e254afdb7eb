#!/usr/bin/env bash
# Distributed table builds (docs/distributed.md): level files built by
# `mpirun -np R sow tables build` on loopback ranks must be byte-identical to
# the single-process build, with both distributed builders (stored edges,
# "fast", and unmoves, "lean"); a rank killed mid-level (or while the ranks
# write the level file) must fail the whole job with no level file, the
# rerun resuming; Ctrl-C through scripts/sow-mpirun must end the job with
# status 130, the same way.
# Usage: tests/mpi/run.sh SOW_BINARY   (built with -Dmpi=enabled)
#
# The matrix the issue names (SOW_MPI_FULL=1; CI runs a cut of it, below;
# the times: docs/distributed.md "Tests"): every rule set, 2x6 levels 0..12
# and the whole 2x3 game (levels 0..24), each with 1..4 ranks x 1..2
# threads, stored edges ("fast"); the
# lean builder where it applies (oware, awari, darra) with the same pairs on
# SOW_MPI_LEAN=all, by default on a spread (half the pairs on each board, the
# other half on the other board: each rule set sees all 8); on each board
# half of the fast builds with the lower levels owned (each rank its slice,
# probes batched by owner), the other half mapped, the halves swapped between
# the boards; lean: owned with 2 threads.  One
# single-process reference per rule set and board.  Checks run
# SOW_MPI_JOBS at a time (default 3: oversubscribed ranks spend much of a
# superstep waiting for a core, which another job can use).
# CI (SOW_MPI_FULL unset): the whole 2x3 part, and 2x6 with SOW_MPI_SIX
# (default 2) of the 8 pairs per rule set, every pair met that many times
# over the rule sets (98 builds instead of 152).
# SOW_MPI_RANKS, SOW_MPI_THREADS and SOW_MPI_RULES narrow the matrix
# ("2 4", "2", "oware"); SOW_MPI_LOWER=owned|mapped forces the lower levels.
set -euo pipefail
SOW=$(realpath "${1:?usage: tests/mpi/run.sh SOW_BINARY}")
WRAP=$(realpath "$(dirname "$0")/../../scripts/sow-mpirun")
command -v mpirun >/dev/null || { echo "tests/mpi: mpirun not found (openmpi-bin)"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# Ranks outnumber the cores here: idle ranks and OpenMP threads yield
# instead of spinning (spinning makes oversubscribed runs 5-10x slower).
export OMP_WAIT_POLICY=passive
# SOW_MPI_TEST_PIECE: owned lower levels' probes in batches of this many own
# entries (default 2^22), small here so that levels of 2x3 >= 20 and 2x6 >= 10
# take several batches.
export SOW_MPI_TEST_PIECE=20000
FORCE_LOWER=${SOW_MPI_LOWER:-}
export SOW_MPI_LOWER=
MPIOPT=(--oversubscribe --allow-run-as-root --mca mpi_yield_when_idle 1 -x OMP_WAIT_POLICY
    -x SOW_MPI_LOWER -x SOW_MPI_TEST_PIECE)
MPI=(mpirun "${MPIOPT[@]}")
RULES=(${SOW_MPI_RULES:-oware awari jodu jodu-ibadan jodu-starve odu jerin darra})
RANKS=(${SOW_MPI_RANKS:-1 2 3 4})
THREADS=(${SOW_MPI_THREADS:-1 2})
JOBS=${SOW_MPI_JOBS:-3}
fails=0
ok() { echo "ok - $* (${SECONDS}s)"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
lean_ok() { case $1 in oware | awari | darra) return 0 ;; esac; return 1; }

# same REF DIR [N]: DIR holds N level files (default: as many as REF), each
# byte for byte REF's file of the same name
same() {
    local a=$1 b=$2 f
    [ "$(ls "$b" | wc -l)" -eq "${3:-$(ls "$a" | wc -l)}" ] || return 1
    for f in "$b"/*; do cmp -s "$f" "$a/$(basename "$f")" || return 1; done
}

ref() { # ref RULES PITS SEEDS: the single-process reference directory
    local d="$T/ref-$1-$2-$3"
    [ -d "$d" ] || "$SOW" tables build --rules "$1" --pits "$2" --seeds "$3" --dir "$d" \
        --threads 2 >/dev/null 2>&1
    echo "$d"
}

# check RULES PITS SEEDS RANKS THREADS BUILDER [LOWER]: the ranks' files
# against the reference (built already)
check() {
    local r=$1 p=$2 s=$3 np=$4 th=$5 b=$6 low=${7:-}
    local refd="$T/ref-$r-$p-$s" out="$T/mpi-$r-$p-$s-$np-$th-$b" what t0=$SECONDS
    what="$r 2x$p levels 0..$s, $np ranks x $th threads, $b${low:+, $low lower levels}"
    if SOW_MPI_LOWER=$low "${MPI[@]}" -np "$np" "$SOW" tables build --rules "$r" --pits "$p" \
        --seeds "$s" --dir "$out" --threads "$th" --builder "$b" >"$out.log" 2>&1 &&
        same "$refd" "$out"; then
        times >"$out.t" # this check's subshell: its children's CPU is the job's
        ok "$what: byte-identical in $((SECONDS - t0)) s, $(cpu_of "$out.t") CPU s, at"
    else
        bad "$what"
        tail -5 "$out.log"
    fi
    rm -rf "$out" "$out.log" "$out.t"
}

# cpu_of FILE: user + system seconds of the children in bash's `times` output
cpu_of() {
    tail -1 "$1" | tr 'ms' '  ' | awk '{printf "%.2f", $1 * 60 + $2 + $3 * 60 + $4}'
}

# The matrix, as lines of check's arguments.  CI (SOW_MPI_FULL unset):
# 2x6 levels 0..12 with SIX of the 8 (ranks, threads) pairs per rule set,
# rule set i the pairs i .. i + SIX - 1 (pair k: k % 4 + 1 ranks, k / 4 + 1
# threads), so that each pair is met SIX times over the 8 rule sets, lean
# on those pairs too where it applies.
SIX=${SOW_MPI_SIX:-2}
ALLRULES=(oware awari jodu jodu-ibadan jodu-starve odu jerin darra)
list=()
for r in "${RULES[@]}"; do
    i=0
    while [ "${ALLRULES[$i]}" != "$r" ]; do i=$((i + 1)); done
    for bd in "6 12" "3 24"; do
        set -- $bd
        p=$1 s=$2
        for th in "${THREADS[@]}"; do
            for np in "${RANKS[@]}"; do
                k=$(((th - 1) * 4 + np - 1))
                cut=0
                [ "${SOW_MPI_FULL:-0}" = 1 ] || [ "$p" = 3 ] || [ $(((k - i + 8) % 8)) -lt "$SIX" ] || continue
                [ "${SOW_MPI_FULL:-0}" = 1 ] || [ "$p" = 3 ] || cut=1
                # fast: lower levels owned on half the pairs, the other half
                # on the other board
                low=$FORCE_LOWER
                [ -n "$low" ] || { [ $(((np + th + (p == 6)) % 2)) = 1 ] && low=owned || low=mapped; }
                list+=("$r $p $s $np $th fast $low")
                lean_ok "$r" || continue
                # lean: every pair (SOW_MPI_LEAN=all: the lower levels the
                # other way than fast's), or the spread: half the pairs on
                # each board, the other half on the other board (each rank
                # count once per thread count), owned with 2 threads
                if [ "${SOW_MPI_LEAN:-}" = all ] || [ $cut = 1 ]; then
                    [ -n "$FORCE_LOWER" ] || { [ $low = owned ] && low=mapped || low=owned; }
                elif [ $(((np + th + (p == 3)) % 2)) = 0 ]; then
                    [ -n "$FORCE_LOWER" ] || { [ "$th" = 2 ] && low=owned || low=mapped; }
                else
                    continue
                fi
                list+=("$r $p $s $np $th lean $low")
            done
        done
    done
done

# References first (2 at a time: one process's build is mostly serial at
# these sizes), then the checks, JOBS at a time, each writing its lines to a
# file; the lines are printed in the matrix's order.
refs=$( (for l in "${list[@]}"; do set -- $l; echo "$1 $2 $3"; done
    echo "oware 6 8"; echo "oware 6 12") | sort -u)
while read -r a b c; do
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
    ref "$a" "$b" "$c" >/dev/null &
done <<<"$refs"
wait
echo "# ${#list[@]} distributed builds; references ready (${SECONDS}s)"
i=0
for l in "${list[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
    check $l >"$T/res.$i" 2>&1 &
    i=$((i + 1))
done
wait
for ((j = 0; j < i; j++)); do
    cat "$T/res.$j"
    if grep -q '^not ok' "$T/res.$j"; then fails=$((fails + 1)); fi
done

# A rank killed (SIGKILL) in the middle of level 6: the job fails, levels
# 0..5 are complete and nothing of level 6 (nor a temp file) is left; the
# rerun (the other builder, another rank count, the lower levels read into
# owned slices) resumes from level 6 and ends byte-identical to the reference.
d="$T/kill"
r8="$T/ref-oware-6-8"
if SOW_MPI_TEST_KILL=1:6 "${MPI[@]}" -x SOW_MPI_TEST_KILL -np 3 "$SOW" tables build \
    --seeds 8 --dir "$d" >"$T/log" 2>&1; then
    bad "killed rank: the job succeeded"
elif [ "$(ls -A "$d" | grep -v lock | wc -l)" -ne 6 ] || ls -A "$d" | grep -q -e '-006' -e tmp; then
    bad "killed rank: left $(ls -A "$d" | tr '\n' ' ')"
else
    ok "killed rank: the job failed, levels 0..5 kept, no level 6 file"
fi
if SOW_MPI_LOWER=owned "${MPI[@]}" -np 2 "$SOW" tables build --seeds 8 --dir "$d" \
    --builder lean >"$T/log" 2>&1 && grep -q "level   5: present" "$T/log" && same "$r8" "$d"; then
    ok "rerun after the kill (lean, owned lower levels) resumed at level 6: byte-identical"
else
    bad "rerun after the kill"; tail -5 "$T/log"
fi

# A rank killed while the ranks write level 7's file (its temporary file
# exists, this rank has not written its slice): the job fails, no level 7
# file; a temporary file may stay (as when one process is killed while
# writing), which the rerun removes before it writes level 7 again.
d="$T/killw"
if SOW_MPI_TEST_KILL=2:7:w "${MPI[@]}" -x SOW_MPI_TEST_KILL -np 3 "$SOW" tables build \
    --seeds 8 --dir "$d" --builder lean >"$T/log" 2>&1; then
    bad "rank killed in the write: the job succeeded"
elif [ "$(ls "$d" | grep -c 'sowtb$')" -ne 7 ] || ls "$d" | grep -q -e '-007.sowtb$'; then
    bad "rank killed in the write: left $(ls -A "$d" | tr '\n' ' ')"
else
    left=$(ls "$d" | grep -c tmp || true)
    ok "rank killed in the write: the job failed, levels 0..6 kept, no level 7 file ($left temporary file left)"
fi
if "${MPI[@]}" -np 2 "$SOW" tables build --seeds 8 --dir "$d" --threads 2 >"$T/log" 2>&1 &&
    grep -q "level   6: present" "$T/log" && ! ls -A "$d" | grep -q tmp && same "$r8" "$d"; then
    ok "rerun after the kill in the write resumed at level 7, no temporary file: byte-identical"
else
    bad "rerun after the kill in the write"; tail -5 "$T/log"
fi

# Ctrl-C (SIGINT to scripts/sow-mpirun, as a terminal sends it) once level 9
# is on disk: the job exits 130, no temporary or partial level file; the
# rerun resumes and ends byte-identical.
d="$T/intr"
r12="$T/ref-oware-6-12"
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
elif ! cmp -s "$r12/oware-2x6-009.sowtb" "$d/oware-2x6-009.sowtb"; then
    bad "Ctrl-C: level 9 differs"
else
    ok "Ctrl-C: exit 130, levels 0..$((kept - 1)) kept, no temporary file"
fi
if "${MPI[@]}" -np 3 "$SOW" tables build --seeds 12 --dir "$d" --threads 2 --builder fast \
    >"$T/log" 2>&1 &&
    grep -q "level   9: present" "$T/log" && same "$r12" "$d"; then
    ok "rerun after Ctrl-C (3 ranks x 2 threads, fast) resumed: byte-identical"
else
    bad "rerun after Ctrl-C"; tail -5 "$T/log"
fi
times >"$T/times"
echo "# ${SECONDS} s wall, $(cpu_of "$T/times") CPU s (every rank and reference build)"
[ "$fails" -eq 0 ] && echo "tests/mpi: all passed" || { echo "tests/mpi: $fails failed"; exit 1; }
