#!/usr/bin/env bash
# The documentation's links: every relative link in README.md, docs/,
# bench/ and bench/results/ names a file that exists, and every measured
# run in bench/results/ is listed in bench/results/README.md; with SOW,
# every option of a `sow ...` command that README.md and docs/ show is one
# the binary's command takes.  Each check is also run on a copy spoilt on
# purpose, and must fail there.
# TAP on stdout.   usage: tests/cli/docs.sh [SOURCE_ROOT [SOW]]
set -u
ROOT=$(realpath "${1:-$(dirname "$0")/../..}")
SOW=${2:+$(realpath "$2")}
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
. "$(dirname "$0")/tap.sh"

# links ROOT: the relative links (outside code blocks) that name no file
links() {
    python3 - "$1" <<'PY'
import glob, os, re, sys
root = sys.argv[1]
pages = ["README.md"] + [os.path.relpath(p, root) for d in ("docs", "bench", "bench/results")
                         for p in sorted(glob.glob(os.path.join(root, d, "*.md")))]
for page in pages:
    text = re.sub(r"```.*?```", "", open(os.path.join(root, page)).read(), flags=re.S)
    for m in re.finditer(r"\]\(([^)\s]+)\)", text):
        url = m.group(1)
        if re.match(r"[a-z]+:", url) or url.startswith("#"):
            continue
        target = os.path.join(root, os.path.dirname(page), url.split("#")[0])
        if not os.path.exists(target):
            print(f"{page}: {url}")
PY
}
# options ROOT: the documented commands (README.md, docs/*.md) that SOW
# refuses for an unknown option.  Each is run with the option after its
# words given twice (the first may be taken as the last option's value), so
# that every command stops at parsing: a refusal that names another option
# than that one is the page's.  `--a/--b` stands for either.
options() {
    python3 - "$1" "$SOW" <<'PY'
import glob, itertools, os, re, shlex, subprocess, sys
root, sow = sys.argv[1:3]
Z = "--zzq-not-an-option"
pages = ["README.md"] + [os.path.relpath(p, root) for p in sorted(glob.glob(os.path.join(root, "docs", "*.md")))]
def commands(text):
    """(line, command after `sow `): inline code, which may wrap, and the
    indented or fenced lines of code blocks."""
    for m in re.finditer(r"`sow ([a-z][a-z-]*[^`]*)`", text):
        yield text.count("\n", 0, m.start()) + 1, " ".join(m.group(1).split())
    for ln, line in enumerate(text.split("\n"), 1):
        m = re.match(r"\s*(?:\$ )?sow ([a-z][a-z-]*(?: [^`#|;&>]*)?)", line)
        if m and not line.lstrip().startswith("`"):
            yield ln, m.group(1)
for page in pages:
    for ln, cmd in commands(open(os.path.join(root, page)).read()):
        try:
            words = shlex.split(cmd)
        except ValueError:
            continue
        alts = [w.split("/") if re.fullmatch(r"--[a-z-]+(/--[a-z-]+)+", w) else [w] for w in words]
        for ws in itertools.product(*alts):
            if not any(w.startswith("--") for w in ws):
                continue
            p = subprocess.run([sow, *ws, Z, Z], capture_output=True, text=True, timeout=30,
                               stdin=subprocess.DEVNULL, cwd=os.environ.get("TMPDIR", "/tmp"))
            u = re.search(r"unknown option '([^']*)'", p.stderr)
            if u and u.group(1) != Z:
                print(f"{page}:{ln}: sow {' '.join(ws)}: {u.group(1)}")
PY
}
# unlisted ROOT: bench/results/*.md missing from bench/results/README.md
unlisted() {
    local f
    for f in "$1"/bench/results/*.md; do
        f=${f##*/}
        [ "$f" = README.md ] || grep -qF "]($f)" "$1/bench/results/README.md" || echo "$f"
    done
}

bad=$(links "$ROOT")
check "every relative link names a file" '[ -z "$bad" ]' "broken: $(echo $bad)"
bad=$(unlisted "$ROOT")
check "every bench/results file is listed in its README" '[ -z "$bad" ]' "unlisted: $(echo $bad)"
if [ -n "$SOW" ]; then
    bad=$(TMPDIR=$WORK options "$ROOT")
    check "every option of a documented sow command is one it takes" '[ -z "$bad" ]' "$bad"
fi

# The same checks on a spoilt copy of the pages: a link to a missing file,
# a results file the index lacks.
# (the pages copied, everything else they link to by a symbolic link)
for f in "$ROOT"/* "$ROOT"/docs/* "$ROOT"/bench/* "$ROOT"/bench/results/*; do
    rel=${f#"$ROOT"/}
    case $rel in
    docs | bench | bench/results) mkdir -p "$WORK/$rel" ;;
    *.md) cp "$f" "$WORK/$rel" ;;
    *) ln -s "$f" "$WORK/$rel" ;;
    esac
done
echo "See [the rules](rules-gone.md)." >>"$WORK/docs/rules.md"
echo "# A run nobody listed" >"$WORK/bench/results/2000-01-01-unlisted.md"
check "a broken link is found" '[ "$(links "$WORK")" = "docs/rules.md: rules-gone.md" ]' \
    "found: $(links "$WORK" | head -3)"
check "an unlisted results file is found" \
    '[ "$(unlisted "$WORK")" = 2000-01-01-unlisted.md ]' "found: $(unlisted "$WORK" | head -3)"
if [ -n "$SOW" ]; then
    printf 'Check them: `sow tables verify --dir /shared/tables --rules oware`.\n' >>"$WORK/docs/tables.md"
    n_tables=$(wc -l <"$WORK/docs/tables.md")
    found=$(TMPDIR=$WORK options "$WORK")
    check "a documented option the command does not take is found" \
        '[ "$found" = "docs/tables.md:$n_tables: sow tables verify --dir /shared/tables --rules oware: --rules" ]' \
        "found: $found"
fi
tap_done
