# TAP output for the tests/cli scripts, sourced by them: numbered cases,
# failures with their details as '#' lines, the plan at the end.
#   ok NAME                      a passing case
#   notok NAME [DETAIL...]       a failing case, each detail a '#' line
#   check NAME CONDITION [DETAIL]   CONDITION (shell text, eval'd) decides
#   check_st NAME STATUS [DETAIL...]   an exit status (0: pass) decides
#   tap_done                     the plan; its status: 0 if every case passed
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() {
    n=$((n + 1)) failed=$((failed + 1))
    echo "not ok $n - $1"
    shift
    local l
    for l in "$@"; do [ -n "$l" ] && echo "#   $l"; done
    return 0
}
check() { if eval "$2"; then ok "$1"; else notok "$1" "${3:-}"; fi; }
check_st() {
    local name=$1 st=$2
    shift 2
    if [ "$st" = 0 ]; then ok "$name"; else notok "$name" "$@"; fi
}
tap_done() { echo "1..$n"; [ "$failed" -eq 0 ]; }
