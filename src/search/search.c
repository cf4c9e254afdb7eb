/* The solver's public entry points (sow/search.h) and the principal
 * variation: the dispatcher over the searchers' rooms, each reached through
 * its own header (search_ctx.h maps them): solver/ the exact mode (levels
 * in memory, then the closure), threshold/ the threshold (attractor) tests
 * with their MTD(f) driver and bounded mode, engine/ the bounded mode by the
 * alpha-beta engine.  docs/solver.md explains the algorithms.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sow/engine.h"
#include "tables/tables.h"
#include "tt.h"
#include "util.h"
#include "search_ctx.h"
#include "solver/solver.h"
#include "threshold/threshold.h"
#include "engine/search_engine.h"

/* ---- public API ---- */

enum sow_status search_new(const struct ruleset *rs, const struct search_opts *o,
                           struct search_ctx **out, struct sow_error *e)
{
    *out = NULL;
    if (o->work) { /* its checkpoint names: regular files or absent */
        enum sow_status st = clos_work_check(o->work, e);
        if (st != SOW_OK)
            return st;
    }
    struct search_ctx *s = calloc(1, sizeof *s);
    if (!s)
        return sow_fail(e, SOW_E_NOMEM, "out of memory");
    s->rs = rs;
    s->o = *o;
    s->nthreads = o->threads < 1 ? 1 : o->threads;
    /* The exact mode's closure solver does not use the table: only the
     * bounded mode and the attractor method get one of hash_mb MiB. */
    bool need_tt = o->attractor || ((o->depth > 0 || o->time_limit > 0) && o->threshold);
    s->tt = tt_new(need_tt ? (o->hash_mb ? o->hash_mb : SEARCH_HASH_MB) : 0);
    s->th = calloc((size_t)s->nthreads, sizeof *s->th);
    if (!s->tt || !s->th) {
        search_free(s);
        return sow_fail(e, SOW_E_NOMEM, "cannot allocate a %u MiB transposition table",
                        o->hash_mb);
    }
    s->clos = clos_new(rs);
    s->caches = calloc((size_t)s->nthreads, sizeof *s->caches);
    s->cnodes = calloc((size_t)s->nthreads, sizeof *s->cnodes);
    s->cvisits = calloc((size_t)s->nthreads, sizeof *s->cvisits);
    s->ctbh = calloc((size_t)s->nthreads, sizeof *s->ctbh);
    if (!s->clos || !s->caches || !s->cnodes || !s->cvisits || !s->ctbh) {
        search_free(s);
        return sow_fail(e, SOW_E_NOMEM, "out of memory");
    }
    for (int i = 0; i < s->nthreads; i++) {
        struct thr *th = calloc(1, sizeof *th);
        s->th[i] = th;
        if (!th) {
            search_free(s);
            return sow_fail(e, SOW_E_NOMEM, "out of memory");
        }
        th->s = s;
        th->rs = rs;
        th->tt = s->tt;
        th->tb = o->tb;
        th->tbmax = o->tb ? tb_max_level(o->tb) : -1;
        th->tid = i;
        th->cache = rs->relay ? rules_cache_new(14) : NULL;
        rules_cache_set_stop(th->cache, o->stop); /* Ctrl-C reaches long relays */
        s->caches[i] = th->cache;
        th->levels = threshold_levels_new();
        th->ml = calloc(MAX_LEVELS + 1, sizeof *th->ml);
        if (!th->levels || !th->ml || (rs->relay && !th->cache)) {
            search_free(s);
            return sow_fail(e, SOW_E_NOMEM, "out of memory");
        }
    }
    *out = s;
    return SOW_OK;
}

void search_free(struct search_ctx *s)
{
    if (!s)
        return;
    for (int i = 0; s->th && i < s->nthreads; i++) {
        struct thr *th = s->th[i];
        if (!th)
            continue;
        threshold_levels_free(th->levels);
        free(th->ml);
        rules_cache_free(th->cache);
        free(th);
    }
    free(s->th);
    clos_free(s->clos);
    free(s->caches);
    free(s->cnodes);
    free(s->cvisits);
    free(s->ctbh);
    tb_mem_free(s->mem);
    tt_free(s->tt);
    engine_free(s->eng);
    free(s);
}

