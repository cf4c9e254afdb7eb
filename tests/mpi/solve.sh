#!/usr/bin/env bash
# The exact solver across ranks (docs/distributed.md "The exact solver
# across ranks"): `mpirun -np R sow solve ... --work DIR --disk` must print
# what one process prints (value, best move, PV, every move's value, nodes,
# expanded, tb hits: all but the time lines) and write a byte-identical
# solution file (--save), for every rule set, with 1..4 loopback ranks (and
# 2 ranks on keys of two words).
# Also: the closure above endgame tables (--tables, exits answered by the
# tables on every rank), a rank killed in the down and in the up pass (the
# job fails, the rerun resumes and ends the same), a refusal by --memory
# naming the rank's share (exit 2, one line, nothing on stdout), and a bad
# option under mpirun (exit 2, one line: rank 0 alone prints).
# Usage: tests/mpi/solve.sh SOW_BINARY   (built with -Dmpi=enabled); TAP,
# `meson test --suite mpi` (tests/mpi/meson.build).
# SOW_MPI_SOLVE_RULES narrows the rule sets, SOW_MPI_RANKS the rank counts;
# SOW_MPI_SOLVE_CUT=1 (scripts/test without --full) runs each rule set with
# two of the rank counts, turning, so that each count meets half of them.
set -euo pipefail
SOW=$(realpath "${1:?usage: tests/mpi/solve.sh SOW_BINARY}")
command -v mpirun >/dev/null || { echo "tests/mpi/solve: mpirun not found (openmpi-bin)"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export OMP_WAIT_POLICY=passive
# own positions per batch of the up pass's moves: small, so that the
# levels here take several batches (look-ups and edges across batches)
export SOW_MPI_TEST_PIECE=300
# every share's retrograde on the ranks' 2 threads (--threads 2 below),
# however small: the threads' queues of updates for other ranks
export SOW_MPI_TEST_PAR_MIN=1
export SOW_MPI_SESSIONS="$T/sessions" # own-session: each mpirun its own session directory
mkdir -p "$SOW_MPI_SESSIONS"
MPI=("$(realpath "$(dirname "$0")/own-session")" mpirun --oversubscribe --allow-run-as-root --mca mpi_yield_when_idle 1
    -x OMP_WAIT_POLICY -x SOW_MPI_TEST_PIECE -x SOW_MPI_TEST_PAR_MIN)
RANKS=(${SOW_MPI_RANKS:-1 2 3 4})
# rule set, pits, seeds per hole: a few thousand positions each
# (first: keys of two words, 64 seeds on 2x2: 2 + 64 + 4 bits, 2 ranks;
# the longest, 129 thresholds on its top level)
CASES=("oware 2 16 2" "oware 3 2" "awari 3 2" "jodu 3 2" "jodu-ibadan 3 2" "jodu-starve 3 2"
    "odu 4 2" "jerin 4 2" "darra 3 4")
if [ -n "${SOW_MPI_SOLVE_RULES:-}" ]; then
    keep=()
    for c in "${CASES[@]}"; do
        [[ " $SOW_MPI_SOLVE_RULES " == *" ${c%% *} "* ]] && keep+=("$c")
    done
    CASES=("${keep[@]}")
fi
fails=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
bad() { n=$((n + 1)); echo "not ok $n - $*"; fails=$((fails + 1)); }
note() { sed 's/^/# /'; } # diagnostics as TAP comments
shown() { grep -v -e '^time ' -e '^nodes/s ' "$1"; } # the output less its clocks

# one RULES PITS SEEDS [RANKS]: the one-process reference, then each rank
# count (RANKS: "2 3", default all of them)
one() {
    local r=$1 p=$2 s=$3 d="$T/$1-$2-$3" np rc
    local -a nps=(${4:-${RANKS[@]}})
    mkdir -p "$d"
    "$SOW" solve --rules "$r" --pits "$p" --seeds "$s" --moves --work "$d/ref" --disk \
        --save "$d/ref.sol" >"$d/ref.out" 2>"$d/ref.err" || { bad "$r 2x$p: the reference failed"; return; }
    for np in "${nps[@]}"; do
        rc=0
        "${MPI[@]}" -np "$np" "$SOW" solve --rules "$r" --pits "$p" --seeds "$s" --moves \
            --threads 2 --work "$d/w$np" --disk --save "$d/$np.sol" >"$d/$np.out" 2>"$d/$np.err" </dev/null || rc=$?
        if [ $rc != 0 ]; then
            bad "$r 2x$p seeds $s, $np ranks: exit status $rc"; tail -3 "$d/$np.err" | note
        elif ! diff <(shown "$d/ref.out") <(shown "$d/$np.out") >/dev/null; then
            bad "$r 2x$p seeds $s, $np ranks: the output differs"; diff <(shown "$d/ref.out") <(shown "$d/$np.out") | head -5 | note
        elif ! cmp -s "$d/ref.sol" "$d/$np.sol"; then
            bad "$r 2x$p seeds $s, $np ranks: the solution file differs"
        else
            ok "$r 2x$p seeds $s, $np ranks: $(grep -c '' "$d/ref.out") lines as one process's" \
                "($(grep '^expanded' "$d/ref.out" | awk '{print $3}') positions), solution file byte-identical"
        fi
    done
    rm -rf "$d"/w* # the level files (the test's disk)
}

# four cases at a time (most of a small mpirun is its start and end, and
# its ranks spend most of a superstep waiting)
i=0
for c in "${CASES[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge 4 ]; do wait -n || true; done
    set -- $c
    if [ "${SOW_MPI_SOLVE_CUT:-0}" = 1 ] && [ $# -eq 3 ] && [ ${#RANKS[@]} -eq 4 ]; then
        set -- "$@" "${RANKS[i % 4]} ${RANKS[(i + 2) % 4]}" # (1 3), (2 4), (3 1), (4 2), ...
        i=$((i + 1))
    fi
    (ok() { echo "ok - $*"; }; bad() { echo "not ok - $*"; }; one "$@") >"$T/res.$1-$2-$3" 2>&1 &
done
wait
for c in "${CASES[@]}"; do # each job's lines, numbered in order
    set -- $c
    while IFS= read -r l; do
        case "$l" in
        "ok "*) ok "${l#ok - }" ;;
        "not ok "*) bad "${l#not ok - }" ;;
        *) echo "$l" ;;
        esac
    done <"$T/res.$1-$2-$3"
