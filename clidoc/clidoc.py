#!/usr/bin/env python3
"""Write sow's man page and shell completions from the built binary's --help.

    clidoc.py SOW VERSION MANPAGE BASH_COMPLETION ZSH_COMPLETION

The help texts are the one source of truth: the man page quotes each of them
verbatim, and the completions offer the commands, subcommands, options and
rule sets found in them.  Nothing here is written by hand, so the pages cannot
drift from the program; clidoc/check.py (meson test 'clidoc') checks the
installed results against the binary by a separate, simpler reading.

How the help is read (tolerant of layout changes):
  commands     indented lines "  NAME  summary" of `sow --help` whose NAME
               answers `sow NAME --help` with status 0;
  subcommands  only for a command that refuses an unknown word
               (`sow C zzq --help` fails): words of its help (first word of
               indented lines, the word after "sow C ", words of its summary)
               that `sow C W --help` accepts;
  options      every --long-option in the (sub)command's help; one followed
               by an upper-case placeholder (DIR, FILE, R, ...) takes a value;
  rule sets    the "rule sets:" line of `sow --help`, else the list in the
               error for an unknown rule set.
"""
import re
import subprocess
import sys

NAME_RE = re.compile(r"^[a-z][a-z0-9-]*$")
OPT_RE = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)(?:[ =]([A-Z][A-Z0-9_]*)(?![a-z]))?")


