/* Endgame tables: retrograde analysis of one level, and the level-by-level
 * builder.  docs/tables.md "Algorithm" explains why this computes exactly the
 * value of docs/rules.md; the comments here say how.
 *
 * Per level n (E entries, mover-normalised):
 *   pass 1 (parallel): generate every entry's moves; best exit value (capture
 *           moves probe the lower levels; settlements), in-level out-degree,
 *           and in-degree counts of the in-level children (atomic adds);
 *   prefix sum -> CSR offsets (uint32);
 *   pass 2 (parallel): generate again, fill the reverse edge list;
 *   solve (parallel per value round): one game G on nodes (p,L) and (p,H).
 *           X = the movers at L nodes (endless play is -inf for X), Y = the
 *           movers at H nodes.  X-values, rounds t = n .. -n:
 *             (p,L) = max(bestexit(p), X-value of (q,H) for in-level q),
 *             (p,H) = min(-bestexit(p), X-value of (q,L) for in-level q),
 *           an L node is final the first round one of its options reaches t,
 *           an H node when all its in-level children are final (counter);
 *           never final: endless (L: lo = -inf, H: hi = +inf).
 *   final pass: lo = X(p,L), hi = -X(p,H), clamped; V = clamp(cyc, lo, hi).
 */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sow/tables.h"
#include "sow/util.h"
#include "tables_internal.h"

#define NONE_EXIT ((int8_t)-128) /* bestexit: no exit move */
#define UNDONE ((int8_t)-128)    /* X-value not final yet */
#define CHUNK 4096

/* What the solve keeps per entry (4 bytes). */
struct node {
    int8_t be;   /* best exit value, NONE_EXIT if none */
    uint8_t cnt; /* in-level out-degree, counted down in the solve */
    int8_t xl;   /* X-value of (p,L): lo */
    int8_t xh;   /* X-value of (p,H): -hi */
};
_Static_assert(sizeof(struct node) == 4, "node packs into 4 bytes");

struct lvl {
    const struct ruleset *rs;
    const struct tb_set *lower;
    const struct tb_index *ix;
    const struct tb_build_opts *opt;
    int n, threads;
    uint64_t boards, E, nchunks, chunk;
    struct node *nd;   /* per entry, packed: one cache line per random visit */
    uint32_t *off;     /* E + 1 CSR offsets of the reverse edges */
    uint32_t *rev;     /* predecessors */
    uint32_t *fwd;     /* E * slots forward in-level children (pass 1 to 2) */
    int slots;
    bool overflow;
    /* progress */
    uint64_t done;
    double t0, last;
    double base, weight;
    const char *phase;
};

static bool stopped(const struct lvl *L)
{
    return L->opt && L->opt->stop && *L->opt->stop;
}

static void progress(struct lvl *L, uint64_t add)
{
    uint64_t d = __atomic_add_fetch(&L->done, add, __ATOMIC_RELAXED);
    if (!L->opt || !L->opt->progress || omp_get_thread_num() != 0)
        return;
    double now = util_now();
    if (now - L->last < 0.2)
        return;
    L->last = now;
    double f = L->base + L->weight * (double)d / (double)(L->E ? L->E : 1);
    L->opt->progress(L->opt->ctx, L->n, L->E, f > 1 ? 1 : f, L->phase);
}

static void phase(struct lvl *L, const char *name, double base, double weight)
{
    L->done = 0;
    L->phase = name;
    L->base = base;
    L->weight = weight;
    if (L->opt && L->opt->progress)
        L->opt->progress(L->opt->ctx, L->n, L->E, base, name);
}

/* The position of entry idx (normalised: side A); st/boards split. */
static void entry_pos(const struct lvl *L, uint64_t idx, sow_position *p)
{
    tb_position_of(L->ix, L->n, idx, p);
}

/* Step p (entry idx) to entry idx+1. */
static void entry_next(const struct lvl *L, uint64_t idx, sow_position *p)
{
    if (!tb_index_next(L->ix, p->board.h))
        entry_pos(L, idx + 1, p);
}

/* In-level child's index (child c of a normalised position, mover B). */
static inline uint64_t child_index(const struct lvl *L, const sow_position *c, int n, uint64_t boards)
{
    int st = 0;
    if (L->ix->states == 3 && c->state != SOW_STATE_NONE)
        st = (c->state == SOW_STATE_B) ? 1 : 2; /* relative to B, the child's mover */
    (void)n;
    return (uint64_t)st * boards + tb_rank_side(L->ix, c->board.h, 1);
}