void search_clear(struct search_ctx *s)
{
    tt_clear(s->tt);
    clos_reset(s->clos);
    tb_mem_free(s->mem);
    s->mem = NULL;
    if (s->eng)
        engine_clear(s->eng);
}

void search_counters(const struct search_ctx *s, uint64_t *nodes, uint64_t *tb_hits)
{
    uint64_t h = s->engine_tbh;
    for (int i = 0; i < s->nthreads; i++)
        h += s->th[i]->tb_hits + s->ctbh[i];
    *nodes = search_total_nodes(s);
    *tb_hits = h;
}

uint64_t search_expanded(const struct search_ctx *s)
{
    uint64_t n = s->dentries;
    for (int i = 0; i < s->nthreads; i++)
        n += s->th[i]->nodes + s->cnodes[i];
    return n;
}

void search_reset_counters(struct search_ctx *s)
{
    for (int i = 0; i < s->nthreads; i++)
        s->th[i]->nodes = s->th[i]->visits = s->th[i]->tb_hits = s->cnodes[i] = s->cvisits[i] =
            s->ctbh[i] = 0;
    s->dmoves = s->dentries = 0;
    s->engine_nodes = s->engine_tbh = 0;
}

const struct sow_error *search_last_error(const struct search_ctx *s)
{
    return &s->err;
}

/* The status of a call that could not finish, from the flags its threads
 * set: out of memory (a failure while working), past the --memory budget
 * or a size limit (refused: SOW_E_TOO_BIG), else a stop. */
static enum sow_status fail_status(struct search_ctx *s)
{
    if (s->oom)
        return sow_fail(&s->err, SOW_E_NOMEM, "%s", s->why[0] ? s->why : "out of memory");
    if (s->too_deep) /* refused by the --memory budget or a size limit */
        return sow_fail(&s->err, SOW_E_TOO_BIG, "%s",
                        s->why[0] ? s->why
                                  : "a level of the position is too large for the in-memory search");
    return sow_fail(&s->err, SOW_E_INTERRUPTED, "interrupted");
}

static void begin(struct search_ctx *s)
{
    s->timed_out = s->too_deep = s->oom = s->interrupted = false;
    s->why[0] = 0;
    s->err = (struct sow_error){SOW_OK, ""};
    s->deadline = 0;
    s->quiet = false;
}

/* A principal variation from p0 (value v0): at each position a move worth the
 * position's value, until the end of the game, a repeated position
 * (r->pv_repeats) or SEARCH_MAX_PV moves.  The method says how a move worth v
 * is picked (index into ml; false if stopped) and how the value of a child
 * that stays in the level is found; an exit's child value follows from v. */
struct pv_method {
    bool (*pick)(struct search_ctx *s, const sow_position *p, const struct sow_movelist *ml, int v,
                 int *pick);
    bool (*value)(struct search_ctx *s, const sow_position *q, int *v);
};

static bool pv_walk(struct search_ctx *s, const sow_position *p0, int v0, struct search_result *r,
                    const struct pv_method *m)
{
    const struct ruleset *rs = s->rs;
    sow_position hist[SEARCH_MAX_PV + 1];
    sow_position p = *p0;
    int v = v0;
    r->pv_len = 0;
    r->pv_repeats = false;
    hist[0] = p;
    while (r->pv_len < SEARCH_MAX_PV) {
        struct sow_movelist ml;
        rs->generate(rs, &p, &ml, s->th[0]->cache, NULL);
        if (ml.n == 0)
            return true;
        int pick = -1;
        if (!m->pick(s, &p, &ml, v, &pick))
            return false;
        if (pick < 0)
            pick = 0; /* cannot happen: V is the best move value */
        const struct sow_child *ch = &ml.c[pick];
        r->pv[r->pv_len++] = ch->move;
        sow_position q = ch->pos;
        if (ch->captured[0] + ch->captured[1]) {
            v = (ch->captured[p.side] - ch->captured[!p.side]) - v;
        } else {
            for (int j = r->pv_len - 1; j >= 0; j--)
                if (rules_same_position(&hist[j], &q)) {
                    r->pv_repeats = true;
                    return true;
                }
            if (!m->value(s, &q, &v))
                return false;
        }
        p = q;
        hist[r->pv_len] = p;
    }
    return true;
}

