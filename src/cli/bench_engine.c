/* sow bench engine: the alpha-beta engine over a fixed set of positions per
 * rule set at a fixed depth, in Stockfish's bench format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sow/engine.h"
#include "sow/util.h"

static const char usage[] =
    "usage: sow bench engine [--rules R[,R..]|all] [--depth D] [--threads T] [--hash MB]\n"
    "                        [--mtdf]\n"
    "Searches a fixed set of positions per rule set (the start, then the positions\n"
    "after 8, 16, 24, 32 and 48 moves of fixed pseudo-random games: openings,\n"
    "middle games, endings) to depth D (default 14 on oware/awari, 12 elsewhere),\n"
    "each with a cleared table and no endgame knowledge but the terminal positions,\n"
    "and prints the total in Stockfish's format (Nodes searched, Nodes/second).\n"
    "A node is a position made by a move and searched.  The node total with one\n"
    "thread is the engine's bench signature (reproducible).\n";

#define BENCH_PLIES 6
static const int plies[BENCH_PLIES] = {0, 8, 16, 24, 32, 48};

/* Position after k moves of a fixed pseudo-random game (xorshift, seed per
 * rule set name); a game that ends first is cut at its last position with
 * moves. */
static sow_position bench_pos(const struct ruleset *rs, int k)
{
    sow_position p = rules_start(rs);
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (const char *c = rs->name; *c; c++)
        x = (x ^ (uint64_t)(unsigned char)*c) * 0x100000001B3ULL;
    x ^= (uint64_t)(k + 1) * 0xD6E8FEB86659FD93ULL; /* one game per k */
    struct sow_movelist ml;
    for (int i = 0; i < k; i++) {
        rules_generate(rs, &p, &ml);
        if (ml.n == 0)
            break;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        sow_position q = ml.c[x % (uint64_t)ml.n].pos;
        struct sow_movelist m2;
        rules_generate(rs, &q, &m2);
        if (m2.n == 0)
            break;
        p = q;
    }
    return p;
}

int bench_engine(int argc, char **argv)
{
    const char *rules = "all";
    long depth = 0, threads = 1, hash = 64;
    bool mtdf = false;
    const struct cli_option opts[] = {
        {"--rules", CLI_STR, &rules, 0, 0, "R[,R..]|all", "rule sets, default all", 0, 0},
        {"--depth", CLI_LONG, &depth, 1, ENGINE_MAX_PLY - 1, "D", "depth in plies", 0, 0},
        {"--threads", CLI_LONG, &threads, 1, (double)cli_max_threads(), "T",
         "threads, default 1 (Lazy SMP; node counts then vary)", 0, 0},
        {"--hash", CLI_LONG, &hash, 1, 1 << 16, "MB", "table size, default 64", 0, 0},
        {"--mtdf", CLI_FLAG, &mtdf, 0, 0, NULL,
         "drive the iterations by MTD(f) instead of PVS (for comparison)", 0, 0},
        {0}};
    const struct cli_spec spec = {"bench engine", usage, opts, NULL, 0, NULL};
    int pr = cli_parse(&spec, argc, argv, NULL, NULL);
    if (pr)
        return pr == CLI_HELP ? CLI_OK : pr;
    /* The list of rule sets: "all" or comma-separated names, all checked first. */
    const char *names[64];
    int nn = 0;
    char buf[512];
    if (strcmp(rules, "all") == 0) {
        for (int i = 0; sow_rule_names[i] && nn < 64; i++)
            names[nn++] = sow_rule_names[i];
    } else {
        snprintf(buf, sizeof buf, "%s", rules);
        for (char *tok = strtok(buf, ","); tok && nn < 64; tok = strtok(NULL, ","))
            names[nn++] = tok;
    }
    struct ruleset rsv[64];
    for (int i = 0; i < nn; i++) {
        struct sow_error e;
        enum sow_status st = rules_init(&rsv[i], names[i], 0, -1, &e);
        if (st != SOW_OK) {
            cli_bad("bench engine", "%s", e.msg);
            return cli_exit_code(st);
        }
    }
    uint64_t total = 0;
    double secs = 0;
    for (int i = 0; i < nn; i++) {
        const struct ruleset *rs = &rsv[i];
        int d = depth ? (int)depth
                      : (rs->family == SOW_OWARE || rs->family == SOW_AWARI) ? 14 : 12;
        struct engine_opts o = {.threads = (int)threads, .hash_mb = (unsigned)hash,
                                .mem_levels = -1, .mtdf = mtdf};
        struct engine *e;
        struct sow_error ee;
        enum sow_status st = engine_new(rs, &o, &e, &ee);
        if (st != SOW_OK) {
            fprintf(stderr, "sow bench engine: %s\n", ee.msg);
            return cli_exit_code(st);
        }
        uint64_t rn = 0;
        double rsec = 0;
        for (int k = 0; k < BENCH_PLIES; k++) {
            sow_position p = bench_pos(rs, plies[k]);
            engine_clear(e);
            struct engine_limits lim = {.depth = d};
            struct engine_result r;
            engine_search(e, &p, NULL, 0, &lim, &r);
            char pos[SOW_POS_MAXLEN], mv[SOW_MOVE_MAXLEN] = "none";
            pos_format(rs, &p, pos, sizeof pos);
            if (r.best != SOW_MOVE_NONE)
                move_format(rs, p.side, r.best, mv, sizeof mv);
            fprintf(stderr, "%-12s %-44s depth %2d  score %6d%s  best %-5s nodes %11llu  %.3f s\n",
                    rs->name, pos, r.info.depth, r.info.score, r.info.proven ? " (exact)" : "",
                    mv, (unsigned long long)r.info.nodes, r.info.seconds);
            rn += r.info.nodes;
            rsec += r.info.seconds;
        }
        fprintf(stderr, "%-12s nodes %llu, %.0f nodes/s\n", rs->name, (unsigned long long)rn,
                rsec > 0 ? (double)rn / rsec : 0.0);
        total += rn;
        secs += rsec;
        engine_free(e);
    }
    printf("===========================\n");
    printf("Total time (ms) : %.0f\n", secs * 1000);
    printf("Nodes searched  : %llu\n", (unsigned long long)total);
    printf("Nodes/second    : %.0f\n", secs > 0 ? (double)total / secs : 0.0);
    return CLI_OK;
}