def run(sow, *args):
    p = subprocess.run([sow, *args], capture_output=True, text=True, timeout=20,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout


def help_of(sow, *words):
    rc, out = run(sow, *words, "--help")
    return out if rc == 0 and out.strip() else None


def options(text):
    """{option: placeholder or None} in order of first appearance."""
    opts = {}
    for m in OPT_RE.finditer(text):
        name, meta = m.group(1), m.group(2)
        if name not in opts or (meta and not opts[name]):
            opts[name] = meta
    opts.setdefault("--help", None)
    return opts


def read_model(sow):
    top = help_of(sow)
    if top is None:
        sys.exit(f"clidoc: '{sow} --help' failed")
    commands = []
    for line in top.splitlines():
        m = re.match(r"^\s+([a-z][a-z0-9-]*)\s+(\S.*)$", line)
        if not m or any(c["name"] == m.group(1) for c in commands):
            continue
        h = help_of(sow, m.group(1))
        if h is None:
            continue
        commands.append({"name": m.group(1), "summary": m.group(2).strip(), "help": h,
                         "subs": []})
    if not commands:
        sys.exit("clidoc: no commands found in 'sow --help'")
    for c in commands:
        if help_of(sow, c["name"], "zzq-not-a-subcommand") is not None:
            continue  # takes any word: no subcommands
        words = []
        for line in c["help"].splitlines():
            m = re.match(r"^\s+([a-z][a-z0-9-]*)\b", line)
            if m:
                words.append(m.group(1))
        words += re.findall(r"\bsow %s ([a-z][a-z0-9-]*)" % re.escape(c["name"]), c["help"])
        words += re.findall(r"[a-z][a-z0-9-]*", c["summary"])
        seen = set()
        for w in words:
            if w in seen or not NAME_RE.match(w):
                continue
            seen.add(w)
            h = help_of(sow, c["name"], w)
            if h is not None:
                c["subs"].append({"name": w, "help": h if h != c["help"] else None})
    rules = None
    m = re.search(r"^rule sets?:\s*(.+)$", top, re.M | re.I)
    if m:
        rules = re.findall(r"[a-z][a-z0-9-]*", m.group(1))
    else:
        p = subprocess.run([sow, "show", "--rules", "zzq"], capture_output=True, text=True)
        m = re.search(r"known:\s*([^;)]*)", p.stderr)
        if m:
            rules = m.group(1).split()
    if not rules:
        sys.exit("clidoc: no rule-set names found")
    return {"top": top, "commands": commands, "rules": rules}


def sub_section(c, sub):
    """The lines of c's help about sub, when sub has no help of its own: from
    the line that names it first to the next line that names another one."""
    names = {s["name"] for s in c["subs"]}
    part, inside = [], False
    for line in c["help"].splitlines():
        m = re.match(r"^\s*(?:usage:\s*)?(?:sow %s\s+)?([a-z][a-z0-9-]*)\b" % re.escape(c["name"]),
                     line)
        first = m.group(1) if m else None
        if first in names:
            inside = first == sub["name"]
        if inside:
            part.append(line)
    return "\n".join(part) if part else c["help"]


def opts_of(c, sub=None):
    """Options of command c (or of its subcommand sub), from the help that describes it."""
    if sub is not None:
        return options(sub["help"] if sub["help"] is not None else sub_section(c, sub))
    return options(c["help"])


# ---- man page ---------------------------------------------------------------

def roff_text(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(("\\&" + l) if l.startswith((".", "'")) else l for l in s.splitlines())


def roff_verbatim(s):
    return ".nf\n" + roff_text(s.rstrip("\n")) + "\n.fi\n"


def man_page(model, version):
    out = [f'.TH SOW 1 "" "sow {version}" "User Commands"',
           ".SH NAME",
           "sow \\- solve and analyse two\\-row mancala games (oware, awari, jodu, odu, jerin, darra)",
           ".SH SYNOPSIS",
           ".B sow",
           ".I COMMAND",
           "[\\fIOPTIONS\\fR] [\\fIARGS\\fR]",
           ".br",
           ".B sow \\-\\-help",
           "|",
           ".B \\-\\-version",
           ".SH DESCRIPTION",
           "The text below is the output of",
           ".BR \"sow \\-\\-help\" ;",
           "each command's section that of",
           ".BR \"sow COMMAND \\-\\-help\" .",
           ".PP",
           roff_verbatim(model["top"]).rstrip("\n"),
           ".SH COMMANDS"]
    for c in model["commands"]:
        out.append(f'.SS "sow {c["name"]}"')
        out.append(roff_text(c["summary"]))
        out.append(".PP")
        out.append(roff_verbatim(c["help"]).rstrip("\n"))
        for s in c["subs"]:
            if s["help"] is None:
                continue
            out.append(f'.SS "sow {c["name"]} {s["name"]}"')
            out.append(roff_verbatim(s["help"]).rstrip("\n"))
    out += [".SH RULE SETS", roff_text(" ".join(model["rules"])),
            ".SH EXIT STATUS",
            "0 success, 1 failure while working (I/O, memory), 2 bad input, 130 interrupted.",
            ".SH SEE ALSO",
            "The README and docs/ of the sow sources; the Python module",
            ".B sow",
            "(docs/python.md) and the C library",
            ".RB ( \"pkg\\-config \\-\\-cflags \\-\\-libs sow\" ).",
            ""]
    return "\n".join(out)


# ---- completions --------------------------------------------------------------

def value_kind(meta, name):
    if name == "--rules":
        return "rules"
    if meta in ("DIR",):
        return "dir"
    if meta in ("FILE", "F"):
        return "file"
    return "word" if meta else None


def value_options(model):
    """{option: kind} over all commands (an option takes a value wherever it does)."""
    kinds = {}
    for c in model["commands"]:
        for o, meta in options(c["help"]).items():
            k = value_kind(meta, o)
            if k:
                kinds.setdefault(o, k)
        for s in c["subs"]:
            for o, meta in opts_of(c, s).items():
                k = value_kind(meta, o)
                if k:
                    kinds.setdefault(o, k)
    return kinds


def rules_words(model):
    return " ".join(model["rules"] + ["all"])


def bash_completion(model):
    kinds = value_options(model)
    by_kind = {}
    for o, k in kinds.items():
        by_kind.setdefault(k, []).append(o)
    L = ["# bash completion for sow: commands, subcommands, options and rule sets.",
         "# Generated from `sow --help` by clidoc/clidoc.py at build time; do not edit.",
         "_sow()",
         "{",
         '    local cur=${COMP_WORDS[COMP_CWORD]} prev=""',
         '    [ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}',
         '    local cmd=${COMP_WORDS[1]:-} sub=${COMP_WORDS[2]:-} words=""',
         '    case "$prev" in']
    if by_kind.get("rules"):
        L.append(f'        {"|".join(by_kind["rules"])})')
        L.append(f'            COMPREPLY=($(compgen -W "{rules_words(model)}" -- "$cur")); return ;;')
    if by_kind.get("dir"):
        L.append(f'        {"|".join(by_kind["dir"])})')
        L.append('            COMPREPLY=($(compgen -d -- "$cur")); return ;;')
    if by_kind.get("file"):
        L.append(f'        {"|".join(by_kind["file"])})')
        L.append('            COMPREPLY=($(compgen -f -- "$cur")); return ;;')
    if by_kind.get("word"):
        L.append(f'        {"|".join(by_kind["word"])})')
        L.append('            COMPREPLY=(); return ;;')
    L.append("    esac")
    names = " ".join(c["name"] for c in model["commands"])
    L += ['    if [ "$COMP_CWORD" -eq 1 ]; then',
          f'        COMPREPLY=($(compgen -W "{names} --help --version" -- "$cur")); return',
          "    fi",
          '    case "$cmd" in']
    for c in model["commands"]:
        L.append(f'        {c["name"]})')
        if c["subs"]:
            subs = " ".join(s["name"] for s in c["subs"])
            L.append(f'            if [ "$COMP_CWORD" -eq 2 ]; then words="{subs} {" ".join(opts_of(c))}"')
            L.append('            else case "$sub" in')
            for s in c["subs"]:
                L.append(f'                {s["name"]}) words="{" ".join(opts_of(c, s))}" ;;')
            L.append(f'                *) words="{" ".join(opts_of(c))}" ;;')
            L.append("            esac; fi ;;")
        else:
            L.append(f'            words="{" ".join(opts_of(c))}" ;;')
    L += ["    esac",
          '    COMPREPLY=($(compgen -W "$words" -- "$cur"))',
          "}",
          "complete -o default -F _sow sow",
          ""]
    return "\n".join(L)


def zsh_quote(words):
    return " ".join("'" + w + "'" for w in words)


def zsh_completion(model):
    kinds = value_options(model)
    by_kind = {}
    for o, k in kinds.items():
        by_kind.setdefault(k, []).append(o)
    L = ["#compdef sow",
         "# zsh completion for sow: commands, subcommands, options and rule sets.",
         "# Generated from `sow --help` by clidoc/clidoc.py at build time; do not edit.",
         "_sow() {",
         "  local cmd=${words[2]} sub=${words[3]}",
         "  case ${words[CURRENT-1]} in"]
    if by_kind.get("rules"):
        L.append(f'    {"|".join(by_kind["rules"])}) compadd -- {zsh_quote(rules_words(model).split())}; return ;;')
    if by_kind.get("dir"):
        L.append(f'    {"|".join(by_kind["dir"])}) _files -/; return ;;')
    if by_kind.get("file"):
        L.append(f'    {"|".join(by_kind["file"])}) _files; return ;;')
    if by_kind.get("word"):
        L.append(f'    {"|".join(by_kind["word"])}) return ;;')
    L.append("  esac")
    L += ["  if (( CURRENT == 2 )); then",
          "    local -a cmds",
          "    cmds=(" + " ".join("'%s:%s'" % (c["name"], c["summary"].replace("'", "").replace(":", " -"))
                             for c in model["commands"]) + ")",
          "    _describe -t commands 'sow command' cmds",
          "    compadd -- --help --version",
          "    return",
          "  fi",
          "  case $cmd in"]
    for c in model["commands"]:
        L.append(f'    {c["name"]})')
        if c["subs"]:
            L.append(f'      if (( CURRENT == 3 )); then compadd -- {zsh_quote([s["name"] for s in c["subs"]] + list(opts_of(c)))}; return; fi')
            L.append("      case $sub in")
            for s in c["subs"]:
                L.append(f'        {s["name"]}) compadd -- {zsh_quote(opts_of(c, s))} ;;')
            L.append(f'        *) compadd -- {zsh_quote(opts_of(c))} ;;')
            L.append("      esac ;;")
        else:
            L.append(f'      compadd -- {zsh_quote(opts_of(c))} ;;')
    L += ["  esac",
          "  _files",
          "}",
          '_sow "$@"',
          ""]
    return "\n".join(L)


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    sow, version, man, bash, zsh = sys.argv[1:]
    model = read_model(sow)
    for path, text in ((man, man_page(model, version)),
                       (bash, bash_completion(model)),
                       (zsh, zsh_completion(model))):
        with open(path, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
