/* The alpha-beta engine (include/sow/engine.h, docs/engine.md).
 *
 * Negamax over centi-seed scores: a move's score is 100 * (seeds its mover
 * nets) minus the child's score, so captures inside the tree are exact and
 * only the leaves are estimated.  PVS with iterative deepening and
 * aspiration windows at the root; Lazy SMP: helper threads run the same
 * iterative deepening (at the main thread's depth) over the shared table,
 * with their own killers and history, and the main thread's result is the
 * answer.  With one thread nothing depends on timing, so node counts at a
 * fixed depth are reproducible.
 *
 * Proven scores: search() reports through *proven whether its returned bound
 * rests only on exact knowledge (terminal settlements, table probes, proven
 * table entries).  A cutoff is proven if the cutting child's score was; a
 * node that searched all moves is proven if all of them were.  Evaluations
 * and repetitions are never proven (a repetition's score depends on the
 * path: graph-history interaction), so neither is anything resting on them.
 */
#include "engine_internal.h"
#include "solver/closure.h"

/* ---- construction ---- */

/* The levels solved in memory (tables.h, tb_mem): loaded tables borrowed,
 * then levels built on demand up to the root's seed count (levels above it
 * are unreachable) while they add up to at most the budget. */
static int init_levels(struct engine *e, char *err, int errlen)
{
    e->budget = e->o.mem_levels == 0 ? 1000000 : e->o.mem_levels;
    e->set = e->o.tb;
    e->tbmax = e->o.tb ? tb_max_level(e->o.tb) : -1;
    if (e->budget <= 0)
        return 0;
    e->mem = tb_mem_new(e->rs, e->o.tb);
    if (!e->mem) {
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
    }
    e->set = tb_mem_set(e->mem);
    e->tbmax = tb_mem_top(e->mem);
    return 0;
}

static void grow_levels(struct engine *e, int n)
{
    if (!e->mem || e->tbmax >= n)
        return;
    /* No stop flag: the builder reads it plainly (made for signal
     * handlers), and the levels are small; engine_prepare builds them
     * before a search where latency matters. */
    struct tb_mem_opts mo = {.threads = 1, .budget = (uint64_t)e->budget};
    struct sow_error err;
    if (tb_mem_extend(e->mem, n, &mo, &err) != SOW_OK)
        e->budget = 0; /* out of memory: do without more levels */
    e->tbmax = tb_mem_top(e->mem);
}

bool engine_lmr_default(const struct ruleset *rs)
{
    /* The measured controls: 100 ms of CPU a move, 200-400 games a rule
     * set (bench/results/2026-12-05-lmr-oware.md, 2026-12-06-lmr-awari.md,
     * 2026-12-06-lmr-other-rules.md). */
    return rs->family == SOW_OWARE || rs->family == SOW_AWARI;
}

static struct engine *engine_make(const struct ruleset *rs, const struct engine_opts *o, char *err,
                                  int errlen)
{
    struct engine *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, (size_t)errlen, "out of memory");
        return NULL;
    }
    e->rs = rs;
    e->o = *o;
    e->lmr = o->lmr == ENGINE_LMR_ON || (o->lmr == ENGINE_LMR_DEFAULT && engine_lmr_default(rs));
    pthread_mutex_init(&e->mu, NULL);
    pthread_mutex_init(&e->ls_mu, NULL);
    pthread_cond_init(&e->ls_cv, NULL);
    efast_init(&e->fx, rs);
    e->nthreads = o->threads < 1 ? 1 : o->threads;
    if (o->weights)
        e->w = *o->weights;
    else
        eval_default_weights(rs, &e->w);
    efast_eval_init(&e->fx, rs, &e->w);
    e->tt = tt_new(o->hash_mb ? o->hash_mb : 16);
    e->th = calloc((size_t)e->nthreads, sizeof *e->th);
    e->ls_running = calloc((size_t)e->nthreads, sizeof *e->ls_running);
    if (e->nthreads > 1)
        if ((e->busy = aligned_alloc(64, BUSY_SLOTS * sizeof *e->busy)))
            memset(e->busy, 0, BUSY_SLOTS * sizeof *e->busy);
    if (!e->tt || !e->th || !e->ls_running || (e->nthreads > 1 && !e->busy)) {
        snprintf(err, (size_t)errlen, "cannot allocate a %u MiB transposition table",
                 o->hash_mb);
        engine_free(e);
        return NULL;
    }
    for (int i = 0; i < e->nthreads; i++) {
        struct ethr *t = aligned_alloc(64, (sizeof *t + 63) / 64 * 64);
        e->th[i] = t;
        if (!t) {
            snprintf(err, (size_t)errlen, "out of memory");
            engine_free(e);
            return NULL;
        }
        memset(t, 0, sizeof *t);
        t->e = e;
        t->tid = i;
        t->cache = rs->relay ? rules_cache_new(14) : NULL;
        if (rs->relay && !t->cache) {
            snprintf(err, (size_t)errlen, "out of memory");
            engine_free(e);
            return NULL;
        }
        pick_set_counts(&t->pk, rs);
    }
    if (init_levels(e, err, errlen) != 0) {
        engine_free(e);
        return NULL;
    }
    return e;
}

