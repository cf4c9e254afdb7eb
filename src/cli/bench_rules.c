/* sow bench --rules R,...|all: move generation and solver speed for every rule
 * set side by side, on the same kind of positions for each. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fileio.h"
#include "sow/search.h"
#include "util.h"

static const char usage[] =
    "usage: sow bench --rules R,...|all [--pits P] [--positions N] [--bench-seeds K]\n"
    "                 [--time S] [--threads T] [--hash MB] [--csv FILE]\n"
    "Per rule set on the 2xP board (default 3) with 4 seeds per hole:\n"
    "  movegen  moves generated per second (one core, no relay cache) over the\n"
    "           positions met in random games from the start (fixed seed), for S\n"
    "           seconds (default 0.5);\n"
    "  search   N positions (default 6): the first position with at most K seeds\n"
    "           on the board (default 10) in each of N random games (fixed seed),\n"
    "           solved exactly with 1 thread and then with T threads (default 2),\n"
    "           a fresh MB MiB table per position (default 16): nodes, nodes/second\n"
    "           and the speed-up; the values must agree.\n"
    "--csv FILE: rules,threads,positions,nodes,seconds,nodes_per_s,moves_per_s\n";

static uint64_t mix(uint64_t *s)
{
    return util_splitmix64(s);
}

/* Positions of random games from the start (fixed seed), at most n. */
static int game_positions(const struct ruleset *rs, sow_position *out, int n)
{
    struct sow_movelist ml;
    uint64_t seed = 2026;
    int k = 0;
    for (int g = 0; g < 1000 && k < n; g++) {
        sow_position p = rules_start(rs);
        for (int ply = 0; ply < 400 && k < n; ply++) {
            rules_generate(rs, &p, &ml);
            if (!ml.n)
                break;
            out[k++] = p;
            p = ml.c[mix(&seed) % (uint64_t)ml.n].pos;
        }
    }
    return k;
}

/* The first live position with <= maxseeds seeds of each of n random games. */
static int search_positions(const struct ruleset *rs, sow_position *out, int n, int maxseeds)
{
    struct sow_movelist ml;
    uint64_t seed = 77;
    int k = 0;
    for (int g = 0; g < 100 * n && k < n; g++) {
        sow_position p = rules_start(rs);
        for (int ply = 0; ply < 2000; ply++) {
            rules_generate(rs, &p, &ml);
            if (!ml.n)
                break;
            if (rules_board_seeds(rs, &p) <= maxseeds) {
                out[k++] = p;
                break;
            }
            p = ml.c[mix(&seed) % (uint64_t)ml.n].pos;
        }
    }
    return k;
}

static double movegen_rate(const struct ruleset *rs, double secs, volatile sig_atomic_t *r_stop)
{
    enum { NPOS = 2048 };
    static sow_position set[NPOS];
    int n = game_positions(rs, set, NPOS);
    struct sow_movelist ml;
    uint64_t moves = 0;
    double t0 = util_now(), dt;
    do {
        for (int i = 0; i < n; i++) {
            rs->generate(rs, &set[i], &ml, NULL, NULL);
            moves += (uint64_t)ml.n;
        }
    } while ((dt = util_now() - t0) < secs && !*r_stop);
    return (double)moves / dt;
}

/* Solve every position; 0, or an exit status. */
static int solve_all(volatile sig_atomic_t *r_stop, const struct ruleset *rs, const sow_position *v, int n, int threads,
                     unsigned hash, int *values, bool check, uint64_t *nodes, double *secs)
{
    *nodes = 0;
    *secs = 0;
    for (int i = 0; i < n; i++) {
        int val;
        uint64_t nn, ne;
        double dt, cpu;
        int rc = bench_solve_once(rs, &v[i], threads, hash, r_stop, &val, &nn, &ne, &dt, &cpu);
        if (rc)
            return rc;
        *secs += dt;
        if (check && val != values[i]) {
            fprintf(stderr, "sow bench: %s position %d: value %d with %d threads, %d with 1\n",
                    rs->name, i + 1, val, threads, values[i]);
            return CLI_FAIL;
        }
        values[i] = val;
        *nodes += nn;
    }
    return 0;
}