done

# Above endgame tables: exits into levels 0..6 answered by the tables
# (tb hits counted on each rank, summed on rank 0), no --save.
"$SOW" tables build --rules oware --pits 3 --seeds 6 --dir "$T/tb" >/dev/null 2>&1
"$SOW" solve --pits 3 --seeds 2 --tables "$T/tb" --levels 0 --moves --work "$T/tref" --disk \
    >"$T/tref.out" 2>/dev/null
if "${MPI[@]}" -np 3 "$SOW" solve --pits 3 --seeds 2 --tables "$T/tb" --levels 0 --moves \
    --work "$T/tw" --disk >"$T/tw.out" 2>"$T/tw.err" </dev/null &&
    diff <(shown "$T/tref.out") <(shown "$T/tw.out") >/dev/null &&
    [ "$(grep '^tb hits' "$T/tw.out" | awk '{print $4}')" -gt 0 ]; then
    ok "above tables (levels 0..6), 3 ranks: as one process, $(grep '^tb hits' "$T/tw.out" | awk '{print $4}') tb hits"
else
    bad "above tables, 3 ranks"; tail -3 "$T/tw.err" | note
fi

# A rank SIGKILLed (SOW_MPI_TEST_KILL=RANK:LEVEL:d in the down pass's
# level, :u in the up pass's before its retrograde): the job fails, no
# solution file; the rerun resumes (the levels done keep their files: the
# same inode) and ends as one process.
"$SOW" solve --rules oware --pits 3 --seeds 2 --moves --work "$T/kref" --disk --save "$T/kref.sol" \
    >"$T/kref.out" 2>/dev/null
