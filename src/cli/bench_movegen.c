/* sow bench movegen: move generation speed per rule set, then oware perft.
 * The races against the slow twins (tests/ref, bench/twin) are a separate
 * executable, build/bench/sow-bench-twin (bench/twin_bench.c), so that the
 * shipped binary is libsow + the command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "perft.h"
#include "util.h"

static const char usage[] =
    "usage: sow bench movegen [--rules R|all] [--positions N] [--time S] [--perft-depth D]\n"
    "Moves generated per second on one core over a fixed set of N positions per rule\n"
    "set (taken from random games from the start, fixed seed).  Then oware perft\n"
    "from the start to depth D, with the bulk count of the last ply and making every\n"
    "move, which must agree.  Defaults: all, 4096, 1 s, 9.  The race against the\n"
    "seed-by-seed reference and the obvious C perft: build/bench/sow-bench-twin.\n"
    "Columns: lifts/mv = relay pick-ups per move; ns/lift = generation time per\n"
    "pick-up (relay rule sets; includes making the moves); endless/k = never-ending\n"
    "moves per 1000 positions; us/endless = time to prove one never ends;\n"
    "ns/pos = time to expand one position (generate all its moves, as the closure\n"
    "does), and the last line compares jodu's expansion cost with odu's.  The\n"
    "timed loop runs without the relay memo, so every relay is sown each time.\n"
    "Instruction counts, free of the machine's load: valgrind --tool=callgrind\n"
    "--toggle-collect=movegen_pass build/src/cli/sow bench movegen --time 0.001\n"
    "(one pass over the positions).\n";

static uint64_t splitmix(uint64_t *s)
{
    return util_splitmix64(s);
}

/* The fixed position set: positions met in random games from the start. */
static int sample_positions(const struct ruleset *rs, sow_position *out, int n, uint64_t seed)
{
    struct sow_movelist ml;
    struct sow_relay_cache *cache = rs->relay ? rules_cache_new(14) : NULL;
    int k = 0;
    while (k < n) {
        sow_position p = rules_start(rs);
        for (int ply = 0; ply < 300 && k < n; ply++) {
            out[k++] = p;
            rs->generate(rs, &p, &ml, cache, NULL);
            if (!ml.n)
                break;
            p = ml.c[splitmix(&seed) % (uint64_t)ml.n].pos;
        }
    }
    rules_cache_free(cache);
    return k;
}

/* perft that makes every move, leaves included (no bulk counter): shows how
 * much of sow perft's lead comes from the generator alone. */
static uint64_t perft_making(const struct ruleset *rs, const sow_position *p, int depth)
{
    if (depth == 0)
        return 1;
    struct sow_movelist ml;
    rs->generate(rs, p, &ml, NULL, NULL);
    if (depth == 1)
        return (uint64_t)ml.n;
    uint64_t n = 0;
    for (int i = 0; i < ml.n; i++)
        n += perft_making(rs, &ml.c[i].pos, depth - 1);
    return n;
}

struct mg_result {
    double moves_per_s, ns_per_pos, moves_per_pos;
    double pickups_per_move, endless_per_k;
    double ns_per_pickup, us_per_endless; /* cost of relays and of proving one never ends */
};

/* One pass over the set, every position expanded once without the memo.  Kept
 * out of line so that callgrind can count exactly this (--toggle-collect). */
__attribute__((noinline)) uint64_t movegen_pass(const struct ruleset *rs, const sow_position *set,
                                                int npos, struct sow_movelist *ml,
                                                struct sow_stats *st);
__attribute__((noinline)) uint64_t movegen_pass(const struct ruleset *rs, const sow_position *set,
                                                int npos, struct sow_movelist *ml,
                                                struct sow_stats *st)
{
    uint64_t moves = 0;
    for (int i = 0; i < npos; i++) {
        rs->generate(rs, &set[i], ml, NULL, st); /* no memo: every relay is sown */
        moves += (uint64_t)ml->n;
    }
    return moves;
}

