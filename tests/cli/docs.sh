#!/usr/bin/env bash
# The documentation's links: every relative link in README.md, docs/,
# bench/ and bench/results/ names a file that exists, and every measured
# run in bench/results/ is listed in bench/results/README.md.  Each check
# is also run on a copy spoilt on purpose, and must fail there.
# TAP on stdout.   usage: tests/cli/docs.sh [SOURCE_ROOT]
set -u
ROOT=$(realpath "${1:-$(dirname "$0")/../..}")
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
tap_done