for k in 1:8:d:012.keys 2:7:u:006.values; do
    IFS=: read -r kr kl kp kf <<<"$k"
    d="$T/kill-$kp"
    rc=0
    SOW_MPI_TEST_KILL=$kr:$kl:$kp "${MPI[@]}" -x SOW_MPI_TEST_KILL -np 3 "$SOW" solve --rules oware \
        --pits 3 --seeds 2 --moves --work "$d" --disk --save "$d.sol" >"$d.out" 2>"$d.err" </dev/null || rc=$?
    f="$d/rank-$kr-of-3/disk-$kf"
    if [ $rc = 0 ] || [ -e "$d.sol" ] || [ ! -e "$f" ]; then
        bad "rank $kr killed in level $kl ($kp): exit $rc, $(ls "$d.sol" "$f" 2>&1 | tr '\n' ' ')"
        continue
    fi
    # the same killed job resumed on another rank count: 2 after the down
    # pass's kill, 4 after the up pass's (its solved levels' values moved too)
    np2=$([ "$kp" = d ] && echo 2 || echo 4)
    cp -a "$d" "$d-np$np2"
    rc=0
    "${MPI[@]}" -np "$np2" "$SOW" solve --rules oware --pits 3 --seeds 2 --moves --work "$d-np$np2" \
        --disk --save "$d-np$np2.sol" >"$d-np$np2.out" 2>"$d-np$np2.err" </dev/null || rc=$?
    if [ $rc = 0 ] && grep -q "^sow solve: note: the closure on disk of 3 ranks .* dealt out to $np2 ranks" "$d-np$np2.err" &&
        [ "$(grep -c "^sow solve: note: " "$d-np$np2.err")" = 1 ] &&
        ! ls -d "$d-np$np2"/rank-*-of-3 >/dev/null 2>&1 &&
        diff <(shown "$T/kref.out") <(shown "$d-np$np2.out") >/dev/null &&
        cmp -s "$T/kref.sol" "$d-np$np2.sol"; then
        ok "rank $kr killed in level $kl ($kp): resumed on $np2 ranks (the 3 ranks' levels dealt out, their directories gone), as one process"
    else
        bad "resume on $np2 ranks after rank $kr killed in level $kl ($kp): exit $rc"
        tail -3 "$d-np$np2.err" | note
    fi
    if [ "$kp" = d ]; then # a rank's state lost: not taken over, started over, with a note
        cp -a "$d" "$d-lost"
        rm "$d-lost/rank-2-of-3/disk.state"
        rc=0
        "${MPI[@]}" -np 2 "$SOW" solve --rules oware --pits 3 --seeds 2 --moves --work "$d-lost" \
            --disk --save "$d-lost.sol" >"$d-lost.out" 2>"$d-lost.err" </dev/null || rc=$?
        if [ $rc = 0 ] && grep -q "^sow solve: note: .* of 3 ranks .* cannot be taken over .* starts over" "$d-lost.err" &&
            diff <(shown "$T/kref.out") <(shown "$d-lost.out") >/dev/null && cmp -s "$T/kref.sol" "$d-lost.sol"; then
            ok "a rank's state lost: the 3 ranks' closure not taken over by 2, a note, started over, as one process"
        else
            bad "a rank's state lost, 2 ranks: exit $rc"; tail -3 "$d-lost.err" | note
        fi
    fi
    ino=$(stat -c %i "$f")
    rc=0
    "${MPI[@]}" -np 3 "$SOW" solve --rules oware --pits 3 --seeds 2 --moves --work "$d" --disk \
        --save "$d.sol" >"$d.out" 2>"$d.err" </dev/null || rc=$?
    if [ $rc = 0 ] && [ "$(stat -c %i "$f")" = "$ino" ] &&
        diff <(shown "$T/kref.out") <(shown "$d.out") >/dev/null && cmp -s "$T/kref.sol" "$d.sol"; then
        ok "rank $kr killed in level $kl ($kp): the job failed; the rerun resumed (disk-$kf kept), as one process"
    else
        bad "rerun after rank $kr killed in level $kl ($kp): exit $rc"; tail -3 "$d.err" | note
    fi
done

# --memory too small for a rank's share: exit 2, one line naming the share
rc=0
"${MPI[@]}" -np 2 "$SOW" solve --pits 4 --seeds 2 --levels 0 --memory 0.001 --work "$T/mem" \
    --disk >"$T/mem.out" 2>"$T/mem.err" </dev/null || rc=$?
if [ $rc = 2 ] && [ ! -s "$T/mem.out" ] && [ "$(grep -c '^sow solve: ' "$T/mem.err")" = 1 ] &&
    grep -q "^sow solve: .*level 16 across 2 ranks: rank [01]'s share" "$T/mem.err"; then
    ok "--memory refuses a rank's share: exit 2, one line naming it"
else
    bad "--memory refusal: exit $rc"; head -5 "$T/mem.err" | note
fi

# bad input under mpirun: rank 0 alone says so
rc=0
"${MPI[@]}" -np 3 "$SOW" solve --pits 3 --seeds 2 --bogus >"$T/bad.out" 2>"$T/bad.err" </dev/null || rc=$?
if [ $rc = 2 ] && [ ! -s "$T/bad.out" ] && [ "$(grep -c 'sow solve' "$T/bad.err")" = 1 ]; then
    ok "bad input, 3 ranks: exit 2, one line"
else
    bad "bad input, 3 ranks: exit $rc, $(grep -c 'sow solve' "$T/bad.err") lines"
fi

echo "# ${SECONDS} s"
echo "1..$n"
[ "$fails" -eq 0 ] && echo "# tests/mpi/solve: all passed" || { echo "# tests/mpi/solve: $fails failed"; exit 1; }