enum sow_status engine_new(const struct ruleset *rs, const struct engine_opts *o,
                           struct engine **out, struct sow_error *e)
{
    char err[SOW_ERROR_MSG] = "out of memory";
    *out = engine_make(rs, o, err, sizeof err);
    return *out ? SOW_OK : sow_fail(e, SOW_E_NOMEM, "%s", err);
}

void engine_free(struct engine *e)
{
    if (!e)
        return;
    for (int i = 0; e->th && i < e->nthreads; i++)
        if (e->th[i]) {
            rules_cache_free(e->th[i]->cache);
            free(e->th[i]);
        }
    free(e->th);
    tb_mem_free(e->mem);
    clos_free(e->clos);
    tt_free(e->tt);
    pthread_mutex_destroy(&e->mu);
    pthread_mutex_destroy(&e->ls_mu);
    pthread_cond_destroy(&e->ls_cv);
    free(e->ls_running);
    free(e->busy);
    free(e);
}

void engine_clear(struct engine *e)
{
    tt_clear(e->tt);
    if (e->busy)
        memset(e->busy, 0, BUSY_SLOTS * sizeof *e->busy);
    for (int i = 0; i < e->nthreads; i++)
        pick_clear(&e->th[i]->pk);
}

void engine_prepare(struct engine *e, const sow_position *p)
{
    grow_levels(e, seeds_on_board(e->rs, p));
}

void engine_set_info(struct engine *e, void (*cb)(void *, const struct engine_info *), void *arg)
{
    e->info_cb = cb;
    e->info_arg = arg;
}

void engine_set_stop_flag(struct engine *e, volatile sig_atomic_t *flag)
{
    e->ext_stop = flag;
}

void engine_stop(struct engine *e)
{
    atomic_store_explicit(&e->halt, 1, memory_order_relaxed);
    atomic_store_explicit(&e->stop, 1, memory_order_relaxed);
}

uint64_t engine_nodes(const struct engine *e)
{
    return e->total_nodes;
}

static void *helper_main(void *arg)
{
    struct ethr *t = arg;
    if (t->e->o.lockstep)
        ls_wait(t->e, t->tid);
    eng_iterate(t);
    if (t->e->o.lockstep)
        ls_exit(t->e, t->tid);
    return NULL;
}

/* A fresh search's clocks, limits and shared state. */
static void search_reset(struct engine *e, const struct engine_limits *lim,
                         struct engine_result *r)
{
    memset(r, 0, sizeof *r);
    e->t0 = util_now();
    /* (check_abort reads the clock in the main thread: this one) */
    e->clock = lim->cpu_clock ? util_cpu_now : util_now;
    e->started = e->clock();
    e->deadline = lim->seconds > 0 ? e->started + lim->seconds : 0;
    e->soft = lim->soft > 0 ? lim->soft : 0;
    e->changes = 0;
    e->prev_best = SOW_MOVE_NONE;
    e->one_move = false;
    e->node_limit = lim->nodes;
    e->have_last = false;
    memset(&e->last, 0, sizeof e->last);
    atomic_store(&e->stop, 0);
    if (!e->in_swindle) /* (its searches must not clear a stop asked for) */
        atomic_store(&e->halt, 0);
    atomic_store(&e->done_depth, 0);
    atomic_store(&e->main_depth, 0);
    tt_new_generation(e->tt);
    r->best = SOW_MOVE_NONE;
}