static const struct pv_method exact_method = {exact_pick, exact_value};

enum sow_status search_value(struct search_ctx *s, const sow_position *p, int *value)
{
    begin(s);
    if (!s->o.attractor)
        return exact_value(s, p, value) ? SOW_OK : fail_status(s);
    return threshold_value(s, p, value) ? SOW_OK : fail_status(s);
}

int search_move_values(struct search_ctx *s, const sow_position *p, int *vals)
{
    struct sow_movelist ml;
    begin(s);
    s->quiet = true;
    if (!s->o.attractor) {
        int n = exact_move_values(s, p, vals);
        if (n < 0)
            fail_status(s);
        return n;
    }
    s->rs->generate(s->rs, p, &ml, s->th[0]->cache, NULL);
    for (int i = 0; i < ml.n; i++) {
        if (!threshold_move_value(s, p, &ml.c[i], &vals[i])) {
            fail_status(s);
            return -1;
        }
    }
    return ml.n;
}

static const struct pv_method threshold_method = {threshold_pick, threshold_value};

static void finish(struct search_ctx *s, struct search_result *r, double t0, uint64_t n0,
                   uint64_t h0)
{
    uint64_t n, h;
    search_counters(s, &n, &h);
    r->nodes = n - n0;
    r->expanded = search_expanded(s) - r->expanded;
    r->tb_hits = h - h0;
    r->seconds = util_now() - t0;
}

enum sow_status search_solve(struct search_ctx *s, const sow_position *p,
                             struct search_result *r)
{
    const struct ruleset *rs = s->rs;
    memset(r, 0, sizeof *r);
    begin(s);
    tt_new_generation(s->tt);
    double t0 = util_now();
    uint64_t n0, h0;
    search_counters(s, &n0, &h0);
    r->expanded = search_expanded(s); /* the baseline, until finish() */
    r->best = SOW_MOVE_NONE;

    struct sow_movelist ml;
    rs->generate(rs, p, &ml, s->th[0]->cache, NULL);
    if (ml.n == 0) {
        r->over = r->exact = true;
        r->value = r->lower = r->upper = ml.settle[p->side] - ml.settle[!p->side];
        finish(s, r, t0, n0, h0);
        return SOW_OK;
    }
    if (s->o.depth <= 0 && s->o.time_limit <= 0 && !s->o.attractor) {
        if (!exact_value(s, p, &r->value))
            goto stopped;
        r->exact = true;
        r->lower = r->upper = r->value;
        s->quiet = true;
        if (!pv_walk(s, p, r->value, r, &exact_method))
            goto stopped;
        r->best = r->pv_len ? r->pv[0] : ml.c[0].move;
        finish(s, r, t0, n0, h0);
        return SOW_OK;
    }
    if (s->o.depth <= 0 && s->o.time_limit <= 0) {
        if (!threshold_value(s, p, &r->value))
            goto stopped;
        r->exact = true;
        r->lower = r->upper = r->value;
        s->quiet = true;
        if (!pv_walk(s, p, r->value, r, &threshold_method))
            goto stopped;
        r->best = r->pv_len ? r->pv[0] : ml.c[0].move;
        finish(s, r, t0, n0, h0);
        return SOW_OK;
    }

    if (!s->o.threshold) { /* the alpha-beta engine (search_engine.c) */
        if (!engine_bounded(s, p, t0, r))
            goto stopped;
        return SOW_OK;
    }
    if (!threshold_bounded(s, p, &ml, t0, r))
        goto stopped;
    /* The bounded mode reports its best move as the whole PV, even when the
     * bounds met: a full PV needs exact solves of the positions along it,
     * which --depth/--time promise not to start (they can take far longer). */
    r->pv_len = 1;
    r->pv[0] = r->best;
    finish(s, r, t0, n0, h0);
    return SOW_OK;
stopped:
    finish(s, r, t0, n0, h0);
    r->interrupted = true;
    return fail_status(s);
}