static struct sow_relay_cache *thread_cache(const struct ruleset *rs)
{
    return rs->relay ? rules_cache_new(16) : NULL;
}

/* Pass 1: best exits, out-degrees, and each entry's in-level children in
 * its own `slots` forward slots (sequential writes, no atomics). */
static void pass_moves(struct lvl *L)
{
    phase(L, "moves", 0.0, 0.6);
#pragma omp parallel num_threads(L->threads)
    {
        struct sow_relay_cache *cache = thread_cache(L->rs);
        struct sow_movelist ml;
#pragma omp for schedule(dynamic, 1)
        for (uint64_t ch = 0; ch < L->nchunks; ch++) {
            if (stopped(L))
                continue;
            uint64_t a = ch * L->chunk, b = a + L->chunk < L->E ? a + L->chunk : L->E;
            sow_position p;
            entry_pos(L, a, &p);
            for (uint64_t idx = a; idx < b; idx++) {
                L->rs->generate(L->rs, &p, &ml, cache, NULL);
                int best = NONE_EXIT, deg = 0;
                uint32_t *fw = L->fwd + idx * L->slots;
                if (ml.n == 0)
                    best = ml.settle[0] - ml.settle[1];
                for (int k = 0; k < ml.n; k++) {
                    const struct sow_child *c = &ml.c[k];
                    int cap = c->captured[0] + c->captured[1];
                    if (cap) {
                        int m = L->n - cap;
                        const struct tb_level *lv = &L->lower->lv[m];
                        uint64_t q = child_index(L, &c->pos, m, L->lower->boards[m]);
                        int e = c->captured[0] - c->captured[1] - lv->v[q];
                        if (e > best)
                            best = e;
                    } else if (deg < L->slots) {
                        fw[deg++] = (uint32_t)child_index(L, &c->pos, L->n, L->boards);
                    } else {
                        __atomic_store_n(&L->overflow, true, __ATOMIC_RELAXED);
                    }
                }
                L->nd[idx].be = (int8_t)best;
                L->nd[idx].cnt = (uint8_t)deg;
                if (idx + 1 < b)
                    entry_next(L, idx, &p);
            }
            progress(L, b - a);
        }
        rules_cache_free(cache);
    }
}

/* Pass 2: reverse the forward slots into CSR.  Thread k owns the targets in
 * its index range and scans all forward slots (sequential reads), so the
 * counts and list writes need no atomics.  fill=false counts into off[q];
 * fill=true writes rev[--off[q]] (off holds inclusive ends, then starts). */
static void pass_reverse(struct lvl *L, bool fill)
{
    phase(L, fill ? "edges" : "count", fill ? 0.7 : 0.6, 0.1);
    int T = L->threads;
#pragma omp parallel num_threads(T)
    {
        int k = omp_get_thread_num(), nt = omp_get_num_threads();
        uint64_t lo = L->E * (uint64_t)k / (uint64_t)nt, hi = L->E * (uint64_t)(k + 1) / (uint64_t)nt;
        for (uint64_t p = 0; p < L->E; p++) {
            const uint32_t *fw = L->fwd + p * L->slots;
            for (int j = 0; j < L->nd[p].cnt; j++) {
                uint32_t q = fw[j];
                if (q < lo || q >= hi)
                    continue;
                if (fill)
                    L->rev[--L->off[q]] = (uint32_t)p;
                else
                    L->off[q]++;
            }
        }
    }
    (void)T;
}

struct stack {
    uint32_t *v;
    size_t n, cap;
};

static bool push(struct stack *s, uint32_t x)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 4096;
        uint32_t *nv = realloc(s->v, nc * sizeof *nv);
        if (!nv)
            return false;
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = x;
    return true;
}

/* `par` is a compile-time constant at every call (always inlined): with one
 * thread the plain operations let the cache misses overlap. */
