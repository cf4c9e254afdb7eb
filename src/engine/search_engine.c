/* The solver's bounded mode (o.depth / o.time_limit) by the alpha-beta
 * engine: search_solve dispatches here unless o.threshold asks for the older
 * threshold search (threshold.c).  docs/engine.md. */
#include <stdio.h>
#include <string.h>

#include "sow/engine.h"
#include "util.h"
#include "search_engine.h"

static void engine_progress(void *arg, const struct engine_info *in)
{
    struct search_ctx *s = arg;
    if (!in->bound_lower && !in->bound_upper)
        search_progress(s, "depth %d: score %d cp%s, nodes %llu", in->depth, in->score,
                        in->proven ? " (exact)" : "", (unsigned long long)in->nodes);
}

bool engine_bounded(struct search_ctx *s, const sow_position *p, double t0,
                    struct search_result *r)
{
    if (!s->eng) {
        struct engine_opts eo = {.threads = s->nthreads, .hash_mb = s->o.hash_mb, .tb = s->o.tb,
                                .solution = s->o.solution, /* (engstrength) */
                                .mem_levels = s->o.level_budget < 0 ? -1 : 0};
        struct sow_error ee;
        if (engine_new(s->rs, &eo, &s->eng, &ee) != SOW_OK) {
            snprintf(s->why, sizeof s->why, "%s", ee.msg);
            s->oom = true;
            return false;
        }
        engine_set_stop_flag(s->eng, s->o.stop);
    }
    engine_set_info(s->eng, engine_progress, s);
    struct engine_limits lim = {.depth = s->o.depth, .seconds = s->o.time_limit,
                                .cpu_clock = s->o.cpu_clock};
    struct engine_result er;
    engine_search(s->eng, p, NULL, 0, &lim, &er);
    s->engine_nodes += er.info.nodes;
    s->engine_tbh += er.info.tb_hits;
    if (er.stopped && s->o.stop && *s->o.stop) {
        s->interrupted = true;
        return false;
    }
    int n = rules_board_seeds(s->rs, p), sc = er.info.score;
    r->score_cp = sc;
    r->value = clampi((sc >= 0 ? sc + 50 : sc - 50) / 100, -n, n);
    r->exact = er.info.proven;
    r->lower = r->exact ? r->value : -n;
    r->upper = r->exact ? r->value : n;
    r->depth = er.info.depth;
    r->seldepth = er.info.seldepth;
    r->hashfull = er.info.hashfull;
    r->best = er.best;
    r->pv_len = er.info.pv_len < SEARCH_MAX_PV ? er.info.pv_len : SEARCH_MAX_PV;
    memcpy(r->pv, er.info.pv, (size_t)r->pv_len);
    r->nodes = er.info.nodes;
    r->tb_hits = er.info.tb_hits;
    r->expanded = 0;
    r->seconds = util_now() - t0;
    return true;
}
