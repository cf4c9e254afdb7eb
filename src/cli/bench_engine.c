/* sow bench engine: the alpha-beta engine over a fixed set of positions per
 * rule set at a fixed depth, in Stockfish's bench format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "tables_path.h"
#include "sow/engine.h"
#include "util.h"

static const char usage[] =
    "usage: sow bench engine [--rules R[,R..]|all] [--depth D] [--threads T] [--hash MB]\n"
    "                        [--mtdf] [--lockstep] [--lmr on|off] [--qs N]\n"
    "                        [--tables DIR[:DIR..]] [--table-cache MB]\n"
    "Searches a fixed set of positions per rule set (the start, then the positions\n"
    "after 8, 16, 24, 32 and 48 moves of fixed pseudo-random games: openings,\n"
    "middle games, endings) to depth D (default 14 on oware/awari, 12 elsewhere),\n"
    "each with a cleared table and no endgame knowledge but the terminal positions,\n"
    "and prints the total in Stockfish's format (Nodes searched, Nodes/second).\n"
    "A node is a position made by a move and searched.  The node total with one\n"
    "thread is the engine's bench signature (reproducible).  With --threads T > 1\n"
    "each position is also searched with one thread just before (same depth,\n"
    "cleared table), and the time to depth of both is printed with the ratio\n"
    "(Lazy SMP speed-up; wall-clock, so only meaningful on an idle machine).\n"
    "--lockstep runs the T threads in turns of 256 nodes (T equal cores simulated,\n"
    "deterministic, any load) and prints the main thread's nodes to depth against\n"
    "the one-thread search's: the time-to-depth ratio on T equal cores.\n"
    "--tables: each position is searched again with the endgame tables of the DIRs\n"
    "in play (compressed levels through their block cache, kept from one position\n"
    "to the next: cold at the first), then all of them once more (the cache warm),\n"
    "and the node rates per CPU second without and with the tables are compared\n"
    "(the tables may cost at most 25% of the rate).\n"
    "--lmr on|off: late-move reductions in every rule set, or in none (default:\n"
    "the engine's, on in oware and awari only).  --qs N: N plies of capture\n"
    "search below the leaves (engine_opts.qdepth; default 0, none).\n";

/* CPU seconds of the process (all threads).  On a machine shared with
 * other work, nodes per CPU second stay near the idle machine's rate per
 * thread while the wall-clock rate follows the load. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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

/* One bench run: its options, the rule sets and the totals over them,
 * shared by the steps below. */
struct bench_run {
    const char *rules;
    long depth, threads, hash, qs;
    bool mtdf, lockstep;
    const char *lmr;          /* --lmr as given: "on", "off" or NULL */
    enum engine_lmr lmr_mode; /* the same for engine_opts (NULL: the rule set's default) */
    struct ruleset rsv[64];
    int nn;
    uint64_t total;
    double secs, secs1, cpu;
    uint64_t nodes1, mnodes; /* 1 thread; main thread of T */
    /* --tables: the same positions searched again with the tables */
    const char *tables;
    long table_cache;
    uint64_t tnodes, thits, cmiss, chits, cbytes, wnodes, wmiss;
    double tcpu, wcpu; /* t: the cache cold at the first position; w: warm, again */
    int tlevels; /* the tables' top level of the last rule set, -1: none */
};

