#!/usr/bin/env bash
# sow engine driven as the Aualé oware GUI drives its engine, every answer
# line checked against the grammar of Aualé's UCI client.  TAP on stdout.
#   usage: tests/cli/auale.sh [SOW]
#
# What Aualé sends (its client: uci, then per move `position startpos|fen F
# [moves RUN]` where RUN is the moves since the last capture run together,
# `go depth D movetime MS` or `go movetime MS`, `go ponder` while the other
# side thinks, `stop`, `ucinewgame`, `isready`, `setoption name OwnBook`,
# `quit`) and what it reads: the regular expressions below restate the
# patterns of its client's parser (one line kind each; a token the client
# does not know fails here, where the client would skip it: so `pv C a A`,
# which it reads as `pv C`, and `score exact 4`, which gives it no score,
# fail).  Also: ponderhit (UCI; Aualé does not send it), --letters, and a
# whole game played the way Aualé sends it.
set -u
SOW=$(realpath "${1:-build/src/cli/sow}")
[ -x "$SOW" ] || { echo "Bail out! no sow executable at $SOW"; exit 1; }
WORK=$(mktemp -d)
EPID=
trap '[ -n "$EPID" ] && kill $EPID 2>/dev/null; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/no-tables"
export SOW_TABLES="$WORK/no-tables"
. "$(dirname "$0")/tap.sh"

# ---- Aualé's grammar: the answers its client parses ----
MOVE='[a-fA-F]'
NUM='[0-9]+'
INT='[-+]?[0-9]+'
WORD='[^ ]+'
G_UCIOK='^uciok$'
G_READYOK='^readyok$'
G_ID='^id (name|author) .+$'
G_BEST="^bestmove (0000|$MOVE)( ponder $MOVE)?$"
G_OPTION="^option( name $WORD| type (check|spin|combo|button|string)| min $INT| max $INT| var $WORD| default $WORD)+$"
G_INFO="^info(( (depth|seldepth|time|nodes|multipv|currmovenumber|hashfull|nps|tbhits|sbhits|cpuload) $NUM)| pv $MOVE+| refutation $MOVE+| currmove $MOVE| score( cp $INT| mate $INT| lowerbound| upperbound)+| currline( $NUM)? $MOVE+)*( string .+)?$"
grammar() { # the line fits one of the kinds
    local l=$1
    [[ $l =~ $G_UCIOK || $l =~ $G_READYOK || $l =~ $G_ID || $l =~ $G_BEST || $l =~ $G_OPTION ||
       $l =~ $G_INFO ]]
}
# the grammar itself, on lines it must refuse and accept (a check that cannot fail is no check)
bad_lines=("info depth 3 score exact 4 pv C" "info depth 2 pv C a" "bestmove (none)" "bestmove 3A"
           "info depth 4 score cp 5 pv 3A 1B" "bestmove C ponder" "option name X type integer")
good_lines=("info depth 4 seldepth 4 score cp -16 upperbound nodes 144 nps 1 hashfull 0 tbhits 0 time 0"
            "info depth 5 score cp 68 nodes 513 pv CaAfA" "bestmove 0000" "bestmove C ponder f"
            "info string game over: position repeated" "option name Ponder type check default false")
g_ok=0
for l in "${bad_lines[@]}"; do grammar "$l" && { g_ok=1; echo "# grammar accepts: $l"; }; done
for l in "${good_lines[@]}"; do grammar "$l" || { g_ok=1; echo "# grammar refuses: $l"; }; done
check "the grammar refuses sow's own notation and accepts Aualé's" '[ $g_ok -eq 0 ]'

