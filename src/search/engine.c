/* The alpha-beta engine (include/sow/engine.h, docs/engine.md).
 *
 * Negamax over centi-seed scores: a move's score is 100 * (seeds its mover
 * nets) minus the child's score, so captures inside the tree are exact and
 * only the leaves are estimated.  PVS with iterative deepening and
 * aspiration windows at the root; Lazy SMP: helper threads run the same
 * iterative deepening (odd helpers one ply deeper) over the shared table,
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
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sow/engine.h"
#include "sow/tables.h"
#include "sow/tt.h"
#include "sow/util.h"
#include "engine_know.h"
#include "engine_pick.h"

#define PATH_MAX_LEN (ENGINE_MAX_HISTORY + ENGINE_MAX_PLY + 8)
#define CHECK_EVERY 255
/* Nodes this close to the leaves neither probe nor store heuristic results:
 * a probe is a cache miss, and their subtrees cost about as much. */
#define TT_MIN_DEPTH 1

struct ethr {
    struct engine *e;
    int tid;
    uint64_t nodes, tb_hits;
    int seldepth;
    bool abort;
    struct sow_relay_cache *cache;
    struct pick pk;
    uint64_t path[PATH_MAX_LEN];   /* keys of the game history, then the search path */
    uint16_t lvl[PATH_MAX_LEN];    /* seeds on the board of each */
    int base;                      /* path entries of the game history */
    sow_move pv[ENGINE_MAX_PLY + 1][ENGINE_MAX_PLY + 1];
    int pvlen[ENGINE_MAX_PLY + 1];
    struct sow_movelist ml[ENGINE_MAX_PLY + 2];
    pthread_t th;
    /* the root: */
    sow_position root;
    int max_depth;
};

struct engine {
    const struct ruleset *rs;
    struct engine_opts o;
    struct eval_weights w;
    struct tt *tt;
    struct tb_mem *mem;            /* loaded tables + small levels solved in memory */
    const struct tb_set *set;      /* what to probe: mem's set, or the loaded tables */
    int tbmax;
    long long budget;              /* positions of levels to solve in memory */
    int nthreads;
    struct ethr **th;
    atomic_int stop;
    volatile sig_atomic_t *ext_stop;
    double deadline;               /* 0: none */
    uint64_t node_limit;
    uint64_t total_nodes;
    void (*info_cb)(void *arg, const struct engine_info *i);
    void *info_arg;
    /* results of the main thread */
    struct engine_info last;
    bool have_last;
    double t0;
};

static inline int seeds_on_board(const struct ruleset *rs, const sow_position *p)
{
    return board_sum_range(&p->board, 0, rs->holes);
}

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
    e->nthreads = o->threads < 1 ? 1 : o->threads;
    if (o->weights)
        e->w = *o->weights;
    else
        eval_default_weights(rs, &e->w);
    e->tt = tt_new(o->hash_mb ? o->hash_mb : 16);
    e->th = calloc((size_t)e->nthreads, sizeof *e->th);
    if (!e->tt || !e->th) {
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
        pick_clear(&t->pk);
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
    tt_free(e->tt);
    free(e);
}

void engine_clear(struct engine *e)
{
    tt_clear(e->tt);
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
    atomic_store_explicit(&e->stop, 1, memory_order_relaxed);
}

uint64_t engine_nodes(const struct engine *e)
{
    return e->total_nodes;
}

/* ---- the search ---- */

/* Counters are written by their thread only and read by the main thread
 * for the info lines: relaxed atomic stores keep that race-free and cost a
 * plain store. */
static inline void bump(uint64_t *c)
{
    __atomic_store_n(c, *c + 1, __ATOMIC_RELAXED);
}

static void check_abort(struct ethr *t)
{
    struct engine *e = t->e;
    if (atomic_load_explicit(&e->stop, memory_order_relaxed) ||
        (e->ext_stop && __atomic_load_n(e->ext_stop, __ATOMIC_RELAXED))) {
        t->abort = true;
        return;
    }
    if (t->tid == 0) {
        if ((e->deadline > 0 && util_now() >= e->deadline) ||
            (e->node_limit && t->nodes >= e->node_limit)) {
            atomic_store_explicit(&e->stop, 1, memory_order_relaxed);
            t->abort = true;
        }
    }
}

