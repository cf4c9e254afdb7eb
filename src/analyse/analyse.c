/* Analysis of one position within a time budget (sow/analyse.h): the known
 * answers, the exact solver's try against its deadline, the engine, the
 * order of the moves and the JSON. */
#include "sow/analyse.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyse/analyse_internal.h"
#include "analyse/jsonbuf.h"
#include "sow/position.h"
#include "util.h"
#include "watch.h"

/* The exact try's lowest levels in memory by default: far below sow solve's,
 * since every concurrent caller (sow serve's requests) builds its own; the
 * closure does the rest, to the same values. */
#define ANALYSE_LEVEL_BUDGET (1LL << 22)
/* The engine's transposition table per call, MiB (sow solve's 64 would be
 * 512 MiB at 8 concurrent requests of sow serve). */
#define ANALYSE_HASH_MB 16

/* ---- the exact try's deadline ---------------------------------------------- */

/* The exact solver has no clock: a watch (watch.h) sets its stop flag at the
 * deadline or when the caller's stop is set. */
static bool caller_stop(void *arg)
{
    volatile sig_atomic_t *stop = arg;
    return stop && *stop;
}

/* ---- the tries ---------------------------------------------------------------- */

/* The exact answer r of the position into a (its move values already in). */
static void take_exact(struct analysis *a, const struct search_result *r)
{
    a->exact = true;
    a->over = r->over;
    a->value = r->value;
    a->depth = -1;
    a->pv_len = r->pv_len;
    memcpy(a->pv, r->pv, sizeof r->pv);
    a->pv_repeats = r->pv_repeats;
}

/* p answered from one of o's solution files holding it: every move's value
 * and the PV from the file. */
static bool try_solutions(const sow_position *p, const struct analyse_opts *o, struct analysis *a)
{
    for (int i = 0; i < o->nsolutions; i++) {
        struct search_result r;
        if (!o->solutions[i] || search_solution_answer(o->solutions[i], p, &r, a->vals) < 0)
            continue;
        a->source = "solution";
        take_exact(a, &r);
        return true;
    }
    return false;
}

static enum sow_status try_exact(const struct ruleset *rs, const sow_position *p,
                                 const struct analyse_opts *o, double seconds,
                                 struct analysis *a, struct sow_error *e)
{
    struct watch w;
    watch_start(&w, CLOCK_MONOTONIC, util_now() + seconds, caller_stop, (void *)o->stop);
    struct search_opts so = {
        .threads = o->threads > 0 ? o->threads : 1,
        .tb = o->tb,
        .stop = &w.flag,
        .level_budget = o->level_budget ? o->level_budget : ANALYSE_LEVEL_BUDGET,
        .memory = o->memory,
    };
    struct search_ctx *s;
    enum sow_status st = watch_fired(&w) ? SOW_E_INTERRUPTED : search_new(rs, &so, &s, e);
    if (st == SOW_OK) {
        struct search_result r;
        st = search_solve(s, p, &r);
        if (st == SOW_OK && search_move_values(s, p, a->vals) < 0)
            st = search_last_error(s)->status;
        /* a stop may cut a relay short and leave a move out: nothing computed
         * then is used (rules_cache_set_stop) */
        if (st == SOW_OK && watch_fired(&w))
            st = SOW_E_INTERRUPTED;
        if (st == SOW_OK)
            take_exact(a, &r);
        else if (st != SOW_E_INTERRUPTED)
            sow_fail(e, st, "%s", search_last_error(s)->msg);
        search_free(s);
    }
    watch_end(&w);
    return st;
}

/* Every move's child searched by the engine for its share of the time; a
 * move's value is the seeds it nets and then the child's value for whoever
 * moves there; the position's value the best of them. */
