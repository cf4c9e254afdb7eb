#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "perft.h"
#include "util.h"

static const char usage[] =
    "usage: sow perft [--rules R] [--pits N] [--seeds S] --depth D [--divide] [POS]\n"
    "Count the move sequences of length D from POS (default: the start).  A position\n"
    "with no legal move contributes 0 beyond it; 'pass' counts as a move; repetition\n"
    "is ignored.  --divide prints the count below each first move.  The count stands\n"
    "alone on the last line of stdout; time and rate go to stderr, and so does a\n"
    "long count's progress (each second on a terminal, else each minute).\n";

/* Progress of a long count on stderr (the count alone shows no sign of
 * life, and oware's depth 14 takes minutes): the subtrees two moves deep
 * are counted one at a time, and after each, at most once a second on a
 * terminal (one line redrawn) or once a minute otherwise (a log), the
 * share of the tree done and an ETA from it.  The share weighs each first
 * move alike and each reply alike within it, so the ETA is a rough guide:
 * subtrees differ in size. */
struct perft_progress {
    long depth;
    double t0, last, done; /* done: the share of the tree counted, 0..1 */
    bool tty, drawn;
};

static void perft_progress(struct perft_progress *pp, double share)
{
    pp->done += share;
    double now = util_now();
    if (now - pp->last < (pp->tty ? 1.0 : 60.0) || pp->done <= 0 || pp->done >= 1)
        return;
    pp->last = now;
    double spent = now - pp->t0;
    fprintf(stderr, "%sperft %ld: %.0f%% of the tree, %.0f s so far, ETA %.0f s%s",
            pp->tty ? "\r" : "", pp->depth, 100 * pp->done, spent,
            spent * (1 - pp->done) / pp->done, pp->tty ? "   " : "\n");
    pp->drawn = pp->tty;
}

/* The count below p (depth >= 1), the subtrees two moves deep one at a
 * time (share: p's part of the whole tree). */
static uint64_t perft_counted(const struct ruleset *rs, const sow_position *p, int depth,
                              struct sow_relay_cache *cache, struct perft_progress *pp,
                              double share)
{
    struct sow_movelist ml;
    rs->generate(rs, p, &ml, cache, NULL);
    uint64_t n = 0;
    for (int i = 0; i < ml.n; i++) {
        n += perft(rs, &ml.c[i].pos, depth - 1, cache);
        perft_progress(pp, share / ml.n);
    }
    if (!ml.n)
        perft_progress(pp, share);
    return n;
}

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
    struct perft_progress pp = {.depth = depth, .t0 = t0, .last = t0, .tty = isatty(2)};
    uint64_t total = 0;
    if (depth == 0 || (depth == 1 && !divide)) {
        total = perft(&g.rs, &g.p, (int)depth, cache);
    } else {
        struct sow_movelist ml;
        g.rs.generate(&g.rs, &g.p, &ml, cache, NULL);
        for (int i = 0; i < ml.n; i++) {
            uint64_t n = depth == 1 ? 1
                                    : perft_counted(&g.rs, &ml.c[i].pos, (int)depth - 1, cache,
                                                    &pp, 1.0 / ml.n);
            if (divide) {
                char mv[SOW_MOVE_MAXLEN];
                move_format(&g.rs, g.p.side, ml.c[i].move, mv, sizeof mv);
                printf("%s: %llu\n", mv, (unsigned long long)n);
            }
            total += n;
        }
    }
    if (pp.drawn)
        fputc('\n', stderr);
    double dt = util_now() - t0;
    rules_cache_free(cache);
    fprintf(stderr, "perft %ld: %.3f s, %.0f sequences/s\n", depth, dt,
            dt > 0 ? (double)total / dt : 0.0);
    printf("%llu\n", (unsigned long long)total);
    return CLI_OK;
}