/* Is the position at path index i a repetition of an earlier one?  Seeds
 * never come back, so only the stretch of the same level is scanned. */
static bool repeated(const struct ethr *t, int i)
{
    uint64_t k = t->path[i];
    uint16_t l = t->lvl[i];
    for (int j = i - 1; j >= 0 && t->lvl[j] == l; j--)
        if (t->path[j] == k)
            return true;
    return false;
}

static int settle_score(const struct ruleset *rs, const sow_position *p)
{
    int s2[2];
    rules_repetition_settle2(rs, p, s2);
    return 50 * (s2[p->side] - s2[!p->side]);
}

static int search(struct ethr *t, const sow_position *p, uint64_t key, int alpha, int beta,
                  int depth, int ply, bool *proven)
{
    struct engine *e = t->e;
    const struct ruleset *rs = e->rs;
    const bool pvnode = beta - alpha > 1;
    t->pvlen[ply] = ply;
    if ((t->nodes & CHECK_EVERY) == 0)
        check_abort(t);
    if (t->abort) {
        *proven = false;
        return 0;
    }
    if (ply > t->seldepth)
        t->seldepth = ply;
    int pi = t->base + ply;
    int n = seeds_on_board(rs, p);
    /* key 0: not computed by the parent (a leaf's); only needed if the
     * level is the parent's, where a repetition is possible. */
    if (!key && pi > 0 && t->lvl[pi - 1] == n)
        key = tt_key(rs, p);
    t->path[pi] = key;
    t->lvl[pi] = (uint16_t)n;
    if (ply > 0 && key && repeated(t, pi)) {
        *proven = false;
        return settle_score(rs, p);
    }
    if (n <= e->tbmax && ply > 0) {
        int v;
        if (tb_probe(e->set, p, &v)) {
            bump(&t->tb_hits);
            /* V(p) is the exact value of an exit into p.  After a move that
             * stays in the level (from the root, or jerin's unindexed
             * opening) the move's value is clamp(cyc(parent), -hi, -lo)
             * (docs/rules.md), not -V(p): then V is only an estimate. */
            *proven = t->lvl[pi - 1] != n;
            return 100 * v;
        }
    }
    if (e->o.solution && ply > 0) {
        int v; /* a solution file: exact after an exit, as tables (engine_know.h) */
        if (know_probe(e->o.solution, p, &v)) {
            bump(&t->tb_hits);
            *proven = t->lvl[pi - 1] != n;
            return 100 * v;
        }
    }
    struct tte_info te;
    sow_move ttm = SOW_MOVE_NONE;
    /* Leaves do not probe: the entry would rarely beat the evaluation and
     * the probe is a cache miss (most nodes are leaves). */
    if (depth > TT_MIN_DEPTH && tte_probe(e->tt, key, &te)) {
        ttm = te.move;
        if (ply > 0 && (te.proven || (te.depth >= depth && !pvnode))) {
            if (te.bound == TTE_BOUND_EXACT || (te.bound == TTE_BOUND_LOWER && te.score >= beta) ||
                (te.bound == TTE_BOUND_UPPER && te.score <= alpha)) {
                *proven = te.proven;
                return te.score;
            }
        }
    }
    if (depth <= 0 || ply >= ENGINE_MAX_PLY) {
        if (rs->count(rs, p, t->cache) == 0) {
            struct sow_movelist *ml = &t->ml[ply];
            rs->generate(rs, p, ml, t->cache, NULL);
            *proven = true;
            return 100 * (ml->settle[p->side] - ml->settle[!p->side]);
        }
        *proven = false;
        return eval_position(rs, &e->w, p);
    }
    struct sow_movelist *ml = &t->ml[ply];
    rs->generate(rs, p, ml, t->cache, NULL);
    if (ml->n == 0) {
        *proven = true;
        return 100 * (ml->settle[p->side] - ml->settle[!p->side]);
    }
    uint8_t order[SOW_MAX_PITS + 1];
    uint64_t ck[SOW_MAX_PITS + 1];
    for (int i = 0; i < ml->n; i++) {
        if (depth >= 2) {
            ck[i] = tt_key(rs, &ml->c[i].pos);
            if (depth - 1 > TT_MIN_DEPTH)
                tte_prefetch(e->tt, ck[i]); /* the children will probe */
        } else {
            ck[i] = 0; /* leaves: see above */
        }
    }
    pick_order(&t->pk, ml, p->side, ply, ttm, order);
    const int side = p->side;
    int best = -ENGINE_INF - 1, a0 = alpha;
    sow_move bestm = SOW_MOVE_NONE;
    bool allproven = true, bestproven = false;
    for (int k = 0; k < ml->n; k++) {
        const struct sow_child *ch = &ml->c[order[k]];
        const uint64_t chk = ck[order[k]];
        int d = 100 * (ch->captured[side] - ch->captured[!side]);
        bool cp;
        int sc;
        bump(&t->nodes);
        if (k == 0) {
            sc = d - search(t, &ch->pos, chk, d - beta, d - alpha, depth - 1, ply + 1, &cp);
        } else {
            /* PVS: a null window first, the full one only if it fails high */
            sc = d - search(t, &ch->pos, chk, d - alpha - 1, d - alpha, depth - 1, ply + 1, &cp);
            if (!t->abort && sc > alpha && sc < beta)
                sc = d - search(t, &ch->pos, chk, d - beta, d - alpha, depth - 1, ply + 1, &cp);
        }
        if (t->abort) {
            *proven = false;
            return 0;
        }
        if (sc > best) {
            best = sc;
            bestm = ch->move;
            bestproven = cp;
        }
        allproven &= cp;
        if (sc > alpha) {
            alpha = sc;
            t->pv[ply][ply] = ch->move;
            memcpy(&t->pv[ply][ply + 1], &t->pv[ply + 1][ply + 1],
                   (size_t)(t->pvlen[ply + 1] - ply - 1) * sizeof(sow_move));
            t->pvlen[ply] = t->pvlen[ply + 1] > ply + 1 ? t->pvlen[ply + 1] : ply + 1;
            if (sc >= beta) {
                if (d <= 0) {
                    pick_cutoff(&t->pk, side, ply, depth, ch->move);
                    for (int j = 0; j < k; j++) {
                        const struct sow_child *c2 = &ml->c[order[j]];
                        if (c2->captured[side] <= c2->captured[!side])
                            pick_penalty(&t->pk, side, depth, c2->move);
                    }
                }
                break;
            }
        }
    }
    int bound = best >= beta ? TTE_BOUND_LOWER : best > a0 ? TTE_BOUND_EXACT : TTE_BOUND_UPPER;
    /* A cutoff rests on the cutting move alone; otherwise on every move. */
    bool pr = bound == TTE_BOUND_LOWER ? bestproven : allproven;
    *proven = pr;
    if (depth > TT_MIN_DEPTH || pr)
        tte_store(e->tt, key, best, bound, pr, bestm, depth);
    return best;
}

