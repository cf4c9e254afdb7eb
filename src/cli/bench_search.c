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
#include "sow/search.h"
#include "sow/util.h"

#define BENCH_MAX 256

struct bpos {
    char rules[32];
    int pits;
    char pos[SOW_POS_MAXLEN];
};

static volatile sig_atomic_t b_stop;

/* CPU seconds of the whole process (all threads): on a loaded shared machine
 * wall time says little, so the totals print both. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void on_sigint(int sig)
{
    (void)sig;
    b_stop = 1;
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
    for (int i = 0; i < 2 && tries[i]; i++) {
        FILE *f = fopen(tries[i], "r");
        if (f) {
            snprintf(used, len, "%s", tries[i]);
            return f;
        }
    }
    snprintf(used, len, "%s", tries[0]);
    return NULL;
}

static int load(const char *file, struct bpos *v, int *n)
{
    char used[PATH_MAX + 64], line[512];
    FILE *f = open_positions(file, used, sizeof used);
    if (!f)
        return cli_bad("bench", "cannot open position file %s: %s", used, strerror(errno));
    int k = 0, ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        char *s = line + strspn(line, " \t");
        if (*s == '#' || *s == '\n' || !*s)
            continue;
        if (k == BENCH_MAX || sscanf(s, "%31s %d %191s", v[k].rules, &v[k].pits, v[k].pos) != 3) {
            fclose(f);
            return cli_bad("bench", "%s:%d: expected 'RULES PITS POSITION'", used, ln);
        }
        k++;
    }
    fclose(f);
    *n = k;
    return 0;
}

/* What one pass over the suite measured: totals, and the oware lines alone
 * (the solver's speed target is stated for oware). */
struct tally {
    double secs, cpu, ow_secs;
    uint64_t nodes, expanded, ow_nodes;
};

/* One pass over the suite; values[i] and nodes[i] in/out (checked when check:
 * neither may depend on the thread count). */
static int run_suite(const struct bpos *v, int n, int threads, unsigned hash, int *values,
                     uint64_t *pnodes, bool check, bool quiet, struct tally *ty)
{
    memset(ty, 0, sizeof *ty);
    for (int i = 0; i < n; i++) {
        char err[256];
        struct ruleset rs;
        sow_position p;
        if (rules_init(&rs, v[i].rules, v[i].pits, 4, err, sizeof err) < 0 ||
            pos_parse(&rs, v[i].pos, &p, err, sizeof err) < 0)
            return cli_bad("bench", "position %d (%s): %s", i + 1, v[i].pos, err);
        struct search_opts o = {.threads = threads, .hash_mb = hash, .stop = &b_stop};
        struct search_ctx *s = search_new(&rs, &o, err, sizeof err);
        if (!s) {
            fprintf(stderr, "sow bench: %s\n", err);
            return CLI_FAIL;
        }
        int val;
        double t0 = util_now(), c0 = cpu_now();
        int rc = search_value(s, &p, &val);
        double dt = util_now() - t0;
        ty->cpu += cpu_now() - c0;
        uint64_t nn, hh, ne = search_expanded(s);
        search_counters(s, &nn, &hh);
        search_free(s);
        if (rc < 0) {
            fprintf(stderr, "sow bench: interrupted\n");
            return CLI_INTERRUPTED;
        }
        if (check && val != values[i]) {
            fprintf(stderr, "sow bench: position %d: value %d with %d threads but %d before\n",
                    i + 1, val, threads, values[i]);
            return CLI_FAIL;
        }
        if (check && nn != pnodes[i]) {
            fprintf(stderr, "sow bench: position %d: %llu nodes with %d threads but %llu before\n",
                    i + 1, (unsigned long long)nn, threads, (unsigned long long)pnodes[i]);
            return CLI_FAIL;
        }
        values[i] = val;
        pnodes[i] = nn;
        ty->nodes += nn;
        ty->expanded += ne;
        ty->secs += dt;
        if (strcmp(rs.name, "oware") == 0) {
            ty->ow_nodes += nn;
            ty->ow_secs += dt;
        }
        if (!quiet)
            printf("Position: %d/%d %s 2x%d %s value %d  Nodes searched : %llu  Nodes/second : "
                   "%.0f  Positions expanded : %llu\n",
                   i + 1, n, v[i].rules, v[i].pits, v[i].pos, val, (unsigned long long)nn,
                   dt > 0 ? (double)nn / dt : 0.0, (unsigned long long)ne);
    }
    return 0;
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
    long hash = 16, threads = 2;
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) {
            printf("usage: sow bench search [--file F] [--hash MB] [--threads T]\n"
                   "Solve every position of F (default bench/positions.txt) with 1 thread,\n"
                   "then with T threads (default 2); per position and in total print\n"
                   "'Nodes searched : N' and 'Nodes/second : M', then the speed-up.\n"
                   "Nodes = positions visited: child positions made by a move and looked\n"
                   "up (docs/solver.md); positions expanded are printed beside them.\n"
                   "Values and node counts must not depend on the thread count.\n"
                   "Totals also give process CPU time (wall time is noisy on shared machines).\n"
                   "Each position gets a fresh table of MB MiB (default 16).\n");
            return CLI_OK;
        }
        if ((r = cli_opt("bench", argc, argv, &i, "--file", &file)) < 0)
            return CLI_BAD;
        if (r)
            continue;
        if ((r = cli_opt_long("bench", argc, argv, &i, "--hash", 1, 1 << 16, &hash)) < 0)
            return CLI_BAD;
        if (r)
            continue;
        if ((r = cli_opt_long("bench", argc, argv, &i, "--threads", 1, 256, &threads)) < 0)
            return CLI_BAD;
        if (r)
            continue;
        return cli_unknown("bench", argv[i]);
    }
    static struct bpos v[BENCH_MAX];
    int n = 0, values[BENCH_MAX];
    static uint64_t pnodes[BENCH_MAX];
    if (load(file, v, &n))
        return CLI_BAD;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    struct tally t1, t2;
    int rc;
    printf("search bench: %d positions, 1 thread, hash %ld MiB\n", n, hash);
    if ((rc = run_suite(v, n, 1, (unsigned)hash, values, pnodes, false, false, &t1)))
        goto out;
    print_totals(1, &t1);
    if (threads > 1) {
        printf("\nsearch bench: same suite, %ld threads\n", threads);
        if ((rc = run_suite(v, n, (int)threads, (unsigned)hash, values, pnodes, true, false, &t2)))
            goto out;
        print_totals((int)threads, &t2);
        printf("Speed-up (time, 1 -> %ld threads) : %.2fx\n", threads,
               t2.secs > 0 ? t1.secs / t2.secs : 0.0);
        printf("Values and nodes identical with 1 and %ld threads: yes\n", threads);
    }
out:
    sigaction(SIGINT, &old, NULL);
    return rc;
}