static void run_one(const struct ruleset *rs, int npos, double secs, struct mg_result *r)
{
    sow_position *set = malloc(sizeof *set * (size_t)npos);
    if (!set) {
        fprintf(stderr, "sow bench: out of memory\n");
        exit(CLI_FAIL);
    }
    sample_positions(rs, set, npos, 2026);

    struct sow_movelist ml;
    struct sow_stats st = {0};
    uint64_t moves = 0, gens = 0;
    double t0 = util_now(), dt;
    do {
        moves += movegen_pass(rs, set, npos, &ml, &st);
        gens += (uint64_t)npos;
    } while ((dt = util_now() - t0) < secs);
    r->moves_per_s = (double)moves / dt;
    r->ns_per_pos = 1e9 * dt / (double)gens;
    r->moves_per_pos = (double)moves / (double)gens;
    r->pickups_per_move = moves ? (double)st.pickups / (double)moves : 0;
    r->endless_per_k = 1000.0 * (double)st.endless / (double)gens;
    /* Relay cost: time of the relay rule sets' generation per pick-up (an
     * upper bound: it includes making the moves), and per never-ending move. */
    r->ns_per_pickup = st.pickups ? 1e9 * dt / (double)st.pickups : 0;
    r->us_per_endless =
        st.endless ? 1e-3 * r->ns_per_pickup * (double)st.endless_pickups / (double)st.endless : 0;
    free(set);
}

int bench_movegen(const char *rules, int argc, char **argv)
{
    long npos = 4096, depth = 9;
    double secs = 1.0;
    const struct cli_option opts[] = {
        {"--rules", CLI_STR, &rules, 0, 0, "R", NULL, 0, 0},
        {"--positions", CLI_LONG, &npos, 1, 1 << 20, "N", NULL, 0, 0},
        {"--perft-depth", CLI_LONG, &depth, 1, 14, "D", NULL, 0, 0},
        {"--time", CLI_DOUBLE, &secs, 0, 600, "S", NULL, true, 0},
        {0}};
    const struct cli_spec spec = {"bench", usage, opts, NULL, 0, NULL};
    int pr = cli_parse(&spec, argc, argv, NULL, NULL);
    if (pr)
        return pr == CLI_HELP ? CLI_OK : pr;
    const char *list[16];
    int nl = 0;
    if (strcmp(rules, "all") == 0) {
        for (int i = 0; sow_rule_names[i]; i++)
            list[nl++] = sow_rule_names[i];
    } else {
        list[nl++] = rules;
    }
    for (int k = 0; k < nl; k++) { /* every name checked before any output */
        struct ruleset rs;
        struct sow_error e;
        enum sow_status st = rules_init(&rs, list[k], 6, 4, &e);
        if (st != SOW_OK) {
            cli_bad("bench", "%s", e.msg);
            return cli_exit_code(st);
        }
    }
    printf("movegen: %ld positions per rule set from random games (seed 2026), 2x6, one core\n",
           npos);
    printf("%-12s %12s %8s %9s %9s %9s %9s %11s\n", "rules", "moves/s", "mv/pos", "ns/pos",
           "lifts/mv", "ns/lift", "endless/k", "us/endless");
    double ns_jodu = 0, ns_odu = 0;
    for (int k = 0; k < nl; k++) {
        struct ruleset rs;
        struct sow_error e;
        enum sow_status st = rules_init(&rs, list[k], 6, 4, &e);
        if (st != SOW_OK) {
            cli_bad("bench", "%s", e.msg);
            return cli_exit_code(st);
        }
        struct mg_result r;
        run_one(&rs, (int)npos, secs, &r);
        printf("%-12s %12.0f %8.2f %9.1f %9.2f %9.2f %9.2f %11.1f\n", rs.name, r.moves_per_s,
               r.moves_per_pos, r.ns_per_pos, r.pickups_per_move, r.ns_per_pickup,
               r.endless_per_k, r.us_per_endless);
        fflush(stdout);
        if (rs.family == SOW_JODU)
            ns_jodu = r.ns_per_pos;
        if (rs.family == SOW_ODU)
            ns_odu = r.ns_per_pos;
    }
    if (ns_jodu > 0 && ns_odu > 0) /* within 3x */
        printf("jodu/odu expansion cost (ns/pos): %.2fx\n", ns_jodu / ns_odu);

    /* oware perft: the bulk count of the last ply, and making every move. */
    struct ruleset rs;
    rules_init(&rs, "oware", 6, 4, NULL);
    sow_position start = rules_start(&rs);
    double t0 = util_now();
    uint64_t a = perft(&rs, &start, (int)depth, NULL);
    double ta = util_now() - t0;
    t0 = util_now();
    uint64_t c = perft_making(&rs, &start, (int)depth);
    double tc = util_now() - t0;
    printf("oware perft %ld: %llu in %.3f s (%.0f/s; the last ply by the bulk counter), "
           "making every move %llu in %.3f s%s\n",
           depth, (unsigned long long)a, ta, (double)a / ta, (unsigned long long)c, tc,
           a == c ? "" : "  MISMATCH");
    return a == c ? CLI_OK : CLI_FAIL;
}