/* One iteration at the root with window (alpha, beta). */
static int root_search(struct ethr *t, int alpha, int beta, int depth, bool *proven)
{
    return search(t, &t->root, tt_key(t->e->rs, &t->root), alpha, beta, depth, 0, proven);
}

static void report(struct engine *e, struct ethr *t, int depth, int score, bool proven, int lb)
{
    struct engine_info *in = &e->last;
    uint64_t nodes = 0, hits = 0;
    for (int i = 0; i < e->nthreads; i++) {
        nodes += __atomic_load_n(&e->th[i]->nodes, __ATOMIC_RELAXED);
        hits += __atomic_load_n(&e->th[i]->tb_hits, __ATOMIC_RELAXED);
    }
    struct engine_info cur = {0};
    cur.depth = depth;
    cur.seldepth = t->seldepth;
    cur.score = score;
    cur.proven = proven && lb == 0;
    cur.bound_lower = lb > 0;
    cur.bound_upper = lb < 0;
    cur.nodes = nodes;
    cur.tb_hits = hits;
    cur.seconds = util_now() - e->t0;
    cur.hashfull = tte_hashfull(e->tt);
    cur.pv_len = t->pvlen[0];
    memcpy(cur.pv, t->pv[0], (size_t)cur.pv_len * sizeof(sow_move));
    if (lb == 0) {
        *in = cur;
        e->have_last = true;
    }
    if (e->info_cb)
        e->info_cb(e->info_arg, &cur);
}

