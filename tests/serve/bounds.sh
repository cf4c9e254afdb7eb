#!/usr/bin/env bash
# sow serve over tables with bounds files (TAP on stdout): a position the
# tables hold above the shared levels is answered exactly from them
# ("exact":true,"source":"tables"), with sow solve's value and move values,
# even with a time budget far too short for the exact solver; over the same
# tables without bounds the same request gets the engine's estimate.
#
# usage: tests/serve/bounds.sh [SOW]     (default: build/src/cli/sow)
set -u
SOW=$(realpath "${1:-build/src/cli/sow}")
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
export SOW_TABLES="$WORK/no-tables"
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "#   $l"; done; }

# start NAME ARGS...: a server in the background, PORT set (at most 10 s).
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
get() {
    BODY=$(curl -s --max-time 20 "http://127.0.0.1:$PORT$1")
}

# oware 2x6 levels 0..9 with bounds, and a copy without them
"$SOW" tables build --seeds 9 --dir "$WORK/tb" --bounds --threads 1 >/dev/null 2>&1 ||
    echo "# tables build failed"
mkdir -p "$WORK/plain" && cp "$WORK"/tb/*.sowtb "$WORK/plain/"

# 9 seeds on the board; the shared levels hold 0.01 M positions (to level 5)
POS=1,1,1,1,0,0/1,1,1,1,1,0/B
# the closure over the tables without bounds
want=$("$SOW" solve --tables "$WORK/plain" --levels 0 --moves --json "$POS" 2>/dev/null)
value=$(echo "$want" | sed 's/.*"value":\(-*[0-9]*\),.*/\1/')

if start bounds --time 0.01 --tables "$WORK/tb" --levels 0.01; then
    get "/api/oware?pos=$POS"
    case $BODY in
    *'"value":'"$value"',"exact":true,"source":"tables","depth":null'*) ok "above the levels: exact from the bounds" ;;
    *) notok "above the levels: exact from the bounds (value $value)" "$BODY" ;;
    esac
    # every move's value as sow solve --moves gives it
    bad=0
    for mv in $(echo "$want" | grep -o '"move":"[0-9A-F]*","value":-*[0-9]*' | tr '\n' ' '); do
        m=${mv#*\"move\":\"}; m=${m%%\"*}; v=${mv##*:}
        case $BODY in *'{"move":"'"$m"'","value":'"$v"',"exact":true'*) ;; *) bad=1; echo "# $m: $v expected" ;; esac
    done
    [ $bad = 0 ] && ok "every move's value is sow solve's" || notok "every move's value is sow solve's" "$BODY"
    get "/api/oware/mainline?pos=$POS"
    case $BODY in
    *'"exact":true,"source":"tables"'*'"line":[{"move":'*) ok "mainline from the bounds" ;;
    *) notok "mainline from the bounds" "$BODY" ;;
    esac
    kill -TERM "$PID"; wait "$PID" 2>/dev/null
else
    notok "sow serve over bounds listens" "$(cat "$WORK/bounds.err")"
fi

if start plain --time 0.01 --tables "$WORK/plain" --levels 0.01; then
    get "/api/oware?pos=$POS"
    case $BODY in
    *'"exact":false,"source":"engine"'*) ok "without bounds: the engine past the budget" ;;
    *) notok "without bounds: the engine past the budget" "$BODY" ;;
    esac
    kill -TERM "$PID"; wait "$PID" 2>/dev/null
else
    notok "sow serve over plain tables listens" "$(cat "$WORK/plain.err")"
fi

echo "1..$n"
[ $failed = 0 ]