static enum sow_status try_engine(const struct ruleset *rs, const sow_position *p,
                                  const struct analyse_opts *o, double seconds,
                                  struct analysis *a, struct sow_error *e)
{
    struct search_opts so = {
        .threads = o->threads > 0 ? o->threads : 1,
        .hash_mb = o->hash_mb ? o->hash_mb : ANALYSE_HASH_MB,
        .time_limit = seconds / (a->ml.n > 0 ? a->ml.n : 1),
        .tb = o->tb,
        .stop = o->stop,
        .level_budget = -1, /* no levels built in memory: the clock is the budget */
    };
    struct search_ctx *s;
    enum sow_status st = search_new(rs, &so, &s, e);
    if (st != SOW_OK)
        return st;
    a->exact = false;
    a->source = "engine";
    a->depth = -1;
    a->over = a->ml.n == 0;
    int best = -1;
    struct search_result *rbest = malloc(sizeof *rbest), *r = malloc(sizeof *r);
    if (!rbest || !r)
        st = sow_fail(e, SOW_E_NOMEM, "out of memory");
    if (st == SOW_OK && a->ml.n == 0) { /* over: the settlement, exact at once */
        st = search_solve(s, p, r);
        if (st == SOW_OK) {
            a->value = r->value;
            a->exact = true;
            a->source = "closure";
        }
    }
    for (int i = 0; st == SOW_OK && i < a->ml.n; i++) {
        const struct sow_child *ch = &a->ml.c[i];
        st = search_solve(s, &ch->pos, r);
        if (st != SOW_OK)
            break;
        int v = r->value, net = ch->captured[p->side] - ch->captured[!p->side];
        a->vals[i] = net + (ch->pos.side == p->side ? v : -v);
        int d = r->over ? 0 : r->depth;
        if (a->depth < 0 || d + 1 < a->depth)
            a->depth = d + 1;
        if (best < 0 || a->vals[i] > a->vals[best]) {
            best = i;
            *rbest = *r;
        }
    }
    if (st == SOW_OK && best >= 0) {
        a->value = a->vals[best];
        a->pv[0] = a->ml.c[best].move;
        a->pv_len = 1;
        for (int k = 0; k < rbest->pv_len && a->pv_len < SEARCH_MAX_PV; k++)
            a->pv[a->pv_len++] = rbest->pv[k];
        a->pv_repeats = rbest->pv_repeats;
    } else if (st != SOW_OK && st != SOW_E_INTERRUPTED && st != SOW_E_NOMEM) {
        sow_fail(e, st, "%s", search_last_error(s)->msg);
    }
    free(rbest);
    free(r);
    search_free(s);
    return st;
}

/* The moves best first: best value first, the solver's best move first among
 * equals, then generation order (stable). */
static void order_moves(struct analysis *a)
{
    sow_move best = a->pv_len ? a->pv[0] : SOW_MOVE_NONE;
    int *ord = a->order;
    for (int i = 0; i < a->ml.n; i++)
        ord[i] = i;
    for (int i = 1; i < a->ml.n; i++) {
        int x = ord[i], j = i;
        for (; j > 0; j--) {
            int y = ord[j - 1];
            bool before = a->vals[x] > a->vals[y] ||
                          (a->vals[x] == a->vals[y] && a->ml.c[x].move == best);
            if (!before)
                break;
            ord[j] = y;
        }
        ord[j] = x;
    }
}

enum sow_status analyse_position(const struct ruleset *rs, const sow_position *p,
                                 const struct analyse_opts *o, struct analysis *a,
                                 struct sow_error *e)
{
    memset(a, 0, sizeof *a);
    rs->generate(rs, p, &a->ml, NULL, NULL);
    if ((o->levels && analyse_levels_answer(o->levels, rs, p, o, a)) ||
        (o->tb && analyse_tables_answer(o->tb, rs, p, a)) || try_solutions(p, o, a)) {
        order_moves(a);
        return SOW_OK;
    }
    double budget = o->seconds > 0 ? o->seconds : 1.0;
    int v;
    a->source = o->tb && tb_probe(o->tb, p, &v) ? "tables" : "closure";
    enum sow_status st = try_exact(rs, p, o, budget / 2, a, e);
    /* past the deadline, or a closure too big for the memory budget: the
     * engine, whose clock is its own */
    if ((st == SOW_E_INTERRUPTED || st == SOW_E_TOO_BIG) && !(o->stop && *o->stop))
        st = try_engine(rs, p, o, budget / 2, a, e);
    if (st == SOW_E_INTERRUPTED)
        sow_fail(e, st, "interrupted");
    if (st == SOW_OK)
        order_moves(a);
    return st;
}