static void iterate(struct ethr *t)
{
    struct engine *e = t->e;
    int score = 0;
    for (int d = 1 + (t->tid & 1); d <= t->max_depth; d++) {
        int delta = 40, alpha = -ENGINE_INF, beta = ENGINE_INF;
        if (d >= 4) {
            alpha = score - delta;
            beta = score + delta;
        }
        bool proven;
        int s;
        if (e->o.mtdf && d >= 2) {
            /* MTD(f): null-window tests from the last score until the
             * bounds meet (docs/engine.md: measured against PVS). */
            int lo = -ENGINE_INF - 1, hi = ENGINE_INF + 1, g = score;
            bool plo = false, phi = false;
            while (lo < hi) {
                int b = g > lo + 1 ? g : lo + 1;
                t->seldepth = 0;
                s = root_search(t, b - 1, b, d, &proven);
                if (t->abort)
                    return;
                if (s < b) {
                    hi = s;
                    phi = proven;
                } else {
                    lo = s;
                    plo = proven;
                }
                g = s;
            }
            s = g;
            proven = plo && phi;
            score = s;
            if (t->tid == 0) {
                report(e, t, d, s, proven, 0);
                if (proven)
                    break;
            }
            continue;
        }
        for (;;) {
            t->seldepth = 0;
            s = root_search(t, alpha, beta, d, &proven);
            if (t->abort)
                return;
            if (s <= alpha) {
                if (t->tid == 0)
                    report(e, t, d, s, false, -1);
                alpha = s - delta > -ENGINE_INF ? s - delta : -ENGINE_INF;
            } else if (s >= beta) {
                if (t->tid == 0)
                    report(e, t, d, s, false, 1);
                beta = s + delta < ENGINE_INF ? s + delta : ENGINE_INF;
            } else {
                break;
            }
            delta *= 2;
        }
        score = s;
        if (t->tid == 0) {
            report(e, t, d, s, proven, 0);
            /* A proven root score cannot change with depth. */
            if (proven)
                break;
        }
    }
}

/* The root inside the tables: its value, and a move reaching it if every
 * needed move value is known exactly (exits: net - V(child); moves staying
 * in the level: clamp(cyc(p), -hi(q), -lo(q)), which needs the child's
 * bounds, kept only for the levels solved in memory). */
static bool root_from_tables(struct engine *e, const sow_position *p,
                             const struct sow_movelist *ml, int *value, sow_move *best)
{
    const struct ruleset *rs = e->rs;
    *best = SOW_MOVE_NONE;
    if (!tb_probe(e->set, p, value))
        return false;
    int n = seeds_on_board(rs, p), cyc = rules_cycle_value(rs, p);
    for (int i = 0; i < ml->n; i++) {
        const struct sow_child *ch = &ml->c[i];
        int net = ch->captured[p->side] - ch->captured[!p->side], v, lo, hi, mv;
        struct sow_movelist cm;
        rs->generate(rs, &ch->pos, &cm, NULL, NULL);
        if (cm.n == 0)
            mv = net - (cm.settle[ch->pos.side] - cm.settle[!ch->pos.side]);
        else if (seeds_on_board(rs, &ch->pos) != n && tb_probe(e->set, &ch->pos, &v))
            mv = net - v;
        else if (seeds_on_board(rs, &ch->pos) == n &&
                 tb_probe_bounds(e->set, &ch->pos, &lo, &hi, &v))
            mv = cyc < -hi ? -hi : cyc > -lo ? -lo : cyc;
        else
            continue;
        if (mv == *value) {
            *best = ch->move;
            break;
        }
    }
    return true;
}

