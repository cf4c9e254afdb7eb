#!/usr/bin/env bash
# sow serve against curl on a free loopback port (TAP on stdout).
#
# usage: tests/serve/run.sh [SOW]     (default: build/src/cli/sow)
#
# Starts `sow serve --port 0` (it prints the port it took), waits until it
# answers, and checks: answers from the tables and the solver; every bad
# request, sent as is by curl, gets its 4xx with a JSON error and the server
# answers afterwards; the engine's estimate when the time budget runs out;
# SIGTERM and SIGINT stop it (143, 130); bad options.  Every wait is bounded;
# the servers are killed on exit whatever happens.  Loopback only.  (api.py:
# hundreds of positions against sow solve, the shared levels, solution files,
# the load test; browser.py: the page in a browser.)
set -u
SOW=$(realpath "${1:-build/src/cli/sow}")
HERE=$(cd "$(dirname "$0")" && pwd)
[ -x "$SOW" ] || { echo "Bail out! no sow executable at $SOW"; exit 1; }
command -v curl >/dev/null || { echo "1..0 # SKIP no curl"; exit 0; }
WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/no-tables"
export SOW_TABLES="$WORK/no-tables" # never the repository's tables/

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "#   $l"; done; }

# start NAME ARGS...: a server in the background; PORT and PID set once it
# printed where it listens (at most 10 s).
start() {
    local name=$1; shift
    "$SOW" serve --port 0 "$@" 2>"$WORK/$name.err" &
    PID=$!
    PIDS+=("$PID")
    PORT=""
    for _ in $(seq 100); do
        PORT=$(sed -n 's|^sow serve: listening on http://127.0.0.1:\([0-9]*\)/$|\1|p' "$WORK/$name.err")
        [ -n "$PORT" ] && return 0
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.1
    done
    return 1
}

# get PATH?QUERY [curl args]: CODE and BODY of one request (10 s at most).
get() {
    local url=$1; shift
    CODE=$(curl -s --max-time 10 --path-as-is -o "$WORK/body" -w '%{http_code}' "$@" \
        "http://127.0.0.1:$PORT$url")
    BODY=$(cat "$WORK/body" 2>/dev/null)
}

# levels 0..6 of oware 2x3, for the answers from tables (0.1 s)
"$SOW" tables build --rules oware --pits 3 --seeds 6 --dir "$WORK/tb" >/dev/null 2>&1 ||
    echo "# tables build failed"
# --levels 0: the tables and the solver answer (api.py tests the shared levels)
if start main --time 4 --tables "$WORK/tb" --levels 0; then
    ok "sow serve --port 0 listens (port $PORT)"
else
    notok "sow serve --port 0 listens" "$(cat "$WORK/main.err")"
    echo "1..$n"; exit 1
fi
MAIN=$PID

get "/api/oware?pits=3&seeds=2"
case $CODE:$BODY in
200:'{"rules":"oware","pits":3,"pos":"2,2,2/2,2,2/A/0-0/-","value":6,"exact":true,"source":"closure"'*)
    ok "start of oware 2x3x2" ;;
*) notok "start of oware 2x3x2" "$CODE $BODY" ;;
esac

get "/api/oware?pos=1,1,1/1,1,1/A"
want=$("$SOW" solve --rules oware 1,1,1/1,1,1/A --json | sed 's/.*"value":\(-*[0-9]*\),.*/\1/')
case $CODE:$BODY in
200:*'"value":'"$want"',"exact":true,"source":"tables"'*) ok "a 6-seed position from the tables" ;;
*) notok "a 6-seed position from the tables (value $want)" "$CODE $BODY" ;;
esac

# bad requests: each its 4xx with {"error": ...}, and the server goes on
long=$(printf '1%.0s' $(seq 700))
while IFS='|' read -r want url extra; do
    # shellcheck disable=SC2086
    get "$url" $extra
    if [ "$CODE" = "$want" ] && [[ $BODY == '{"error":"'*'"}' ]]; then
        get "/api/awari?pits=2&seeds=1"
        if [ "$CODE" = 200 ]; then ok "$want for $url $extra, then serving"
        else notok "$want for $url $extra, then serving" "then $CODE $BODY"; fi
    else
        notok "$want for $url $extra" "got $CODE $BODY"
    fi
done <<LIST
404|/nothing.html
404|/index.html/
404|/./index.html
404|/api/chess
404|/api/oware/nothing
404|/api/../../etc/passwd
404|/api/%2e%2e%2fetc%2fpasswd
400|/api/oware?pos=garbage
400|/api/oware?pos=1,1,1/1,1,1/C
400|/api/oware?pos=1,1%0A/1,1/A
400|/api/oware?pos=1,1,1/1,1,1/A&pits=4
400|/api/oware?pits=0
400|/api/oware?pits=x
400|/api/oware?seeds=-1
400|/api/oware?seeds=99999999999999999999
400|/api/oware?pos=1,1/1,1/A&pos=1,1/1,1/A
400|/api/oware?file=/etc/passwd
400|/api/oware?pits=19
414|/api/oware?pos=$long
414|/api/oware?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9
405|/api/oware|-X POST
405|/api/oware|-X DELETE
LIST

