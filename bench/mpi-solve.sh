#!/usr/bin/env bash
# The exact solver across MPI ranks against one process: `sow solve --moves
# --work W --disk --save F` by one process, then by `mpirun -np R` for each R;
# per run the wall time, whether the printed lines (less the clocks) and the
# solution file are the same, and each rank's peak RSS (/usr/bin/time -o per
# rank).  docs/distributed.md "The exact solver across ranks".
# Usage: bench/mpi-solve.sh SOW RULES PITS SEEDS [RANKS...]   (default ranks: 1 2 3 4)
#   THREADS=T: --threads T for the one process and for each rank (default 1)
# e.g.   bench/mpi-solve.sh build/src/cli/sow odu 6 3
set -u
B=$(realpath "${1:?usage: bench/mpi-solve.sh SOW RULES PITS SEEDS [RANKS...]}")
r=${2:?rules} p=${3:?pits} s=${4:?seeds}
shift 4
if [ $# -gt 0 ]; then RANKS=("$@"); else RANKS=(1 2 3 4); fi
TH=${THREADS:-1}
# a rank's threads need cores of their own (OpenMPI binds a rank to one core
# where the ranks do not outnumber the cores)
BIND=()
[ "$TH" -gt 1 ] && BIND=(--bind-to none)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
shown() { grep -v -e '^time ' -e '^nodes/s ' "$1"; }
/usr/bin/time -f "%e s wall, %U s user, %M KB peak RSS" -o ref.t "$B" solve --rules "$r" --pits "$p" \
    --seeds "$s" --threads "$TH" --moves --work w --disk --save ref.sol >ref.out 2>ref.err
echo "$r 2x$p --seeds $s, $TH thread(s), one process: $(cat ref.t); value $(grep '^value' ref.out | awk '{print $3}'), $(grep '^nodes ' ref.out | awk '{print $3}') nodes, $(grep '^expanded' ref.out | awk '{print $3}') expanded; $(grep -o 'closure of .* bytes/position)' ref.err)"
for np in "${RANKS[@]}"; do
    rm -rf w rss.*
    t0=$(date +%s.%N)
    mpirun --oversubscribe --allow-run-as-root "${BIND[@]}" --mca mpi_yield_when_idle 1 -np "$np" sh -c \
        '/usr/bin/time -f "%M" -o rss.$OMPI_COMM_WORLD_RANK "$0" "$@"' "$B" solve --rules "$r" \
        --pits "$p" --seeds "$s" --threads "$TH" --moves --work w --disk --save "$np.sol" >"$np.out" 2>"$np.err"
    rc=$?
    t1=$(date +%s.%N)
    same=no
    diff <(shown ref.out) <(shown "$np.out") >/dev/null && cmp -s ref.sol "$np.sol" && same=yes
    echo "$r 2x$p --seeds $s, $np ranks: exit $rc, $(echo "$t1 - $t0" | bc | cut -c1-6) s wall, output and solution file identical: $same; peak RSS per rank (KB): $(for k in $(seq 0 $((np - 1))); do printf '%s ' "$(cat rss.$k)"; done); rank 0: $(grep -o 'closure of .* bytes/position)' "$np.err")"
done