static void *helper_main(void *arg)
{
    iterate(arg);
    return NULL;
}

void engine_search(struct engine *e, const sow_position *p, const sow_position *hist, int nhist,
                   const struct engine_limits *lim, struct engine_result *r)
{
    const struct ruleset *rs = e->rs;
    memset(r, 0, sizeof *r);
    e->t0 = util_now();
    e->deadline = lim->seconds > 0 ? e->t0 + lim->seconds : 0;
    e->node_limit = lim->nodes;
    e->have_last = false;
    memset(&e->last, 0, sizeof e->last);
    atomic_store(&e->stop, 0);
    tt_new_generation(e->tt);
    r->best = SOW_MOVE_NONE;

    struct sow_movelist ml;
    rs->generate(rs, p, &ml, NULL, NULL);
    if (ml.n == 0) {
        r->over = true;
        r->info.score = 100 * (ml.settle[p->side] - ml.settle[!p->side]);
        r->info.proven = true;
        return;
    }
    /* The game history (for repetitions): only the stretch at p's level. */
    int np = seeds_on_board(rs, p);
    int from = nhist;
    while (from > 0 && seeds_on_board(rs, &hist[from - 1]) == np)
        from--;
    if (nhist - from > ENGINE_MAX_HISTORY)
        from = nhist - ENGINE_MAX_HISTORY;
    grow_levels(e, np);
    e->t0 = util_now(); /* rates and times from here; the deadline counts the levels too */
    int rootv;
    sow_move tbbest = SOW_MOVE_NONE;
    bool root_tb = np <= e->tbmax && root_from_tables(e, p, &ml, &rootv, &tbbest);
    /* A solution file answers a root with no earlier position of its level
     * in the game (engine_know.h). */
    if (!(root_tb && tbbest != SOW_MOVE_NONE) && e->o.solution && from == nhist &&
        know_root(e->o.solution, p, &ml, &rootv, &tbbest))
        root_tb = true;
    if (root_tb && tbbest != SOW_MOVE_NONE) {
        /* Every move's exact value is known: no search. */
        r->info.depth = 1;
        r->info.score = 100 * rootv;
        r->info.proven = true;
        r->info.pv_len = 1;
        r->info.pv[0] = tbbest;
        r->info.tb_hits = (uint64_t)ml.n + 1;
        r->info.seconds = util_now() - e->t0;
        r->best = tbbest;
        if (e->info_cb)
            e->info_cb(e->info_arg, &r->info);
        return;
    }
    int maxd = lim->depth > 0 ? lim->depth : ENGINE_MAX_PLY - 1;
    if (maxd > ENGINE_MAX_PLY - 1)
        maxd = ENGINE_MAX_PLY - 1;
    for (int i = 0; i < e->nthreads; i++) {
        struct ethr *t = e->th[i];
        t->abort = false;
        t->nodes = t->tb_hits = 0;
        t->root = *p;
        t->max_depth = i ? ENGINE_MAX_PLY - 1 : maxd;
        t->base = nhist - from;
        for (int j = from; j < nhist; j++) {
            t->path[j - from] = tt_key(rs, &hist[j]);
            t->lvl[j - from] = (uint16_t)np;
        }
    }
    int started = 0;
    for (int i = 1; i < e->nthreads; i++) {
        if (pthread_create(&e->th[i]->th, NULL, helper_main, e->th[i]) != 0)
            break;
        started = i;
    }
    iterate(e->th[0]);
    /* The main thread is done (or stopped): the helpers stop too. */
    atomic_store(&e->stop, 1);
    for (int i = 1; i <= started; i++)
        pthread_join(e->th[i]->th, NULL);

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
    if (rules_find_move(&ml, best) < 0) {
        struct tte_info te;
        best = ml.c[0].move;
        if (tte_probe(e->tt, tt_key(rs, p), &te) && rules_find_move(&ml, te.move) >= 0)
            best = te.move;
        r->info.pv_len = 1;
        r->info.pv[0] = best;
    }
    r->best = best;
}