/* The game history (for repetitions): only the stretch at p's level (np
 * seeds) where the movers alternate (as they do in a game; repeated()
 * relies on it).  Returns the index in hist where it starts. */
static int history_from(const struct ruleset *rs, const sow_position *p, int np,
                        const sow_position *hist, int nhist)
{
    int from = nhist;
    while (from > 0 && seeds_on_board(rs, &hist[from - 1]) == np &&
           hist[from - 1].side != (from < nhist ? hist[from].side : p->side))
        from--;
    if (nhist - from > ENGINE_MAX_HISTORY)
        from = nhist - ENGINE_MAX_HISTORY;
    return from;
}

/* Every move's exact value is known (rootv, a move tbbest reaching it): the
 * answer with no search. */
static void answer_known(struct engine *e, const struct sow_movelist *ml, int rootv,
                         sow_move tbbest, uint64_t nodes, struct engine_result *r)
{
    r->info.depth = 1;
    r->info.score = 100 * rootv;
    r->info.proven = true;
    r->info.pv_len = 1;
    r->info.pv[0] = tbbest;
    r->info.tb_hits = (uint64_t)ml->n + 1;
    r->info.nodes = nodes;
    r->info.seconds = util_now() - e->t0;
    e->total_nodes += nodes;
    r->best = tbbest;
    if (e->info_cb)
        e->info_cb(e->info_arg, &r->info);
}

/* Each thread's root, depth limit, counters and game history
 * (hist[from..nhist), all at level np). */
static void threads_prepare(struct engine *e, const sow_position *p, const sow_position *hist,
                            int from, int nhist, int np, int maxd)
{
    const struct ruleset *rs = e->rs;
    for (int i = 0; i < e->nthreads; i++) {
        struct ethr *t = e->th[i];
        t->abort = t->superseded = false;
        t->cur_depth = 0;
        t->ls_last = 0;
        t->nodes = t->tb_hits = t->deferred = 0;
        t->root = *p;
        t->max_depth = i ? ENGINE_MAX_PLY - 1 : maxd;
        t->base = nhist - from;
        for (int j = from; j < nhist; j++) {
            t->hist[j - from] = hist[j];
            t->path[j - from] = &t->hist[j - from];
            t->lvl[j - from] = (uint16_t)np;
            t->seen[j - from] = (j > from ? t->seen[j - from - 1] : 0) |
                                efast_pos_bit(&hist[j], rs->nwords);
        }
    }
}

/* The helpers started (Lazy SMP); returns the highest index started. */
static int threads_start(struct engine *e)
{
    int started = 0;
    e->ls_turn = 0;
    for (int i = 0; i < e->nthreads; i++)
        e->ls_running[i] = i == 0;
    for (int i = 1; i < e->nthreads; i++) {
        pthread_mutex_lock(&e->ls_mu);
        e->ls_running[i] = true;
        pthread_mutex_unlock(&e->ls_mu);
        if (pthread_create(&e->th[i]->th, NULL, helper_main, e->th[i]) != 0) {
            pthread_mutex_lock(&e->ls_mu);
            e->ls_running[i] = false;
            pthread_mutex_unlock(&e->ls_mu);
            break;
        }
        started = i;
    }
    return started;
}

/* The main thread is done (or stopped): the helpers stop too, and are
 * joined; a helper's deeper iteration completed at the very end is
 * adopted. */
static void threads_join(struct engine *e, int started, struct engine_result *r)
{
    atomic_store(&e->stop, 1);
    r->main_nodes = e->th[0]->nodes;
    if (e->o.lockstep)
        ls_exit(e, 0);
    for (int i = 1; i <= started; i++)
        pthread_join(e->th[i]->th, NULL);
    r->deferred = 0;
    for (int i = 0; i < e->nthreads; i++)
        r->deferred += e->th[i]->deferred;
    if (atomic_load(&e->done_depth) > (e->have_last ? e->last.depth : 0) && e->done.pv_len) {
        int sc;
        eng_adopt(e, &sc);
    }
}

/* The result of a search: the last completed iteration, the threads'
 * counts, the tables' value where they know the root's (root_tb: rootv),
 * and the best move. */
