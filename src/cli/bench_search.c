/* sow bench search: solver speed over a fixed position file (bench/positions.txt). */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "fileio.h"
#include "sow/search.h"
#include "util.h"

#define BENCH_MAX 256

struct bpos {
    char rules[32];
    int pits;
    char pos[SOW_POS_MAXLEN];
};

/* CPU seconds of the whole process (all threads): on a loaded shared machine
 * wall time says little, so the totals print both. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static FILE *open_positions(const char *file, char *used, size_t len)
{
    const char *env = getenv("SOW_BENCH_POSITIONS");
    const char *tries[2] = {file ? file : env ? env : "bench/positions.txt", NULL};
    char exe[PATH_MAX], rel[PATH_MAX + 64];
    if (!file && !env) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) {
            exe[n] = 0;
            /* build-dir/src/cli/sow -> source/bench/positions.txt (build dir in the tree) */
            snprintf(rel, sizeof rel, "%s/../../../bench/positions.txt", dirname(exe));
            tries[1] = rel;
        }
    }
    struct sow_error e = {0};
    for (int i = 0; i < 2 && tries[i]; i++) {
        int fd;
        /* fileio: a FIFO or directory given as --file is refused, not waited on */
        if (fio_open_input(tries[i], &fd, &e) == SOW_OK) {
            FILE *f = fdopen(fd, "r");
            if (!f)
                close(fd);
            snprintf(used, len, "%s", tries[i]);
            return f;
        }
        if (i == 0)
            snprintf(used, len, "%s", e.msg);
    }
    return NULL;
}

static int load(const char *file, struct bpos *v, int *n)
{
    char used[PATH_MAX + 64];
    FILE *f = open_positions(file, used, sizeof used);
    if (!f)
        return cli_bad("bench", "position file %s", used);
    char *line = NULL; /* (getline: a long comment is one line, not several) */
    size_t lcap = 0;
    int k = 0, ln = 0, rc = 0;
    while (getline(&line, &lcap, f) > 0) {
        ln++;
        char *s = line + strspn(line, " \t");
        if (*s == '#' || *s == '\n' || !*s)
            continue;
        if (k == BENCH_MAX) {
            rc = cli_bad("bench", "%s:%d: more than %d positions", used, ln, BENCH_MAX);
            break;
        }
        if (sscanf(s, "%31s %d %191s", v[k].rules, &v[k].pits, v[k].pos) != 3) {
            rc = cli_bad("bench", "%s:%d: expected 'RULES PITS POSITION'", used, ln);
            break;
        }
        k++;
    }
    free(line);
    fclose(f);
    *n = k;
    return rc;
}

/* What one pass over the suite measured: totals, and the oware lines alone
 * (the solver's speed target is stated for oware). */
struct tally {
    double secs, cpu, ow_secs;
    uint64_t nodes, expanded, ow_nodes;
};

int bench_solve_once(const struct ruleset *rs, const sow_position *p, int threads, unsigned hash,
                     volatile sig_atomic_t *stop, int *val, uint64_t *nodes, uint64_t *expanded,
                     double *secs, double *cpu)
{
    struct sow_error e;
    struct search_opts o = {.threads = threads, .hash_mb = hash, .stop = stop};
    struct search_ctx *s;
    enum sow_status st = search_new(rs, &o, &s, &e);
    if (st != SOW_OK) {
        fprintf(stderr, "sow bench: %s\n", e.msg);
        return cli_exit_code(st);
    }
    double t0 = util_now(), c0 = cpu_now();
    st = search_value(s, p, val);
    *secs = util_now() - t0;
    *cpu = cpu_now() - c0;
    uint64_t hits;
    *expanded = search_expanded(s);
    search_counters(s, nodes, &hits);
    if (st != SOW_OK)
        fprintf(stderr, "sow bench: %s\n", search_last_error(s)->msg);
    search_free(s);
    return cli_exit_code(st);
}

/* What was measured for one position with one thread count: the fastest of
 * its solves (other jobs only ever add time). */
struct meas {
    int value;
    uint64_t nodes, expanded;
    double secs, cpu;
};

/* Solve every position `repeat` times with each thread count of tc[0..ntc),
 * the thread counts interleaved (1, T, 1, T, ...) so that a slow spell of a
 * shared machine hits both alike.  m[i * ntc + k]: position i, count tc[k].
 * Values and node counts must be the same every time. */
static int measure(const struct bpos *v, int n, const int *tc, int ntc, unsigned hash, int repeat,
                   struct meas *m, volatile sig_atomic_t *stop)
{
    for (int i = 0; i < n; i++) {
        struct sow_error e;
        struct ruleset rs;
        sow_position p;
        enum sow_status ps = rules_init(&rs, v[i].rules, v[i].pits, 4, &e);
        if (ps == SOW_OK)
            ps = pos_parse(&rs, v[i].pos, &p, &e);
        if (ps != SOW_OK) {
            cli_bad("bench", "position %d (%s): %s", i + 1, v[i].pos, e.msg);
            return cli_exit_code(ps);
        }
        fprintf(stderr, "sow bench: position %d/%d\r", i + 1, n);
        for (int r = 0; r < repeat; r++)
            for (int k = 0; k < ntc; k++) {
                struct meas x, *b = &m[i * ntc + k];
                int st = bench_solve_once(&rs, &p, tc[k], hash, stop, &x.value, &x.nodes,
                                          &x.expanded, &x.secs, &x.cpu);
                if (st)
                    return st;
                if ((r > 0 || k > 0) && (x.value != m[i * ntc].value || x.nodes != m[i * ntc].nodes)) {
                    fprintf(stderr,
                            "sow bench: position %d: value %d, %llu nodes with %d threads, but "
                            "%d, %llu with 1\n",
                            i + 1, x.value, (unsigned long long)x.nodes, tc[k], m[i * ntc].value,
                            (unsigned long long)m[i * ntc].nodes);
                    return CLI_FAIL;
                }
                if (r == 0 || x.secs < b->secs)
                    *b = x;
            }
    }
    fprintf(stderr, "%30s\r", "");
    return 0;
}

