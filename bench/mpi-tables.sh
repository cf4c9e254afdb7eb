#!/usr/bin/env bash
# Distributed table builds (docs/distributed.md): time, bytes sent between
# ranks per position built and peak memory per rank, for 1, 2 and 4 ranks on
# this machine (loopback), against the single-process build.
# Usage: bench/mpi-tables.sh SOW_BINARY [SEEDS [RULES [THREADS]]]
#   (SOW_BINARY built with -Dmpi=enabled; defaults: 14 oware 1)
set -euo pipefail
SOW=$(realpath "${1:?usage: bench/mpi-tables.sh SOW_BINARY [SEEDS [RULES [THREADS]]]}")
SEEDS=${2:-14}
RULES=${3:-oware}
TH=${4:-1}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "# $RULES 2x6 levels 0..$SEEDS, $TH thread(s) per rank, $(nproc) cores, $(date -u +%FT%TZ)"
echo "# commit $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?')"
t0=$(date +%s.%N)
"$SOW" tables build --rules "$RULES" --seeds "$SEEDS" --threads "$TH" --dir "$T/ref" >/dev/null 2>&1
t1=$(date +%s.%N)
printf 'one process (no MPI): %.2f s\n' "$(echo "$t1 - $t0" | bc)"
# each rank gets its share of the default budget (3/4 of RAM) as --memory,
# as sow bench tables --mpi does and docs/distributed.md tells a cluster's
# user to (several ranks on one machine)
ram_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
for np in 1 2 4; do
    gb=$((ram_kb * 3 / 4 / 1000000 / np))
    [ "$gb" -ge 1 ] || gb=1
    t0=$(date +%s.%N)
    SOW_MPI_STATS=1 mpirun --oversubscribe --allow-run-as-root -x SOW_MPI_STATS -np "$np" \
        "$SOW" tables build --rules "$RULES" --seeds "$SEEDS" --threads "$TH" --dir "$T/r$np" \
        --memory "$gb" 2>"$T/log" >/dev/null
    t1=$(date +%s.%N)
    for f in "$T"/ref/*; do cmp -s "$f" "$T/r$np/$(basename "$f")" || { echo "DIFFERS: $f"; exit 1; }; done
    printf "%d ranks (--memory %d each): %.2f s (mpirun included); %s\n" "$np" "$gb" "$(echo "$t1 - $t0" | bc)" \
        "$(grep '^mpi: [0-9]' "$T/log" | sed 's/^mpi: //')"
    awk -v a=$((SEEDS - 3)) '$1 == "mpi:" && $2 == "level" && $3 + 0 >= a { print "    " substr($0, 6) }' "$T/log"
done
