#!/usr/bin/env bash
# Bad-input and smoke tests of the sow command line (docs/testing.md "Trust").
#
# usage: tests/cli/run.sh [SOW]     (default: build/src/cli/sow; TAP on stdout)
#
# Every case runs under `timeout` in a scratch directory and checks:
#   bad  STATUS ARGS...   exit STATUS, exactly one line on stderr ("sow ..."),
#                         besides progress lines (naming an ETA) when the
#                         refusal comes mid-work; nothing on stdout, no
#                         signal, no core file
#   listing STATUS ARGS.. exit STATUS with a report (verify): <= 1 line on stderr
#   ok   ARGS...          exit 0, something on stdout
#   help ARGS...          exit 0, "usage:" on stdout, nothing on stderr
#   pending "WHY" bad ... a case that documents what should happen but does
#                         not yet: reported as TAP "not ok ... # TODO WHY"
#                         (does not fail the run; it says so when it passes).
#   check DESC CMD...     a shell condition as a case (files left behind, ...)
# A sanitizer report on stderr fails any case.  Adding a case is one line.
# Exit statuses (cli.h): 0 ok, 1 failure while working, 2 bad input, 130 Ctrl-C,
# 143 SIGTERM.  The file-safety section's cases each failed before fileio.h.
set -u
SOW=$(realpath "${1:-build/src/cli/sow}")
HERE=$(cd "$(dirname "$0")" && pwd)
T=${CLI_TIMEOUT:-30}
[ -x "$SOW" ] || { echo "Bail out! no sow executable at $SOW"; exit 1; }
WORK=$(mktemp -d)
trap 'chmod -R u+rwx "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
ulimit -c 0
# Sanitized builds: failed allocations return NULL as in a normal build, so
# the program's own out-of-memory handling is what gets tested.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1}
mkdir -p "$WORK/no-tables"
export SOW_TABLES="$WORK/no-tables"   # never pick up the repository's tables/

n=0 failed=0 todo=0 PENDING=""
out="$WORK/.out" err="$WORK/.err"