/* Print one thread count's lines (column k of m) and add up its totals. */
static void report(const struct bpos *v, int n, const struct meas *m, int ntc, int k,
                   struct tally *ty)
{
    memset(ty, 0, sizeof *ty);
    for (int i = 0; i < n; i++) {
        const struct meas *x = &m[i * ntc + k];
        ty->nodes += x->nodes;
        ty->expanded += x->expanded;
        ty->secs += x->secs;
        ty->cpu += x->cpu;
        if (strcmp(v[i].rules, "oware") == 0) {
            ty->ow_nodes += x->nodes;
            ty->ow_secs += x->secs;
        }
        printf("Position: %d/%d %s 2x%d %s value %d  Nodes searched : %llu  Nodes/second : "
               "%.0f  Positions expanded : %llu\n",
               i + 1, n, v[i].rules, v[i].pits, v[i].pos, x->value, (unsigned long long)x->nodes,
               x->secs > 0 ? (double)x->nodes / x->secs : 0.0, (unsigned long long)x->expanded);
    }
}

static void print_totals(int threads, const struct tally *t)
{
    printf("\n===========================\nThreads        : %d\nTotal time (ms) : %.0f\n"
           "Nodes searched : %llu\nNodes/second : %.0f\n"
           "Positions expanded : %llu\nCPU time (ms) : %.0f\nNodes/CPU second : %.0f\n"
           "oware lines: Nodes searched : %llu  Nodes/second : %.0f\n",
           threads, t->secs * 1000, (unsigned long long)t->nodes,
           t->secs > 0 ? (double)t->nodes / t->secs : 0.0, (unsigned long long)t->expanded,
           t->cpu * 1000, t->cpu > 0 ? (double)t->nodes / t->cpu : 0.0,
           (unsigned long long)t->ow_nodes, t->ow_secs > 0 ? (double)t->ow_nodes / t->ow_secs : 0.0);
}

int bench_search(int argc, char **argv)
{
    const char *file = NULL;
    long hash = 16, threads = 2, repeat = 3;
    static const char usage[] =
        "usage: sow bench search [--file F] [--hash MB] [--threads T] [--repeat R]\n"
        "Solve every position of F (default bench/positions.txt) with 1 thread,\n"
        "then with T threads (default 2); per position and in total print\n"
        "'Nodes searched : N' and 'Nodes/second : M', then the speed-up.\n"
        "Each position is solved R times (default 3) with each thread count,\n"
        "the counts interleaved, each time from scratch; the fastest counts\n"
        "(other jobs only ever add time).\n"
        "Nodes = positions visited: child positions made by a move and looked\n"
        "up (docs/solver.md); positions expanded are printed beside them.\n"
        "Values and node counts must not depend on the thread count.\n"
        "Totals also give process CPU time (wall time is noisy on shared machines).\n"
        "Each position gets a fresh table of MB MiB (default 16).\n";
    const struct cli_option opts[] = {
        {"--file", CLI_STR, &file, 0, 0, "F", "positions, default bench/positions.txt", 0, 0},
        {"--hash", CLI_LONG, &hash, 1, 1 << 16, "MB", "table per position, default 16", 0, 0},
        {"--threads", CLI_LONG, &threads, 1, (double)cli_max_threads(), "T",
         "threads of the second pass, default 2", 0, 0},
        {"--repeat", CLI_LONG, &repeat, 1, 100, "R", "solves per position, default 3", 0, 0},
        {0}};
    const struct cli_spec spec = {"bench", usage, opts, NULL, 0, NULL};
    int pr = cli_parse(&spec, argc, argv, NULL, NULL);
    if (pr)
        return pr == CLI_HELP ? CLI_OK : pr;
    if (cli_hash_check("bench", "--hash", hash))
        return CLI_BAD;
    static struct bpos v[BENCH_MAX];
    int n = 0;
    static struct meas m[2 * BENCH_MAX];
    if (load(file, v, &n))
        return CLI_BAD;
    volatile sig_atomic_t *stop = cli_catch_signals(false);
    struct tally t1, t2;
    int tc[2] = {1, (int)threads}, ntc = threads > 1 ? 2 : 1;
    int rc = measure(v, n, tc, ntc, (unsigned)hash, (int)repeat, m, stop);
    if (rc)
        goto out;
    printf("search bench: %d positions, 1 thread, fastest of %ld solves each\n", n, repeat);
    report(v, n, m, ntc, 0, &t1);
    print_totals(1, &t1);
    if (threads > 1) {
        printf("\nsearch bench: same suite, %ld threads\n", threads);
        report(v, n, m, ntc, 1, &t2);
        print_totals((int)threads, &t2);
        printf("Speed-up (time, 1 -> %ld threads) : %.2fx\n", threads,
               t2.secs > 0 ? t1.secs / t2.secs : 0.0);
        printf("Values and nodes identical with 1 and %ld threads: yes\n", threads);
    }
out:
    return rc == CLI_INTERRUPTED ? cli_interrupted() : rc;
}
