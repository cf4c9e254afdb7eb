/* sow bench tables: retrograde build speed, positions per second per level,
 * into a temporary directory that is removed afterwards (or into --keep DIR,
 * kept, so that the levels can be compressed or probed later). */
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <sys/stat.h>

#include "cli.h"
#include "tables/tables.h"
#include "util.h"

/* Wall and CPU (all threads) time per level and per phase: on a machine
 * shared with other work, CPU seconds are the comparable figure. */
#define BT_PHASES 8
struct bt {
    double total_s, total_cpu;
    uint64_t total_pos;
    double cpu0;
    bool phases;
    int np;
    const char *name[BT_PHASES];
    double ph_t[BT_PHASES], ph_start;
    int cur;
    const char *builder; /* of the level last built, and its peak bytes */
    double peak;
};

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void on_progress(void *ctx, int level, uint64_t entries, double frac, const char *phase)
{
    struct bt *b = ctx;
    (void)level;
    (void)entries;
    (void)frac;
    if (b->cur >= 0 && b->name[b->cur] == phase)
        return;
    double now = util_now();
    if (b->cur >= 0)
        b->ph_t[b->cur] += now - b->ph_start;
    b->ph_start = now;
    int k = 0;
    while (k < b->np && strcmp(b->name[k], phase) != 0)
        k++;
    if (k == b->np && b->np < BT_PHASES)
        b->name[b->np++] = phase;
    b->cur = k < BT_PHASES ? k : -1;
}

static void level_info(void *ctx, int level, uint64_t entries, const char *builder, double peak)
{
    struct bt *b = ctx;
    (void)level;
    (void)entries;
    b->builder = builder;
    b->peak = peak;
}

static void level_done(void *ctx, int level, uint64_t entries, double secs, bool built)
{
    struct bt *b = ctx;
    double cpu = cpu_now(), c = cpu - b->cpu0;
    b->cpu0 = cpu;
    if (!built)
        return;
    b->total_s += secs;
    b->total_cpu += c;
    b->total_pos += entries;
    printf("  level %3d %12llu positions %8.3f s %8.2f Mpos/s %8.3f cpu-s %6.2f Mpos/cpu-s"
           "  %s %5.2f B/pos\n",
           level, (unsigned long long)entries, secs,
           secs > 0 ? (double)entries / secs / 1e6 : 0.0, c,
           c > 0 ? (double)entries / c / 1e6 : 0.0, b->builder ? b->builder : "?",
           entries ? b->peak / (double)entries : 0.0);
    if (b->phases) {
        printf("           ");
        for (int k = 0; k < b->np; k++)
            printf(" %s %.3f", b->name[k], b->ph_t[k]);
        printf("\n");
    }
    for (int k = 0; k < b->np; k++)
        b->ph_t[k] = 0;
    b->cur = -1;
    fflush(stdout);
}