static inline __attribute__((always_inline)) bool claim(int8_t *a, int8_t v, bool par)
{
    if (!par) {
        if (*a != UNDONE)
            return false;
        *a = v;
        return true;
    }
    int8_t expect = UNDONE;
    return __atomic_compare_exchange_n(a, &expect, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) uint8_t dec(uint8_t *c, bool par)
{
    return par ? __atomic_sub_fetch(c, 1, __ATOMIC_RELAXED) : --*c;
}

/* Finalise everything at X-value t reachable from the stacks. */
static inline __attribute__((always_inline)) bool drain_(struct lvl *L, int t, struct stack *sx,
                                                        struct stack *sy, bool par)
{
    while (sx->n || sy->n) {
        if (sy->n) {
            /* (q,H) final at t: every predecessor's L node has an option t. */
            uint32_t q = sy->v[--sy->n];
            for (uint32_t e = L->off[q]; e < L->off[q + 1]; e++) {
                uint32_t p = L->rev[e];
                if (__atomic_load_n(&L->nd[p].xl, __ATOMIC_RELAXED) == UNDONE &&
                    claim(&L->nd[p].xl, (int8_t)t, par))
                    if (!push(sx, p))
                        return false;
            }
        } else {
            /* (q,L) final at t: predecessors' H nodes lose one open child. */
            uint32_t q = sx->v[--sx->n];
            for (uint32_t e = L->off[q]; e < L->off[q + 1]; e++) {
                uint32_t p = L->rev[e];
                if (dec(&L->nd[p].cnt, par) != 0)
                    continue;
                int be = L->nd[p].be;
                if (be != NONE_EXIT && -be < t)
                    continue; /* final later, at -be, by the scan of that round */
                if (claim(&L->nd[p].xh, (int8_t)t, par) && !push(sy, p))
                    return false;
            }
        }
    }
    return true;
}

static bool drain_par(struct lvl *L, int t, struct stack *sx, struct stack *sy)
{
    return drain_(L, t, sx, sy, true);
}

static bool drain_one(struct lvl *L, int t, struct stack *sx, struct stack *sy)
{
    return drain_(L, t, sx, sy, false);
}

static int solve(struct lvl *L)
{
    int n = L->n, rounds = 2 * n + 1;
    bool ok = true;
    for (uint64_t p = 0; p < L->E; p++)
        L->nd[p].xl = L->nd[p].xh = UNDONE;
    phase(L, "solve", 0.75, 0.2 / rounds);
    /* Every finalisation of round t starts from an entry whose best exit is
     * t or -t: rounds without one are empty and skipped. */
    bool seed[2 * TB_MAX_LEVEL + 1] = {0};
    for (uint64_t p = 0; p < L->E; p++)
        if (L->nd[p].be != NONE_EXIT)
            seed[L->nd[p].be + TB_MAX_LEVEL] = true;
    for (int t = n; t >= -n && ok; t--) {
        if (stopped(L))
            return TB_INTERRUPTED;
        L->done = 0;
        if (!seed[t + TB_MAX_LEVEL] && !seed[-t + TB_MAX_LEVEL]) {
            L->base += L->weight;
            continue;
        }
#pragma omp parallel num_threads(L->threads)
        {
            struct stack sx = {0}, sy = {0};
#pragma omp for schedule(dynamic, 16)
            for (uint64_t ch = 0; ch < L->nchunks; ch++) {
                uint64_t a = ch * L->chunk, b = a + L->chunk < L->E ? a + L->chunk : L->E;
                for (uint64_t p = a; p < b; p++) {
                    struct node *x = &L->nd[p];
                    int be = x->be;
                    if (be == NONE_EXIT)
                        continue;
                    if (be == t && __atomic_load_n(&x->xl, __ATOMIC_RELAXED) == UNDONE &&
                        claim(&x->xl, (int8_t)t, true) && !push(&sx, (uint32_t)p))
                        __atomic_store_n(&ok, false, __ATOMIC_RELAXED);
                    if (be == -t && __atomic_load_n(&x->cnt, __ATOMIC_RELAXED) == 0 &&
                        __atomic_load_n(&x->xh, __ATOMIC_RELAXED) == UNDONE &&
                        claim(&x->xh, (int8_t)t, true) && !push(&sy, (uint32_t)p))
                        __atomic_store_n(&ok, false, __ATOMIC_RELAXED);
                }
                if (!(L->threads > 1 ? drain_par : drain_one)(L, t, &sx, &sy))
                    __atomic_store_n(&ok, false, __ATOMIC_RELAXED);
                progress(L, b - a);
            }
            free(sx.v);
            free(sy.v);
        }
        L->base += L->weight;
    }
    return ok ? 0 : -1;
}

/* lo/hi from the game, V = clamp(cyc, lo, hi).  Returns entries with lo > hi (bugs). */
static uint64_t finish(struct lvl *L, int8_t *out, int8_t *lohi)
{
    phase(L, "values", 0.95, 0.05);
    int n = L->n;
    uint64_t bad = 0;
    bool awari = L->rs->family == SOW_AWARI;
    int P = L->rs->pits;
#pragma omp parallel for schedule(dynamic, 1) num_threads(L->threads) reduction(+ : bad)
    for (uint64_t ch = 0; ch < L->nchunks; ch++) {
        uint64_t a = ch * L->chunk, b = a + L->chunk < L->E ? a + L->chunk : L->E;
        sow_position p;
        entry_pos(L, a, &p);
        for (uint64_t idx = a; idx < b; idx++) {
            int lo = L->nd[idx].xl == UNDONE ? -n : L->nd[idx].xl;
            int hi = L->nd[idx].xh == UNDONE ? n : -L->nd[idx].xh;
            int cyc = awari ? 0 : board_sum_range(&p.board, 0, P) - board_sum_range(&p.board, P, 2 * P);
            int v = cyc < lo ? lo : cyc > hi ? hi : cyc;
            if (lo > hi)
                bad++;
            out[idx] = (int8_t)v;
            if (lohi) {
                lohi[2 * idx] = (int8_t)lo;
                lohi[2 * idx + 1] = (int8_t)hi;
            }
            if (idx + 1 < b)
                entry_next(L, idx, &p);
        }
        progress(L, b - a);
    }
    return bad;
}

double tb_level_memory(const struct tb_index *ix, int level)
{
    double E = (double)tb_level_entries(ix, level);
    /* node 4 + out 1 + offsets 4 bytes; forward slots 4 (N+1) and reverse
     * edges 4 per in-level move (<= N) live together during pass 2. */
    return E * (9.0 + 4.0 * (ix->pits + 1) + 4.0 * ix->pits) + 4.0;
}

int tb_solve_level(const struct ruleset *rs, const struct tb_set *lower, int n, int8_t *out,
                   int8_t *lohi, const struct tb_build_opts *opt, char *err, int errlen)
{
    struct lvl L;
    memset(&L, 0, sizeof L);
    L.rs = rs;
    L.lower = lower;
    L.ix = &lower->ix;
    L.opt = opt;
    L.n = n;
    L.threads = opt && opt->threads > 0 ? opt->threads : omp_get_max_threads();
    L.boards = tb_level_boards(L.ix, n);
    L.E = tb_level_entries(L.ix, n);
    L.t0 = L.last = util_now();
    /* Small levels: thread start-up and barriers (2n+1 rounds) cost more
     * than they save, badly so on a loaded machine. */
    if (L.E < 200000 && !(opt && opt->threads > 0))
        L.threads = 1;
    /* Small chunks on small levels, so that threads do interleave there too. */
    L.chunk = L.E < (1u << 20) ? 256 : 4096;
    if (n > TB_MAX_LEVEL || L.E > TB_MAX_ENTRIES) {
        snprintf(err, (size_t)errlen, "level %d: too large for one process (uint32 indices)", n);
        return -1;
    }
    for (int m = 0; m < n; m++)
        if (!lower->lv[m].v) {
            snprintf(err, (size_t)errlen, "level %d needs level %d, which is not loaded", n, m);
            return -1;
        }
    L.nchunks = (L.E + L.chunk - 1) / L.chunk;
    int rc = -1;
    L.slots = rs->pits + 1;
    L.nd = malloc(L.E * sizeof *L.nd);
    L.off = calloc(L.E + 1, sizeof *L.off);
    L.fwd = malloc(L.E * (uint64_t)L.slots * sizeof *L.fwd);
    if (!L.nd || !L.off || !L.fwd) {
        snprintf(err, (size_t)errlen, "level %d: out of memory", n);
        goto done;
    }
    pass_moves(&L);
    if (stopped(&L)) {
        rc = TB_INTERRUPTED;
        goto done;
    }
    if (L.overflow) {
        snprintf(err, (size_t)errlen, "level %d: internal error: more in-level moves than slots", n);
        goto done;
    }
    pass_reverse(&L, false);
    uint64_t total = 0;
    for (uint64_t q = 0; q < L.E; q++) {
        total += L.off[q];
        if (total > UINT32_MAX)
            break;
        L.off[q] = (uint32_t)total;
    }
    if (total > UINT32_MAX) {
        snprintf(err, (size_t)errlen, "level %d: more than 2^32 in-level moves (uint32 edges)", n);
        goto done;
    }
    L.off[L.E] = (uint32_t)total;
    L.rev = malloc((total ? total : 1) * sizeof *L.rev);
    if (!L.rev) {
        snprintf(err, (size_t)errlen, "level %d: out of memory for %llu edges", n,
                 (unsigned long long)total);
        goto done;
    }
    pass_reverse(&L, true);
    free(L.fwd);
    L.fwd = NULL;
    if (stopped(&L)) {
        rc = TB_INTERRUPTED;
        goto done;
    }
    rc = solve(&L);
    if (rc == TB_INTERRUPTED)
        goto done;
    if (rc < 0) {
        snprintf(err, (size_t)errlen, "level %d: out of memory in the solve", n);
        goto done;
    }
    if (finish(&L, out, lohi)) {
        snprintf(err, (size_t)errlen, "level %d: internal error: lo > hi", n);
        rc = -1;
        goto done;
    }
    if (opt && opt->progress)
        opt->progress(opt->ctx, n, L.E, 1.0, "done");
    rc = 0;
done:
    free(L.nd);
    free(L.off);
    free(L.rev);
    free(L.fwd);
    return rc;
}

static double machine_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    return pages > 0 && psize > 0 ? (double)pages * (double)psize : 4e9;
}

