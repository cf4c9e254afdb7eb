#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sow/perft.h"
#include "sow/util.h"

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
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) {
            fputs(usage, stdout);
            return CLI_OK;
        }
        if ((r = cli_game_opt("perft", argc, argv, &i, &g)) < 0)
            return CLI_BAD;
        if (r)
            continue;
        if ((r = cli_opt_long("perft", argc, argv, &i, "--depth", 0, 100, &depth)) < 0)
            return CLI_BAD;
        if (r)
            continue;
        if (strcmp(argv[i], "--divide") == 0) {
            divide = true;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1])
            return cli_unknown("perft", argv[i]);
        if (g.pos)
            return cli_bad("perft", "more than one position given ('%s')", argv[i]);
        g.pos = argv[i];
    }
    if (depth < 0)
        return cli_bad("perft", "--depth D is required (0..100)");
    if (cli_game_setup("perft", &g))
        return CLI_BAD;
    struct sow_relay_cache *cache = g.rs.relay ? rules_cache_new(16) : NULL;
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
