#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "sow/util.h"

int cli_bad(const char *cmd, const char *fmt, ...)
{
    /* Messages quote arguments: control characters in them (a newline in a
     * quoted argument) would break the one-line promise, so they become '?'. */
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    fprintf(stderr, "sow %s: %s\n", cmd, msg);
    return CLI_BAD;
}

bool cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int cli_unknown(const char *cmd, const char *arg)
{
    return cli_bad(cmd, "unknown option '%s' (see 'sow %s --help')", arg, cmd);
}

int cli_opt(const char *cmd, int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != 0)
        return 0;
    if (*i + 1 >= argc) {
        cli_bad(cmd, "option %s needs a value", name);
        return -1;
    }
    *val = argv[++*i];
    return 1;
}

int cli_opt_long(const char *cmd, int argc, char **argv, int *i, const char *name, long lo,
                 long hi, long *val)
{
    const char *v;
    int r = cli_opt(cmd, argc, argv, i, name, &v);
    if (r <= 0)
        return r;
    if (util_parse_long(v, lo, hi, val) < 0) {
        cli_bad(cmd, "%s '%s': expected a whole number in %ld..%ld", name, v, lo, hi);
        return -1;
    }
    return 1;
}

int cli_game_opt(const char *cmd, int argc, char **argv, int *i, struct cli_game *g)
{
    int r;
    if ((r = cli_opt(cmd, argc, argv, i, "--rules", &g->rules)) != 0)
        return r;
    if ((r = cli_opt_long(cmd, argc, argv, i, "--pits", 1, SOW_MAX_PITS, &g->pits)) != 0)
        return r;
    if ((r = cli_opt_long(cmd, argc, argv, i, "--seeds", 0, SOW_MAX_SEEDS, &g->seeds)) != 0)
        return r;
    return 0;
}

int cli_game_setup(const char *cmd, struct cli_game *g)
{
    char err[256];
    const char *rules = g->rules ? g->rules : "oware";
    int pits = (int)g->pits;
    if (g->pos) {
        int tp = pos_token_pits(g->pos, err, sizeof err);
        if (tp < 0)
            return cli_bad(cmd, "position: %s", err);
        if (pits && pits != tp)
            return cli_bad(cmd, "position has %d holes per side but --pits is %d", tp, pits);
        pits = tp;
    }
    if (rules_init(&g->rs, rules, pits, g->pos && g->seeds < 0 ? 4 : (int)g->seeds, err,
                   sizeof err) < 0)
        return cli_bad(cmd, "%s", err);
    if (!g->pos) {
        g->p = rules_start(&g->rs);
        return 0;
    }
    if (pos_parse(&g->rs, g->pos, &g->p, err, sizeof err) < 0)
        return cli_bad(cmd, "position: %s", err);
    return 0;
}

int cli_check_dir(const char *cmd, const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return cli_bad(cmd, "%s: no such directory", dir);
    if (!S_ISDIR(st.st_mode))
        return cli_bad(cmd, "%s: not a directory", dir);
    return 0;
}

int cli_exit_code(enum sow_status st)
{
    switch (st) {
    case SOW_OK: return CLI_OK;
    case SOW_E_INPUT:
    case SOW_E_TOO_BIG: return CLI_BAD;
    case SOW_E_IO:
    case SOW_E_NOMEM: return CLI_FAIL;
    case SOW_E_INTERRUPTED: return CLI_INTERRUPTED;
    }
    return CLI_FAIL;
}