/* ---- JSON ---------------------------------------------------------------------- */

/* {"rules" .. "over": the head of both answers. */
static void json_head(struct jbuf *b, const struct ruleset *rs, const sow_position *p,
                      const struct analysis *a)
{
    char pos[SOW_POS_MAXLEN];
    pos_format(rs, p, pos, sizeof pos);
    jbuf_printf(b, "{\"rules\":");
    jbuf_str(b, rs->name);
    jbuf_printf(b, ",\"pits\":%d,\"pos\":", rs->pits);
    jbuf_str(b, pos);
    jbuf_printf(b, ",\"value\":%d,\"exact\":%s,\"source\":\"%s\",\"depth\":", a->value,
                a->exact ? "true" : "false", a->source);
    if (a->depth >= 0)
        jbuf_printf(b, "%d", a->depth);
    else
        jbuf_printf(b, "null");
    jbuf_printf(b, ",\"over\":%s", a->over ? "true" : "false");
}

char *analyse_json(const struct ruleset *rs, const sow_position *p, const struct analysis *a)
{
    struct jbuf b = {0};
    json_head(&b, rs, p, a);
    jbuf_printf(&b, ",\"best\":");
    if (a->ml.n) {
        char mv[SOW_MOVE_MAXLEN];
        move_format(rs, p->side, a->ml.c[a->order[0]].move, mv, sizeof mv);
        jbuf_str(&b, mv);
    } else {
        jbuf_printf(&b, "null");
    }
    jbuf_printf(&b, ",\"moves\":[");
    for (int k = 0; k < a->ml.n; k++) {
        const struct sow_child *ch = &a->ml.c[a->order[k]];
        char mv[SOW_MOVE_MAXLEN], pos[SOW_POS_MAXLEN];
        move_format(rs, p->side, ch->move, mv, sizeof mv);
        pos_format(rs, &ch->pos, pos, sizeof pos);
        jbuf_printf(&b, "%s{\"move\":", k ? "," : "");
        jbuf_str(&b, mv);
        jbuf_printf(&b, ",\"value\":%d,\"exact\":%s,\"pos\":", a->vals[a->order[k]],
                    a->exact ? "true" : "false");
        jbuf_str(&b, pos);
        jbuf_printf(&b, "}");
    }
    jbuf_printf(&b, "]}");
    return jbuf_take(&b, NULL);
}

char *analyse_json_line(const struct ruleset *rs, const sow_position *p, const struct analysis *a)
{
    struct jbuf b = {0};
    json_head(&b, rs, p, a);
    jbuf_printf(&b, ",\"line\":[");
    sow_position q = *p;
    struct sow_movelist ml;
    for (int k = 0; k < a->pv_len; k++) {
        rs->generate(rs, &q, &ml, NULL, NULL);
        int i = rules_find_move(&ml, a->pv[k]);
        if (i < 0)
            break;
        char mv[SOW_MOVE_MAXLEN], pos[SOW_POS_MAXLEN];
        move_format(rs, q.side, a->pv[k], mv, sizeof mv);
        q = ml.c[i].pos;
        pos_format(rs, &q, pos, sizeof pos);
        jbuf_printf(&b, "%s{\"move\":", k ? "," : "");
        jbuf_str(&b, mv);
        jbuf_printf(&b, ",\"pos\":");
        jbuf_str(&b, pos);
        jbuf_printf(&b, "}");
    }
    rs->generate(rs, &q, &ml, NULL, NULL);
    const char *end = ml.n == 0 ? "over" : a->pv_repeats ? "repetition" : "cut";
    jbuf_printf(&b, "],\"end\":\"%s\"}", end);
    return jbuf_take(&b, NULL);
}