run() { timeout -k 5 "$T" "$SOW" "$@" >"$out" 2>"$err"; rc=$?; }
# The checks below run in this shell, setting variables (no subshell, no
# program started): about 580 cases run, in each of CI's two builds.
# (lines, desc and common print, for cases written with $(...).)
nlines() { local l; mapfile -t l <"$1"; NL=${#l[@]}; } # NL: the lines of file $1
lines() { nlines "$1"; echo "$NL"; }
case_desc() { DESC=$*; DESC=${DESC//$'\n'/ }; DESC=${DESC:0:110}; } # DESC: a case's name
desc() { case_desc "$@"; printf '%s' "$DESC"; }
report() { # report OK|msg DESC
    n=$((n + 1))
    if [ "$1" = OK ]; then
        if [ -n "$PENDING" ]; then
            echo "ok $n - $2"
            echo "# pending case now passes, drop 'pending': $PENDING"
        else
            echo "ok $n - $2"
        fi
    elif [ -n "$PENDING" ]; then
        todo=$((todo + 1))
        echo "not ok $n - $2 # TODO $PENDING"
        echo "#   $1"
    else
        failed=$((failed + 1))
        echo "not ok $n - $2"
        echo "#   $1"
        sed 's/^/#   stderr: /' "$err" | head -5
        sed 's/^/#   stdout: /' "$out" | head -3
    fi
}
common_why() { # checks every case shares; WHY: a reason or nothing
    WHY=
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then WHY="hang: killed after ${T}s"
    elif [ "$rc" -gt 128 ] && [ "$rc" -ne 130 ] && [ "$rc" -ne 143 ]; then WHY="killed by signal $((rc - 128))"
    elif compgen -G 'core*' >/dev/null; then WHY="core dump"; rm -f core*
    else
        local text=
        IFS= read -r -d '' text <"$err"
        [[ $text =~ Sanitizer|runtime\ error:|LeakSanitizer ]] && WHY="sanitizer report"
    fi
}
common() { common_why; [ -z "$WHY" ] || echo "$WHY"; }
bad() { # bad STATUS ARGS...
    local want=$1; shift
    run "$@"
    common_why
    local why=$WHY first= l x
    if [ -z "$why" ]; then
        # Progress lines (they name an ETA, or end with the seconds so far,
        # as sow solve's do once a second has passed: a loaded machine
        # gets there before a refusal found mid-work) are not counted: the
        # message is the one other line.
        mapfile -t l <"$err"; NL=0
        for x in "${l[@]}"; do
            [[ $x == *ETA* || $x =~ \([0-9]+\.[0-9]\ s\)$ ]] && continue
            NL=$((NL + 1)); [ -n "$first" ] || first=$x
        done
        if [ "$rc" -ne "$want" ]; then why="exit $rc, expected $want"
        elif [ "$NL" -ne 1 ]; then why="$NL lines on stderr, expected 1"
        elif ! [[ $first =~ ^sow[\ :] ]]; then why="stderr does not start with 'sow': ${first:0:80}"
        elif [ -s "$out" ]; then why="partial output on stdout: $(head -c 80 "$out")"
        fi
    fi
    case_desc "bad $want: sow $*"
    report "${why:-OK}" "$DESC"
}
listing() { # listing STATUS ARGS...: a report on stdout, at most one line on stderr
    local want=$1; shift
    run "$@"
    common_why
    local why=$WHY
    nlines "$err"
    [ -z "$why" ] && [ "$rc" -ne "$want" ] && why="exit $rc, expected $want"
    [ -z "$why" ] && [ "$NL" -gt 1 ] && why="$NL lines on stderr"
    [ -z "$why" ] && [ ! -s "$out" ] && [ ! -s "$err" ] && why="no report and no message"
    case_desc "listing $want: sow $*"
    report "${why:-OK}" "$DESC"
}
ok() {
    run "$@"
    common_why
    local why=$WHY
    [ -z "$why" ] && [ "$rc" -ne 0 ] && why="exit $rc: $(head -c 120 "$err")"
    [ -z "$why" ] && [ ! -s "$out" ] && why="no output"
    case_desc "ok: sow $*"
    report "${why:-OK}" "$DESC"
}
help() {
    run "$@"
    common_why
    local why=$WHY text=
    IFS= read -r -d '' text <"$out"
    [ -z "$why" ] && [ "$rc" -ne 0 ] && why="exit $rc"
    [ -z "$why" ] && [[ $text != *usage:* ]] && why="no usage on stdout"
    [ -z "$why" ] && [ -s "$err" ] && why="stderr: $(head -c 80 "$err")"
    case_desc "help: sow $*"
    report "${why:-OK}" "$DESC"
}
pending() { # pending "WHY" CHECK ARGS...
    PENDING=$1; shift
    "$@"
    PENDING=""
}
check() { # check DESC COMMAND...: a shell condition as a case
    local d=$1; shift
    if "$@"; then report OK "$d"; else report "condition failed: $*" "$d"; fi
}
nofiles() { # no file matching the glob pattern(s) under $WORK (besides the given dir's olds)
    [ -z "$(find "$WORK" -name "$1" -print -quit)" ]
}

POS6=0,0,0,0,1,1/1,0,0,0,0,1/A  # tiny oware endgame: solves instantly
START=4,4,4,4,4,4/4,4,4,4,4,4/A

# ---- global ---------------------------------------------------------------
help --help
help help
bad 2
bad 2 nope
bad 2 --bogus

# ---- every command has --help ---------------------------------------------
for c in show moves play perft solve tables variants bench; do help $c --help; done
for c in build info stats verify probe; do help tables $c --help; done
for c in atlas play; do help variants $c --help; done

# ---- options every game command takes ---------------------------------------
GAME=(show moves "play 1A" "perft --depth 1" "solve --depth 1" "tables probe")
for c in "${GAME[@]}"; do
    # shellcheck disable=SC2086
    set -- $c
    bad 2 "$@" --rules nope "$POS6"
    bad 2 "$@" --rules
    bad 2 "$@" "$POS6" --rules ''
    bad 2 "$@" --pits 0
    bad 2 "$@" --pits -1
    bad 2 "$@" --pits 19
    bad 2 "$@" --pits 99999999999999999999999
    bad 2 "$@" --pits 6x
    bad 2 "$@" --pits=
    bad 2 "$@" --seeds -1
    bad 2 "$@" --seeds 256
    bad 2 "$@" --seeds 100
    bad 2 "$@" --pits 18 --seeds 8
    bad 2 "$@" --bogus
    bad 2 "$@" --pits 5 "$POS6"
done

# ---- positions: every kind of error, through every command that reads one ----
BADPOS=(
    ''
    '4,4,4,4,4,4'
    '4,4,4,4,4,4/4,4,4,4,4/A'
    '4,4,4,4,4,4/4,4,4,4,4,4,4/A'
    '4,4,4,4,4,4/4,4,4,4,4,4/C'
    '4,4,4,4,4,4/4,4,4,4,4,4/'
    '4,4,4,4,4,4/4,4,4,4,4,4/AB'
    '256,0,0,0,0,0/0,0,0,0,0,0/A'
    '1000,0,0,0,0,0/0,0,0,0,0,0/A'
    '200,0,0,0,0,0/100,0,0,0,0,0/A'
    '4,x,4,4,4,4/4,4,4,4,4,4/A'
    '4,-4,4,4,4,4/4,4,4,4,4,4/A'
    '4,,4,4,4,4/4,4,4,4,4,4/A'
    '4,4,4,4,4,4,/4,4,4,4,4,4/A'
    ' 4,4,4,4,4,4/4,4,4,4,4,4/A'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/1-'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/1'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/x-0'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/99999-0'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/open'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/B'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/Z'
    '4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/-/x'
    '1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1/1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1/A'
    $'4,4,4,4,4,4\n/4,4,4,4,4,4/A'
)
for c in show moves "perft --depth 1" "solve --depth 1" "tables probe"; do
    # shellcheck disable=SC2086
    set -- $c
    for p in "${BADPOS[@]}"; do bad 2 "$@" "$p"; done
    bad 2 "$@" "$POS6" "$POS6"
done
bad 2 show --rules darra '4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/open'
bad 2 show --rules jerin '4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/A'
ok show --rules jerin '4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/open'
ok show --rules darra '0,0,1,0,0,3/0,0,1,0,0,0/B/20-17/A'
ok show --rules oware '1/1/B/65533-0/-'
bad 2 show --rules oware '1/1/B/65535-65535/-'
bad 2 play 0,0,0,0,0,1/1,1,0,0,0,0/A/65535-0 6A

# ---- play: moves ------------------------------------------------------------
bad 2 play
bad 2 play "$START"
bad 2 play 7A
bad 2 play 0A
bad 2 play -1A
bad 2 play 1B
bad 2 play 1C
bad 2 play 1a
bad 2 play x
bad 2 play ''
bad 2 play 1A+2A
bad 2 play 1A 1A
bad 2 play pass
bad 2 play 1A "$START"
bad 2 play "$START" "$START" 1A
bad 2 play 0,0,0,0,0,0/1,0,0,0,0,0/A 1A
bad 2 play --rules jerin 1A
bad 2 play --rules jerin 1A+3A
bad 2 play --rules jerin 6A+7A
bad 2 play --rules jodu 5,1,4,3,4,1/6,1,7,1,0,1/A 1A
ok play --rules jerin 2A+3A 1B
ok play 1A 1B 2A

# ---- perft ------------------------------------------------------------------
bad 2 perft
bad 2 perft --depth
bad 2 perft --depth -1
bad 2 perft --depth 101
bad 2 perft --depth 99999999999999999999
bad 2 perft --depth 1.5
bad 2 perft --depth 1 --divide=yes
ok perft --depth 3
ok perft --depth 2 --divide --rules darra
# a long count shows, on a terminal, its share done and an ETA each second
# (script(1) gives it one; the count, minutes long, is stopped once the line
# is seen or after 60 s: a loaded machine takes longer to the first one)
if command -v script >/dev/null; then
    PT="perft 14: [0-9]+% of the tree, [0-9]+ s so far, ETA [0-9]+ s"
    script -qec "echo \$\$ >'$WORK/perft.pid'; exec '$SOW' perft --depth 14" /dev/null \
        >"$WORK/perft.tty" 2>&1 &
    spid=$!
    for _ in $(seq 600); do grep -Eq "$PT" "$WORK/perft.tty" && break; sleep 0.1; done
    kill -TERM "$(cat "$WORK/perft.pid")" 2>/dev/null # (a background job ignores SIGINT)
    wait "$spid"
    check "perft: a long count's progress on a terminal" grep -Eq "$PT" "$WORK/perft.tty"
fi

# ---- solve ------------------------------------------------------------------
bad 2 solve --threads 0 "$POS6"
bad 2 solve --threads -1 "$POS6"
bad 2 solve --threads 99999 "$POS6"
bad 2 solve --threads two "$POS6"
bad 2 solve --hash 0 "$POS6"
bad 2 solve --hash -5 "$POS6"
bad 2 solve --hash 1e3 "$POS6"
bad 2 solve --hash "$POS6"
bad 2 solve --depth 0 "$POS6"
bad 2 solve --depth -3 "$POS6"
bad 2 solve --depth 99999999 "$POS6"
bad 2 solve --time -1 "$POS6"
bad 2 solve --time abc "$POS6"
bad 2 solve --time 0 "$POS6"
bad 2 solve --depth 3 --time 1 "$POS6"
bad 2 solve --hash 1048576 "$POS6"
bad 2 solve --hash 100000 "$POS6"
# every command that makes a transposition table refuses one larger than
# 3/4 of the machine's memory up front, saying what fits (here where 64 GiB
# is more than that; match's two players at 64 GiB each, two games at once)
ram_mb=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo 2>/dev/null)
if [ -n "$ram_mb" ] && [ $((ram_mb * 3 / 4)) -lt 65536 ]; then
    for c in "bench engine --rules oware --depth 1" "bench search" \
        "book build --rules oware --out $WORK/hash.book --plies 1 --depth 2" \
        "variants atlas --rules oware --pits 1 --seeds 1 --no-tables"; do
        # shellcheck disable=SC2086
        bad 2 $c --hash 65536
        check "$c --hash 65536: says what fits" grep -q "does not fit: this machine has" "$err"
    done
fi
if [ -n "$ram_mb" ] && [ $((ram_mb * 3 / 4)) -lt 262144 ]; then
    bad 2 match --a sow:hash=65536 --b threshold:hash=65536 --games 2
    check "match: the players' tables together, a game at once" \
        grep -q "262144 MiB does not fit" "$err"
fi
ok solve "$POS6"
ok solve --json --moves "$POS6"
ok solve --threads 2 "$POS6"
ok solve --depth 4 "$POS6"
ok solve --rules jodu 0,0,1/1,0,1/A
# the closure's memory budget: refused before the layer that would not fit
bad 2 solve --rules odu --levels 0 --memory 0.004
bad 2 solve --memory 0 "$POS6"
bad 2 solve --memory lots "$POS6"
bad 2 solve --memory 1 --depth 3 "$POS6"
ok solve --memory 0.01 "$POS6"
# solution files: written, answered, damaged or foreign ones refused
ok solve --rules odu --pits 3 --seeds 2 --save s.sol
ok solve --rules odu --pits 3 --seeds 2 --solution s.sol
ok solve --rules odu --pits 3 --seeds 2 --json --solution s.sol 1,0,1/3,3,0/B/4-0/-
bad 2 solve --rules oware --pits 3 --seeds 2 --solution s.sol
bad 2 solve --rules odu --pits 3 --seeds 2 --solution s.sol 9,0,0/0,0,0/A
printf 'not a solution file' > g.sol
bad 2 solve --rules odu --pits 3 --seeds 2 --solution g.sol
head -c 300 s.sol > t.sol
bad 2 solve --rules odu --pits 3 --seeds 2 --solution t.sol
bad 2 solve --solution missing.sol "$POS6"
ok tables probe --rules odu --pits 3 --solution s.sol 2,2,2/2,2,2/A
bad 2 tables probe --rules odu --pits 3 --solution g.sol 2,2,2/2,2,2/A
bad 2 solve --save x.sol --levels 3 "$POS6"
bad 2 solve --save x.sol --solution s.sol "$POS6"
# where --save writes is checked before the solve (no output, one line)
bad 2 solve --rules odu --pits 3 --seeds 2 --save nodir/x.sol
bad 2 solve --rules odu --pits 3 --seeds 2 --save ./
mkdir -p sdir
bad 2 solve --rules odu --pits 3 --seeds 2 --save sdir
# --disk: the closure level by level in the --work directory
bad 2 solve --rules odu --pits 3 --seeds 2 --disk
# --save from the closure on disk: a file that answers every position as
# the in-memory closure's file does (the same start, move values and PV)
run solve --rules odu --pits 3 --seeds 2 --work wds --disk --save xd.sol
why=OK; [ "$rc" = 0 ] && [ -f xd.sol ] && [ -f wds/disk-012.values ] || why="rc $rc: $(head -c 300 "$err")"
report "$why" "solve --work DIR --disk --save FILE: writes the solution file"
run solve --rules odu --pits 3 --seeds 2 --json --moves --solution s.sol
v_mem=$(grep -o '"value".*"nodes"' "$out" | head -c 400)
run solve --rules odu --pits 3 --seeds 2 --json --moves --solution xd.sol
v_disk=$(grep -o '"value".*"nodes"' "$out" | head -c 400)
why=OK; [ "$rc" = 0 ] && [ -n "$v_mem" ] && [ "$v_mem" = "$v_disk" ] ||
    why="rc $rc; in memory: $v_mem; on disk: $v_disk"
report "$why" "solve --solution FILE of the closure on disk: the same answer as in memory's file"
bad 2 solve --rules odu --pits 3 --seeds 2 --disk --work wds --solution xd.sol
run solve --rules odu --pits 3 --seeds 2 --json --moves --levels 0
v_mem=$(grep -o '"value".*"nodes":[0-9]*' "$out" | head -c 400)
run solve --rules odu --pits 3 --seeds 2 --json --moves --levels 0 --work wd --disk
v_disk=$(grep -o '"value".*"nodes":[0-9]*' "$out" | head -c 400)
why=OK; [ "$rc" = 0 ] && [ -n "$v_mem" ] && [ "$v_mem" = "$v_disk" ] && [ -f wd/disk-012.values ] ||
    why="rc $rc; in memory: $v_mem; on disk: $v_disk"
report "$why" "solve --work DIR --disk: the same value, move values and nodes as in memory"
bad 2 solve --rules odu --levels 0 --memory 0.004 --work wd2 --disk
check "solve --disk refused by --memory: says which level" grep -q "level 40, on disk" "$err"
# --save of a closure on disk: the file's set (542,004 cells here, 2.2 MB)
# is built a window at a time within the budget (1 MB: windows of 125,000
# cells), the same file as the whole set's
run solve --rules jodu --pits 4 --seeds 2 --levels 0 --work wds2 --disk --memory 0.016
why=OK; [ "$rc" = 0 ] || why="rc $rc: $(head -c 300 "$err")"
report "$why" "solve --disk: jodu 2x4/2 solved on disk within 16 MB"
run solve --rules jodu --pits 4 --seeds 2 --work wds2 --disk --memory 0.001 --save xs.sol
run solve --rules jodu --pits 4 --seeds 2 --work wds2 --disk --save xw.sol
why=OK; [ "$rc" = 0 ] && [ -f xs.sol ] && cmp -s xs.sol xw.sol || why="rc $rc: $(head -c 300 "$err")"
report "$why" "solve --disk --save within a 1 MB budget: its set in windows, the same file as the whole set's"
# solution files found in a tables directory by name
mkdir -p sd && cp s.sol sd/odu-2x3-012.sowsol
run solve --rules odu --pits 3 --seeds 2 --json --moves --solution s.sol
v_file=$(grep -o '"value".*"nodes"' "$out" | head -c 400)
run solve --rules odu --pits 3 --seeds 2 --json --moves --tables sd
v_dir=$(grep -o '"value".*"nodes"' "$out" | head -c 400)
why=OK; [ "$rc" = 0 ] && grep -q 'answered from the solution file sd/odu-2x3-012.sowsol' "$err" &&
    [ -n "$v_file" ] && [ "$v_file" = "$v_dir" ] || why="rc $rc; --solution: $v_file; --tables: $v_dir"
report "$why" "solve --tables DIR: answered from DIR/odu-2x3-012.sowsol as --solution answers"
ok tables probe --rules odu --pits 3 --dir sd 2,2,2/2,2,2/A
ok solve --rules odu --pits 3 --tables sd 9,0,0/0,0,0/A
cp s.sol sd/odu-2x3-013.sowsol
bad 2 solve --rules odu --pits 3 --tables sd 9,0,0/0,0,0/A
bad 2 tables probe --rules odu --pits 3 --dir sd 9,0,0/0,0,0/A
rm sd/odu-2x3-013.sowsol; cp t.sol sd/odu-2x3-014.sowsol
bad 2 solve --rules odu --pits 3 --tables sd 9,0,0/0,0,0/A
# the atlas answers a start from its solution file (nodes 0), with the solve's value
run variants atlas --rules odu --pits 3 --seeds 2 --tables sd --tb-entries 0 --csv at.csv
a_row=$(tail -n 1 at.csv 2>/dev/null)
run solve --rules odu --pits 3 --seeds 2 --json --solution s.sol
v_sol=$(grep -o '"value":-\?[0-9]*' "$out" | head -1 | cut -d: -f2)
why=OK; case "$a_row" in "odu,3,2,$v_sol,"*",0,"*",exact") ;; *) why="atlas row '$a_row', solution value '$v_sol'" ;; esac
report "$why" "variants atlas: a start answered from its solution file in --tables"
# --depth/--time --solution: the engine probes the
# file; darra 2x6x1's start (12 seeds, value -4) lies above the levels the
# engine solves in memory, so at depth 1 only the file proves it
ok solve --rules darra --pits 6 --seeds 1 --save d1.sol
run solve --rules darra --pits 6 --seeds 1 --json --solution d1.sol
v_ex=$(grep -o '"value":-\?[0-9]*' "$out" | head -1 | cut -d: -f2)
run solve --rules darra --pits 6 --seeds 1 --json --depth 1 --solution d1.sol
v_en=$(grep -o '"value":-\?[0-9]*,"exact":[a-z]*' "$out" | head -1)
run solve --rules darra --pits 6 --seeds 1 --json --depth 1
v_no=$(grep -o '"exact":[a-z]*' "$out" | head -1)
why=OK; [ -n "$v_ex" ] && [ "$v_en" = "\"value\":$v_ex,\"exact\":true" ] && [ "$v_no" = '"exact":false' ] ||
    why="exact '$v_ex', engine with the file '$v_en', without '$v_no'"
report "$why" "solve --depth 1 --solution FILE: the engine's value is the file's, exact"
ok solve --rules darra --pits 6 --seeds 1 --time 0.2 --solution d1.sol 1,1,1,1,1,0/2,1,1,1,1,1/B
# (engstr) --depth/--time --tables DIR: the engine finds the solution file in
# DIR by name, as the exact mode does (before: not exact at depth 1)
mkdir -p dd && cp d1.sol dd/darra-2x6-012.sowsol
run solve --rules darra --pits 6 --seeds 1 --json --depth 1 --tables dd
v_dd=$(grep -o '"value":-\?[0-9]*,"exact":[a-z]*' "$out" | head -1)
why=OK; [ "$rc" = 0 ] && [ -n "$v_ex" ] && [ "$v_dd" = "\"value\":$v_ex,\"exact\":true" ] &&
    grep -q 'probes the solution file dd/darra-2x6-012.sowsol' "$err" ||
    why="rc $rc; exact '$v_ex', engine with --tables dd '$v_dd'"
report "$why" "solve --depth 1 --tables DIR: the engine probes DIR's solution file, exact"
mkdir -p de && cp t.sol de/darra-2x6-012.sowsol
bad 2 solve --rules darra --pits 6 --seeds 1 --depth 1 --tables de
bad 2 solve --rules darra --pits 6 --seeds 1 --depth 2 --threshold --solution d1.sol
bad 2 solve --rules odu --pits 6 --seeds 1 --depth 2 --solution d1.sol
bad 2 solve --rules darra --pits 6 --seeds 1 --depth 2 --solution missing.sol
bad 2 solve --save x.sol --depth 2 "$POS6"
bad 2 solve --levels -1 "$POS6"
bad 2 solve --levels many "$POS6"
bad 2 solve --levels 1048577 "$POS6"
bad 2 solve --levels 1000000 "$POS6"
bad 2 solve --levels 4 --depth 3 "$POS6"
bad 2 solve --levels 4 --time 1 "$POS6"
ok solve --levels 0 --moves "$POS6"
ok solve --levels 1 --threads 2 "$POS6"
# the same value and move values with the levels in memory and without them
POS9=2,1,0,1,0,1/0,1,2,0,1,0/B
run solve --json --moves "$POS9"; v_all=$(grep -o '"value".*"nodes"' "$out" | head -c 400)
run solve --json --moves --levels 0 "$POS9"; v_none=$(grep -o '"value".*"nodes"' "$out" | head -c 400)
why=OK; [ -n "$v_all" ] && [ "$v_all" = "$v_none" ] || why="levels in memory: $v_all; closure alone: $v_none"
report "$why" "solve: the same results with and without the levels in memory"

# ---- tables: sizes, memory, directories ---------------------------------------
bad 2 tables
bad 2 tables nope
bad 2 tables build
bad 2 tables build --seeds -1 --dir "$WORK/t1"
bad 2 tables build --seeds 128 --dir "$WORK/t1"
bad 2 tables build --seeds 9999999999999 --dir "$WORK/t1"
bad 2 tables build --seeds 3 --threads 0 --dir "$WORK/t1"
bad 2 tables build --seeds 3 --memory 0 --dir "$WORK/t1"
bad 2 tables build --seeds 3 --memory -1 --dir "$WORK/t1"
bad 2 tables build --seeds 3 --memory lots --dir "$WORK/t1"
bad 2 tables build --seeds 3 --dir
bad 2 tables build --seeds 3 --dir "$WORK/t1" extra
bad 2 tables build --seeds 30 --memory 1 --dir "$WORK/t1"
check "refused build (--memory 1) says what fits" grep -qE 'fit|at most|up to' "$err"
check "refused build (--memory 1) is refused up front: no level written" nofiles '*.sowtb'
bad 2 tables build --pits 18 --seeds 127 --dir "$WORK/t1"
check "impossible table size says what fits" grep -qE 'fit|at most|up to' "$err"
check "impossible table size: no file written" nofiles '*.sowtb'
bad 2 tables build --seeds 3 --memory 1000000 --dir "$WORK/t1"
bad 2 tables build --seeds 3 --memory 0.0001 --dir "$WORK/t1"
# --memory in GB, a fraction allowed (as sow solve's): a small build within 50 MB
ok tables build --pits 2 --seeds 3 --memory 0.05 --dir "$WORK/tfrac"
check "tables build --memory 0.05: the levels built" test -s "$WORK/tfrac/oware-2x2-003.sowtb"
bad 2 tables build --pits 6 --seeds 26 --memory 0.05 --dir "$WORK/tfrac"
check "tables build --memory 0.05 too small for 26 seeds: says what it would need" grep -qE 'fit|at most|up to|need' "$err"
touch "$WORK/afile"
bad 2 tables build --seeds 2 --dir "$WORK/afile"      # bad input, as for info/verify/solve
bad 2 tables build --seeds 2 --dir "$WORK/afile/sub"
bad 2 tables info "$WORK/missing"
bad 2 tables verify "$WORK/missing"
bad 2 tables info "$WORK/afile"
bad 2 tables verify "$WORK/afile"
bad 2 tables stats --seeds 3 --dir "$WORK/missing"
bad 2 tables probe --dir "$WORK/missing" "$POS6"
bad 2 tables stats --dir "$WORK/t1"
bad 2 tables stats --seeds 999 --dir "$WORK/t1"
bad 2 tables probe --dir "$WORK/t1"

# ---- tables: damaged, truncated, foreign and other-version files ---------------
TB="$WORK/tb"
run tables build --rules oware --pits 2 --seeds 4 --dir "$TB"
check "tables build oware 2x2 levels 0..4 (exit $rc)" test "$rc" -eq 0 -a -f "$TB/oware-2x2-004.sowtb"
check "tables build leaves no temporary file" nofiles '*.tmp'
ok tables info "$TB"
ok tables verify "$TB"
ok tables stats --pits 2 --seeds 4 --dir "$TB"
ok tables probe --pits 2 --dir "$TB" 1,1/1,1/A
ok solve --tables "$TB" 1,1/1,1/A
bad 2 solve --tables "$WORK/missing" 1,1/1,1/A
# ---- lean builder and compressed files ----
samefiles() { # samefiles A B: every level file of A equals B's
    local f
    for f in "$1"/*.sowtb; do cmp -s "$f" "$2/$(basename "$f")" || return 1; done
}
run tables build --rules oware --pits 2 --seeds 4 --builder lean --dir "$WORK/tbl"
check "tables build --builder lean: exit $rc, says so" grep -q "lean builder" "$out"
check "tables build --builder lean: the fast builder's files" samefiles "$WORK/tbl" "$TB"
bad 2 tables build --seeds 3 --builder nope --dir "$WORK/tbx"
# mpirelay: --rules A,B builds each in turn; a bad name anywhere in the list
# is refused before anything is built
run tables build --rules awari,oware --pits 2 --seeds 4 --dir "$WORK/tbm"
check "tables build --rules awari,oware: exit $rc, both built" test "$rc" -eq 0 -a \
    -f "$WORK/tbm/awari-2x2-004.sowtb" -a -f "$WORK/tbm/oware-2x2-004.sowtb"
check "tables build --rules awari,oware: oware's files as alone" samefiles "$TB" "$WORK/tbm"
bad 2 tables build --rules oware,nope --pits 2 --seeds 4 --dir "$WORK/tbn"
check "tables build --rules oware,nope: nothing built" test ! -e "$WORK/tbn/oware-2x2-000.sowtb"
bad 2 tables build --rules , --pits 2 --seeds 4 --dir "$WORK/tbn"
# relaylean: relay rule sets in the lean builder (edges on disk), the fast builder's files
run tables build --rules jodu --pits 3 --seeds 8 --builder lean --dir "$WORK/tbjl"
check "tables build jodu --builder lean: exit $rc, says so" grep -q "lean builder" "$out"
run tables build --rules jodu --pits 3 --seeds 8 --builder fast --dir "$WORK/tbjf"
check "tables build jodu --builder lean: the fast builder's files" samefiles "$WORK/tbjl" "$WORK/tbjf"
check "tables build jodu --builder lean: no file left behind" test "$(ls -A "$WORK/tbjl" | grep -c '^\.sow-lean-relay')" -eq 0
bad 2 tables compress --dir /etc/hostname
bad 2 tables compress --dir "$WORK/no-such-dir"
bad 2 tables compress --rules nosuch --dir "$WORK/no-such-dir"
check "tables compress --rules nosuch: the rule set named, before the directory" grep -q "unknown rule set 'nosuch'" "$err"
rm -rf "$WORK/tbz"; cp -r "$TB" "$WORK/tbz"
ok tables compress --pits 2 --dir "$WORK/tbz"
check "tables compress: every level compressed now" grep -q " 5 levels (5 compressed now)" "$out"
ok tables compress --pits 2 --dir "$WORK/tbz"
check "tables compress again: every level already compressed, none now" \
    sh -c "test \$(grep -c 'already compressed\$' '$out') -eq 5 && grep -q ' 5 levels (0 compressed now)' '$out'"
run tables info "$WORK/tbz"
check "tables info: compressed files listed as such" grep -q "(compressed)" "$out"
ok tables verify "$WORK/tbz"
run tables probe --pits 2 --dir "$TB" 2,1/1,0/A; cp "$out" "$WORK/probe-raw"
run tables probe --pits 2 --dir "$WORK/tbz" 2,1/1,0/A
check "tables probe: compressed and raw answer the same" cmp -s "$out" "$WORK/probe-raw"
ok solve --tables "$WORK/tbz" 1,1/1,1/A
bad 2 solve --tables "$WORK/afile" 1,1/1,1/A
damaged() { # damaged NAME HOW: a copy of the level set with level 4 spoilt by HOW
    local d="$WORK/$1"; rm -rf "$d"; cp -r "$TB" "$d"
    python3 "$HERE/spoil_table.py" "$d/oware-2x2-004.sowtb" "$2" "${3:-}"
}
run tables build --rules jodu --pits 2 --seeds 4 --dir "$WORK/tbj"
run tables build --rules oware --pits 3 --seeds 4 --dir "$WORK/tb3"
HOWS=(truncated header-only short-header empty trailing payload-bit header-bit magic
      fixed-version fixed-scheme fixed-encoding fixed-entries fixed-rules
      "other-file $WORK/tbj/jodu-2x2-004.sowtb" "other-file $TB/oware-2x2-003.sowtb"
      "other-file $WORK/tb3/oware-2x3-004.sowtb")
# every copy spoilt by one Python start (each start costs a few tenths of a second)
for k in "${!HOWS[@]}"; do
    rm -rf "$WORK/d$k"; cp -r "$TB" "$WORK/d$k"
    echo "$WORK/d$k/oware-2x2-004.sowtb ${HOWS[$k]}"
done | python3 "$HERE/spoil_table.py" -
for k in "${!HOWS[@]}"; do
    d="$WORK/d$k"
    bad 2 tables probe --pits 2 --dir "$d" 2,1/1,0/A
    bad 2 solve --tables "$d" 2,1/1,0/A
    bad 2 tables stats --pits 2 --seeds 4 --dir "$d"
    listing 2 tables verify "$d"
done
damaged d fixed-value
bad 2 tables probe --pits 2 --dir "$WORK/d" 2,1/1,0/A
# ---- compressed tables: a damaged block, the solver above them ----
rm -rf "$WORK/dz"; cp -r "$WORK/tbz" "$WORK/dz"
python3 "$HERE/spoil_table.py" "$WORK/dz/oware-2x2-004.sowtb" fixed-block
ok tables probe --pits 2 --dir "$WORK/dz" 1,0/1,0/A  # level 2: its blocks are sound
bad 2 tables probe --pits 2 --dir "$WORK/dz" 2,1/1,0/A
check "tables probe: the damaged block named" grep -q "level 4 block 0 damaged" "$err"
bad 2 solve --pits 2 --tables "$WORK/dz" 2,1/1,0/A
bad 2 solve --pits 2 --tables "$WORK/dz" --levels 0 2,1/1,0/A
# sow solve of a 12-seed 2x4 position over tables 0..9: raw and compressed give
# the same value and move values, by the closure above them (--levels 0) and
# by levels built in memory above them (compressed ones decompressed first);
# the tables are probed (tb_hits).
run tables build --pits 4 --seeds 9 --dir "$WORK/tz4raw"
rm -rf "$WORK/tz4"; cp -r "$WORK/tz4raw" "$WORK/tz4"
ok tables compress --pits 4 --dir "$WORK/tz4"
answer() { sed -n 's/.*"value":\(-\{0,1\}[0-9]*\).*"moves":\(\[[^]]*\]\).*"tb_hits":\([0-9]*\).*/\1 \2 \3/p' "$out"; }
for lv in 0 30; do
    ok solve --pits 4 --tables "$WORK/tz4raw" --levels $lv --moves --json 1,2,0,3/2,1,2,1/A
    want=$(answer)
    ok solve --pits 4 --tables "$WORK/tz4" --levels $lv --moves --json 1,2,0,3/2,1,2,1/A
    got=$(answer)
    check "solve --levels $lv above compressed tables: '$got', raw '$want'" \
        test -n "$want" -a "$got" = "$want" -a "${got##* }" -gt 0
done
check "damaged files were left as they were (no repair, no temp files)" nofiles '*.tmp'

# ---- interrupted build: exit 130, only complete levels, resumes ----------------
# (at 1 s levels 0..10 are written and the next is under way; each second
# more would only add levels for the build and the verify below to do)
timeout --preserve-status -k 10 -s INT 1 "$SOW" tables build --rules oware --seeds 20 --memory 8 --dir "$WORK/int" >"$out" 2>"$err"
rc=$?
check "Ctrl-C during tables build exits 130 (got $rc)" test "$rc" -eq 130
check "interrupted build leaves no temporary file" nofiles '*.tmp'
ok tables verify "$WORK/int"
# a level that does not fit the memory is not checked, and not called bad:
# one line saying what it needs (exit 2), the levels below it checked
"$SOW" tables build --seeds 10 --dir "$WORK/v10" >/dev/null 2>&1
# (levels 0..10 held: 0.65 MB; level 7, 31824 positions, needs more than 1 MB)
"$SOW" tables verify "$WORK/v10" --memory 0.001 >"$out" 2>"$err"
rc=$?
check "tables verify --memory 0.001: level 7 not checked, exit 2 (got $rc)" \
    test "$rc" -eq 2 -a "$(lines "$err")" -eq 1 -a "$(grep -c '^ok   oware 2x6 level [0-6] ' "$out")" -eq 7
check "... its line says what the level needs" \
    grep -q "level 7 not checked: it needs more than .* GB but the memory limit is 0.001 GB (--memory); levels up to 6 are checked" "$err"
check "... and nothing is called BAD" sh -c "! grep -q BAD '$out'"
# on a terminal, verify shows each level's progress as build does
if command -v script >/dev/null; then
    script -qec "'$SOW' tables verify '$WORK/int'" /dev/null >"$WORK/verify.tty" 2>&1
    check "tables verify: each level's progress on a terminal" \
        grep -Eq "level +10/[0-9]+ \[#+\] 100% .*ok   oware 2x6 level 10 " "$WORK/verify.tty"
fi
ok tables build --rules oware --seeds 3 --dir "$WORK/int"
timeout --preserve-status -k 10 -s INT 1 "$SOW" bench tables --rules oware --seeds 20 --threads 1 --keep "$WORK/bint" >"$out" 2>"$err"
rc=$?
check "Ctrl-C during bench tables --keep exits 130 with one line (got $rc)" \
    test "$rc" -eq 130 -a "$(lines "$err")" -eq 1
check "interrupted bench tables leaves no temporary file" nofiles '*.tmp'
ok tables verify "$WORK/bint/oware"
ok bench tables --rules oware --seeds 3 --keep "$WORK/bint"
check "bench tables --keep resumes: levels 0..3 are not rebuilt" \
    test "$(grep -c '^  level' "$out")" -eq 0

# ---- permissions (need a non-root user: root reads and writes everything) ------
# As root, the cases run as nobody through setpriv when it is there.
SOW_REAL=$SOW
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    chmod 755 "$WORK"
    printf '#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups "%s" "$@"\n' "$SOW_REAL" >"$WORK/as-nobody"
    chmod 755 "$WORK/as-nobody"
    SOW="$WORK/as-nobody"
fi
if [ "$(id -u)" -ne 0 ] || [ "$SOW" != "$SOW_REAL" ]; then
    mkdir -p "$WORK/locked" && cp "$TB"/* "$WORK/locked/" && chmod 000 "$WORK/locked"
    bad 2 tables probe --pits 2 --dir "$WORK/locked" 2,1/1,0/A
    bad 2 tables build --pits 2 --seeds 5 --dir "$WORK/locked"
    chmod 755 "$WORK/locked"
    # an unreadable level file: bad input from every command
    mkdir -p "$WORK/noread" && cp "$TB"/* "$WORK/noread/" && chmod 755 "$WORK/noread"
    chmod 000 "$WORK/noread/oware-2x2-003.sowtb"
    bad 2 tables probe --pits 2 --dir "$WORK/noread" 2,1/1,0/A
    bad 2 solve --tables "$WORK/noread" --pits 2 2,1/1,0/A
    listing 2 tables verify "$WORK/noread"
    bad 2 tables build --pits 2 --seeds 5 --dir "$WORK/noread"
    # a read-only directory is refused before any level is computed
    mkdir -p "$WORK/ro" && cp "$TB"/* "$WORK/ro/" && chmod 555 "$WORK/ro"
    bad 2 tables build --pits 2 --seeds 9 --dir "$WORK/ro"
    check "read-only directory: refused before level 5 is computed" \
        sh -c "! grep -q 'level *5' '$err' && test ! -e '$WORK/ro/oware-2x2-005.sowtb'"
    chmod 755 "$WORK/ro"
else
    echo "# permission cases skipped: root without setpriv"
fi
SOW=$SOW_REAL

# ---- file safety (docs/testing.md "Trust": file-type rules, lock, one error contract) ----
# The kinds of path each rule is tried with: odd KIND PATH makes PATH one
# (false where that needs root: the case is then a visible SKIP); is_kind
# says it is still that kind (a link's target untouched); named_left: the
# error line names PATH and PATH is left as it was.
echo "keep me" >"$WORK/victim.txt"
odd() {
    case $1 in
    fifo) mkfifo "$2" ;;
    dir) mkdir "$2" ;;
    link) ln -s "$WORK/victim.txt" "$2" ;;
    dangling) ln -s "$WORK/no-such-target" "$2" ;;
    dev) [ "$(id -u)" -eq 0 ] && mknod "$2" c 1 5 2>/dev/null ;; # a private /dev/zero
    file) echo "a file" >"$2" ;;
    esac
}
is_kind() {
    case $1 in
    fifo) test -p "$2" ;; dir) test -d "$2" ;; dev) test -c "$2" ;; file) test -f "$2" ;;
    link) test -L "$2" && test "$(cat "$WORK/victim.txt")" = "keep me" ;;
    dangling) test -L "$2" && ! test -e "$WORK/no-such-target" ;;
    esac
}
named_left() { grep -qF "$2" "$err" && is_kind "$1" "$2"; }
skip_case() { n=$((n + 1)); echo "ok $n - $1 # SKIP mknod needs root"; }
# Outputs: every option that writes a file refuses a link (a dangling one
# too), a FIFO, a directory and a device node with exit 2 and one line
# naming it, before any work, and leaves it as it was (run as root, solve
# --save once replaced /dev/null with a regular file).
OUTS=("solve --rules odu --pits 3 --seeds 2 --save"
      "variants play --rules oware --games 2 --csv"
      "variants play --rules oware --games 2 --lengths"
      "variants atlas --rules oware --pits 1 --seeds 1 --no-tables --csv"
      "match --a greedy --b greedy --games 2 --out"
      "match --a greedy --b greedy --games 2 --save-openings")
OD="$WORK/out-kinds"
for o in "${OUTS[@]}"; do
    for kind in link dangling fifo dir dev; do
        rm -rf "$OD"; mkdir "$OD"
        if ! odd $kind "$OD/target"; then skip_case "${o%% --*} ${o##* } a $kind"; continue; fi
        # shellcheck disable=SC2086
        T=5 bad 2 $o "$OD/target"
        check "${o%% --*} ${o##* } a $kind: named, left as it was" named_left $kind "$OD/target"
    done
done
# Output files: a regular file is replaced whole; a symlink, FIFO, device or
# directory is refused with exit 2 and left as it was.
ATLAS=(variants atlas --rules oware --pits 1 --seeds 1 --no-tables)
mkfifo "$WORK/fifo.csv"
bad 2 "${ATLAS[@]}" --csv "$WORK/fifo.csv"
check "--csv FIFO: still a FIFO" test -p "$WORK/fifo.csv"
bad 2 variants play --rules oware --games 2 --lengths "$WORK/fifo.csv"
check "--lengths FIFO: still a FIFO" test -p "$WORK/fifo.csv"
echo "keep me" >"$WORK/victim.txt"
ln -s victim.txt "$WORK/link.csv"
bad 2 "${ATLAS[@]}" --csv "$WORK/link.csv"
check "--csv symlink: still a link, its target untouched" \
    sh -c "test -L '$WORK/link.csv' && test \"\$(cat '$WORK/victim.txt')\" = 'keep me'"
mkdir "$WORK/dir.csv"
bad 2 "${ATLAS[@]}" --csv "$WORK/dir.csv"
check "--csv directory: still a directory" test -d "$WORK/dir.csv"
if [ "$(id -u)" -eq 0 ] && mknod "$WORK/null" c 1 3 2>/dev/null; then
    # a private /dev/null: what `--csv /dev/full` or `/dev/stdout` would meet
    bad 2 "${ATLAS[@]}" --csv "$WORK/null"
    check "--csv character device: still a device" test -c "$WORK/null"
else
    echo "# device case skipped: mknod needs root"
fi
echo "old" >"$WORK/reg.csv"
ok "${ATLAS[@]}" --csv "$WORK/reg.csv"
check "--csv regular file: replaced by the CSV" grep -q '^rules,pits,seeds' "$WORK/reg.csv"
check "--csv: no temporary file left" nofiles '*.csv.tmp*'
bad 2 "${ATLAS[@]}" --csv ''
bad 2 "${ATLAS[@]}" --csv "$WORK/missing/"$'x\ny.csv'

# Ctrl-C keeps the atlas rows finished in --csv FILE; --resume solves the rest
# (2x5 with 2 seeds a hole is open at --budget 2: 2.5 s, past the SIGINT)
AR=(variants atlas --rules oware --pits 1-5 --seeds 1-2 --no-tables --budget 2 --csv "$WORK/ar.csv")
timeout --preserve-status -k 10 -s INT 1.5 "$SOW" "${AR[@]}" >"$out" 2>"$err"
rc=$?
kept=$(($(lines "$WORK/ar.csv") - 1))
check "Ctrl-C during variants atlas exits 130 with the rows kept (rc $rc, $kept rows)" \
    test "$rc" -eq 130 -a ! -s "$out" -a "$kept" -ge 1 -a "$kept" -lt 10
check "its last line says how many rows and how to go on" \
    grep -q "interrupted: $kept rows kept in .*ar.csv (the same command with --resume goes on)" "$err"
check "atlas: no temporary file left" nofiles '*.csv.tmp*'
cp "$WORK/ar.csv" "$WORK/ar1.csv"
ok "${AR[@]}" --resume
check "atlas --resume: $kept rows read back, the others solved" \
    test "$(grep -c ': from .*ar.csv$' "$err")" -eq "$kept" -a "$(lines "$WORK/ar.csv")" -eq 11 \
    -a "$(grep -c ' oware ' <(sed 's/^/ /' "$out"))" -eq 10
check "atlas --resume: the rows kept come first, as they were" \
    cmp -s "$WORK/ar1.csv" <(head -n $((kept + 1)) "$WORK/ar.csv")
bad 2 variants atlas --rules oware --pits 1 --seeds 1 --resume
bad 2 "${AR[@]/ar.csv/nofile.csv}" --resume
printf 'rules,pits,seeds,value,best,pv_length,nodes,time_ms,status\nawari,1,1,2,1A,1,3,4,exact\n' >"$WORK/ar2.csv"
cp "$WORK/ar2.csv" "$WORK/ar3.csv"
bad 2 "${AR[@]/ar.csv/ar2.csv}" --resume
check "atlas --resume: a row of another run is refused, naming its line" \
    grep -q "ar2.csv: line 2: not an instance of this run" "$err"
check "atlas --resume: the refused file is left as it was" cmp -s "$WORK/ar2.csv" "$WORK/ar3.csv"
printf 'rules,pits,seeds\n' >"$WORK/ar2.csv"
bad 2 "${AR[@]/ar.csv/ar2.csv}" --resume

# Disk full: a file that cannot be committed is one error line and exit 1,
# with nothing on stdout (the tables are printed once the files are in
# place) and no file or temporary file left; needs root to mount a small
# tmpfs, else a visible SKIP.
FULLD="$WORK/full"
mkdir -p "$FULLD"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=64k tmpfs "$FULLD" 2>/dev/null; then
    dd if=/dev/zero of="$FULLD/fill" bs=4k count=64 2>/dev/null || true # fill it up
    # (stderr also holds the progress lines: the error is its last line)
    for c in "atlas --rules oware,odu --pits 1-2 --seeds 1-2 --no-tables --csv $FULLD/a.csv" \
        "play --rules oware --games 4 --csv $FULLD/p.csv --lengths $FULLD/l.csv"; do
        run variants $c
        last=$(tail -n 1 "$err")
        why=OK
        if [ "$rc" -ne 1 ]; then why="exit $rc, expected 1"
        elif [ -s "$out" ]; then why="output on stdout: $(head -c 80 "$out")"
        elif ! [[ $last =~ ^sow\ variants.*(space|full) ]]; then why="last stderr line: ${last:0:100}"
        elif [ "$(grep -c '^sow ' "$err")" -ne 1 ]; then why="$(grep -c '^sow ' "$err") error lines"
        fi
        report "$why" "disk full: variants ${c%% *} exits 1, one error line, nothing on stdout"
    done
    check "disk full: no CSV and no temporary file left" \
        sh -c "test -z \"\$(ls '$FULLD' | grep -v '^fill\$')\""
    # solve --save: one line saying why, no file and no temporary file
    bad 1 solve --rules odu --pits 3 --seeds 2 --save "$FULLD/x.sol"
    check "disk full: solve --save says why" grep -q "No space left" "$err"
    check "disk full: solve --save leaves no file" sh -c "! ls '$FULLD' | grep -q '^x\.sol'"
    # the closure on disk running out of space part-way (16 KiB left): one
    # line saying why, no temporary file; with space again the rerun resumes
    # from what it kept and gives the value of the solve in memory
    run solve --rules odu --pits 3 --seeds 2 --levels 0 --json
    v_mem=$(grep -o '"value".*"nodes":[0-9]*' "$out" | head -c 400)
    rm -f "$FULLD/fill"; dd if=/dev/zero of="$FULLD/fill" bs=4k count=12 2>/dev/null || true
    bad 1 solve --rules odu --pits 3 --seeds 2 --levels 0 --work "$FULLD/w" --disk --json
    check "disk full: solve --work --disk says why" grep -q "No space left" "$err"
    check "disk full: solve --work --disk leaves no temporary file" \
        sh -c "! ls -a '$FULLD/w' | grep -q tmp"
    # the in-memory closure's checkpoints only shorten a rerun: with no
    # space the solve goes on to its value, and a note says what was lost
    rm -f "$FULLD/fill"; dd if=/dev/zero of="$FULLD/fill" bs=4k count=64 2>/dev/null || true
    run solve --rules odu --pits 3 --seeds 2 --levels 0 --work "$FULLD/m" --json
    v_ck=$(grep -o '"value".*"nodes":[0-9]*' "$out" | head -c 400)
    check "disk full: solve --work (in memory) goes on to the value" test "$rc" = 0 -a "$v_ck" = "$v_mem"
    check "disk full: solve --work (in memory) says which checkpoint was not saved and why" \
        grep -q "note: checkpoint closure.values not saved (.*No space left" "$err"
    check "disk full: solve --work (in memory) leaves no temporary file" \
        sh -c "! ls -a '$FULLD/m' | grep -q tmp"
    rm -f "$FULLD/fill"
    run solve --rules odu --pits 3 --seeds 2 --levels 0 --work "$FULLD/w" --disk --json
    v_disk=$(grep -o '"value".*"nodes":[0-9]*' "$out" | head -c 400)
    check "disk full, then space: solve --work --disk resumes: value, PV and nodes as in memory" \
        test "$rc" = 0 -a -n "$v_mem" -a "$v_disk" = "$v_mem"
    umount "$FULLD"
else
    n=$((n + 1))
    echo "ok $n - disk full cases # SKIP cannot mount a tmpfs here (needs root)"
fi

# Inputs: a FIFO (or directory) named like a level file is refused, never waited on.
FD="$WORK/fifo-tables"; rm -rf "$FD"; cp -r "$TB" "$FD"
rm "$FD/oware-2x2-003.sowtb"; mkfifo "$FD/oware-2x2-003.sowtb"
listing 2 tables info "$FD"
listing 2 tables verify "$FD"
bad 2 tables probe --pits 2 --dir "$FD" 2,1/1,0/A
bad 2 solve --tables "$FD" --pits 2 2,1/1,0/A
bad 2 tables stats --pits 2 --seeds 3 --dir "$FD"
bad 2 tables build --pits 2 --seeds 4 --dir "$FD"
check "FIFO level file left as it was" test -p "$FD/oware-2x2-003.sowtb"
T=5 bad 2 bench probe --pits 2 --seeds 4 --probes 100 --dir "$FD"
T=5 listing 2 tables compress --pits 2 --dir "$FD"
# A FIFO given or found as a solution file: refused at once (exit 2, one
# line naming it), never opened for a blocking read (5 s: a hang fails)
SF="$WORK/fifo-sol"; rm -rf "$SF"; mkdir "$SF"; mkfifo "$SF/odu-2x3-012.sowsol"
T=5 bad 2 solve --rules odu --pits 3 --seeds 2 --solution "$SF/odu-2x3-012.sowsol"
check "solve --solution FIFO: the message names the file" grep -q "odu-2x3-012.sowsol" "$err"
T=5 bad 2 solve --rules odu --pits 3 --seeds 2 --depth 1 --solution "$SF/odu-2x3-012.sowsol"
T=5 bad 2 tables probe --rules odu --pits 3 --solution "$SF/odu-2x3-012.sowsol" 2,2,2/2,2,2/A
T=5 bad 2 solve --rules odu --pits 3 --seeds 2 --tables "$SF"
check "solve --tables DIR with a FIFO solution file: the message names it" \
    grep -q "odu-2x3-012.sowsol" "$err"
T=5 bad 2 solve --rules odu --pits 3 --seeds 2 --depth 1 --tables "$SF"
check "engine: Solution FIFO answers an error line and keeps answering" sh -c \
    "printf 'setoption name Solution value %s\nisready\nquit\n' '$SF/odu-2x3-012.sowsol' |
     timeout -k 2 5 '$SOW' engine 2>/dev/null >'$WORK/eng.out';
     grep -q 'info string error: Solution' '$WORK/eng.out' && grep -qx readyok '$WORK/eng.out'"
check "FIFO solution file left as it was" test -p "$SF/odu-2x3-012.sowsol"
# Inputs, every option that reads a file: a FIFO, a directory or a device
# node (a private /dev/zero: endless zeros) is refused at once, exit 2 with
# one line naming it, never waited on or read to the end (5 s: a hang fails)
IK="$WORK/in-kinds"
INS=("solve --rules odu --pits 3 --seeds 2 --solution"
     "solve --rules odu --pits 3 --seeds 2 --depth 1 --solution"
     "tables probe --rules odu --pits 3 2,2,2/2,2,2/A --solution"
     "bench search --file"
     "match --a sow:depth=1 --b greedy --games 2 --openings"
     "match --a sow:depth=1 --b greedy --games 2 --balance-exact"
     "match --a sow:depth=1 --b greedy --games 2 --resume --out"
     "match --b greedy --games 2 --a sow:depth=1,solution=")
# ... and every option that names a directory: a FIFO, a device or a file there
INDIRS=("solve --pits 2 1,1/1,1/A --tables"
        "solve --rules odu --pits 3 --seeds 2 --levels 0 --work"
        "tables info" "tables verify"
        "tables stats --pits 2 --seeds 2 --dir"
        "tables probe --pits 2 1,1/1,1/A --dir"
        "tables build --pits 2 --seeds 2 --dir"
        "tables compress --pits 2 --dir"
        "variants atlas --rules oware --pits 1 --seeds 1 --tables"
        "bench probe --pits 2 --seeds 2 --dir"
        "bench tables --rules oware --pits 2 --seeds 2 --keep"
        "serve --port 0 --tables"
        "match --b greedy --games 2 --a sow:depth=1,tables=")
in_case() { # in_case KIND CMD: CMD with PATH appended (glued after '=')
    local kind=$1 c=$2 p="$IK/$1"
    if ! odd "$kind" "$p"; then skip_case "$c a $kind"; return; fi
    # shellcheck disable=SC2086
    if [[ $c == *= ]]; then T=5 bad 2 ${c%% --a*} --a "${c##*--a }$p"
    else T=5 bad 2 $c "$p"; fi
    check "$c a $kind: named, left as it was" named_left "$kind" "$p"
}
for c in "${INS[@]}"; do
    for kind in fifo dir dev; do rm -rf "$IK"; mkdir "$IK"; in_case $kind "$c"; done
done
for c in "${INDIRS[@]}"; do
    for kind in fifo dev file; do rm -rf "$IK"; mkdir "$IK"; in_case $kind "$c"; done
done
# Files found inside a directory: a level or solution file that is a device
# node or a directory is refused as a FIFO is (above)
for kind in dev dir; do
    DK="$WORK/dir-$kind"; rm -rf "$DK"; cp -r "$TB" "$DK"; rm "$DK/oware-2x2-003.sowtb"
    if ! odd $kind "$DK/oware-2x2-003.sowtb"; then skip_case "a level file as a $kind"; continue; fi
    T=5 listing 2 tables info "$DK"
    T=5 listing 2 tables verify "$DK"
    T=5 bad 2 tables probe --pits 2 --dir "$DK" 2,1/1,0/A
    T=5 bad 2 solve --tables "$DK" --pits 2 2,1/1,0/A
    T=5 bad 2 tables stats --pits 2 --seeds 3 --dir "$DK"
    T=5 bad 2 tables build --pits 2 --seeds 4 --dir "$DK"
    T=5 bad 2 bench probe --pits 2 --seeds 4 --probes 100 --dir "$DK"
    T=5 listing 2 tables compress --pits 2 --dir "$DK"
    check "a level file as a $kind: left as it was" is_kind $kind "$DK/oware-2x2-003.sowtb"
    SK="$WORK/sol-$kind"; rm -rf "$SK"; mkdir "$SK"; odd $kind "$SK/odu-2x3-012.sowsol"
    T=5 bad 2 solve --rules odu --pits 3 --seeds 2 --tables "$SK"
    check "solve --tables DIR, its solution file a $kind: named, left as it was" \
        named_left $kind "$SK/odu-2x3-012.sowsol"
done
# The engine: Solution or Tables naming a FIFO, directory or device answers
# one error line and goes on; a FIFO named like a solution file in Tables
# is not waited on at go; end of input after a FIFO Solution ends it.
ENG_ODU='setoption name Rules value odu\nsetoption name Pits value 3\nsetoption name Seeds value 2\n'
for kind in fifo dir dev; do
    rm -rf "$IK"; mkdir "$IK"
    if ! odd $kind "$IK/$kind"; then skip_case "engine Solution a $kind"; continue; fi
    for opt in Solution Tables; do
        [ $opt = Tables ] && [ $kind = dir ] && continue # a directory is what Tables takes
        printf "${ENG_ODU}setoption name %s value %s\nisready\nquit\n" $opt "$IK/$kind" |
            timeout -k 2 5 "$SOW" engine >"$out" 2>"$err"; rc=$?
        check "engine: $opt a $kind: one error line, then readyok, exit 0 (rc $rc)" \
            sh -c "test $rc -eq 0 && test \$(grep -c 'info string error:.*$opt' '$out') -eq 1 &&
                   grep -qx readyok '$out'"
    done
done
printf "${ENG_ODU}setoption name Tables value %s\nposition startpos\ngo depth 1\nquit\n" "$SF" |
    timeout -k 2 5 "$SOW" engine >"$out" 2>"$err"; rc=$?
check "engine: Tables with a FIFO solution file: go answers a bestmove, exit 0 (rc $rc)" \
    sh -c "test $rc -eq 0 && grep -q '^bestmove [1-3]A' '$out'"
printf 'setoption name Solution value %s\nposition startpos\ngo depth 1\n' "$SF/odu-2x3-012.sowsol" |
    timeout -k 2 5 "$SOW" engine >"$out" 2>"$err"; rc=$?
check "engine: Solution FIFO, go, end of input (no quit): a bestmove, exit 0 (rc $rc)" \
    sh -c "test $rc -eq 0 && grep -q '^bestmove ' '$out'"
T=5 bad 2 match --a "sow:solution=$SF/odu-2x3-012.sowsol" --b greedy --games 2
check "match sow:solution=FIFO: named" grep -q "odu-2x3-012.sowsol" "$err"
# A checkpoint name in --work that is not a regular file (a FIFO, a
# directory, a link, a device) is refused before the solve: exit 2, one line
# naming it, left as it was; never waited on, and no save failing silently
# on it later (in memory: closure.*, level-*.ck; on disk: disk.state, disk-*)
WF="$WORK/ck-kinds"
for name in closure.values closure.keys closure.expand level-odu-2x3-004.ck \
            disk.state disk-cur.keys disk-in-008.keys disk-012.keys disk-012.values; do
    disk=; [ "${name#disk}" != "$name" ] && disk=--disk
    for kind in fifo dir link dev; do
        rm -rf "$WF"; mkdir "$WF"
        if ! odd $kind "$WF/$name"; then skip_case "--work $name as a $kind"; continue; fi
        # shellcheck disable=SC2086
        T=5 bad 2 solve --rules odu --pits 3 --seeds 2 --levels 0 --work "$WF" $disk
        check "solve --work $disk: $name as a $kind: named, left as it was" \
            named_left $kind "$WF/$name"
    done
done
# One solve per --work directory: a second waits for the first (saying so)
# and then gives the same answer; Ctrl-C stops the wait (130)
WL="$WORK/work-lock"; rm -rf "$WL"
WSOLVE=(solve --rules jodu --pits 4 --seeds 2 --levels 0 --work "$WL" --disk --json)
timeout -k 5 "$T" "$SOW" "${WSOLVE[@]}" >"$WORK/wl1.out" 2>"$WORK/wl1.err" & wpid=$!
sleep 0.2
run "${WSOLVE[@]}"; wait "$wpid"; rc1=$?
v1=$(grep -o '"value".*"nodes"' "$WORK/wl1.out"); v2=$(grep -o '"value".*"nodes"' "$out")
why=OK; [ "$rc1" = 0 ] && [ "$rc" = 0 ] && [ -n "$v1" ] && [ "$v1" = "$v2" ] &&
    grep -q "waiting for another sow" "$err" || why="rc $rc1 and $rc; '$v1' vs '$v2'; $(head -c 200 "$err")"
report "$why" "two solve --work DIR at once: the second waits, says so, the same answer"
# (the directory's lock held by flock(1) for 1.5 s, as a solve would hold
# it); SIGTERM stops the wait as Ctrl-C does, with its own status
for sig in INT:130 TERM:143; do
    rm -rf "$WL"; mkdir "$WL"
    flock "$WL/.sowtb.lock" sleep 1.5 & wpid=$!
    sleep 0.2
    timeout --preserve-status -k 5 -s "${sig%:*}" 0.5 "$SOW" "${WSOLVE[@]}" >"$out" 2>"$err"; rc=$?
    wait "$wpid"
    why=OK; [ "$rc" = "${sig#*:}" ] && grep -q "waiting for another sow" "$err" && [ ! -s "$out" ] ||
        why="rc $rc: $(head -c 200 "$err")"
    report "$why" "solve --work DIR waiting for another solve: SIG${sig%:*} stops the wait, ${sig#*:}"
done
# A damaged checkpoint in --work is named on stderr when it is dropped
WV="$WORK/work-damaged"; rm -rf "$WV"
run solve --rules odu --pits 3 --seeds 2 --levels 0 --work "$WV" --json
v1=$(grep -o '"value".*"nodes"' "$out")
printf "XXXXXXXX" | dd of="$WV/closure.values" bs=1 seek=$(($(stat -c %s "$WV/closure.values") - 8)) conv=notrunc status=none
run solve --rules odu --pits 3 --seeds 2 --levels 0 --work "$WV" --json
why=OK; [ "$rc" = 0 ] && [ -n "$v1" ] && [ "$(grep -o '"value".*"nodes"' "$out")" = "$v1" ] &&
    [ "$(grep -c 'closure.values: damaged, ignored' "$err")" = 1 ] || why="rc $rc: $(head -c 200 "$err")"
report "$why" "solve --work DIR: a damaged checkpoint is named once on stderr, the same answer"
DD="$WORK/dir-tables"; rm -rf "$DD"; cp -r "$TB" "$DD"
rm "$DD/oware-2x2-003.sowtb"; mkdir "$DD/oware-2x2-003.sowtb"
bad 2 tables probe --pits 2 --dir "$DD" 2,1/1,0/A
bad 2 tables build --pits 2 --seeds 4 --dir "$DD"

# Temporary files: a FIFO or a symlink at the temporary name is removed,
# never opened or followed.
TD="$WORK/tmp-link"; rm -rf "$TD"; cp -r "$TB" "$TD"
ln -s ../victim.txt "$TD/oware-2x2-005.sowtb.tmp"
ok tables build --pits 2 --seeds 5 --dir "$TD"
check "temp-name symlink: its target untouched" test "$(cat "$WORK/victim.txt")" = "keep me"
check "temp-name symlink: the level is a regular file, not a link" \
    sh -c "test -f '$TD/oware-2x2-005.sowtb' && ! test -L '$TD/oware-2x2-005.sowtb'"
TF="$WORK/tmp-fifo"; rm -rf "$TF"; cp -r "$TB" "$TF"
mkfifo "$TF/oware-2x2-005.sowtb.tmp"
ok tables build --pits 2 --seeds 5 --dir "$TF"
check "temp-name FIFO: removed, the level is a regular file" \
    sh -c "test -f '$TF/oware-2x2-005.sowtb' && ! test -e '$TF/oware-2x2-005.sowtb.tmp'"
ok tables verify "$TF"

# Stale temporary files (fileio.h rule 5): the FILE.tmp.PID of a writer
# killed by SIGKILL is removed when FILE is written again, and by whoever
# takes a tables or --work directory's lock; a live process's temporary
# file, another target's (on a plain write) and names not of sow's temporary
# naming stay.  The dead PID is a sow killed by SIGKILL; its temporary file
# is faked with that PID (the kill cannot be timed inside the write).
"$SOW" solve --rules oware "$START" >/dev/null 2>&1 & dead=$!
kill -KILL "$dead"; wait "$dead" 2>/dev/null
sleep 60 & live=$!
stale() { # stale DIR NAME...: each DIR/NAME a partial file
    local d=$1 f; shift
    for f in "$@"; do printf 'partial' >"$d/$f"; done
}
SW="$WORK/stale"; rm -rf "$SW"; mkdir "$SW"
stale "$SW" "x.sol.tmp.$dead" "x.sol.tmp.$dead.1" "x.sol.tmp.$live" "y.sol.tmp.$dead"
ok solve --rules odu --pits 3 --seeds 2 --save "$SW/x.sol"
check "solve --save FILE: a killed writer's FILE.tmp.PID removed" \
    sh -c "! [ -e '$SW/x.sol.tmp.$dead' ] && ! [ -e '$SW/x.sol.tmp.$dead.1' ]"
check "solve --save FILE: a live process's FILE.tmp.PID and another file's left" \
    test -f "$SW/x.sol.tmp.$live" -a -f "$SW/y.sol.tmp.$dead"
# under a tables directory's lock (the builder's) and a --work directory's
for how in tables work; do
    SW="$WORK/stale-$how"; rm -rf "$SW"
    if [ $how = tables ]; then cp -r "$TB" "$SW"; else mkdir "$SW"; fi
    stale "$SW" "odu-2x3-012.sowsol.tmp.$dead" "a.csv.tmp.$dead.2" ".sowtb.probe.$dead" \
        "b.csv.tmp.$live" "keep.tmp" "keep.tmp.x$dead"
    if [ $how = tables ]; then ok tables build --pits 2 --seeds 5 --dir "$SW"
    else ok solve --rules odu --pits 3 --seeds 2 --levels 0 --work "$SW"; fi
    check "$how directory's lock holder: dead writers' temporary files removed" \
        sh -c "cd '$SW' && ! [ -e odu-2x3-012.sowsol.tmp.$dead ] && ! [ -e a.csv.tmp.$dead.2 ] &&
               ! [ -e .sowtb.probe.$dead ]"
    check "$how directory's lock holder: a live writer's file and other names left" \
        sh -c "cd '$SW' && [ -f b.csv.tmp.$live ] && [ -f keep.tmp ] && [ -f keep.tmp.x$dead ]"
done
kill "$live" 2>/dev/null; wait "$live" 2>/dev/null
rm -rf "$WORK/stale" "$WORK/stale-tables" "$WORK/stale-work" # (later cases look for *.tmp)

# Names: tables info checks each header against its file name.
MD="$WORK/misnamed"; rm -rf "$MD"; mkdir "$MD"
cp "$TB/oware-2x2-003.sowtb" "$MD/oware-2x2-004.sowtb"      # levels swapped
cp "$TB/oware-2x2-003.sowtb" "$MD/awari-2x2-003.sowtb"      # another rule set
cp "$WORK/tb3/oware-2x3-003.sowtb" "$MD/oware-2x2-002.sowtb" # another board
for f in oware-2x2-004 awari-2x2-003 oware-2x2-002; do
    run tables info "$MD"
    check "tables info: misnamed $f.sowtb reported BAD (exit $rc)" \
        sh -c "test $rc -eq 2 && grep -q '^$f.sowtb *BAD' '$out'"
done

# Exit statuses do not depend on the command: bad input is 2 everywhere.
bad 2 tables build --seeds 2 --dir ''
bad 2 tables info --dir ''
for k in 0 4 8 12 13; do # the damaged copies above: truncated, trailing, fixed-version, ...
    bad 2 tables build --pits 2 --seeds 5 --dir "$WORK/d$k"
    check "damaged level 4 (${HOWS[$k]%% *}): no level built above it" \
        test ! -e "$WORK/d$k/oware-2x2-005.sowtb"
done

# An address-space limit (ulimit -v) refuses up front like --memory: exit 2,
# saying what fits (skipped where the binary cannot start under the limit:
# sanitizers reserve terabytes of shadow memory).
printf '#!/bin/sh\nulimit -v 400000\nexec "%s" "$@"\n' "$SOW" >"$WORK/ulimited"
chmod 755 "$WORK/ulimited"
if "$WORK/ulimited" --help >/dev/null 2>&1; then
    SOW_SAVE=$SOW; SOW="$WORK/ulimited"
    bad 2 tables build --seeds 20 --dir "$WORK/ul"
    check "ulimit -v refusal says what fits" grep -qE 'levels up to [0-9]+ fit' "$err"
    check "ulimit -v refusal: no level written" test ! -e "$WORK/ul/oware-2x6-000.sowtb"
    SOW=$SOW_SAVE
else
    echo "# ulimit -v case skipped: this sow does not start under the limit"
fi

# One line on stderr, whatever the arguments hold.
bad 2 $'bogus\ncommand'
bad 2 tables $'bo\ngus'
bad 2 tables info "$WORK/"$'new\nline'
bad 2 tables build --seeds 2 --dir "$WORK/afile/"$'a\nb'
bad 2 solve --tables "$WORK/"$'x\ny' "$POS6"
for c in "" tables variants; do
    # shellcheck disable=SC2086
    run $c; check "bare 'sow $c': one line pointing to --help" \
        sh -c "test $rc -eq 2 && test \$(awk 'END{print NR}' '$err') -eq 1 && grep -q -- --help '$err' && ! test -s '$out'"
done

# --threads beyond what the machine runs is refused, saying what fits.
bad 2 tables verify --threads 255 "$TB"
check "--threads refusal says the range" grep -qE 'in 1\.\.[0-9]+' "$err"
bad 2 solve --threads 1024 "$POS6"
bad 2 variants play --threads 1024 --games 1
bad 2 tables build --threads 1024 --seeds 2 --dir "$WORK/t2"

# play: a bad move name is refused before any move is generated (this jodu
# position has a relay that takes minutes to prove endless).
JODU_SLOW=3,2,3,2,1,0,7,15,2,3/5,6,16,4,1,0,5,2,7,0/A
T_SAVE=$T; T=10
bad 2 play --rules jodu "$JODU_SLOW" 9999999999A
bad 2 play --rules jodu "$JODU_SLOW" 1B
T=$T_SAVE
# ... and Ctrl-C reaches inside the relay: solve stops within seconds.
start=$(date +%s)
timeout --preserve-status -k 20 -s INT 2 "$SOW" solve --rules jodu "$JODU_SLOW" >"$out" 2>"$err"; rc=$?
took=$(( $(date +%s) - start ))
check "Ctrl-C in a long relay: solve exits 130 within seconds (rc $rc, ${took}s)" \
    test "$rc" -eq 130 -a "$took" -le 8 -a ! -s "$out"

# timeout(1) signals the command and then its whole process group, so one
# stop arrives twice within microseconds: the echo must not cut the clean
# stop short (a second signal ends a solve at once only half a second on).
mkdir -p "$WORK/wint"
timeout --preserve-status -k 20 -s INT 3 "$SOW" solve --rules oware --pits 5 --seeds 2 --levels 0 \
    --threads 1 --work "$WORK/wint" --disk >"$out" 2>"$err"; rc=$?
check "timeout -s INT during a solve on disk: exit 130, no output (rc $rc)" test "$rc" -eq 130 -a ! -s "$out"
check "timeout -s INT during a solve on disk: the clean stop says what it kept" \
    grep -q "^sow solve: stopped .*kept in" "$err"

# SIGTERM is handled like Ctrl-C: clean stop, exit 143, no temporary file.
timeout --preserve-status -k 10 -s TERM 1 "$SOW" tables build --rules oware --seeds 20 --memory 8 --dir "$WORK/term" >"$out" 2>"$err"
rc=$?
check "SIGTERM during tables build exits 143 (got $rc)" test "$rc" -eq 143
check "SIGTERM: no temporary file left" nofiles '*.tmp'
ok tables verify "$WORK/term"
timeout --preserve-status -k 10 -s INT 1 "$SOW" variants play --rules oware --games 300000 --engine-depth 0 >"$out" 2>"$err"
rc=$?
check "Ctrl-C in variants play: exit 130 and nothing on stdout (rc $rc)" test "$rc" -eq 130 -a ! -s "$out"

# Two builders in one directory, the first one slowed (levels to 21, about a second: it must still hold the lock when the second starts 0.3 s later): the second waits for the first (lock), both
# succeed, the levels are complete; a prober running meanwhile never meets a
# partial level file.
CD="$WORK/concurrent"
"$SOW" tables build --rules awari --pits 4 --seeds 21 --threads 1 --dir "$CD" >/dev/null 2>"$WORK/a.err" &
pa=$!
sleep 0.3
"$SOW" tables build --rules awari --pits 4 --seeds 21 --threads 1 --dir "$CD" >/dev/null 2>"$WORK/b.err" &
pb=$!
# Slow the first writer while it holds the lock: stopped for a second, then
# resumed (what made a truncated level appear before the lock).
kill -STOP "$pa" 2>/dev/null && { sleep 1; kill -CONT "$pa"; }
probe_bad=0
while kill -0 "$pa" 2>/dev/null || kill -0 "$pb" 2>/dev/null; do
    "$SOW" tables info "$CD" >"$WORK/info.out" 2>&1 || { grep -q BAD "$WORK/info.out" && probe_bad=1; }
done
wait "$pa"; ra=$?; wait "$pb"; rb=$?
check "concurrent builders: both exit 0 (A $ra, B $rb)" test "$ra" -eq 0 -a "$rb" -eq 0
check "concurrent builders: the second one waited for the lock" grep -q 'waiting' "$WORK/b.err"
check "concurrent builders: info never saw a partial level" test "$probe_bad" -eq 0
ok tables verify "$CD"

# ---- variants and bench -----------------------------------------------------
bad 2 variants
bad 2 variants nope
bad 2 variants atlas --rules nope
bad 2 variants atlas --pits x
bad 2 variants atlas --pits 0
bad 2 variants atlas --seeds 3-1
bad 2 variants atlas --budget -1
bad 2 variants play --games -1
bad 2 variants play --games 0
bad 2 variants atlas --rules oware --pits 1 --seeds 1 --csv "$WORK/afile/x.csv"
check "no partial csv" nofiles 'x.csv'
bad 2 bench nope
bad 2 bench movegen --rules nope
bad 2 bench search --repeat 0
bad 2 bench search --repeat x
bad 2 bench search --file "$WORK/missing.txt"
# (the comment longer than any line buffer: read as one line, not as more)
{ printf '# two small positions %04000d\n' 0
  printf 'oware 6 0,0,0,2,1,1/1,0,2,0,0,1/A\njodu 4 1,0,2,0/1,1,0,1/A\n'; } >"$WORK/bench.txt"
printf 'oware six 1,1/1,1/A\n' >"$WORK/badbench.txt"
bad 2 bench search --file "$WORK/badbench.txt"
for i in $(seq 257); do echo 'oware 2 1,1/1,1/A'; done >"$WORK/manybench.txt"
bad 2 bench search --file "$WORK/manybench.txt"
check "bench search: a file of 257 positions names the limit" grep -q "257: more than 256 positions" "$err"
ok bench search --file "$WORK/bench.txt" --repeat 2
why=OK; grep -q 'Values and nodes identical with 1 and 2 threads: yes' "$out" || why="no identity line"
report "$why" "bench search: values and nodes identical with 1 and 2 threads"
# bench probe: small levels, two block sizes; raw and compressed agree
bad 2 bench probe --block-shift 7
bad 2 bench probe --block-shift 14,x
bad 2 bench probe --rules nope
bad 2 bench probe --seeds 40 # level 40: 66 G positions, refused up front
ok bench probe --pits 3 --seeds 6 --probes 5000 --block-shift 8,10
check "bench probe: compressed and raw agree for both block sizes" \
    test "$(grep -c 'compressed and raw agree' "$out")" -eq 2
# Ctrl-C (here while levels 0..18 are built): exit 130, one line, and the
# temporary directory of the levels removed
before=$(ls -d "${TMPDIR:-/tmp}"/sow-bench-probe-* 2>/dev/null | sort)
timeout --preserve-status -k 10 -s INT 1.5 "$SOW" bench probe --seeds 18 >"$out" 2>"$err"
rc=$?
after=$(ls -d "${TMPDIR:-/tmp}"/sow-bench-probe-* 2>/dev/null | sort)
check "Ctrl-C during bench probe: exit 130, one line, no temporary directory left (rc $rc)" \
    test "$rc" -eq 130 -a "$(lines "$err")" -eq 1 -a "$before" = "$after"
# --top-only: the top level alone, over lower levels found compressed
mkdir "$WORK/ptop"
ok tables build --pits 3 --seeds 6 --dir "$WORK/ptop"
ok tables compress --pits 3 --dir "$WORK/ptop"
bad 2 bench probe --pits 3 --seeds 6 --probes 500 --dir "$WORK/ptop" --top-only
rm "$WORK/ptop/oware-2x3-006.sowtb"
ok tables build --pits 3 --seeds 6 --dir "$WORK/ptop"
ok bench probe --pits 3 --seeds 6 --probes 500 --dir "$WORK/ptop" --top-only
check "bench probe --top-only: level 6 alone, compressed and raw agree" \
    grep -q 'over levels 6..6 .*' "$out"
check "bench probe --top-only: agree" grep -q 'compressed and raw agree' "$out"

# a program that cannot start: one line (sh's own message was
# printed by each worker's program before it), exit 2; --grace's range
bad 2 match --a greedy --b cmd:/nonexistent --games 2
bad 2 match --a greedy --b cmd:/nonexistent --games 4 --concurrency 2
bad 2 match --a greedy --b 'cmd:echo >&2 one; echo >&2 two; exit 5' --games 2
bad 2 match --a greedy --b greedy --grace -1
# Every wait on a program is bounded, at the default --grace (2 s): a
# program (cmd:) that never answers go, crashes or plays an illegal move
# forfeits each game with the reason on stderr; SIGINT and SIGTERM stop a
# match at once (130, 143) with none of its programs left running.  The
# programs are sh scripts that answer isready; go is their fault.
fake() { # fake NAME 'what it does on go'
    # shellcheck disable=SC2016
    printf 'while read -r l; do\n case $l in\n  isready) echo readyok;;\n  go*) %s;;\n esac\ndone\n' \
        "$2" >"$WORK/$1.sh"
}
fake hang 'while :; do sleep 1; done'
fake segv 'kill -SEGV $$'
fake illegal 'echo "bestmove 9Z"'
left() { # left NAME: true if a program of that script still runs (then ended;
    # what ps says of it goes out first as a TAP comment, the failure's detail)
    local p; p=$(pgrep -f "$WORK/$1.sh") || return 1
    ps -o pid=,ppid=,pgid=,stat=,etime=,args= -p "${p//$'\n'/,}" 2>&1 | sed 's/^/# left running: /'
    # shellcheck disable=SC2086
    kill -KILL $p 2>/dev/null; return 0
}
none_left() { ! left "$1"; }
forfeits() { [ "$rc" -eq 0 ] && [ "$(grep -cF "(b forfeits: $1" "$err")" -eq 2 ]; }
FM=(match --a greedy --games 2 --unbalanced --time 10 --concurrency 2)
for f in "hang:no bestmove within" "segv:was killed by signal 11" "illegal:the illegal move '9Z'"; do
    name=${f%%:*} why=${f#*:}
    T=10 run "${FM[@]}" --b "cmd:exec sh $WORK/$name.sh"
    check "match: a program that does $name on go forfeits each game, saying why ($why; rc $rc)" \
        forfeits "$why"
    check "match: no $name program left running" none_left "$name"
done
for sig in INT:130 TERM:143; do
    "$SOW" "${FM[@]}" --b "cmd:sh $WORK/hang.sh" >"$out" 2>"$err" & mpid=$!
    sleep 0.7
    kill -s "${sig%:*}" $mpid
    t0=$(date +%s%N)
    while kill -0 $mpid 2>/dev/null && [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 3000 ]; do sleep 0.05; done
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    kill -0 $mpid 2>/dev/null && kill -KILL $mpid
    wait $mpid; rc=$?
    # 1.5 s: at once, not after the 2 s --grace (with room for a loaded machine)
    check "match: SIG${sig%:*} while a program thinks: exit ${sig#*:} at once (rc $rc, $ms ms)" \
        test "$rc" -eq "${sig#*:}" -a "$ms" -lt 1500
    check "match: SIG${sig%:*}: no program left running" none_left hang
done

echo "1..$n"
echo "# $n cases, $failed failed, $todo pending"
[ "$failed" -eq 0 ]
