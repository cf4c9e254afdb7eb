#!/usr/bin/env python3
"""Check sow's man page and completions against the binary (TAP).

    check.py SOW MANPAGE BASH_COMPLETION ZSH_COMPLETION

A reading of the help independent of clidoc.py's: every command of
`sow --help`, every --option of `sow C --help` and of `sow C S --help` for
each subcommand S the bash completion offers, and every rule set named in the
error for an unknown one (not the help's list, which clidoc.py reads) must be
in the rendered man page (`man -l`, skipped without man-db) and be offered by
the bash completion (run in bash) and the zsh completion (zsh -n, then run in
zsh with stubs of compadd, _describe and _files that print what it offers).
"""
import os
import re
import shutil
import subprocess
import sys

sow, man, bashc, zshc = sys.argv[1:5]
results = []


def ok(cond, what):
    results.append((bool(cond), what))


def out(*args):
    return subprocess.run([sow, *args], capture_output=True, text=True, stdin=subprocess.DEVNULL)


def complete(*words):
    """What the bash completion offers after `sow WORDS...` (last word = prefix)."""
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _sow; '
              'printf "%s\\n" "${COMPREPLY[@]}"')
    p = subprocess.run(["bash", "-c", script, "bash", bashc, "sow", *words],
                       capture_output=True, text=True)
    return set(p.stdout.split())


# zsh: the completion function run with stubs of compadd, _describe and
# _files that print what they would offer.
ZSH_STUB = r"""
compadd() { [[ $1 == -- ]] && shift; print -l -- "$@" }
_files() { print -- FILES }
_describe() { local -a arr; arr=("${(@P)${@[-1]}}"); print -l -- "${arr[@]%%:*}" }
f=$1; shift
words=("$@"); CURRENT=$#
source $f
"""
have_zsh = shutil.which("zsh") is not None


def zcomplete(*words):
    """What the zsh completion offers after `sow WORDS...` (last word = prefix)."""
    if not have_zsh:
        return None
    p = subprocess.run(["zsh", "-f", "-c", ZSH_STUB, "zsh", zshc, "sow", *words],
                       capture_output=True, text=True)
    return set(p.stdout.split())


top = out("--help").stdout
commands = re.findall(r"^  ([a-z][a-z0-9-]*)\s", top, re.M)
ok(len(commands) >= 5, f"sow --help lists commands ({len(commands)})")
version = out("--version").stdout.split()

rendered = None
if shutil.which("man"):
    env = dict(os.environ, MANWIDTH="200", MANPAGER="cat", PAGER="cat", LC_ALL="C.UTF-8")
    p = subprocess.run(["man", "--warnings", "-l", man], capture_output=True, text=True, env=env)
    ok(p.returncode == 0 and not p.stderr.strip(), "man -l renders sow.1 without warnings: "
       + p.stderr.strip()[:200])
    rendered = p.stdout
    ok(len(version) >= 2 and version[1] in rendered, f"man page names version {version[1:2]}")

p = subprocess.run(["zsh", "-n", zshc], capture_output=True, text=True) if shutil.which("zsh") else None
if p is not None:
    ok(p.returncode == 0, "zsh -n _sow " + p.stderr.strip()[:200])

ok(set(commands) <= complete(""), "bash: `sow <TAB>` offers every command")
if have_zsh:
    ok(set(commands) | {"--help", "--version"} <= zcomplete(""), "zsh: `sow <TAB>` offers every command")
ok({"--help", "--version"} <= complete("--"), "bash: `sow --<TAB>` offers --help --version")
for c in commands:
    h = out(c, "--help")
    ok(h.returncode == 0, f"sow {c} --help exits 0")
    if rendered is not None:
        ok(f"sow {c}" in rendered, f"man page has a section for sow {c}")
    opts = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", h.stdout))
    offered = complete(c, "--")
    zoffered = zcomplete(c, "--")
    for o in sorted(opts):
        if rendered is not None:
            ok(o in rendered, f"man page: sow {c} {o}")
        ok(o in offered, f"bash: sow {c} offers {o}")
        if have_zsh:
            ok(o in zoffered, f"zsh: sow {c} offers {o}")
    subs = {w for w in complete(c, "") if not w.startswith("-")}
    for s in sorted(subs):
        hs = out(c, s, "--help")
        ok(hs.returncode == 0, f"bash offers subcommand sow {c} {s}, which takes --help")
        sopts = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", hs.stdout))
        if hs.stdout != h.stdout:  # its own help: its own options
            offered_s = complete(c, s, "--")
            for o in sorted(sopts):
                if rendered is not None:
                    ok(o in rendered, f"man page: sow {c} {s} {o}")
                ok(o in offered_s, f"bash: sow {c} {s} offers {o}")
                if have_zsh:
                    ok(o in zcomplete(c, s, "--"), f"zsh: sow {c} {s} offers {o}")

err = out("show", "--rules", "zzq-no-such-rules").stderr
m = re.search(r"known:\s*([^;)]*)", err)
rules = m.group(1).split() if m else []
ok(rules, "the unknown-rule-set error lists the rule sets")
offered = complete("solve", "--rules", "")
zoffered_rules = zcomplete("solve", "--rules", "")
for r in rules:
    ok(r in offered, f"bash: --rules offers {r}")
    if have_zsh:
        ok(r in zoffered_rules, f"zsh: --rules offers {r}")
    if rendered is not None:
        ok(r in rendered, f"man page: rule set {r}")

print(f"1..{len(results)}")
for i, (good, what) in enumerate(results, 1):
    print(f"{'ok' if good else 'not ok'} {i} - {what}")
sys.exit(0 if all(g for g, _ in results) else 1)