int bench_tables(int argc, char **argv)
{
    const char *rules = "oware,awari";
    long pits = 6, seeds = 14, threads = 0;
    double memory_gb = 0;
    const char *bname = "auto";
    bool phases = false;
    bool mpi = false;          /* --mpi, --ranks: bench_mpi.c */
    const char *ranks = "1,2,4";
    const char *keep = NULL;
    static const char usage[] =
        "usage: sow bench tables [--rules R[,R...]|all] [--pits N] [--seeds N] [--threads T]\n"
        "                        [--phases] [--builder auto|fast|lean] [--keep DIR] [--memory GB]\n"
        "  builds levels 0..N (default oware,awari 2x6 up to 14) into a temporary directory,\n"
        "  printing positions per second (wall and CPU) per level, the builder used and its\n"
        "  bytes per position at the level's peak; --keep builds into DIR/<rules> and keeps\n"
        "  the files (levels already there are not rebuilt)\n"
        "       sow bench tables --mpi [--ranks 1,2,4] [--rules R] [--seeds N] [--threads T] ...\n"
        "  distributed builds (mpirun on this machine, docs/distributed.md): wall and CPU time,\n"
        "  bytes sent between ranks per position, peak memory per rank, files checked\n"
        "  byte-identical to the single-process build (defaults: 1 thread per rank)\n";
    const struct cli_option opts[] = {
        {"--rules", CLI_STR, &rules, 0, 0, "R,...", "rule sets, or all", 0, 0},
        {"--pits", CLI_LONG, &pits, 1, SOW_MAX_PITS, "N", "holes per side, default 6", 0, 0},
        {"--seeds", CLI_LONG, &seeds, 0, TB_MAX_LEVEL, "N", "highest level, default 14", 0, 0},
        {"--threads", CLI_LONG, &threads, 1, (double)cli_max_threads(), "T",
         "threads, default all", 0, 0},
        {"--phases", CLI_FLAG, &phases, 0, 0, NULL, "the wall seconds of each build phase", 0,
         0},
        {"--builder", CLI_STR, &bname, 0, 0, "auto|fast|lean", "which builder (default auto)", 0,
         0},
        {"--keep", CLI_STR, &keep, 0, 0, "DIR", "build into DIR/<rules> and keep the levels", 0,
         0},
        {"--memory", CLI_DOUBLE, &memory_gb, 0.001, 1e6, "GB", "memory limit, default 3/4 of RAM",
         0, 0},
        {"--mpi", CLI_FLAG, &mpi, 0, 0, NULL, "distributed builds with mpirun", 0, 0},
        {"--ranks", CLI_STR, &ranks, 0, 0, "R,...", "--mpi: rank counts, default 1,2,4", 0, 0},
        {0}};
    const struct cli_spec spec = {"bench tables", usage, opts, NULL, 0, NULL};
    int pr = cli_parse(&spec, argc, argv, NULL, NULL);
    if (pr)
        return pr == CLI_HELP ? CLI_OK : pr;
    int builder = strcmp(bname, "fast") == 0   ? TB_BUILDER_FAST
                  : strcmp(bname, "lean") == 0 ? TB_BUILDER_LEAN
                  : strcmp(bname, "auto") == 0 ? TB_BUILDER_AUTO
                                               : -1;
    if (builder < 0)
        return cli_bad("bench tables", "--builder '%s': expected auto, fast or lean", bname);
    if (memory_gb > 0 && cli_memory_check("bench tables", memory_gb))
        return CLI_BAD;
    if (mpi && memory_gb > 0)
        return cli_bad("bench tables", "--memory is for one-process builds: not with --mpi");
    if (mpi) /* bench_mpi.c */
        return bench_tables_mpi(rules, pits, seeds, threads, bname, ranks);
    /* Ctrl-C: the level in progress is given up and the temporary directory
     * removed (with --keep, the finished levels stay and a rerun resumes). */
    volatile sig_atomic_t *stop = cli_catch_signals(false);
    char list[512];
    cli_rules_csv(rules, list, sizeof list);
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        struct ruleset rs;
        struct sow_error e;
        enum sow_status st = rules_init(&rs, name, (int)pits, 0, &e);
        if (st != SOW_OK) {
            cli_bad("bench tables", "%s", e.msg);
            return cli_exit_code(st);
        }
        char dir[4096];
        if (keep) {
            if (snprintf(dir, sizeof dir, "%s/%s", keep, rs.name) >= (int)sizeof dir)
                return cli_bad("bench tables", "--keep '%s': path too long", keep);
            if ((mkdir(keep, 0777) != 0 && errno != EEXIST) ||
                (mkdir(dir, 0777) != 0 && errno != EEXIST))
                return cli_bad("bench tables", "--keep: cannot create %s: %s", dir,
                               strerror(errno));
        } else if (!util_mkdtemp(dir, sizeof dir, "sow-bench-tables")) {
            fprintf(stderr, "sow bench tables: cannot create a temporary directory in %s: %s\n",
                    util_tmpdir(), strerror(errno));
            return CLI_FAIL;
        }
        struct bt b;
        memset(&b, 0, sizeof b);
        b.phases = phases;
        b.cur = -1;
        b.cpu0 = cpu_now();
        struct tb_build_opts opt = {.threads = (int)threads, .stop = stop,
                                    .progress = phases ? on_progress : NULL,
                                    .level_done = level_done, .ctx = &b, .builder = builder,
                                    .memory_bytes = memory_gb * 1e9,
                                    .level_info = level_info};
        char tn[24] = "all";
        if (threads)
            snprintf(tn, sizeof tn, "%ld", threads);
        printf("%s 2x%ld levels 0..%ld, %s threads:\n", rs.name, pits, seeds, tn);
        st = tb_build(&rs, dir, (int)seeds, &opt, &e);
        if (!keep)
            util_rmdir_flat(dir);
        if (st == SOW_E_INTERRUPTED || *stop) {
            fprintf(stderr, "sow bench tables: interrupted%s\n",
                    keep ? "; complete levels are kept, rerun to resume" : "");
            return cli_interrupted();
        }
        if (st != SOW_OK) {
            fprintf(stderr, "sow bench tables: %s\n", e.msg);
            return CLI_FAIL;
        }
        printf("%s total: %llu positions in %.2f s = %.2f Mpos/s, %.2f cpu-s = %.2f Mpos/cpu-s\n",
               rs.name, (unsigned long long)b.total_pos, b.total_s,
               b.total_s > 0 ? (double)b.total_pos / b.total_s / 1e6 : 0.0, b.total_cpu,
               b.total_cpu > 0 ? (double)b.total_pos / b.total_cpu / 1e6 : 0.0);
    }
    return CLI_OK;
}
