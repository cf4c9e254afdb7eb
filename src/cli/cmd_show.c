#include <stdio.h>

#include "cli.h"

static const char usage[] =
    "usage: sow show [--rules R] [--pits N] [--seeds S] [POS]\n"
    "Draw POS (default: the start position) as in the rule texts: A's row on top,\n"
    "holes N..1 left to right; B's row below, holes 1..N.\n";

int cmd_show(int argc, char **argv)
{
    struct cli_game g = {.seeds = -1};
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) {
            fputs(usage, stdout);
            return CLI_OK;
        }
        if ((r = cli_game_opt("show", argc, argv, &i, &g)) < 0)
            return CLI_BAD;
        if (r)
            continue;
        if (argv[i][0] == '-' && argv[i][1])
            return cli_unknown("show", argv[i]);
        if (g.pos)
            return cli_bad("show", "more than one position given ('%s')", argv[i]);
        g.pos = argv[i];
    }
    if (cli_game_setup("show", &g))
        return CLI_BAD;
    char tok[SOW_POS_MAXLEN];
    pos_format(&g.rs, &g.p, tok, sizeof tok);
    pos_draw(stdout, &g.rs, &g.p);
    printf("  %s\n", tok);
    return CLI_OK;
}
