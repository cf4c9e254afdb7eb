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

static double clampd(double x, int n)
{
    return x > 100.0 * n ? 100.0 * n : x < -100.0 * n ? -100.0 * n : x;
}

struct opts {
    const char *rules, *dir, *out, *levels, *without;
    int pits, lo, hi;
    long samples;
    unsigned long long seed;
    double lambda;
    bool off[NF]; /* terms kept at 0 (--without) */
};

/* --without T,...: into o->off; false on an unknown name. */
static bool parse_without(struct opts *o)
{
    static const char *const names[EW_COUNT + EX_COUNT] = {
        "side", "mobility", "vuln", "big", "relay", "reach", "tempo", "threat", "threatened"};
    for (const char *q = o->without; *q;) {
        size_t l = strcspn(q, ",");
        bool known = false;
        for (int j = 0; j < EW_COUNT + EX_COUNT; j++)
            if (strlen(names[j]) == l && !strncmp(q, names[j], l))
                o->off[j] = known = true;
        if (l == 5 && !strncmp(q, "holes", 5))
            for (int j = EW_COUNT + EX_COUNT; j < NF; j++)
                o->off[j] = known = true;
        if (!known)
            return false;
        q += l + (q[l] == ',');
    }
    return true;
}

/* The options into *o: 0, or the exit status (the reason on stderr). */
static int parse_args(int argc, char **argv, struct opts *o)
{
    char msg[600];
    bool have_seed = false;
    memset(o, 0, sizeof *o);
    o->without = "";
    o->pits = 6;
    o->lambda = 1e-4;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!v) {
            snprintf(msg, sizeof msg, "option '%s' needs a value (usage: see the source's head)", a);
            return fail(SOW_E_INPUT, msg);
        }
        i++;
        if (!strcmp(a, "--rules"))
            o->rules = v;
        else if (!strcmp(a, "--pits") && (o->pits = (int)strtol(v, &end, 10), !*end))
            ;
        else if (!strcmp(a, "--tables"))
            o->dir = v;
        else if (!strcmp(a, "--levels"))
            o->levels = v;
        else if (!strcmp(a, "--samples") && (o->samples = strtol(v, &end, 10), !*end))
            ;
        else if (!strcmp(a, "--seed") && (o->seed = strtoull(v, &end, 10), !*end))
            have_seed = true;
        else if (!strcmp(a, "--lambda") && (o->lambda = strtod(v, &end), !*end) && o->lambda >= 0)
            ;
        else if (!strcmp(a, "--out"))
            o->out = v;
        else if (!strcmp(a, "--without"))
            o->without = v;
        else {
            snprintf(msg, sizeof msg, "bad option '%s %s'", a, v);
            return fail(SOW_E_INPUT, msg);
        }
    }
    if (!o->rules || !o->dir || !o->levels || !have_seed || o->samples < 10)
        return fail(SOW_E_INPUT, "need --rules, --tables, --levels A..B, --samples N (>= 10) "
                                 "and --seed S");
    if (sscanf(o->levels, "%d..%d", &o->lo, &o->hi) != 2 || o->lo < 1 || o->hi < o->lo ||
        o->hi > TB_MAX_LEVEL) {
        snprintf(msg, sizeof msg, "--levels '%s': expected A..B, 1 <= A <= B", o->levels);
        return fail(SOW_E_INPUT, msg);
    }
    if (!parse_without(o)) {
        snprintf(msg, sizeof msg, "--without '%s': terms are side, mobility, vuln, big, relay, "
                 "reach, tempo, threat, threatened, holes", o->without);
        return fail(SOW_E_INPUT, msg);
    }
    return 0;
}

