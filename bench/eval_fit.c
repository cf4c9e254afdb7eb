/* sow-eval-fit: the evaluation's weights fitted to exact values
 * (docs/engine.md "Fitted weights"; scripts/fit-eval runs it).
 *
 * Positions are drawn from endgame table levels A..B (the same number from
 * each level, uniformly within it, by a splitmix64 stream from --seed);
 * positions without a legal move are drawn again (the engine never
 * evaluates them).  Every tenth drawn position is held out.  The target is
 * the exact value in centi-seeds; the weights minimise the squared error on
 * the other nine tenths, with a ridge term lambda * samples on every weight
 * but tempo (normal equations, Cholesky, doubles, in one fixed order: the
 * same tables and seed give the same file, byte for byte), then rounded to
 * integers.  The report compares, on the held-out positions, the classic
 * weights as they are, the classic weights scaled by their best factor
 * (fitted on the nine tenths), and the fitted weights as written.
 *
 * usage: sow-eval-fit --rules R [--pits N] --tables DIR --levels A..B
 *                     --samples N --seed S [--lambda L] [--without T,...]
 *                     [--out FILE]
 * --without: terms kept at 0 (side, mobility, vuln, big, relay, reach,
 * tempo, threat, threatened, holes), to measure what a term adds.
 * exit: 0, 1 (I/O, no memory), 2 (bad input: one line on stderr). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "sow/engine.h"
#include "sow/rules.h"
#include "sow/tables_probe.h"

#define NF EVAL_NFEAT

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int fail(enum sow_status st, const char *msg)
{
    fprintf(stderr, "sow-eval-fit: %s\n", msg);
    return st == SOW_E_INPUT || st == SOW_E_TOO_BIG ? 2 : 1;
}

struct sample {
    int y;          /* exact value, centi-seeds */
    int level;
    int nz;         /* nonzero features */
    short idx[40];
    short val[40];
};

/* Held-out statistics of one predictor. */
struct stat {
    double se, sy, sp, syy, spp, syp;
    long n;
};

static void stat_add(struct stat *s, double y, double p)
{
    s->se += (y - p) * (y - p);
    s->sy += y;
    s->sp += p;
    s->syy += y * y;
    s->spp += p * p;
    s->syp += y * p;
    s->n++;
}

static void stat_print(const char *name, const struct stat *s)
{
    double n = (double)s->n;
    double cov = s->syp / n - s->sy / n * s->sp / n;
    double vy = s->syy / n - s->sy / n * s->sy / n, vp = s->spp / n - s->sp / n * s->sp / n;
    printf("  %-22s RMSE %7.2f seeds   correlation %.4f\n", name, sqrt(s->se / n) / 100,
           vy > 0 && vp > 0 ? cov / sqrt(vy * vp) : 0.0);
}

static double clampd(double x, int n)
{
    return x > 100.0 * n ? 100.0 * n : x < -100.0 * n ? -100.0 * n : x;
}