/* The options and the rule sets: 0, CLI_HELP or the exit status. */
static int bench_parse(struct bench_run *B, int argc, char **argv)
{
    const struct cli_option opts[] = {
        {"--rules", CLI_STR, &B->rules, 0, 0, "R[,R..]|all", "rule sets, default all", 0, 0},
        {"--depth", CLI_LONG, &B->depth, 1, ENGINE_MAX_PLY - 1, "D", "depth in plies", 0, 0},
        {"--threads", CLI_LONG, &B->threads, 1, (double)cli_max_threads(), "T",
         "threads, default 1 (Lazy SMP; node counts then vary)", 0, 0},
        {"--hash", CLI_LONG, &B->hash, 1, 1 << 16, "MB", "table size, default 64", 0, 0},
        {"--mtdf", CLI_FLAG, &B->mtdf, 0, 0, NULL,
         "drive the iterations by MTD(f) instead of PVS (for comparison)", 0, 0},
        {"--lmr", CLI_STR, &B->lmr, 0, 0, "on|off",
         "late-move reductions everywhere or nowhere (default: on in oware and awari)", 0, 0},
        {"--qs", CLI_LONG, &B->qs, 0, 16, "N", "capture-search plies below the leaves", 0, 0},
        {"--lockstep", CLI_FLAG, &B->lockstep, 0, 0, NULL,
         "threads take turns of 256 nodes: Lazy SMP on T equal cores, simulated", 0, 0},
        {"--tables", CLI_STR, &B->tables, 0, 0, "DIR[:DIR..]",
         "also search each position with these endgame tables, and compare the node rates",
         0, 0},
        {"--table-cache", CLI_LONG, &B->table_cache, 1, 1 << 20, "MB",
         "with --tables: the block cache, MiB (default: room for every block)", 0, 0},
        {0}};
    const struct cli_spec spec = {"bench engine", usage, opts, NULL, 0, NULL};
    int pr = cli_parse(&spec, argc, argv, NULL, NULL);
    if (pr)
        return pr;
    if (cli_hash_check("bench engine", "--hash", B->hash))
        return CLI_BAD;
    char tmsg[600];
    if (B->tables && tpath_check(B->tables, tmsg, sizeof tmsg) < 0)
        return cli_bad("bench engine", "--tables %s", tmsg);
    if (B->lmr && strcmp(B->lmr, "on") && strcmp(B->lmr, "off"))
        return cli_bad("bench engine", "--lmr takes on or off, not '%s'", B->lmr);
    B->lmr_mode = !B->lmr                  ? ENGINE_LMR_DEFAULT
                  : !strcmp(B->lmr, "on") ? ENGINE_LMR_ON
                                          : ENGINE_LMR_OFF;
    if (B->table_cache && !B->tables)
        return cli_bad("bench engine", "--table-cache sizes the tables' cache: give --tables");
    /* The list of rule sets: "all" or comma-separated names, all checked first. */
    const char *names[64];
    int nn = 0;
    char buf[512];
    if (strcmp(B->rules, "all") == 0) {
        for (int i = 0; sow_rule_names[i] && nn < 64; i++)
            names[nn++] = sow_rule_names[i];
    } else {
        snprintf(buf, sizeof buf, "%s", B->rules);
        for (char *tok = strtok(buf, ","); tok && nn < 64; tok = strtok(NULL, ","))
            names[nn++] = tok;
    }
    for (int i = 0; i < nn; i++) {
        struct sow_error e;
        enum sow_status st = rules_init(&B->rsv[i], names[i], 0, -1, &e);
        if (st != SOW_OK) {
            cli_bad("bench engine", "%s", e.msg);
            return cli_exit_code(st);
        }
    }
    B->nn = nn;
    return 0;
}

/* One position of rs to depth d on e (and first on its one-thread twin
 * e1, if any), its line on stderr, and the totals. */
static void bench_position(struct bench_run *B, const struct ruleset *rs, int d, int k,
                           struct engine *e, struct engine *e1, uint64_t *rn, double *rsec,
                           double *rsec1)
{
    sow_position p = bench_pos(rs, plies[k]);
    struct engine_limits lim = {.depth = d};
    struct engine_result r, r1;
    if (e1) { /* the one-thread twin first, on the same position */
        engine_clear(e1);
        engine_search(e1, &p, NULL, 0, &lim, &r1);
        *rsec1 += r1.info.seconds;
        B->nodes1 += r1.info.nodes;
    }
    engine_clear(e);
    double c0 = cpu_now();
    engine_search(e, &p, NULL, 0, &lim, &r);
    double c = cpu_now() - c0;
    B->cpu += c;
    B->mnodes += r.main_nodes;
    char pos[SOW_POS_MAXLEN], mv[SOW_MOVE_MAXLEN] = "none";
    pos_format(rs, &p, pos, sizeof pos);
    if (r.best != SOW_MOVE_NONE)
        move_format(rs, p.side, r.best, mv, sizeof mv);
    fprintf(stderr, "%-12s %-44s depth %2d  score %6d%s  best %-5s nodes %11llu  %.3f s",
            rs->name, pos, r.info.depth, r.info.score, r.info.proven ? " (exact)" : "", mv,
            (unsigned long long)r.info.nodes, r.info.seconds);
    if (B->tables)
        fprintf(stderr, "  %.0f nodes/CPU s", c > 0 ? (double)r.info.nodes / c : 0.0);
    if (e1)
        fprintf(stderr, "  (1 thread %.3f s, %llu nodes; main thread %llu)", r1.info.seconds,
                (unsigned long long)r1.info.nodes, (unsigned long long)r.main_nodes);
    fprintf(stderr, "\n");
    *rn += r.info.nodes;
    *rsec += r.info.seconds;
}