/* Draw per positions from each level lo..hi into S: their count. */
static long draw(const struct ruleset *rs, const struct tb_set *set, const struct opts *o,
                 long per, struct sample *S)
{
    const struct tb_index *ix = tb_set_index(set);
    struct sow_relay_cache *cache = rs->relay ? rules_cache_new(14) : NULL;
    long ns = 0;
    uint64_t rng = o->seed;
    int f[NF];
    for (int L = o->lo; L <= o->hi; L++) {
        uint64_t entries;
        const int8_t *val = tb_level_values(set, L, &entries);
        long got = 0, tries = 0;
        while (got < per && tries < 100 * per) {
            tries++;
            uint64_t idx = (uint64_t)(((unsigned __int128)splitmix(&rng) * entries) >> 64);
            sow_position p;
            tb_position_of(ix, L, idx, &p);
            if (rs->count(rs, &p, cache) == 0)
                continue;
            struct sample *s = &S[ns];
            eval_features(rs, &p, f);
            s->y = 100 * val[idx];
            s->level = L;
            s->nz = 0;
            for (int j = 0; j < NF; j++)
                if (f[j] && !o->off[j]) {
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
    if (cache)
        rules_cache_free(cache);
    return ns;
}

/* Solve M x = x in place (M: n x n, symmetric positive definite; its lower
 * triangle becomes the Cholesky factor).  false if M is not. */
static bool cholesky_solve(double *M, double *x, int n)
{
    for (int j = 0; j < n; j++) {
        double d = M[j * n + j];
        for (int k = 0; k < j; k++)
            d -= M[j * n + k] * M[j * n + k];
        if (d <= 0)
            return false;
        d = sqrt(d);
        M[j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            double t = M[i * n + j];
            for (int k = 0; k < j; k++)
                t -= M[i * n + k] * M[j * n + k];
            M[i * n + j] = t / d;
        }
    }
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < i; k++)
            x[i] -= M[i * n + k] * x[k];
        x[i] /= M[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        for (int k = i + 1; k < n; k++)
            x[i] -= M[k * n + i] * x[k];
        x[i] /= M[i * n + i];
    }
    return true;
}

/* The ridge fit on the nine tenths into wv (rounded, 0 for terms never
 * seen), *na the terms fitted, *scale the classic weights' best factor:
 * SOW_OK, SOW_E_NOMEM, or SOW_E_INPUT (singular). */
static enum sow_status fit(const struct sample *S, long ns, double lambda, const int *cw,
                           int *wv, int *na_out, double *scale)
{
    double *A = calloc((size_t)NF * NF, sizeof *A), *b = calloc(NF, sizeof *b);
    double *M = calloc((size_t)NF * NF, sizeof *M), *x = calloc(NF, sizeof *x);
    enum sow_status st = SOW_E_NOMEM;
    if (!A || !b || !M || !x)
        goto out;
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
    *scale = cxx > 0 ? cxy / cxx : 1;
    /* active terms: those seen; the ridge on all but tempo */
    int act[NF], na = 0;
    for (int j = 0; j < NF; j++)
        if (A[j * NF + j] > 0)
            act[na++] = j;
    for (int r = 0; r < na; r++) {
        for (int c = 0; c < na; c++)
            M[r * na + c] = A[act[r] * NF + act[c]];
        if (act[r] != EW_TEMPO)
            M[r * na + r] += lambda * (double)ntrain;
        x[r] = b[act[r]];
    }
    st = SOW_E_INPUT;
    if (!cholesky_solve(M, x, na))
        goto out;
    memset(wv, 0, NF * sizeof *wv);
    for (int r = 0; r < na; r++) {
        double v = round(x[r]);
        wv[act[r]] = (int)(v > 10000 ? 10000 : v < -10000 ? -10000 : v);
    }
    *na_out = na;
    st = SOW_OK;
out:
    free(A);
    free(b);
    free(M);
    free(x);
    return st;
}

static double stat_rmse(const struct stat *s)
{
    return sqrt(s->se / (double)s->n) / 100;
}

static double stat_corr(const struct stat *s)
{
    double n = (double)s->n;
    double cov = s->syp / n - s->sy / n * s->sp / n;
    double vy = s->syy / n - s->sy / n * s->sy / n, vp = s->spp / n - s->sp / n * s->sp / n;
    return vy > 0 && vp > 0 ? cov / sqrt(vy * vp) : 0.0;
}

static void stat_print(const char *name, const struct stat *s)
{
    printf("  %-22s RMSE %7.2f seeds   correlation %.4f\n", name, stat_rmse(s), stat_corr(s));
}

/* The weights file of the fit to o->out: 0 or the exit status. */
static int write_weights(const struct ruleset *rs, const struct opts *o, const int *wv,
                         const struct stat *st_f, const struct stat *st_c)
{
    char head[1024], text[16384];
    struct eval_weights w;
    struct sow_error e;
    struct fio_out f;
    eval_weights_from_vector(wv, &w);
    snprintf(head, sizeof head,
             "# Evaluation weights of %s 2x%d, fitted to exact values (docs/engine.md\n"
             "# \"Fitted weights\"): sow-eval-fit --rules %s --pits %d --levels %d..%d\n"
             "# --samples %ld --seed %llu --lambda %g over the tables of levels 0..%d.\n"
             "# Held-out RMSE %.2f seeds (classic weights %.2f), correlation %.4f.\n",
             rs->name, o->pits, rs->name, o->pits, o->lo, o->hi, o->samples, o->seed,
             o->lambda, o->hi, stat_rmse(st_f), stat_rmse(st_c), stat_corr(st_f));
    int n = eval_weights_write(&w, rs->name, o->pits, head, text, sizeof text);
    if (n < 0)
        return fail(SOW_E_IO, "weights file too long");
    if (fio_out_begin(&f, o->out, NULL, &e) != SOW_OK)
        return fail(e.status, e.msg);
    if (fio_write_all(&f, text, (size_t)n, &e) != SOW_OK || fio_out_commit(&f, &e) != SOW_OK) {
        fio_out_abort(&f);
        return fail(e.status, e.msg);
    }
    printf("wrote %s\n", o->out);
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    char msg[600];
    struct ruleset rs;
    struct sow_error e;
    if (rules_init(&rs, o.rules, o.pits, -1, &e) != SOW_OK)
        return fail(e.status, e.msg);
    if (o.out && fio_check_target(o.out, &e) != SOW_OK)
        return fail(e.status, e.msg);
    struct tb_set *set;
    if (tb_open(&rs, o.dir, &set, &e) != SOW_OK)
        return fail(e.status, e.msg);
    if (tb_max_level(set) < o.hi) {
        snprintf(msg, sizeof msg, "%s: %s 2x%d levels 0..%d present, --levels asks for %d",
                 o.dir, rs.name, o.pits, tb_max_level(set), o.hi);
        tb_close(set);
        return fail(SOW_E_INPUT, msg);
    }
    const int nlev = o.hi - o.lo + 1;
    const long per = (o.samples + nlev - 1) / nlev;
    struct sample *S = malloc((size_t)(per * nlev) * sizeof *S);
    if (!S) {
        tb_close(set);
        return fail(SOW_E_NOMEM, "out of memory");
    }
    long ns = draw(&rs, set, &o, per, S);
    tb_close(set);
    int cw[NF], wv[NF], na = 0; /* the classic weights, the fitted ones */
    struct eval_weights classic;
    eval_classic_weights(&rs, &classic);
    eval_weights_vector(&classic, cw);
    double scale = 1;
    enum sow_status st = fit(S, ns, o.lambda, cw, wv, &na, &scale);
    if (st != SOW_OK) {
        free(S);
        return fail(st, st == SOW_E_NOMEM ? "out of memory"
                                          : "the normal equations are singular (add --lambda)");
    }
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
    free(S);
    printf("%s 2x%d: %ld positions from levels %d..%d (%ld per level, seed %llu), %ld fitted, "
           "%ld held out, %d terms, lambda %g\n", rs.name, o.pits, ns, o.lo, o.hi, per, o.seed,
           ns - st_c.n, st_c.n, na, o.lambda);
    printf("held-out error (exact value against the estimate, clamped to +-n):\n");
    stat_print("zero", &st_z);
    stat_print("classic", &st_c);
    char sname[64];
    snprintf(sname, sizeof sname, "classic x %.3f", scale);
    stat_print(sname, &st_s);
    stat_print("fitted", &st_f);
    return o.out ? write_weights(&rs, &o, wv, &st_f, &st_c) : 0;
}
