/* sow-bench-twin: the fast code raced against its slow obvious twins, kept
 * out of the shipped `sow` binary (which is libsow + the command line):
 *   1. moves generated per second per rule set, sow's generator and the
 *      seed-by-seed reference (tests/ref) on the same fixed position set;
 *   2. oware perft from the start, sow's perft and the obvious C perft
 *      (bench/twin, int arrays, copy-make), which must agree.
 * Built by meson beside sow (build/bench/sow-bench-twin) and registered as
 * the benchmark 'twin' (meson test -C build --benchmark).  README
 * "Benchmarks".  Exit status: 0, 1 if the perfts disagree, 2 bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perft_twin.h"
#include "ref_rules.h"
#include "perft.h"
#include "sow/rules.h"
#include "util.h"

static const char usage[] =
    "usage: sow-bench-twin [--rules R|all] [--positions N] [--time S] [--perft-depth D]\n"
    "Moves generated per second on one core over a fixed set of N positions per rule\n"
    "set (taken from random games from the start, seed 2026), for sow's generator and\n"
    "for the seed-by-seed reference (tests/ref); the ratio is the speed-up.  Then\n"
    "oware perft from the start to depth D with sow's perft and with the obvious C\n"
    "perft (bench/twin), which must agree (and sow making every move).  Defaults: all, 4096, 1 s, 9.\n";

static int bad(const char *fmt, const char *arg)
{
    fprintf(stderr, "sow-bench-twin: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    return 2;
}

/* The fixed position set: positions met in random games from the start
 * (the same sampling as `sow bench movegen`). */
static void sample_positions(const struct ruleset *rs, sow_position *out, int n, uint64_t seed)
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
            p = ml.c[util_splitmix64(&seed) % (uint64_t)ml.n].pos;
        }
    }
    rules_cache_free(cache);
}

/* perft that makes every move, leaves included (no bulk counter): shows how
 * much of sow perft's lead over the obvious C comes from the generator alone. */
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

/* Moves per second of sow's generator and of the reference on one set. */
static int race(const struct ruleset *rs, int npos, double secs, double *sow_rate,
                double *ref_rate)
{
    sow_position *set = malloc(sizeof *set * (size_t)npos);
    struct ref_pos *rset = malloc(sizeof *rset * (size_t)npos);
    struct ref_list *rl = malloc(sizeof *rl);
    if (!set || !rset || !rl) {
        free(set);
        free(rset);
        free(rl);
        return -1;
    }
    sample_positions(rs, set, npos, 2026);
    for (int i = 0; i < npos; i++)
        ref_from_sow(rs, &set[i], &rset[i]);
    struct sow_movelist ml;
    uint64_t moves = 0;
    double t0 = util_now(), dt;
    do {
        for (int i = 0; i < npos; i++) {
            rs->generate(rs, &set[i], &ml, NULL, NULL); /* no memo: every relay is sown */
            moves += (uint64_t)ml.n;
        }
    } while ((dt = util_now() - t0) < secs);
    *sow_rate = (double)moves / dt;
    uint64_t rmoves = 0;
    t0 = util_now();
    do {
        for (int i = 0; i < npos; i++) {
            ref_generate(rs->family, &rset[i], rl);
            rmoves += (uint64_t)rl->n;
        }
    } while ((dt = util_now() - t0) < secs / 2);
    *ref_rate = (double)rmoves / dt;
    free(set);
    free(rset);
    free(rl);
    return 0;
}

int main(int argc, char **argv)
{
    const char *rules = "all";
    long npos = 4096, depth = 9;
    double secs = 1.0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        }
        if (i + 1 >= argc)
            return bad("'%s': unknown option or missing value (see --help)", a);
        const char *v = argv[++i];
        if (strcmp(a, "--rules") == 0)
            rules = v;
        else if (strcmp(a, "--positions") == 0) {
            if (util_parse_long(v, 1, 1 << 20, &npos) < 0)
                return bad("--positions '%s': expected a whole number in 1..1048576", v);
        } else if (strcmp(a, "--perft-depth") == 0) {
            if (util_parse_long(v, 1, 14, &depth) < 0)
                return bad("--perft-depth '%s': expected a whole number in 1..14", v);
        } else if (strcmp(a, "--time") == 0) {
            char *end;
            secs = strtod(v, &end);
            if (*end || !(secs > 0 && secs <= 600))
                return bad("--time '%s': expected seconds in (0, 600]", v);
        } else {
            return bad("unknown option '%s' (see --help)", a);
        }
    }
    const char *list[16];
    int nl = 0;
    if (strcmp(rules, "all") == 0)
        for (int i = 0; sow_rule_names[i] && nl < 16; i++)
            list[nl++] = sow_rule_names[i];
    else
        list[nl++] = rules;
    struct sow_error e;
    struct ruleset rs;
    for (int k = 0; k < nl; k++) /* every name checked before any output */
        if (rules_init(&rs, list[k], 6, 4, &e) != SOW_OK)
            return bad("%s", e.msg);
    printf("movegen: %ld positions per rule set from random games (seed 2026), 2x6, one core\n",
           npos);
    printf("%-12s %12s %12s %7s\n", "rules", "moves/s", "ref moves/s", "ratio");
    for (int k = 0; k < nl; k++) {
        rules_init(&rs, list[k], 6, 4, NULL);
        double a, b;
        if (race(&rs, (int)npos, secs, &a, &b) < 0) {
            fprintf(stderr, "sow-bench-twin: out of memory\n");
            return 1;
        }
        printf("%-12s %12.0f %12.0f %6.1fx\n", rs.name, a, b, a / b);
        fflush(stdout);
    }
    rules_init(&rs, "oware", 6, 4, NULL);
    sow_position start = rules_start(&rs);
    struct twin_pos tp = {.pits = 6, .side = 0};
    for (int i = 0; i < 12; i++)
        tp.hole[i] = start.board.h[i];
    double t0 = util_now();
    uint64_t a = perft(&rs, &start, (int)depth, NULL);
    double ta = util_now() - t0;
    t0 = util_now();
    uint64_t b = twin_perft(&tp, (int)depth);
    double tb = util_now() - t0;
    t0 = util_now();
    uint64_t c = perft_making(&rs, &start, (int)depth);
    double tc = util_now() - t0;
    printf("oware perft %ld: sow %llu in %.3f s (%.0f/s), obvious C %llu in %.3f s (%.0f/s): "
           "%.2fx%s\n",
           depth, (unsigned long long)a, ta, (double)a / ta, (unsigned long long)b, tb,
           (double)b / tb, tb / ta, a == b && a == c ? "" : "  MISMATCH");
    printf("  (sow counts the last ply with the bulk counter; making every move instead: "
           "%.3f s, %.2fx the obvious C)\n",
           tc, tb / tc);
    return a == b && a == c ? 0 : 1;
}