int main(int argc, char **argv)
{
    const char *rules = NULL, *dir = NULL, *out = NULL, *levels = NULL, *without = "";
    int pits = 6, lo = 0, hi = 0;
    long samples = 0;
    unsigned long long seed = 0;
    double lambda = 1e-4;
    bool have_seed = false;
    char msg[600];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!v) {
            snprintf(msg, sizeof msg, "option '%s' needs a value (usage: see the source's head)", a);
            return fail(SOW_E_INPUT, msg);
        }
        i++;
        if (!strcmp(a, "--rules"))
            rules = v;
        else if (!strcmp(a, "--pits") && (pits = (int)strtol(v, &end, 10), !*end))
            ;
        else if (!strcmp(a, "--tables"))
            dir = v;
        else if (!strcmp(a, "--levels"))
            levels = v;
        else if (!strcmp(a, "--samples") && (samples = strtol(v, &end, 10), !*end))
            ;
        else if (!strcmp(a, "--seed") && (seed = strtoull(v, &end, 10), !*end))
            have_seed = true;
        else if (!strcmp(a, "--lambda") && (lambda = strtod(v, &end), !*end) && lambda >= 0)
            ;
        else if (!strcmp(a, "--out"))
            out = v;
        else if (!strcmp(a, "--without"))
            without = v;
        else {
            snprintf(msg, sizeof msg, "bad option '%s %s'", a, v);
            return fail(SOW_E_INPUT, msg);
        }
    }
    if (!rules || !dir || !levels || !have_seed || samples < 10) {
        snprintf(msg, sizeof msg, "need --rules, --tables, --levels A..B, --samples N (>= 10) "
                 "and --seed S");
        return fail(SOW_E_INPUT, msg);
    }
    if (sscanf(levels, "%d..%d", &lo, &hi) != 2 || lo < 1 || hi < lo || hi > TB_MAX_LEVEL) {
        snprintf(msg, sizeof msg, "--levels '%s': expected A..B, 1 <= A <= B", levels);
        return fail(SOW_E_INPUT, msg);
    }
    bool off[NF] = {false};
    static const char *const names[EW_COUNT + EX_COUNT] = {
        "side", "mobility", "vuln", "big", "relay", "reach", "tempo", "threat", "threatened"};
    for (const char *q = without; *q;) {
        size_t l = strcspn(q, ",");
        bool known = false;
        for (int j = 0; j < EW_COUNT + EX_COUNT; j++)
            if (strlen(names[j]) == l && !strncmp(q, names[j], l))
                off[j] = known = true;
        if (l == 5 && !strncmp(q, "holes", 5))
            for (int j = EW_COUNT + EX_COUNT; j < NF; j++)
                off[j] = known = true;
        if (!known) {
            snprintf(msg, sizeof msg, "--without '%s': terms are side, mobility, vuln, big, "
                     "relay, reach, tempo, threat, threatened, holes", without);
            return fail(SOW_E_INPUT, msg);
        }
        q += l + (q[l] == ',');
    }
    struct ruleset rs;
    struct sow_error e;
    if (rules_init(&rs, rules, pits, -1, &e) != SOW_OK)
        return fail(e.status, e.msg);
    if (out && fio_check_target(out, &e) != SOW_OK)
        return fail(e.status, e.msg);
    struct tb_set *set;
    if (tb_open(&rs, dir, &set, &e) != SOW_OK)
        return fail(e.status, e.msg);
    if (tb_max_level(set) < hi) {
        snprintf(msg, sizeof msg, "%s: %s 2x%d levels 0..%d present, --levels asks for %d", dir,
                 rs.name, pits, tb_max_level(set), hi);
        tb_close(set);
        return fail(SOW_E_INPUT, msg);
    }
    const struct tb_index *ix = tb_set_index(set);
    struct sow_relay_cache *cache = rs.relay ? rules_cache_new(14) : NULL;
    const int nlev = hi - lo + 1;
    const long per = (samples + nlev - 1) / nlev;
    struct sample *S = malloc((size_t)(per * nlev) * sizeof *S);
    if (!S) {
        tb_close(set);
        return fail(SOW_E_NOMEM, "out of memory");
    }
    long ns = 0;
    uint64_t rng = seed;
    int f[NF];
    for (int L = lo; L <= hi; L++) {
        uint64_t entries;
        const int8_t *val = tb_level_values(set, L, &entries);
        long got = 0, tries = 0;
        while (got < per && tries < 100 * per) {
            tries++;
            uint64_t idx = (uint64_t)(((unsigned __int128)splitmix(&rng) * entries) >> 64);
            sow_position p;
            tb_position_of(ix, L, idx, &p);
            if (rs.count(&rs, &p, cache) == 0)
                continue;
            struct sample *s = &S[ns];
            eval_features(&rs, &p, f);
            s->y = 100 * val[idx];
            s->level = L;
            s->nz = 0;
            for (int j = 0; j < NF; j++)
                if (f[j] && !off[j]) {
                    if (s->nz == 40)
                        break; /* cannot happen: 9 terms and 2N hole terms */
                    s->idx[s->nz] = (short)j;
                    s->val[s->nz] = (short)f[j];
                    s->nz++;
                }
            ns++;
            got++;
        }
    }
    /* normal equations on the nine tenths */
    double *A = calloc((size_t)NF * NF, sizeof *A), *b = calloc(NF, sizeof *b);
    if (!A || !b) {
        free(S);
        tb_close(set);
        return fail(SOW_E_NOMEM, "out of memory");
    }
    int cw[NF]; /* the classic weights, as a vector */
    struct eval_weights classic;
    eval_classic_weights(&rs, &classic);
    eval_weights_vector(&classic, cw);
    double cxx = 0, cxy = 0;
    long ntrain = 0;
    for (long i = 0; i < ns; i++) {
        if (i % 10 == 9)
            continue;
        const struct sample *s = &S[i];
        ntrain++;
        double c = 0;
        for (int a = 0; a < s->nz; a++) {
            b[s->idx[a]] += (double)s->val[a] * s->y;
            c += (double)cw[s->idx[a]] * s->val[a];
            for (int d = 0; d < s->nz; d++)
                A[s->idx[a] * NF + s->idx[d]] += (double)s->val[a] * s->val[d];
        }
        cxx += c * c;
        cxy += c * s->y;
    }
    /* active terms: those seen; the ridge on all but tempo */
    int act[NF], na = 0;
    for (int j = 0; j < NF; j++)
        if (A[j * NF + j] > 0)
            act[na++] = j;
    double *M = calloc((size_t)na * na, sizeof *M), *x = calloc((size_t)na, sizeof *x);
    for (int r = 0; r < na; r++) {
        for (int c = 0; c < na; c++)
            M[r * na + c] = A[act[r] * NF + act[c]];
        if (act[r] != EW_TEMPO)
            M[r * na + r] += lambda * (double)ntrain;
        x[r] = b[act[r]];
    }
    /* Cholesky: M = L L^T in place (lower), then two triangular solves */
    for (int j = 0; j < na; j++) {
        double d = M[j * na + j];
        for (int k = 0; k < j; k++)
            d -= M[j * na + k] * M[j * na + k];
        if (d <= 0) {
            snprintf(msg, sizeof msg, "the normal equations are singular (add --lambda)");
            return fail(SOW_E_INPUT, msg);
        }
        d = sqrt(d);
        M[j * na + j] = d;
        for (int i = j + 1; i < na; i++) {
            double t = M[i * na + j];
            for (int k = 0; k < j; k++)
                t -= M[i * na + k] * M[j * na + k];
            M[i * na + j] = t / d;
        }
    }
    for (int i = 0; i < na; i++) {
        for (int k = 0; k < i; k++)
            x[i] -= M[i * na + k] * x[k];
        x[i] /= M[i * na + i];
    }
    for (int i = na - 1; i >= 0; i--) {
        for (int k = i + 1; k < na; k++)
            x[i] -= M[k * na + i] * x[k];
        x[i] /= M[i * na + i];
    }
    int wv[NF];
    memset(wv, 0, sizeof wv);
    for (int r = 0; r < na; r++) {
        double v = round(x[r]);
        wv[act[r]] = (int)(v > 10000 ? 10000 : v < -10000 ? -10000 : v);
    }
    struct eval_weights fit;
    eval_weights_from_vector(wv, &fit);
    double scale = cxx > 0 ? cxy / cxx : 1;
    /* held-out report */
    struct stat st_c = {0}, st_s = {0}, st_f = {0}, st_z = {0};
    for (long i = 9; i < ns; i += 10) {
        const struct sample *s = &S[i];
        double c = 0, g = 0;
        for (int a = 0; a < s->nz; a++) {
            c += (double)cw[s->idx[a]] * s->val[a];
            g += (double)wv[s->idx[a]] * s->val[a];
        }
        stat_add(&st_c, s->y, clampd(c, s->level));
        stat_add(&st_s, s->y, clampd(scale * c, s->level));
        stat_add(&st_f, s->y, clampd(g, s->level));
        stat_add(&st_z, s->y, 0);
    }
    printf("%s 2x%d: %ld positions from levels %d..%d (%ld per level, seed %llu), %ld fitted, "
           "%ld held out, %d terms, lambda %g\n", rs.name, pits, ns, lo, hi, per, seed, ntrain,
           st_c.n, na, lambda);
    printf("held-out error (exact value against the estimate, clamped to +-n):\n");
    stat_print("zero", &st_z);
    stat_print("classic", &st_c);
    char sname[64];
    snprintf(sname, sizeof sname, "classic x %.3f", scale);
    stat_print(sname, &st_s);
    stat_print("fitted", &st_f);
    int rc = 0;
    if (out) {
        char head[1024], text[16384];
        snprintf(head, sizeof head,
                 "# Evaluation weights of %s 2x%d, fitted to exact values (docs/engine.md\n"
                 "# \"Fitted weights\"): sow-eval-fit --rules %s --pits %d --levels %d..%d\n"
                 "# --samples %ld --seed %llu --lambda %g over the tables of levels 0..%d.\n"
                 "# Held-out RMSE %.2f seeds (classic weights %.2f), correlation %.4f.\n",
                 rs.name, pits, rs.name, pits, lo, hi, samples, seed, lambda, hi,
                 sqrt(st_f.se / (double)st_f.n) / 100, sqrt(st_c.se / (double)st_c.n) / 100,
                 (st_f.syp / (double)st_f.n - st_f.sy / (double)st_f.n * st_f.sp / (double)st_f.n) /
                     sqrt((st_f.syy / (double)st_f.n - pow(st_f.sy / (double)st_f.n, 2)) *
                          (st_f.spp / (double)st_f.n - pow(st_f.sp / (double)st_f.n, 2))));
        int n = eval_weights_write(&fit, rs.name, pits, head, text, sizeof text);
        struct fio_out o;
        if (n < 0)
            rc = fail(SOW_E_IO, "weights file too long");
        else if (fio_out_begin(&o, out, NULL, &e) != SOW_OK)
            rc = fail(e.status, e.msg);
        else if (fio_write_all(&o, text, (size_t)n, &e) != SOW_OK ||
                 fio_out_commit(&o, &e) != SOW_OK) {
            fio_out_abort(&o);
            rc = fail(e.status, e.msg);
        } else
            printf("wrote %s\n", out);
    }
    free(M);
    free(x);
    free(A);
    free(b);
    free(S);
    if (cache)
        rules_cache_free(cache);
    tb_close(set);
    return rc;
}