/* The same position of rs on et, an engine with the tables in play: its
 * line on stderr and the tables' totals (warm: the second pass, into w*). */
static void bench_position_tables(struct bench_run *B, const struct ruleset *rs, int d, int k,
                                  struct engine *et, bool warm)
{
    sow_position p = bench_pos(rs, plies[k]);
    struct engine_limits lim = {.depth = d};
    struct engine_result r;
    engine_clear(et);
    double c0 = cpu_now();
    engine_search(et, &p, NULL, 0, &lim, &r);
    double c = cpu_now() - c0;
    if (warm) {
        B->wcpu += c;
        B->wnodes += r.info.nodes;
    } else {
        B->tcpu += c;
        B->tnodes += r.info.nodes;
        B->thits += r.info.tb_hits;
    }
    fprintf(stderr, "%-12s %-44s with tables, %s: score %6d%s  nodes %11llu  tbhits %9llu  "
            "%.0f nodes/CPU s\n", "", "", warm ? "warm" : "cold", r.info.score,
            r.info.proven ? " (exact)" : "",
            (unsigned long long)r.info.nodes, (unsigned long long)r.info.tb_hits,
            c > 0 ? (double)r.info.nodes / c : 0.0);
}

/* The positions of one rule set, its summary line on stderr and the
 * totals.  0 or the exit status. */
static int bench_ruleset(struct bench_run *B, const struct ruleset *rs)
{
    int d = B->depth ? (int)B->depth
                     : (rs->family == SOW_OWARE || rs->family == SOW_AWARI) ? 14 : 12;
    struct engine_opts o = {.threads = (int)B->threads, .hash_mb = (unsigned)B->hash,
                            .mem_levels = -1, .mtdf = B->mtdf, .lockstep = B->lockstep,
                            .lmr = B->lmr_mode, .qdepth = (int)B->qs};
    struct engine *e, *e1 = NULL;
    struct sow_error ee;
    enum sow_status st = engine_new(rs, &o, &e, &ee);
    if (st == SOW_OK && B->threads > 1) {
        struct engine_opts o1 = o;
        o1.threads = 1;
        o1.lockstep = false;
        st = engine_new(rs, &o1, &e1, &ee);
        if (st != SOW_OK)
            engine_free(e);
    }
    if (st != SOW_OK) {
        fprintf(stderr, "sow bench engine: %s\n", ee.msg);
        return cli_exit_code(st);
    }
    /* --tables: a twin engine with the tables in play (the same options) */
    struct tb_set *tb = NULL;
    struct engine *et = NULL;
    if (B->tables) {
        struct engine_opts ot = o;
        if ((st = tpath_open(rs, B->tables, B->table_cache, &tb, &ee)) == SOW_OK) {
            ot.tb = tb;
            st = engine_new(rs, &ot, &et, &ee);
        }
        if (st != SOW_OK) {
            fprintf(stderr, "sow bench engine: --tables %s: %s\n", B->tables, ee.msg);
            engine_free(e);
            engine_free(e1);
            tb_close(tb);
            return cli_exit_code(st);
        }
        B->tlevels = tb_max_level(tb);
    }
    uint64_t rn = 0;
    double rsec = 0, rsec1 = 0;
    for (int k = 0; k < BENCH_PLIES; k++) {
        bench_position(B, rs, d, k, e, e1, &rn, &rsec, &rsec1);
        if (et)
            bench_position_tables(B, rs, d, k, et, false);
    }
    /* the tables' searches again, their blocks now in the cache */
    struct tb_cache_stats cs = {0}, cs2 = {0};
    if (tb && tb_set_cache_stats(tb, &cs)) {
        B->chits += cs.hits;
        B->cmiss += cs.misses;
        B->cbytes = cs.bytes;
    }
    for (int k = 0; et && k < BENCH_PLIES; k++)
        bench_position_tables(B, rs, d, k, et, true);
    if (tb && tb_set_cache_stats(tb, &cs2))
        B->wmiss += cs2.misses - cs.misses;
    engine_free(et);
    tb_close(tb);
    fprintf(stderr, "%-12s nodes %llu, %.0f nodes/s", rs->name, (unsigned long long)rn,
            rsec > 0 ? (double)rn / rsec : 0.0);
    if (e1)
        fprintf(stderr, ", time to depth %.0f ms against %.0f ms on 1 thread: %.2fx",
                rsec * 1000, rsec1 * 1000, rsec > 0 ? rsec1 / rsec : 0.0);
    fprintf(stderr, "\n");
    B->total += rn;
    B->secs += rsec;
    B->secs1 += rsec1;
    engine_free(e);
    engine_free(e1);
    return 0;
}