int tb_build(const struct ruleset *rs, const char *dir, int max_level,
             const struct tb_build_opts *opt, char *err, int errlen)
{
    if (max_level < 0 || max_level > TB_MAX_LEVEL) {
        snprintf(err, (size_t)errlen,
                 "--seeds %d: levels go up to %d (values are signed bytes, |V| <= n)", max_level,
                 TB_MAX_LEVEL);
        return -1;
    }
    struct tb_set *set = tb_set_new(rs, dir);
    if (!set) {
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    double limit = opt && opt->memory_bytes > 0 ? opt->memory_bytes : 0.75 * machine_memory();
    /* Existing levels are checked completely; missing ones must fit. */
    double lower_bytes = 0;
    bool missing[TB_MAX_LEVEL + 1] = {0};
    for (int n = 0; n <= max_level; n++) {
        char path[4200];
        tb_file_name(dir, rs->name, rs->pits, n, path, sizeof path);
        uint64_t E = tb_level_entries(&set->ix, n);
        if (access(path, F_OK) == 0) {
            if (tb_set_load_level(set, n, err, errlen) < 0) {
                size_t l = strlen(err);
                snprintf(err + l, (size_t)errlen - l, " (delete it to rebuild)");
                rc = -1;
                goto out;
            }
        } else {
            missing[n] = true;
            if (E > TB_MAX_ENTRIES) {
                snprintf(err, (size_t)errlen,
                         "level %d has %llu entries, more than one process indexes (%llu); "
                         "build up to level %d",
                         n, (unsigned long long)E, (unsigned long long)TB_MAX_ENTRIES, n - 1);
                rc = -1;
                goto out;
            }
            double need = tb_level_memory(&set->ix, n) + lower_bytes;
            if (need > limit) {
                int fit = n - 1;
                snprintf(err, (size_t)errlen,
                         "level %d needs about %.1f GB but the memory limit is %.1f GB "
                         "(--memory); levels up to %d fit: use --seeds %d or raise --memory",
                         n, need / 1e9, limit / 1e9, fit, fit);
                rc = -1;
                goto out;
            }
        }
        lower_bytes += (double)E;
    }
    for (int n = 0; n <= max_level; n++) {
        if (!missing[n]) {
            if (opt && opt->level_done)
                opt->level_done(opt->ctx, n, set->lv[n].entries, 0, false);
            continue;
        }
        double t0 = util_now();
        uint64_t E = tb_level_entries(&set->ix, n);
        int8_t *v = malloc(E ? E : 1);
        if (!v) {
            snprintf(err, (size_t)errlen, "level %d: out of memory", n);
            rc = -1;
            goto out;
        }
        rc = tb_solve_level(rs, set, n, v, NULL, opt, err, errlen);
        if (rc == 0)
            rc = tb_file_write(dir, rs, n, v, E, err, errlen);
        free(v);
        if (rc != 0)
            goto out;
        if (tb_set_load_level(set, n, err, errlen) < 0) {
            rc = -1;
            goto out;
        }
        if (opt && opt->level_done)
            opt->level_done(opt->ctx, n, E, util_now() - t0, true);
        if (opt && opt->stop && *opt->stop) {
            rc = TB_INTERRUPTED;
            goto out;
        }
    }
out:
    tb_close(set);
    return rc;
}

/* ---- verification --------------------------------------------------------- */

int64_t tb_verify_level(const struct tb_set *set, int n, const struct tb_build_opts *opt,
                        char *err, int errlen)
{
    uint64_t E;
    const int8_t *v = tb_level_values(set, n, &E);
    if (!v) {
        snprintf(err, (size_t)errlen, "level %d is not loaded", n);
        return -1;
    }
    int8_t *re = malloc(E ? E : 1), *lohi = malloc(2 * (E ? E : 1));
    if (!re || !lohi) {
        free(re);
        free(lohi);
        snprintf(err, (size_t)errlen, "level %d: out of memory", n);
        return -1;
    }
    int rc = tb_solve_level(&set->rs, set, n, re, lohi, opt, err, errlen);
    if (rc != 0) {
        free(re);
        free(lohi);
        if (rc == TB_INTERRUPTED)
            snprintf(err, (size_t)errlen, "interrupted");
        return -1;
    }
    struct lvl L;
    memset(&L, 0, sizeof L);
    L.rs = &set->rs;
    L.lower = set;
    L.ix = &set->ix;
    L.n = n;
    L.boards = set->boards[n];
    L.E = E;
    int threads = opt && opt->threads > 0 ? opt->threads : omp_get_max_threads();
    L.chunk = CHUNK;
    uint64_t nchunks = (E + CHUNK - 1) / CHUNK;
    uint64_t bad = 0, first = UINT64_MAX;
    char why[160] = "";
    /* Local checks against the successors: the stored value is the
     * recomputed one, within [-n, n], at least every exit, equal to the best
     * exit without in-level moves; and the recomputed bounds satisfy
     * lo = max(exits, -hi(q)), hi = max(exits, -lo(q)) over in-level q. */
#pragma omp parallel num_threads(threads)
    {
        struct sow_relay_cache *cache = thread_cache(&set->rs);
        struct sow_movelist ml;
#pragma omp for schedule(dynamic, 1) reduction(+ : bad)
        for (uint64_t ch = 0; ch < nchunks; ch++) {
            uint64_t a = ch * CHUNK, b = a + CHUNK < E ? a + CHUNK : E;
            sow_position p;
            entry_pos(&L, a, &p);
            for (uint64_t idx = a; idx < b; idx++) {
                const char *w = NULL;
                set->rs.generate(&set->rs, &p, &ml, cache, NULL);
                int best = NONE_EXIT, blo = NONE_EXIT, bhi = NONE_EXIT, inlevel = 0;
                if (ml.n == 0)
                    best = ml.settle[0] - ml.settle[1];
                for (int k = 0; k < ml.n; k++) {
                    const struct sow_child *c = &ml.c[k];
                    int cap = c->captured[0] + c->captured[1];
                    if (cap) {
                        int m = n - cap;
                        uint64_t q = child_index(&L, &c->pos, m, set->boards[m]);
                        int e = c->captured[0] - c->captured[1] - set->lv[m].v[q];
                        if (e > best)
                            best = e;
                    } else {
                        uint64_t q = child_index(&L, &c->pos, n, L.boards);
                        inlevel++;
                        if (-lohi[2 * q + 1] > blo)
                            blo = -lohi[2 * q + 1];
                        if (-lohi[2 * q] > bhi)
                            bhi = -lohi[2 * q];
                    }
                }
                int lo = lohi[2 * idx], hi = lohi[2 * idx + 1];
                int wlo = best > blo ? best : blo, whi = best > bhi ? best : bhi;
                if (v[idx] != re[idx])
                    w = "differs from the recomputed value";
                else if (v[idx] < -n || v[idx] > n)
                    w = "out of range";
                else if (best != NONE_EXIT && v[idx] < best)
                    w = "below the value of an exit move";
                else if (!inlevel && v[idx] != best)
                    w = "not the best exit although no move stays in the level";
                else if (lo != (wlo < -n ? -n : wlo) || hi != (whi < -n ? -n : whi))
                    w = "bounds inconsistent with the successors";
                if (w) {
                    bad++;
#pragma omp critical(tb_verify)
                    if (idx < first) {
                        first = idx;
                        snprintf(why, sizeof why, "level %d entry %llu: %s (stored %d)", n,
                                 (unsigned long long)idx, w, v[idx]);
                    }
                }
                if (idx + 1 < b)
                    entry_next(&L, idx, &p);
            }
        }
        rules_cache_free(cache);
    }
    free(re);
    free(lohi);
    if (bad)
        snprintf(err, (size_t)errlen, "%s; %llu bad entries", why, (unsigned long long)bad);
    return (int64_t)bad;
}
