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

/* One pass over the suite; values[i] in/out (checked when check). */
static int run_suite(const struct bpos *v, int n, int threads, unsigned hash, int *values,
                     bool check, bool quiet, double *secs, double *cpu, uint64_t *nodes)
{
    uint64_t total = 0;
    double ttot = 0, ctot = 0;
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
        ctot += cpu_now() - c0;
        uint64_t nn, hh;
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
        values[i] = val;
        total += nn;
        ttot += dt;
        if (!quiet)
            printf("Position: %d/%d %s %s value %d  Nodes searched : %llu  Nodes/second : %.0f\n",
                   i + 1, n, v[i].rules, v[i].pos, val, (unsigned long long)nn,
                   dt > 0 ? (double)nn / dt : 0.0);
    }
    *secs = ttot;
    *cpu = ctot;
    *nodes = total;
    return 0;
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
                   "Nodes = positions expanded (move generations, docs/solver.md).\n"
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
    if (load(file, v, &n))
        return CLI_BAD;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    double t1, t2, c1, c2;
    uint64_t n1, n2;
    int rc;
    printf("search bench: %d positions, 1 thread, hash %ld MiB\n", n, hash);
    if ((rc = run_suite(v, n, 1, (unsigned)hash, values, false, false, &t1, &c1, &n1)))
        goto out;
    printf("\n===========================\nThreads        : 1\nTotal time (ms) : %.0f\n"
           "Nodes searched : %llu\nNodes/second : %.0f\n"
           "CPU time (ms) : %.0f\nNodes/CPU second : %.0f\n",
           t1 * 1000, (unsigned long long)n1, t1 > 0 ? (double)n1 / t1 : 0.0, c1 * 1000,
           c1 > 0 ? (double)n1 / c1 : 0.0);
    if (threads > 1) {
        printf("\nsearch bench: same suite, %ld threads\n", threads);
        if ((rc = run_suite(v, n, (int)threads, (unsigned)hash, values, true, false, &t2, &c2, &n2)))
            goto out;
        printf("\n===========================\nThreads        : %ld\nTotal time (ms) : %.0f\n"
               "Nodes searched : %llu\nNodes/second : %.0f\nCPU time (ms) : %.0f\n",
               threads, t2 * 1000, (unsigned long long)n2, t2 > 0 ? (double)n2 / t2 : 0.0,
               c2 * 1000);
        printf("Speed-up (time, 1 -> %ld threads) : %.2fx\n", threads, t2 > 0 ? t1 / t2 : 0.0);
        printf("Values identical with 1 and %ld threads: yes\n", threads);
    }
out:
    sigaction(SIGINT, &old, NULL);
    return rc;
}