/* The totals on stdout, in Stockfish's format. */
static void bench_report(const struct bench_run *B)
{
    printf("===========================\n");
    printf("Total time (ms) : %.0f\n", B->secs * 1000);
    printf("Nodes searched  : %llu\n", (unsigned long long)B->total);
    printf("Nodes/second    : %.0f\n", B->secs > 0 ? (double)B->total / B->secs : 0.0);
    printf("Nodes/CPU second: %.0f (per thread; CPU time leaves out waiting for a core)\n",
           B->cpu > 0 ? (double)B->total / B->cpu : 0.0);
    if (B->threads > 1) {
        printf("1 thread (ms)   : %.0f\n", B->secs1 * 1000);
        printf("Time-to-depth speed-up, %ld threads vs 1 : %.2fx\n", B->threads,
               B->secs > 0 ? B->secs1 / B->secs : 0.0);
        if (B->lockstep)
            printf("Lockstep: main thread %llu nodes to depth against %llu on 1 thread: "
                   "%.2fx (time to depth on %ld equal cores)\n",
                   (unsigned long long)B->mnodes, (unsigned long long)B->nodes1,
                   B->mnodes ? (double)B->nodes1 / (double)B->mnodes : 0.0, B->threads);
    }
    if (B->tables) {
        double r0 = B->cpu > 0 ? (double)B->total / B->cpu : 0.0;
        double r1 = B->tcpu > 0 ? (double)B->tnodes / B->tcpu : 0.0;
        printf("Tables          : %s (levels 0..%d of the last rule set)\n", B->tables,
               B->tlevels);
        printf("Nodes (tables)  : %llu, tbhits %llu\n", (unsigned long long)B->tnodes,
               (unsigned long long)B->thits);
        printf("Block cache     : %llu hits, %llu blocks decompressed (cold), %llu more "
               "(warm), %.0f MiB\n", (unsigned long long)B->chits,
               (unsigned long long)B->cmiss, (unsigned long long)B->wmiss,
               (double)B->cbytes / 1048576.0);
        double r2 = B->wcpu > 0 ? (double)B->wnodes / B->wcpu : 0.0;
        printf("Nodes/CPU second: %.0f without tables, %.0f with them (cache cold), %.0f "
               "(warm): %.2f, %.2f of the rate (target at least 0.75)\n", r0, r1, r2,
               r0 > 0 ? r1 / r0 : 0.0, r0 > 0 ? r2 / r0 : 0.0);
    }
}

int bench_engine(int argc, char **argv)
{
    struct bench_run B = {.rules = "all", .threads = 1, .hash = 64};
    int pr = bench_parse(&B, argc, argv);
    if (pr)
        return pr == CLI_HELP ? CLI_OK : pr;
    for (int i = 0; i < B.nn; i++) {
        int rc = bench_ruleset(&B, &B.rsv[i]);
        if (rc)
            return rc;
    }
    bench_report(&B);
    return CLI_OK;
}