int bench_rules(int argc, char **argv)
{
    const char *cmd = "bench", *spec = "all", *csv = NULL;
    long npos = 6, maxseeds = 10, pits = 3, threads = 2, hash = 16;
    double secs = 0.5;
    const struct cli_option opts[] = {
        {"--rules", CLI_STR, &spec, 0, 0, "R,...", NULL, 0, 0},
        {"--csv", CLI_STR, &csv, 0, 0, "FILE", NULL, 0, 0},
        {"--positions", CLI_LONG, &npos, 1, 64, "N", NULL, 0, 0},
        {"--bench-seeds", CLI_LONG, &maxseeds, 1, 48, "N", NULL, 0, 0},
        {"--threads", CLI_LONG, &threads, 1, (double)cli_max_threads(), "T", NULL, 0, 0},
        {"--pits", CLI_LONG, &pits, 1, SOW_MAX_PITS, "N", NULL, 0, 0},
        {"--hash", CLI_LONG, &hash, 1, 1 << 16, "MB", NULL, 0, 0},
        {"--time", CLI_DOUBLE, &secs, 0, 3600, "S", NULL, true, 0},
        {0}};
    const struct cli_spec pspec = {cmd, usage, opts, NULL, 0, NULL};
    int pr = cli_parse(&pspec, argc, argv, NULL, NULL);
    if (pr)
        return pr == CLI_HELP ? CLI_OK : pr;
    if (cli_hash_check(cmd, "--hash", hash))
        return CLI_BAD;
    const char *names[SOW_FAMILY_COUNT];
    int nnames = 0;
    char buf[256];
    if (strcmp(spec, "all") == 0) {
        for (int i = 0; sow_rule_names[i]; i++)
            names[nnames++] = sow_rule_names[i];
    } else {
        if (strlen(spec) >= sizeof buf || !*spec)
            return cli_bad(cmd, "--rules '%s': expected names separated by commas, or all", spec);
        strcpy(buf, spec);
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
             t = strtok_r(NULL, ",", &save)) {
            struct ruleset rs;
            struct sow_error e;
            enum sow_status st = rules_init(&rs, t, 6, 4, &e);
            if (st != SOW_OK) {
                cli_bad(cmd, "%s", e.msg);
                return cli_exit_code(st);
            }
            if (nnames == SOW_FAMILY_COUNT)
                return cli_bad(cmd, "--rules '%s': too many names", spec);
            names[nnames++] = rs.name;
        }
    }
    FILE *out = NULL;
    struct fio_out fo = {.fd = -1};
    struct sow_error fe;
    if (csv) { /* fileio: a regular file replaced whole, anything else refused */
        if (fio_out_begin(&fo, csv, NULL, &fe)) {
            cli_bad(cmd, "%s", fe.msg);
            return cli_exit_code(fe.status);
        }
        if (!(out = fio_out_stream(&fo))) {
            fio_out_abort(&fo);
            cli_bad(cmd, "%s: out of memory", csv);
            return CLI_FAIL;
        }
        fprintf(out, "rules,threads,positions,nodes,seconds,nodes_per_s,moves_per_s\n");
    }
    volatile sig_atomic_t *stop = cli_catch_signals(false);

    printf("2x%ld, 4 seeds per hole; search: %ld positions with <= %ld seeds per rule set\n",
           pits, npos, maxseeds);
    printf("%-12s %12s %10s %14s %12s %14s %12s %8s\n", "rules", "movegen/s", "positions",
           "nodes", "nodes/s 1T", "nodes", "nodes/s", "speedup");
    printf("%-12s %12s %10s %14s %12s %14s %11ldT %8s\n", "", "", "", "(1 thread)", "",
           "(T threads)", threads, "");
    int rc = 0;
    double tot_n1 = 0, tot_s1 = 0, tot_nt = 0, tot_st = 0;
    for (int a = 0; a < nnames && !rc; a++) {
        struct ruleset rs;
        sow_position set[64];
        int values[64];
        rules_init(&rs, names[a], (int)pits, 4, NULL); /* names checked above; 4 seeds fit 2x18 */
        fprintf(stderr, "bench: %s...\n", rs.name);
        double mg = movegen_rate(&rs, secs, stop);
        int n = search_positions(&rs, set, (int)npos, (int)maxseeds);
        uint64_t n1, nt;
        double s1, st;
        if ((rc = solve_all(stop, &rs, set, n, 1, (unsigned)hash, values, false, &n1, &s1)) ||
            (rc = solve_all(stop, &rs, set, n, (int)threads, (unsigned)hash, values, true, &nt, &st)))
            break;
        double r1 = s1 > 0 ? (double)n1 / s1 : 0, rt = st > 0 ? (double)nt / st : 0;
        printf("%-12s %12.0f %10d %14llu %12.0f %14llu %12.0f %7.2fx\n", rs.name, mg, n,
               (unsigned long long)n1, r1, (unsigned long long)nt, rt, st > 0 ? s1 / st : 0);
        fflush(stdout);
        tot_n1 += (double)n1;
        tot_s1 += s1;
        tot_nt += (double)nt;
        tot_st += st;
        if (out) {
            fprintf(out, "%s,1,%d,%llu,%.6f,%.0f,%.0f\n", rs.name, n, (unsigned long long)n1, s1,
                    r1, mg);
            fprintf(out, "%s,%ld,%d,%llu,%.6f,%.0f,%.0f\n", rs.name, threads, n,
                    (unsigned long long)nt, st, rt, mg);
        }
    }
    if (!rc) {
        printf("Nodes searched : %.0f\nNodes/second : %.0f\n", tot_n1,
               tot_s1 > 0 ? tot_n1 / tot_s1 : 0);
        printf("Nodes/second with %ld threads : %.0f (speed-up %.2fx)\n", threads,
               tot_st > 0 ? tot_nt / tot_st : 0, tot_st > 0 ? tot_s1 / tot_st : 0);
    }
    if (out) {
        if (rc) {
            fio_out_abort(&fo);
        } else if (fio_out_commit(&fo, &fe)) {
            cli_bad(cmd, "%s", fe.msg);
            rc = cli_exit_code(fe.status);
        }
    }
    if (rc == CLI_INTERRUPTED) {
        fprintf(stderr, "sow bench: interrupted\n");
        rc = cli_interrupted();
    }
    return rc;
}
