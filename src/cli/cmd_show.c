#include <stdio.h>

#include "cli.h"

static const char usage[] =
    "usage: sow show [--rules R] [--pits N] [--seeds S] [POS]\n"
    "Draw POS (default: the start position) as in the rule texts: A's row on top,\n"
    "holes N..1 left to right; B's row below, holes 1..N.\n";

int cmd_show(int argc, char **argv)
{
    struct cli_game g = {.seeds = -1};
    const struct cli_option opts[] = {CLI_GAME_OPTIONS(g), {0}};
    const struct cli_spec spec = {"show", usage, opts, NULL, 1, "position"};
    int r = cli_parse(&spec, argc, argv, &g.pos, NULL);
    if (r)
        return r == CLI_HELP ? CLI_OK : r;
    if (cli_game_setup("show", &g))
        return CLI_BAD;
    char tok[SOW_POS_MAXLEN];
    pos_format(&g.rs, &g.p, tok, sizeof tok);
    pos_draw(stdout, &g.rs, &g.p);
    printf("  %s\n", tok);
    return CLI_OK;
}