static void result_assemble(struct engine *e, const sow_position *p,
                            const struct sow_movelist *ml, bool root_tb, int rootv,
                            struct engine_result *r)
{
    r->stopped = e->th[0]->abort;
    if (e->have_last) {
        r->info = e->last;
    } else {
        r->info.score = 0;
        r->info.pv_len = 0;
    }
    uint64_t nodes = 0, hits = 0;
    for (int i = 0; i < e->nthreads; i++) {
        nodes += e->th[i]->nodes;
        hits += e->th[i]->tb_hits;
    }
    if (root_tb) { /* the tables know the value; the search chose the move */
        r->info.score = 100 * rootv;
        r->info.proven = true;
    }
    r->info.nodes = nodes;
    r->info.tb_hits = hits;
    r->info.seconds = util_now() - e->t0;
    r->info.hashfull = tte_hashfull(e->tt);
    e->total_nodes += nodes;
    /* The best move: the PV's first move if it is legal (it always is when
     * an iteration completed), else the table's move, else the first. */
    sow_move best = r->info.pv_len ? r->info.pv[0] : SOW_MOVE_NONE;
    if (rules_find_move(ml, best) < 0) {
        struct tte_info te;
        best = ml->c[0].move;
        if (tte_probe(e->tt, tt_key_(e->rs, p), &te) && rules_find_move(ml, te.move) >= 0)
            best = te.move;
        r->info.pv_len = 1;
        r->info.pv[0] = best;
    }
    r->best = best;
}

void engine_search(struct engine *e, const sow_position *p, const sow_position *hist, int nhist,
                   const struct engine_limits *lim, struct engine_result *r)
{
    const struct ruleset *rs = e->rs;
    search_reset(e, lim, r);
    struct sow_movelist ml;
    rs->generate(rs, p, &ml, NULL, NULL);
    if (ml.n == 0) {
        r->over = true;
        r->info.score = 100 * (ml.settle[p->side] - ml.settle[!p->side]);
        r->info.proven = true;
        return;
    }
    int np = seeds_on_board(rs, p);
    int from = history_from(rs, p, np, hist, nhist);
    grow_levels(e, np);
    e->t0 = util_now(); /* rates and times from here; the deadline counts the levels too */
    struct root_known k;
    bool root_tb = np <= e->tbmax && eng_root_known(e, p, &ml, hist, from, nhist, lim, &k);
    int rootv = root_tb ? k.value : 0;
    sow_move tbbest = root_tb ? k.best : SOW_MOVE_NONE;
    uint64_t cnodes = root_tb ? k.nodes : 0;
    /* A solution file answers a root with no earlier position of its level
     * in the game (engine_know.h). */
    if (!(root_tb && tbbest != SOW_MOVE_NONE) && e->o.solution && from == nhist &&
        know_root(e->o.solution, p, &ml, &rootv, &tbbest))
        root_tb = true;
    if (root_tb && tbbest != SOW_MOVE_NONE) {
        answer_known(e, &ml, rootv, tbbest, cnodes, r);
        eng_swindle(e, p, &ml, hist, nhist, lim, r);
        return;
    }
    /* The moves known to keep the tables' value, if two or more: the
     * search's root plays one of them (engine_tree.c) */
    e->root_filter = root_tb && k.ncand > 1;
    if (e->root_filter)
        memcpy(e->root_allow, k.allow, sizeof e->root_allow);
    e->one_move = ml.n == 1;
    int maxd = lim->depth > 0 ? lim->depth : ENGINE_MAX_PLY - 1;
    if (maxd > ENGINE_MAX_PLY - 1)
        maxd = ENGINE_MAX_PLY - 1;
    threads_prepare(e, p, hist, from, nhist, np, maxd);
    int started = threads_start(e);
    eng_iterate(e->th[0]);
    threads_join(e, started, r);
    result_assemble(e, p, &ml, root_tb, rootv, r);
    if (e->root_filter && !eng_root_allows(e, r->best)) { /* stopped before a move */
        for (int i = 0; i < ml.n; i++)
            if (eng_root_allows(e, ml.c[i].move)) {
                r->best = r->info.pv[0] = ml.c[i].move;
                r->info.pv_len = 1;
                break;
            }
    }
    e->root_filter = false;
    r->info.nodes += cnodes; /* a closure that did not tell the move alone */
    e->total_nodes += cnodes;
    eng_swindle(e, p, &ml, hist, nhist, lim, r);
}