# SIGTERM stops it: exit 143, at most 5 s
kill -TERM "$MAIN"
rc=""
for _ in $(seq 50); do
    kill -0 "$MAIN" 2>/dev/null || { wait "$MAIN"; rc=$?; break; }
    sleep 0.1
done
if [ "$rc" = 143 ] && grep -q '^sow serve: stopped$' "$WORK/main.err"; then ok "SIGTERM stops it (143)"
else notok "SIGTERM stops it (143)" "rc '$rc'" "$(cat "$WORK/main.err")"; fi

# past the time budget: the engine's estimate, in about the budget
if start engine --time 0.4; then
    t0=$(date +%s%N)
    get "/api/oware"
    ms=$((($(date +%s%N) - t0) / 1000000))
    case $CODE:$BODY in
    200:*'"exact":false,"source":"engine","depth":'[0-9]*'"moves":[{"move":'*)
        if [ "$ms" -lt 3000 ]; then ok "oware 2x6 start: the engine's estimate in $ms ms"
        else notok "oware 2x6 start: the engine's estimate in $ms ms (budget 0.4 s)"; fi ;;
    *) notok "oware 2x6 start: the engine's estimate" "$CODE $BODY" ;;
    esac
    get "/api/oware/mainline"
    case $CODE:$BODY in
    200:*'"exact":false,"source":"engine"'*'"line":[{"move":'*) ok "mainline: the engine's PV" ;;
    *) notok "mainline: the engine's PV" "$CODE $BODY" ;;
    esac
    kill -INT "$PID"; wait "$PID"; rc=$?
    if [ "$rc" = 130 ]; then ok "SIGINT stops it (130)"; else notok "SIGINT stops it (130)" "rc $rc"; fi
else
    notok "sow serve --time 0.4 listens" "$(cat "$WORK/engine.err")"
fi

# a damaged level in --tables: left out with a note on stderr, and the
# answers still exact (the solver's)
cp -r "$WORK/tb" "$WORK/tbd"
lvl=$(ls "$WORK"/tbd/*-006.sowtb)
printf 'XX' | dd of="$lvl" bs=1 seek=200 conv=notrunc 2>/dev/null
if start damaged --time 4 --tables "$WORK/tbd" --levels 0; then
    get "/api/oware?pits=3&seeds=2"
    if [ "$CODE" = 200 ] && [[ $BODY == *'"value":6,"exact":true'* ]] &&
        grep -q "^sow serve: note: .*-006.sowtb: .*damaged.*left out" "$WORK/damaged.err"; then
        ok "a damaged level in --tables: a note names it, the answer stays exact"
    else
        notok "a damaged level in --tables: a note names it, the answer stays exact" \
            "$CODE $BODY" "$(cat "$WORK/damaged.err")"
    fi
    kill -TERM "$PID"; wait "$PID" 2>/dev/null
else
    notok "sow serve over a damaged level listens" "$(cat "$WORK/damaged.err")"
fi

# bad options: one line, exit 2
"$SOW" serve --bind nowhere >/dev/null 2>"$WORK/e"; rc=$?
if [ $rc = 2 ] && [ "$(wc -l <"$WORK/e")" = 1 ]; then ok "--bind nowhere: exit 2"
else notok "--bind nowhere: exit 2" "rc $rc" "$(cat "$WORK/e")"; fi
for t in "$WORK/none" "$WORK/tb:$WORK/none" "$WORK/tb::$WORK/tb"; do
    "$SOW" serve --tables "$t" >/dev/null 2>"$WORK/e"; rc=$?
    if [ $rc = 2 ] && [ "$(wc -l <"$WORK/e")" = 1 ] && grep -q "^sow serve: --tables: " "$WORK/e"; then
        ok "--tables ${t//$WORK\//}: exit 2, one line"
    else
        notok "--tables ${t//$WORK\//}: exit 2, one line" "rc $rc" "$(cat "$WORK/e")"
    fi
done
printf 'not a solution' >"$WORK/bad.sowsol"
for f in "$WORK/bad.sowsol" "$WORK/none.sowsol"; do
    "$SOW" serve --port 0 --solution "$f" >/dev/null 2>"$WORK/e"; rc=$?
    if [ $rc = 2 ] && [ "$(wc -l <"$WORK/e")" = 1 ] && grep -q "^sow serve: --solution $f: " "$WORK/e"; then
        ok "--solution $(basename "$f"): exit 2, one line"
    else
        notok "--solution $(basename "$f"): exit 2, one line" "rc $rc" "$(cat "$WORK/e")"
    fi
done
"$SOW" serve --port 0 --solution >/dev/null 2>"$WORK/e"; rc=$?
if [ $rc = 2 ]; then ok "--solution without a file: exit 2"; else notok "--solution without a file: exit 2" "rc $rc"; fi

echo "1..$n"
[ "$failed" = 0 ]
