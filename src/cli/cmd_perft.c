#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "perft.h"
#include "util.h"

static const char usage[] =
    "usage: sow perft [--rules R] [--pits N] [--seeds S] --depth D [--divide] [POS]\n"
    "Count the move sequences of length D from POS (default: the start).  A position\n"
    "with no legal move contributes 0 beyond it; 'pass' counts as a move; repetition\n"
    "is ignored.  --divide prints the count below each first move.  The count stands\n"
    "alone on the last line of stdout; time and rate go to stderr.\n";

int cmd_perft(int argc, char **argv)
{
    struct cli_game g = {.seeds = -1};
    long depth = -1;
    bool divide = false;
    const struct cli_option opts[] = {
        CLI_GAME_OPTIONS(g),
        {"--depth", CLI_LONG, &depth, 0, 100, "D", "sequence length (required, 0..100)", 0, 0},
        {"--divide", CLI_FLAG, &divide, 0, 0, NULL, "the count below each first move", 0, 0},
        {0}};
    const struct cli_spec spec = {"perft", usage, opts, NULL, 1, "position"};
    int r = cli_parse(&spec, argc, argv, &g.pos, NULL);
    if (r)
        return r == CLI_HELP ? CLI_OK : r;
    if (depth < 0)
        return cli_bad("perft", "--depth D is required (0..100)");
    if (cli_game_setup("perft", &g))
        return CLI_BAD;
    struct sow_relay_cache *cache = cli_relay_cache(&g.rs, 16, NULL);
    double t0 = util_now();
    uint64_t total = 0;
    if (divide && depth > 0) {
        struct sow_movelist ml;
        g.rs.generate(&g.rs, &g.p, &ml, cache, NULL);
        for (int i = 0; i < ml.n; i++) {
            char mv[SOW_MOVE_MAXLEN];
            uint64_t n = perft(&g.rs, &ml.c[i].pos, (int)depth - 1, cache);
            move_format(&g.rs, g.p.side, ml.c[i].move, mv, sizeof mv);
            printf("%s: %llu\n", mv, (unsigned long long)n);
            total += n;
        }
    } else {
        total = perft(&g.rs, &g.p, (int)depth, cache);
    }
    double dt = util_now() - t0;
    rules_cache_free(cache);
    fprintf(stderr, "perft %ld: %.3f s, %.0f sequences/s\n", depth, dt,
            dt > 0 ? (double)total / dt : 0.0);
    printf("%llu\n", (unsigned long long)total);
    return CLI_OK;
}
