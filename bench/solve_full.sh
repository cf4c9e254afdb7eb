#!/usr/bin/env bash
# Full-size exact solves (docs/solutions.md "Results"): a benchmark, not a test.
#
# usage: bench/solve_full.sh [GAME...]        (default: odu jerin)
#   SOW=build/src/cli/sow   the binary (built from the worktree's commit, which
#                           the first line records)
#   OUT=bench/out           logs, JSON results and solution files
#   MEM=12                  --memory budget, GB
#   PITS=6 SEEDS=4          board and seeds per hole
#   METHODS="levels closure"   (also: disk)
#
# Each game is solved two ways, each under /usr/bin/time -v:
#   levels  : the default exact mode on 2 threads (lowest levels solved whole in
#             memory by the table builder, the closure above them), --moves
#   closure : the closure alone (--save implies --levels 0) on CLOSURE_THREADS (2) threads, saved as a solution
#             file (--save) under the name a tables directory uses,
#             OUT/tables/GAME-2xPITS-LLL.sowsol (LLL = seeds on the board;
#             docs/solutions.md), so that `sow solve --tables OUT/tables`,
#             `sow tables probe --dir OUT/tables` and the atlas
#             (bench/atlas.sh, TABLES=OUT/tables) answer from it; --moves
#   disk    : the default exact mode with the closure level by level
#             on disk (--work OUT/GAME-2xPITS-SEEDS-disk.work --disk; docs/solver.md
#             "Past RAM"), --moves; rerun the same command to resume
# and the values must agree.  Per run: OUT/GAME-METHOD.json (stdout),
# .log (progress on stderr), .time (/usr/bin/time -v); one summary line each.
set -u
SOW=${SOW:-build/src/cli/sow}
OUT=${OUT:-bench/out}
MEM=${MEM:-12}
PITS=${PITS:-6}
SEEDS=${SEEDS:-4}
METHODS=${METHODS:-levels closure}
GAMES=("$@")
[ ${#GAMES[@]} -gt 0 ] || GAMES=(odu jerin)
mkdir -p "$OUT/tables"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | head -1)
[ -n "$dirty" ] && commit="$commit+dirty"
echo "# commit $commit, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for g in "${GAMES[@]}"; do
    vals=()
    for m in $METHODS; do
        base="$OUT/$g-2x$PITS-$SEEDS-$m"
        case $m in
        levels) args=(--threads 2 --moves) ;;
        closure) args=(--threads "${CLOSURE_THREADS:-2}" --moves --save
                       "$OUT/tables/$(printf '%s-2x%d-%03d.sowsol' "$g" "$PITS" $((2 * PITS * SEEDS)))") ;;
        disk) args=(--threads 2 --moves --work "$base.work" --disk) ;;
        *) echo "unknown method $m" >&2; exit 2 ;;
        esac
        cmd=("$SOW" solve --rules "$g" --pits "$PITS" --seeds "$SEEDS" --memory "$MEM" --json "${args[@]}")
        echo "# $m: ${cmd[*]}"
        /usr/bin/time -v -o "$base.time" nice "${cmd[@]}" >"$base.json" 2>"$base.log"
        rc=$?
        wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$base.time")
        peak=$(awk -F': ' '/Maximum resident set size/ {printf "%.2f GB", $2 / 1e6}' "$base.time")
        user=$(awk -F': ' '/User time/ {print $2}' "$base.time")
        sys=$(awk -F': ' '/System time/ {print $2}' "$base.time")
        value=$(grep -o '"value":-\?[0-9]*' "$base.json" | head -1 | cut -d: -f2)
        vals+=("${value:-?}")
        echo "$g 2x$PITS/$SEEDS $m: rc $rc value ${value:-?} wall $wall user ${user}s sys ${sys}s peak $peak"
        [ $rc -eq 0 ] || tail -1 "$base.log"
    done
    if [ ${#vals[@]} -ge 2 ] && [ "$(printf '%s\n' "${vals[@]}" | sort -u | wc -l)" -gt 1 ]; then
        echo "$g: VALUES DIFFER: ${vals[*]}"
        exit 1
    fi
done
