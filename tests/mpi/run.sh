#!/usr/bin/env bash
# Distributed table builds (docs/distributed.md): level files built by
# `mpirun -np R sow tables build` on loopback ranks must be byte-identical to
# the single-process build, with both distributed builders (stored edges,
# "fast", and "lean": unmoves for oware, awari and darra, in-level edges on
# each rank's disk for the relay rule sets); a rank killed mid-level (or
# while the ranks write the level file) must fail the whole job with no
# level file and no temporary file, the rerun resuming; Ctrl-C through
# scripts/sow-mpirun must end the job with status 130, the same way.
# Usage: tests/mpi/run.sh SOW_BINARY   (built with -Dmpi=enabled)
#
# The matrix the issue names (the default, and CI's; the times:
# docs/distributed.md "Tests"): every rule set, 2x6 levels 0..12 and the
# whole 2x3 game (levels 0..24), each with 1..4 ranks x 1..2 threads, each
# such cell built once, byte-identical to one single-process reference per
# rule set and board: half the cells by stored edges ("fast"), half by the
# lean builder (unmoves for oware, awari and darra, in-level edges on each
# rank's disk for the relay rule sets), alternating so that every rule set
# meets both builders on each board and each (rule set, ranks, threads) the
# other builder on the other board; the lower levels owned (each rank its
# slice, probes batched by owner) on half of each builder's cells, mapped
# on the others (SOW_MPI_FULL=cells, below).  The builds that share (board,
# ranks, threads, builder, lower levels) run as one job, `sow tables build
# --rules A,B,...` (MPI started once: its start-up, not the builds, was most
# of a 2x3 build's time), each rule set's files checked on their own.  Jobs
# run SOW_MPI_JOBS at a time (default 3: oversubscribed ranks spend much of
# a superstep waiting for a core, which another job can use).
# SOW_MPI_FULL=1: stored edges on every cell and lean on half (192 builds;
# SOW_MPI_LEAN=all: lean on every cell too, 256); SOW_MPI_FULL=0: the older
# cut (2x6 with SOW_MPI_SIX, default 2, of the 8 pairs per rule set).
# SOW_MPI_RANKS, SOW_MPI_THREADS, SOW_MPI_RULES and SOW_MPI_BOARDS narrow the
# matrix ("2 4", "2", "oware", "6": 2x6 levels 0..12 only; scripts/test
# without --full narrows it: scripts/test "mpi_env");
# SOW_MPI_PAIRS="oware:1 jodu:2 ..." keeps only those rule sets' cells with
# that thread count (scripts/test: each builder with 1 and 2 threads, the
# lower levels mapped and owned, on half the builds);
# SOW_MPI_LOWER=owned|mapped forces the lower levels;
# SOW_MPI_LIST=1 prints the matrix's lines (below) and builds nothing.
# Then the levels past 2^31 entries: refused when their slices would not
# fit, and the 64-bit index paths at small size (SOW_MPI_TEST_BASE,
# SOW_MPI_TEST_MSG; at the end).
set -euo pipefail
SOW=$(realpath "${1:?usage: tests/mpi/run.sh SOW_BINARY}")
WRAP=$(realpath "$(dirname "$0")/../../scripts/sow-mpirun")
OWN=$(realpath "$(dirname "$0")/own-session") # each mpirun its own session directory
command -v mpirun >/dev/null || { echo "tests/mpi: mpirun not found (openmpi-bin)"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# Ranks outnumber the cores here: idle ranks and OpenMP threads yield
# instead of spinning (spinning makes oversubscribed runs 5-10x slower).
export OMP_WAIT_POLICY=passive
# SOW_MPI_TEST_PIECE: owned lower levels' probes and the lean relay edges in
# batches of this many own entries (default 2^22 and 2^18), small here so
# that levels of 2x3 >= 20 and 2x6 >= 10 take several batches.
export SOW_MPI_TEST_PIECE=20000
# The lean relay builder's edge files ($TMPDIR of each rank): here, to check
# that nothing is left behind.
export TMPDIR="$T/tmp" SOW_MPI_SESSIONS="$T/sessions"
mkdir -p "$TMPDIR" "$SOW_MPI_SESSIONS"
FORCE_LOWER=${SOW_MPI_LOWER:-}
export SOW_MPI_LOWER=
MPIOPT=(--oversubscribe --allow-run-as-root --mca mpi_yield_when_idle 1 -x OMP_WAIT_POLICY
    -x SOW_MPI_LOWER -x SOW_MPI_TEST_PIECE -x TMPDIR)
MPI=("$OWN" mpirun "${MPIOPT[@]}")
RULES=(${SOW_MPI_RULES:-oware awari jodu jodu-ibadan jodu-starve odu jerin darra})
RANKS=(${SOW_MPI_RANKS:-1 2 3 4})
THREADS=(${SOW_MPI_THREADS:-1 2})
BOARDS=(${SOW_MPI_BOARDS:-6 3})
JOBS=${SOW_MPI_JOBS:-3}
FULL=${SOW_MPI_FULL:-cells}
fails=0
ok() { echo "ok - $* (${SECONDS}s)"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }

# same REF DIR [N [PREFIX]]: DIR holds N level files named PREFIX* (default:
# as many as REF), each byte for byte REF's file of the same name
same() {
    local a=$1 b=$2 f k=0
    for f in "$b/${4:-}"*; do
        [ -e "$f" ] || continue
        cmp -s "$f" "$a/$(basename "$f")" || return 1
        k=$((k + 1))
    done
    [ "$k" -eq "${3:-$(ls "$a" | wc -l)}" ]
}

ref() { # ref RULES PITS SEEDS: the single-process reference directory
    local d="$T/ref-$1-$2-$3"
    [ -d "$d" ] || "$SOW" tables build --rules "$1" --pits "$2" --seeds "$3" --dir "$d" \
        --threads 2 >/dev/null 2>&1
    echo "$d"
}

# cpu_of FILE: user + system seconds of the children in bash's `times` output
cpu_of() {
    tail -1 "$1" | tr 'ms' '  ' | awk '{printf "%.2f", $1 * 60 + $2 + $3 * 60 + $4}'
}

# job ID PITS SEEDS RANKS THREADS BUILDER LOWER RULES...: one mpirun
# building every rule set's levels into one directory (job ID's), then each
# rule set's files against its reference (built already): one line per build
job() {
    local id=$1 p=$2 s=$3 np=$4 th=$5 b=$6 low=$7 r
    shift 7
    local out="$T/mpi-$id" t0=$SECONDS rc=0
    SOW_MPI_LOWER=$low "${MPI[@]}" -np "$np" "$SOW" tables build --rules "$(echo "$@" | tr ' ' ,)" \
        --pits "$p" --seeds "$s" --dir "$out" --threads "$th" --builder "$b" >"$out.log" 2>&1 || rc=$?
    times >"$out.t" # this job's subshell: its children's CPU is the job's
    local how="$np ranks x $th threads, $b, $low lower levels"
    for r in "$@"; do
        if [ $rc = 0 ] && same "$T/ref-$r-$p-$s" "$out" $((s + 1)) "$r-2x$p-"; then
            ok "$r 2x$p levels 0..$s, $how: byte-identical"
        else
            bad "$r 2x$p levels 0..$s, $how (exit status $rc)"
        fi
    done
    echo "# the job ($# rule sets): $((SECONDS - t0)) s, $(cpu_of "$out.t") CPU s"
    [ $rc = 0 ] || tail -15 "$out.log"
    rm -rf "$out" "$out.log" "$out.t"
}

# The matrix, as lines "PITS SEEDS RANKS THREADS BUILDER LOWER RULE"; pair k
# (0..7) is k % 4 + 1 ranks and k / 4 + 1 threads, rule set i its index in
# ALLRULES.
# SOW_MPI_FULL=cells (CI's): every cell of the issue's matrix (rule set,
# board, ranks, threads) built once, by one builder: stored edges where
# k + i + (board 2x6) is even, lean where it is odd, so each rule set meets
# each builder on 4 pairs of each board and each pair the other builder on
# the other board; the lower levels owned where (ranks - 1) / 2 + threads
# - 1 + (2x6) is odd, so that each rule set, rank count and thread count
# meets each builder with both kinds, and a job (below) holds 4 rule sets:
# 128 builds in 32 jobs.
# SOW_MPI_FULL=1: stored edges on every cell, lean on half of them (below):
# 192 builds.
# SOW_MPI_FULL=0: a cut (2x6 levels 0..12 with SIX of the 8 pairs per rule
# set, rule set i the pairs i .. i + SIX - 1, so that each pair is met SIX
# times over the 8 rule sets, lean on those pairs too).
SIX=${SOW_MPI_SIX:-2}
ALLRULES=(oware awari jodu jodu-ibadan jodu-starve odu jerin darra)
cells=()
for r in "${RULES[@]}"; do
    i=0
    while [ "${ALLRULES[$i]}" != "$r" ]; do i=$((i + 1)); done
    for bd in "6 12" "3 24"; do
        set -- $bd
        [[ " ${BOARDS[*]} " == *" $1 "* ]] || continue
        p=$1 s=$2
        for th in "${THREADS[@]}"; do
            [ -z "${SOW_MPI_PAIRS:-}" ] || [[ " $SOW_MPI_PAIRS " == *" $r:$th "* ]] || continue
            for np in "${RANKS[@]}"; do
                k=$(((th - 1) * 4 + np - 1))
                if [ "$FULL" = cells ]; then
                    b=fast
                    [ $(((k + i + (p == 6)) % 2)) = 1 ] && b=lean
                    low=$FORCE_LOWER
                    [ -n "$low" ] || { [ $((((np - 1) / 2 + th - 1 + (p == 6)) % 2)) = 1 ] && low=owned || low=mapped; }
                    cells+=("$p $s $np $th $b $low $r")
                    continue
                fi
                cut=0
                [ "$FULL" = 1 ] || [ "$p" = 3 ] || [ $(((k - i + 8) % 8)) -lt "$SIX" ] || continue
                [ "$FULL" = 1 ] || [ "$p" = 3 ] || cut=1
                # fast: lower levels owned on half the pairs, the other half
                # on the other board
                low=$FORCE_LOWER
                [ -n "$low" ] || { [ $(((np + th + (p == 6)) % 2)) = 1 ] && low=owned || low=mapped; }
                cells+=("$p $s $np $th fast $low $r")
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
                cells+=("$p $s $np $th lean $low $r")
            done
        done
    done
done
[ -z "${SOW_MPI_LIST:-}" ] || { printf '%s\n' "${cells[@]}"; exit 0; } # the matrix only
# The jobs: cells grouped by everything but the rule set, at most 4 rule
# sets a job on 2x6 (so that the last jobs are short); 2x6 first (the
# longest), lean before fast.
jobs_list=$(for c in "${cells[@]}"; do echo "$c"; done | sort -k1,1nr -k5,5r -k3,3n -k4,4n -k6,6 -s |
    awk '{k = $1 " " $2 " " $3 " " $4 " " $5 " " $6
          if (k != last || ($1 == 6 && n == 4)) { if (NR > 1) print line; line = k; last = k; n = 0 }
          line = line " " $7; n++ }
         END { if (NR) print line }')

# References first (2 at a time: one process's build is mostly serial at
# these sizes), then the jobs, JOBS at a time, each writing its lines to a
# file; the lines are printed in the jobs' order.
refs=$( (for c in "${cells[@]}"; do set -- $c; echo "$7 $1 $2"; done
    echo "oware 6 8"; echo "jodu 6 8"; echo "oware 6 12") | sort -u)
while read -r a b c; do
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
    ref "$a" "$b" "$c" >/dev/null &
done <<<"$refs"
wait
echo "# ${#cells[@]} distributed builds in $(echo "$jobs_list" | wc -l) jobs; references ready (${SECONDS}s)"
i=0
while read -r l; do
    [ -n "$l" ] || continue
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
    job "$i" $l </dev/null >"$T/res.$i" 2>&1 & # (mpirun reads stdin: not the list's)
    i=$((i + 1))
done <<<"$jobs_list"
wait
built=0
for ((j = 0; j < i; j++)); do
    cat "$T/res.$j"
    fails=$((fails + $(grep -c '^not ok' "$T/res.$j" || true)))
    built=$((built + $(grep -c '^ok' "$T/res.$j" || true)))
done
[ "$built" = "${#cells[@]}" ] || bad "$built of the ${#cells[@]} builds checked"
# relay_left: the lean relay builder's edge files left in TMPDIR (none: each
# is unlinked as soon as it is made)
relay_left() { ls -A "$TMPDIR" | grep -c sow-lean-relay || true; }
[ "$(relay_left)" = 0 ] || bad "lean relay edge files left in TMPDIR"

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

# The same kill on the lean relay builder (jodu), once every rank's edge
# lists are on its disk: no level 6 file, no edge file left; the rerun
# (stored edges) resumes and ends byte-identical.
d="$T/killr"
if SOW_MPI_TEST_KILL=2:6 "${MPI[@]}" -x SOW_MPI_TEST_KILL -np 3 "$SOW" tables build --rules jodu \
    --seeds 8 --dir "$d" --builder lean --threads 2 >"$T/log" 2>&1; then
    bad "killed rank (lean relay): the job succeeded"
elif [ "$(ls -A "$d" | grep -v lock | wc -l)" -ne 6 ] || ls -A "$d" | grep -q -e '-006' -e tmp ||
    [ "$(relay_left)" != 0 ]; then
    bad "killed rank (lean relay): left $(ls -A "$d" "$TMPDIR" | tr '\n' ' ')"
else
    ok "killed rank (lean relay): the job failed, levels 0..5 kept, no level 6 file, no edge file"
fi
if "${MPI[@]}" -np 2 "$SOW" tables build --rules jodu --seeds 8 --dir "$d" --builder fast \
    >"$T/log" 2>&1 && grep -q "level   5: present" "$T/log" && same "$T/ref-jodu-6-8" "$d"; then
    ok "rerun after the kill (jodu, fast) resumed at level 6: byte-identical"
else
    bad "rerun after the kill (lean relay)"; tail -5 "$T/log"
fi

# Owned lower levels are read slice by slice (each rank only its own
# entries; rank 0 streams the whole payload's checksum): from raw files and
# from compressed ones the rest of the build is byte-identical; a byte
# damaged in one rank's slice, or in a block no rank decompresses first,
# fails the whole job (exit 2, the file named) and writes no level above.
r12="$(ref oware 6 12)"
same_above() { # same_above REF DIR: levels 9..12 in DIR byte for byte REF's
    local k
    for k in 09 10 11 12; do
        cmp -s "$1/oware-2x6-0$k.sowtb" "$2/oware-2x6-0$k.sowtb" || return 1
    done
}
for how in raw compressed; do
    d="$T/slice-$how"
    mkdir -p "$d"
    cp "$r12"/oware-2x6-00[0-8].sowtb "$d"/
    [ $how = raw ] || "$SOW" tables compress --dir "$d" --rules oware >/dev/null 2>&1
    if SOW_MPI_LOWER=owned "${MPI[@]}" -np 3 "$SOW" tables build --seeds 12 --dir "$d" \
        >"$T/log" 2>&1 && same_above "$r12" "$d"; then
        ok "owned lower levels read by slice from $how files (3 ranks): levels 9..12 byte-identical"
    else
        bad "owned lower levels read by slice from $how files"; tail -5 "$T/log"
    fi
done
for how in raw compressed; do
    d="$T/slice-bad-$how"
    mkdir -p "$d"
    cp "$r12"/oware-2x6-00[0-8].sowtb "$d"/
    [ $how = raw ] || "$SOW" tables compress --dir "$d" --rules oware >/dev/null 2>&1
    f="$d/oware-2x6-008.sowtb"
    # a byte near the end of the file: the last rank's slice (raw), a block
    # late in the file (compressed)
    printf '\x55' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") - 40)) conv=notrunc 2>/dev/null
    rc=0
    SOW_MPI_LOWER=owned "${MPI[@]}" -np 3 "$SOW" tables build --seeds 10 --dir "$d" \
        >"$T/log" 2>&1 || rc=$?
    if [ $rc = 2 ] && grep -q "oware-2x6-008.sowtb.*damaged" "$T/log" &&
        ! ls "$d" | grep -q -e '-009' -e '-010'; then
        ok "owned lower level damaged ($how): the job failed (exit 2), the file named, nothing built above"
    else
        bad "owned lower level damaged ($how): exit $rc"; tail -5 "$T/log"
    fi
done

# Ctrl-C (SIGINT to scripts/sow-mpirun, as a terminal sends it) once level 9
# is on disk: the job exits 130, no temporary or partial level file; the
# rerun resumes and ends byte-identical.
d="$T/intr"
r12="$T/ref-oware-6-12"
set -m # a background job that can be sent SIGINT
# env --default-signal: a shell started with SIGINT ignored (a background
# job of a non-interactive shell, as CI may run this) passes that on, and a
# script cannot trap a signal ignored at its entry; a terminal's never is.
env --default-signal=INT "$OWN" "$WRAP" "${MPIOPT[@]}" -np 2 "$SOW" tables build --seeds 12 --dir "$d" --threads 1 \
    --builder lean >"$T/log" 2>&1 &
pid=$!
set +m
# (up to 5 minutes: beside other jobs on 2 cores, 2 ranks took over a minute
# to reach level 9; a kill before it would fail the checks below for the
# wrong reason)
no_level9=0
for _ in $(seq 3000); do [ -e "$d/oware-2x6-009.sowtb" ] && break; sleep 0.1; done
[ -e "$d/oware-2x6-009.sowtb" ] || no_level9=1
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
kept=$(ls "$d" | grep -c 'sowtb$' || true)
if [ $no_level9 = 1 ]; then
    bad "Ctrl-C: level 9 not on disk after 5 minutes (exit status $rc)"; tail -5 "$T/log"
elif [ "$rc" -ne 130 ]; then
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
# sow bench tables --mpi stopped by SIGINT to it alone (kill, not a
# terminal's Ctrl-C to the group) while the ranks build: it ends mpirun's
# job, removes its temporary directory (in $TMPDIR) and exits 130; no rank
# is left.
benchdirs() { find "$TMPDIR" -maxdepth 1 -name 'sow-bench-mpi-*' 2>/dev/null | sort; }
before=$(benchdirs)
"$SOW" bench tables --mpi --rules oware --seeds 15 --ranks 2 >"$T/bm.out" 2>"$T/bm.err" &
pid=$!
for _ in $(seq 600); do
    [ -n "$(comm -13 <(echo "$before") <(benchdirs | sed 's|$|/r2|' | xargs -r ls -d 2>/dev/null || true))" ] &&
        break
    sleep 0.1
done
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
sleep 1
after=$(benchdirs)
if [ "$rc" = 130 ] && [ "$before" = "$after" ] && [ "$(cat "$T/bm.err")" = "sow bench tables: interrupted" ] &&
    ! pgrep -f "tables build --rules oware --pits 6 --seeds 15 .*sow-bench-mpi" >/dev/null; then
    ok "bench tables --mpi, SIGINT while the ranks build: exit 130, no directory or rank left"
else
    bad "bench tables --mpi interrupted: exit $rc, left: $(comm -13 <(echo "$before") <(echo "$after") || true)"
    tail -3 "$T/bm.err"
fi
# Levels past 2^31 entries (docs/distributed.md "Indices"): a level whose
# slices would not fit 31-bit local indices is refused before anything is
# built (exit 2, one line naming the ranks it needs, nothing on stdout, no
# file); with slices that fit but not --memory, the memory line.  mpirun -q:
# without mpirun's own lines about the rank's exit status.
d="$T/big"
refused() { # refused WHAT GREP NP ARGS...: exit 2, sow's one line, nothing written
    local what=$1 pat=$2 np=$3 rc=0
    shift 3
    # (a timeout: a refusal that failed would build for hours)
    timeout 120 "${MPI[@]}" -q -np "$np" "$SOW" tables build --dir "$d" "$@" >"$T/out" 2>"$T/err" ||
        rc=$?
    if [ $rc = 2 ] && [ ! -s "$T/out" ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q "$pat" "$T/err" &&
        ! ls "$d" 2>/dev/null | grep -q sowtb; then
        ok "$what: refused up front (exit 2): $(cat "$T/err")"
    else
        bad "$what: exit $rc"; cat "$T/out" "$T/err" | tail -5
    fi
    rm -rf "$d"
}
refused "oware level 29 (2,311,801,440 entries) on 1 rank" \
    "level 29 has 2311801440 entries.*at least 2 ranks (this job has 1)" 1 --seeds 29
refused "oware level 32 (5,752,004,349 entries) on 2 ranks" \
    "level 32 has 5752004349 entries.*at least 3 ranks (this job has 2)" 2 --seeds 32
refused "oware level 29 on 2 ranks with --memory 4 (GB)" \
    "level [0-9]* needs about .* GB per rank .* memory limit is 4 GB" 2 --seeds 29 --memory 4
refused "jodu level 32 on 3 ranks, lean (edge lists of 32-bit indices)" \
    "level 32 has 5752004349 entries: the lean builder's edge lists for jodu" 3 --rules jodu \
    --seeds 32 --builder lean

# The 64-bit paths at small size: global indices from 2^32 on
# (SOW_MPI_TEST_BASE: every global index held or sent is past 32 bits, the
# reverse lists take 8-byte indices; a truncation anywhere changes the
# files) and every exchange in rounds of at most 4096 words
# (SOW_MPI_TEST_MSG: the rounds that keep MPI's int counts under INT_MAX
# at 2^31 words): oware and jodu, 2x6 levels 0..8, both builders, owned and
# mapped lower levels, byte-identical.
# The last cell's rounds go through a round buffer (SOW_MPI_TEST_RBUF=1, as
# an exchange of more than INT_MAX words would), the others' straight into
# the receive buffer.  The solve's local waves between exchanges
# (SOW_MPI_STEP_WAVES): 3, until none is left (0), and the default (1).
for cell in "3 1 fast owned 0 3" "2 2 lean mapped 0 0" "4 1 lean owned 1 1"; do
    set -- $cell
    d="$T/wide-$1-$3-$4"
    if SOW_MPI_LOWER=$4 SOW_MPI_TEST_BASE=4294967296 SOW_MPI_TEST_MSG=4096 SOW_MPI_TEST_RBUF=$5 \
        SOW_MPI_STEP_WAVES=$6 "${MPI[@]}" -x SOW_MPI_TEST_BASE -x SOW_MPI_TEST_MSG \
        -x SOW_MPI_TEST_RBUF -x SOW_MPI_STEP_WAVES -np "$1" \
        "$SOW" tables build --rules oware,jodu \
        --seeds 8 --dir "$d" --threads "$2" --builder "$3" >"$T/log" 2>&1 &&
        same "$T/ref-oware-6-8" "$d" 9 oware- && same "$T/ref-jodu-6-8" "$d" 9 jodu-; then
        ok "global indices from 2^32, exchanges in rounds of 4096 words ($1 ranks x $2 threads, $3, $4, round buffer $5, step waves $6): oware, jodu byte-identical"
    else
        bad "global indices from 2^32 ($1 ranks x $2 threads, $3, $4)"; tail -5 "$T/log"
    fi
    rm -rf "$d"
done

times >"$T/times"
echo "# ${SECONDS} s wall, $(cpu_of "$T/times") CPU s (every rank and reference build)"
[ "$fails" -eq 0 ] && echo "tests/mpi: all passed" || { echo "tests/mpi: $fails failed"; exit 1; }