# ---- a coprocess; every line it answers is checked against the grammar ----
start() {
    : >"$WORK/log"
    PART=
    coproc ENG { exec "$SOW" engine "$@" 2>"$WORK/stderr"; }
    EPID=$ENG_PID
}
send() { printf '%s\n' "$*" >&"${ENG[1]}"; }
# readline SECONDS: the engine's next whole line into LINE; 1 on timeout.  A
# line the timeout cuts (read -t keeps what it got) is kept in PART and
# finished by the next call, never checked as two lines.
readline() {
    local got=
    if IFS= read -r -t "$1" got <&"${ENG[0]}"; then
        LINE=$PART$got PART=
        return 0
    fi
    PART=$PART$got
    return 1
}
# expect PATTERN [SECONDS]: read lines until one matches; it is in $LINE
expect() {
    local pat=$1 end=$((SECONDS + ${2:-10}))
    LINE=
    while [ $SECONDS -le $end ]; do
        readline "${2:-10}" || return 1
        echo "$LINE" >>"$WORK/log"
        grammar "$LINE" || echo "$LINE" >>"$WORK/ungrammatical"
        [[ $LINE =~ $pat ]] && return 0
    done
    return 1
}
# quiet SECONDS: no bestmove within that time (other lines are read and checked)
quiet() {
    local t_end=$(($(date +%s%N) + ${1%.*}000000000 + 10#${1#*.}00000000))
    while :; do
        local left=$(((t_end - $(date +%s%N)) / 1000000))
        [ $left -le 0 ] && return 0
        readline "$(printf '%d.%03d' $((left / 1000)) $((left % 1000)))" || return 0
        echo "$LINE" >>"$WORK/log"
        grammar "$LINE" || echo "$LINE" >>"$WORK/ungrammatical"
        [[ $LINE == bestmove* ]] && return 1
    done
}
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
finish() { # quit; the exit status in RC, within 5 s
    send quit
    local t=0
    while kill -0 "$EPID" 2>/dev/null && [ $t -lt 50 ]; do sleep 0.1; t=$((t + 1)); done
    kill -0 "$EPID" 2>/dev/null && kill -KILL "$EPID"
    wait "$EPID" 2>/dev/null; RC=$?; EPID=
}
# the letters of a run as sow's moves (C -> 3A, f -> 6B)
L=ABCDEFabcdef MV=(1A 2A 3A 4A 5A 6A 1B 2B 3B 4B 5B 6B)
sow_moves() { local s=$1 i k out=""; for ((i = 0; i < ${#s}; i++)); do k=${L%%"${s:i:1}"*}
    out+=" ${MV[${#k}]}"; done; echo "$out"; }
# a fen as sow's position token
fen_pos() { local IFS=-; local v=($1); echo "${v[0]},${v[1]},${v[2]},${v[3]},${v[4]},${v[5]}/${v[6]},${v[7]},${v[8]},${v[9]},${v[10]},${v[11]}/$([ "${v[14]}" = S ] && echo A || echo B)/${v[12]}-${v[13]}"; }
legal() { "$SOW" play "$1" $(sow_moves "$2") >/dev/null 2>&1; } # legal POS RUN

START=4-4-4-4-4-4-4-4-4-4-4-4-0-0-S

# ---- the handshake, as Aualé starts an engine ----
start
send uci
check "uci: id name, options, uciok" 'expect "^uciok$"'
check "uci: every line id, option or uciok" \
    '[ "$(grep -cvE "^(id|option) |^uciok$" "$WORK/log")" -eq 0 ] && grep -q "^id name sow" "$WORK/log"' \
    "$(cat "$WORK/log")"
check "uci: option name Ponder type check" 'grep -q "^option name Ponder type check default false$" "$WORK/log"'
send "setoption name OwnBook value false" # Aualé's only option: taken, no answer
send ucinewgame
send isready
check "setoption OwnBook false (taken silently), ucinewgame, isready: readyok" \
    'expect "^readyok$" && [ "$(grep -c "^info string error" "$WORK/log")" -eq 0 ]' "$(tail -3 "$WORK/log")"

# ---- a move as Aualé asks for it: moves since the last capture run together ----
send "position fen $START moves CfB"
send "go depth 5 movetime 5000"
expect "^bestmove " 20; best=$LINE
pv=$(grep "^info depth 5 .* pv " "$WORK/log" | tail -1 | sed 's/.* pv //')
check "fen + moves CfB, go depth 5 movetime 5000: bestmove in letters ($best)" \
    '[[ $best =~ ^bestmove\ [a-f]$ ]]'
check "pv of depth 5 is one run of letters ($pv), a legal line" \
    '[[ $pv =~ ^[a-fA-F]+$ ]] && legal "$(fen_pos $START)" "CfB$pv"'
check "no score exact in letter mode, score cp on every search line" \
    '! grep -q "score exact" "$WORK/log" && [ "$(grep "^info depth" "$WORK/log" | grep -vc " score cp ")" -eq 0 ]'
# the same position with the moves one a token (also accepted), Ponder on:
# the same move (a cleared table, as for the first search) and a reply to ponder on
send "setoption name Ponder value true"
send ucinewgame
send "position fen $START moves C f B"
send "go depth 5"
expect "^bestmove " 20; r=$?
check "moves C f B (one a token), Ponder true: the same move, and a ponder reply ($LINE)" \
    '[ $r -eq 0 ] && [[ $LINE =~ ^$best\ ponder\ [A-F]$ ]]' "$LINE"
read -r _ mv _ rep <<<"$LINE"
check "bestmove and its ponder reply are legal after CfB" 'legal "$(fen_pos $START)" "CfB$mv$rep"'

# a proven score is cp too: seeds x 100 (this ending is worth exactly 4)
send "position fen 0-0-0-0-1-1-1-0-0-0-0-1-22-23-S"
send "go depth 6 movetime 2000"
check "a proven ending: score cp 400 (4 seeds), not score exact" \
    'expect " score " 10 && [[ $LINE == *" score cp 400 "* ]] && expect "^bestmove [A-F]" 10' "$LINE"
# bounds: an aspiration fail says lowerbound or upperbound (its pv, if any,
# the move that failed high)
: >"$WORK/log"
send ucinewgame
send "position startpos moves C f"
send "go depth 6"
expect "^bestmove " 20
lo=$(grep -cE "^info .* score cp -?[0-9]+ lowerbound " "$WORK/log")
up=$(grep -cE "^info .* score cp -?[0-9]+ upperbound " "$WORK/log")
check "aspiration fails: score cp X lowerbound ($lo lines), upperbound ($up lines)" \
    '[ "$lo" -gt 0 ] && [ "$up" -gt 0 ]' "$(cat "$WORK/log")"

# ---- the game is over: bestmove 0000 ----
over() { # over WHY POSITION-ARGS: the answer is "info string game over: WHY", bestmove 0000
    send "position $2"
    send "go depth 4 movetime 1000"
    if expect "^info string game over: $1" 10 && expect "^bestmove " 10 && [ "$LINE" = "bestmove 0000" ]; then
        ok "game over ($1): bestmove 0000"
    else
        notok "game over ($1): bestmove 0000" "last line: $LINE"
    fi
}
over "no legal move" "fen 0-0-0-0-0-0-1-1-0-0-0-0-23-23-S"
over "a player has captured more than half" "fen 1-0-0-0-0-0-1-0-0-0-0-0-21-25-S"
over "position repeated" "fen 0-0-0-0-0-1-0-0-0-0-0-1-23-23-S moves FfAaBbCcDdEe"
send "position fen 0-0-0-0-0-1-0-0-0-0-0-1-23-23-S moves FfAaBbCcDdE"
send "go depth 4"
check "one move before the repetition: a move (e)" 'expect "^bestmove " 10 && [ "$LINE" = "bestmove e" ]' "$LINE"

# ---- pondering as Aualé does it: position with the ponder move, go ponder, stop ----
send "position fen $START moves CfB$mv$rep"
send "go ponder"
quiet 0.8; r=$?
check "go ponder: no bestmove before stop (0.8 s)" '[ $r -eq 0 ]' "$LINE"
send isready
check "isready while pondering: readyok" 'expect "^readyok$" 5'
t0=$(date +%s%N)
send stop
expect "^bestmove " 5; r=$?
ms=$(ms_since $t0)
check "ponder -> stop: bestmove at once (${ms} ms; 1000 allowed), legal ($LINE)" \
    '[ $r -eq 0 ] && [ $ms -le 1000 ] && read -r _ b _ <<<"$LINE" && legal "$(fen_pos $START)" "CfB$mv$rep$b"'
# ponder on a finished game, stopped: bestmove 0000 after stop only
send "position fen 0-0-0-0-0-0-1-1-0-0-0-0-23-23-S"
send "go ponder"
quiet 0.3; r=$?
send stop
check "ponder on a finished game: nothing until stop, then bestmove 0000" \
    '[ $r -eq 0 ] && expect "^bestmove " 5 && [ "$LINE" = "bestmove 0000" ]' "$LINE"

# ---- ponderhit (UCI): the clock starts at ponderhit ----
send "position startpos moves CfB"
send "go ponder movetime 300"
quiet 1.0; r=$?
t0=$(date +%s%N)
send ponderhit
expect "^bestmove " 10; r2=$?
ms=$(ms_since $t0)
check "ponder -> ponderhit: no bestmove while pondering (1 s > movetime), then after movetime 300 counted from ponderhit (${ms} ms; 280..3000)" \
    '[ $r -eq 0 ] && [ $r2 -eq 0 ] && [ $ms -ge 280 ] && [ $ms -le 3000 ]' "$LINE"
# a depth limit reached while pondering: the answer waits for ponderhit, then comes at once
send "position fen 0-0-0-0-1-1-1-0-0-0-0-1-22-23-S"
send "go ponder depth 3"
quiet 0.5; r=$?
t0=$(date +%s%N)
send ponderhit
expect "^bestmove " 5; r2=$?
ms=$(ms_since $t0)
check "ponder depth 3 done before ponderhit: bestmove only after it, at once (${ms} ms)" \
    '[ $r -eq 0 ] && [ $r2 -eq 0 ] && [ $ms -le 1000 ] && [[ $LINE =~ ^bestmove\ [A-F] ]]' "$LINE"
send ponderhit
check "ponderhit with no go ponder: one info string error" 'expect "^info string error: ponderhit" 5'
# stop after ponderhit: answered at once too
send "position startpos moves CfB"
send "go ponder movetime 100000"
sleep 0.2
send ponderhit
quiet 0.3; r=$?
send stop
check "ponderhit then stop (long movetime): bestmove on stop" '[ $r -eq 0 ] && expect "^bestmove [a-f]" 5' "$LINE"
send "setoption name Ponder value maybe"
check "setoption Ponder maybe: one error line" 'expect "^info string error: setoption Ponder" 5'

# ---- quit while pondering ----
send "position startpos moves CfB"
send "go ponder"
sleep 0.3
t0=$(date +%s%N)
finish
ms=$(ms_since $t0)
check "quit while pondering: exit 0 within 2 s (${ms} ms)" '[ $RC -eq 0 ] && [ $ms -le 2000 ]'
check "nothing on stderr" '[ ! -s "$WORK/stderr" ]' "$(head -3 "$WORK/stderr")"
check "every answer line of the session fits Aualé's grammar ($(wc -l <"$WORK/log") lines)" \
    '[ ! -s "$WORK/ungrammatical" ]' "$(head -3 "$WORK/ungrammatical" 2>/dev/null)"
cp "$WORK/log" "$WORK/log1"

# end of input while pondering
printf 'position startpos moves C\ngo ponder\n' | timeout 10 "$SOW" engine >"$WORK/eof.out" 2>&1
r=$?
check "end of input while pondering: exit 0 with bestmove" '[ $r -eq 0 ] && grep -q "^bestmove [a-f]" "$WORK/eof.out"' \
    "rc $r; $(tail -2 "$WORK/eof.out")"

# ---- sow's notation unchanged; --letters for a first move from the start ----
start
send "setoption name OwnBook value false" # a search, not sow's own book's move
send "position startpos"
send "go depth 3"
check "position startpos alone: sow's notation as before (bestmove 3A, pv with spaces, not Aualé's)" \
    'expect "^bestmove " 10 && [[ $LINE =~ ^bestmove\ [1-6]A$ ]] && grep -qE " pv [1-6]A [1-6]B [1-6]A$" "$WORK/log"' \
    "$(cat "$WORK/log")"
finish
: >"$WORK/ungrammatical"
start --letters
send "position startpos"
send "go depth 3 movetime 600"
check "--letters, position startpos alone (Aualé's first move as South): bestmove in letters" \
    'expect "^bestmove " 10 && [[ $LINE =~ ^bestmove\ [A-F]( ponder [a-f])?$ ]]' "$LINE"

# ---- a whole game, engine against itself, sent as Aualé sends it ----
# base: the fen of the game's start or of the position after the last
# capture; moves: the moves since, run together.  Every move legal; the game
# ends with bestmove 0000 exactly where Aualé ends it (a store over 24, no
# move, a repeated position), here checked by sow play.  The game starts
# with 2 seeds a hole and 12 in each store (about 50 plies; from the start
# a game at depth 3 takes 113, each a sow play here).
send ucinewgame
pos=2,2,2,2,2,2/2,2,2,2,2,2/A/12-12 base="fen 2-2-2-2-2-2-2-2-2-2-2-2-12-12-S" run="" game=ok plies=0 why="" caps=0
bpos=$pos # the base as sow's token: the run is played from it (repetitions)
for ply in $(seq 1 200); do
    send "position $base${run:+ moves $run}"
    send "go depth 3 movetime 2000"
    expect "^bestmove " 20 || { game="no bestmove at ply $ply"; break; }
    read -r _ b _ <<<"$LINE"
    IFS=/ read -r _ _ _ st _ <<<"$pos"; s1=${st%-*}; s2=${st#*-}
    if [ "$b" = 0000 ]; then
        why=$(grep "^info string game over" "$WORK/log" | tail -1)
        moves=$("$SOW" moves "$pos" 2>&1)
        case $why in
        *"more than half"*) [ "$s1" -gt 24 ] || [ "$s2" -gt 24 ] || game="0000 with stores $st" ;;
        *"no legal move"*) [[ $moves == *"game over"* ]] || game="0000 (no move) with moves: $moves" ;;
        *) game="0000 without a reason ($why)" ;;
        esac
        break
    fi
    if [ "$s1" -gt 24 ] || [ "$s2" -gt 24 ]; then game="a move ($b) after the game ended (stores $st)"; break; fi
    step=$("$SOW" play "$bpos" $(sow_moves "$run$b") 2>&1) || { game="illegal $b at ply $ply: $step"; break; }
    plies=$ply
    new=${step##*$'\n'}
    if [[ $step == *"game over: position repeated"* ]]; then
        # the next position repeats: the engine must say so
        pos=$new run="$run$b"
        send "position $base moves $run"
        send "go depth 3"
        if ! expect "^bestmove " 10 || [ "$LINE" != "bestmove 0000" ]; then game="repetition not over: $LINE"; fi
        why="position repeated"
        break
    fi
    last=${step%$'\n'*}; last=${last##*$'\n'} # this move's line: "N. 3A  captured 0-2  POS"
    [[ $last =~ captured\ ([0-9]+-[0-9]+) ]] && cap=${BASH_REMATCH[1]} || cap=?
    if [ "$cap" != 0-0 ]; then
        caps=$((caps + 1))
        IFS=/ read -r ra rb side st _ <<<"$new"
        base="fen ${ra//,/-}-${rb//,/-}-$st-$([ "$side" = A ] && echo S || echo N)" run="" bpos=$new
    else
        run="$run$b"
    fi
    pos=$new
done
check "a whole game as Aualé sends it ($plies plies, $caps captures, ended: ${why:-at 200 plies}): legal moves, 0000 at the end" \
    '[ "$game" = ok ] && [ $caps -gt 0 ] && [ -n "$why" ]' "$game"
finish
check "--letters session: exit 0, every line fits the grammar ($(wc -l <"$WORK/log") lines)" \
    '[ $RC -eq 0 ] && [ ! -s "$WORK/ungrammatical" ]' "$(head -3 "$WORK/ungrammatical" 2>/dev/null)"

tap_done
