#!/usr/bin/env bash
# Distributed table builds at the levels where memory matters
# (docs/distributed.md "Measured costs"): levels FROM..TO built on top of
# the same lower levels by one process, then by 1, 2 and 4 loopback ranks
# that each hold only their slice (SOW_MPI_LOWER=owned); every rank count's
# files compared byte for byte with the single process's.  Prints, per run:
# wall and CPU time (the whole job), peak RSS (one process; the largest
# rank's under MPI) and its ratio to the single process's, bytes sent
# between ranks per position and supersteps (SOW_MPI_STATS).
# Usage: bench/mpi-scaling.sh SOW_BINARY [RULES [FROM [TO [BUILDER [THREADS]]]]]
#   (SOW_BINARY built with -Dmpi=enabled; defaults: oware 20 24 lean 1)
#   RANKS="1 2 4" (the rank counts), KEEP=DIR (work there and keep it).
#   ONE_RSS_KB=KB: keep DIR/one from an earlier run of this script (same
#   levels, same one-process code) and take KB as its peak RSS instead of
#   building it again (the ratio's baseline; say which run measured it).
set -euo pipefail
SOW=$(realpath "${1:?usage: bench/mpi-scaling.sh SOW_BINARY [RULES [FROM [TO [BUILDER [THREADS]]]]]}")
RULES=${2:-oware}
FROM=${3:-20}
TO=${4:-24}
BUILDER=${5:-lean}
TH=${6:-1}
RANKS=${RANKS:-1 2 4}
if [ -n "${KEEP:-}" ]; then
    T=$KEEP
    mkdir -p "$T"
else
    T=$(mktemp -d)
    trap 'rm -rf "$T"' EXIT
fi
echo "# $RULES 2x6 levels $FROM..$TO on levels 0..$((FROM - 1)), builder $BUILDER, $TH thread(s) per process/rank"
echo "# $(nproc) cores, $(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo), $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# commit $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?'), $("$SOW" --version)"

# the shared lower levels, built once
if [ ! -f "$T/base/.done" ]; then
    rm -rf "$T/base"
    "$SOW" tables build --rules "$RULES" --seeds $((FROM - 1)) --threads 2 --builder "$BUILDER" \
        --dir "$T/base" >/dev/null 2>"$T/base.log"
    touch "$T/base/.done"
fi

# $1: label, $2: dir; the rest: the command.  Prints wall, CPU, peak RSS.
timed() {
    local label=$1 dir=$2
    shift 2
    rm -rf "$dir"
    cp -r "$T/base" "$dir"
    rm -f "$dir/.done"
    /usr/bin/time -f "%e %U %S %M" -o "$T/time" "$@" >/dev/null 2>"$T/log"
    read -r wall user sys rss_kb <"$T/time"
    echo "$label $wall $user $sys $rss_kb"
}

ram_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
gb=$((ram_kb * 3 / 4 / 1000000))
if [ -n "${ONE_RSS_KB:-}" ] && [ -n "${KEEP:-}" ] && ls "$T"/one/*-"$(printf %03d "$TO")".sowtb >/dev/null 2>&1; then
    rss1=$ONE_RSS_KB
    printf 'one process:  not run again: its files kept in %s, peak RSS %8.1f MB as given (ONE_RSS_KB)\n' \
        "$T/one" "$(echo "$rss1 / 1000" | bc -l)"
else
    read -r _ wall user sys rss1 < <(timed one "$T/one" "$SOW" tables build --rules "$RULES" --seeds "$TO" \
        --threads "$TH" --builder "$BUILDER" --dir "$T/one" --memory "$gb")
    printf 'one process:  wall %8.1f s  CPU %8.1f s  peak RSS %8.1f MB\n' "$wall" \
        "$(echo "$user + $sys" | bc)" "$(echo "$rss1 / 1000" | bc -l)"
    grep -E "^level +($(seq -s"|" "$FROM" "$TO")):" "$T/log" | sed 's/^/    /' || true
fi

# A rank's threads need cores of their own: OpenMPI binds a rank to one
# core by default where the ranks do not outnumber the cores.
BIND=()
[ "$TH" -gt 1 ] && BIND=(--bind-to none)
for np in $RANKS; do
    g=$((gb / np))
    [ "$g" -ge 1 ] || g=1
    # /usr/bin/time measures mpirun: the ranks' CPU is its children's; the
    # peak per rank comes from the ranks themselves (SOW_MPI_STATS)
    read -r _ wall user sys _ < <(timed r$np "$T/r$np" env SOW_MPI_STATS=1 SOW_MPI_LOWER=owned \
        mpirun --oversubscribe --allow-run-as-root "${BIND[@]}" -x SOW_MPI_STATS -x SOW_MPI_LOWER -np "$np" \
        "$SOW" tables build --rules "$RULES" --seeds "$TO" --threads "$TH" --builder "$BUILDER" \
        --dir "$T/r$np" --memory "$g")
    for f in "$T"/one/*.sowtb; do
        cmp -s "$f" "$T/r$np/$(basename "$f")" || { echo "DIFFERS: $(basename "$f") with $np ranks"; exit 1; }
    done
    stats=$(grep '^mpi: [0-9]' "$T/log" | sed 's/^mpi: //')
    peak=$(echo "$stats" | sed -n 's/.*peak memory per rank \([0-9.]*\) MB.*/\1/p')
    printf '%d rank(s):   wall %8.1f s  CPU %8.1f s  peak RSS per rank %8.1f MB (%.2fx one process); files identical\n' \
        "$np" "$wall" "$(echo "$user + $sys" | bc)" "${peak:-0}" "$(echo "${peak:-0} * 1000 / $rss1" | bc -l)"
    echo "    $stats"
    # levels FROM..TO: each level's line, then each rank's (solve, waiting, updates)
    awk -v a="$FROM" -v b="$TO" '$1 == "mpi:" && $2 == "level" && $3 + 0 >= a && $3 + 0 <= b {
        print "    " substr($0, 6) }' "$T/log"
done
