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
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sow/engine.h"
#include "tables/tables.h"
#include "tt.h"
#include "util.h"
#include "tt_impl.h"
#include "engine_fast.h"
#include "engine_know.h"
#include "engine_pick.h"

#define PATH_MAX_LEN (ENGINE_MAX_HISTORY + ENGINE_MAX_PLY + 8)
#define CHECK_EVERY 255
/* Nodes this close to the leaves neither probe nor store heuristic results:
 * a probe is a cache miss, and their subtrees cost about as much. */
#ifndef TT_MIN_DEPTH
#define TT_MIN_DEPTH 1
/* ABDADA (threads > 1): at a node with at least BUSY_DEPTH plies left, a
 * move after the first whose child another thread is searching now is
 * put last (its key demoted by BUSY_DEMOTE), so that the threads split a
 * node's moves instead of searching the same child side by side.  The
 * marks live in BUSY_SLOTS words indexed by the child's key. */
#define BUSY_DEPTH 8
#define BUSY_SLOTS 16384
#define BUSY_DEMOTE ((int64_t)1 << 50)
#endif

struct ethr {
    struct engine *e;
    int tid;
    uint64_t nodes, tb_hits;
    uint64_t deferred;             /* ABDADA: moves put last (busy_has) */
    int seldepth;
    bool abort;
    bool superseded;               /* abort: another thread completed cur_depth */
    uint64_t ls_last;              /* lockstep: nodes at the last turn given up */
    int cur_depth;                 /* the iteration being searched */
    struct sow_relay_cache *cache;
    struct pick pk;
    /* The game history, then the search path, for repetitions: the
     * positions themselves (compared exactly, so leaves need no key) and
     * their seeds on the board.  hist holds copies of the history. */
    const sow_position *path[PATH_MAX_LEN];
    uint16_t lvl[PATH_MAX_LEN];
    /* One bit (efast_pos_bit) per position of the stretch at the same
     * level up to each entry: a repetition is looked for only if the bit
     * of the new position is already set (a filter, exact either way). */
    uint64_t seen[PATH_MAX_LEN];
    int base;                      /* path entries of the game history */
    sow_position hist[ENGINE_MAX_HISTORY];
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
    struct efast fx;               /* the rule set's fast paths (engine_fast.h) */
    struct tt *tt;
    struct tb_mem *mem;            /* loaded tables + small levels solved in memory */
    const struct tb_set *set;      /* what to probe: mem's set, or the loaded tables */
    int tbmax;
    long long budget;              /* positions of levels to solve in memory */
    int nthreads;
    struct ethr **th;
    atomic_int stop;
    /* Lazy SMP (publish()): the deepest completed iteration of any thread,
     * and the depth the main thread is searching. */
    atomic_int done_depth, main_depth;
    /* ABDADA's "being searched" marks (threads > 1, see busy_has): the
     * keys of the children some thread is searching now, one word a slot
     * (relaxed atomics: a lost or stale mark only changes an order). */
    uint64_t *busy;
    pthread_mutex_t mu;            /* guards done */
    struct engine_info done;
    /* Lockstep (engine_opts.lockstep): the thread whose turn it is, and
     * which threads still run; guarded by ls_mu. */
    pthread_mutex_t ls_mu;
    pthread_cond_t ls_cv;
    int ls_turn;
    bool *ls_running;
    volatile sig_atomic_t *ext_stop;
    double deadline;               /* 0: none; on e->clock's clock */
    double (*clock)(void);         /* util_now, or util_cpu_now (engine_limits.cpu_clock) */
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

/* ---- lockstep (engine_opts.lockstep) ----
 * The threads take turns of 256 nodes, round robin over those still
 * running: T equal cores simulated on any machine, whatever its load, and
 * the whole search is deterministic.  Measurement only (bench engine). */

/* Hand the turn to the next running thread after tid (lock held). */
static void ls_next(struct engine *e, int tid)
{
    int n = e->nthreads, j = tid;
    do
        j = (j + 1) % n;
    while (!e->ls_running[j] && j != tid);
    e->ls_turn = j;
    pthread_cond_broadcast(&e->ls_cv);
}

static void ls_wait(struct engine *e, int tid)
{
    pthread_mutex_lock(&e->ls_mu);
    while (e->ls_turn != tid)
        pthread_cond_wait(&e->ls_cv, &e->ls_mu);
    pthread_mutex_unlock(&e->ls_mu);
}

static void ls_yield(struct engine *e, int tid)
{
    pthread_mutex_lock(&e->ls_mu);
    ls_next(e, tid);
    while (e->ls_turn != tid)
        pthread_cond_wait(&e->ls_cv, &e->ls_mu);
    pthread_mutex_unlock(&e->ls_mu);
}

static void ls_exit(struct engine *e, int tid)
{
    pthread_mutex_lock(&e->ls_mu);
    e->ls_running[tid] = false;
    if (e->ls_turn == tid)
        ls_next(e, tid);
    pthread_mutex_unlock(&e->ls_mu);
}

static void check_abort(struct ethr *t)
{
    struct engine *e = t->e;
    if (e->o.lockstep && e->nthreads > 1 && t->nodes != t->ls_last) {
        t->ls_last = t->nodes;
        ls_yield(e, t->tid);
    }
    if (atomic_load_explicit(&e->stop, memory_order_relaxed) ||
        (e->ext_stop && __atomic_load_n(e->ext_stop, __ATOMIC_RELAXED))) {
        t->abort = true;
        return;
    }
    if (atomic_load_explicit(&e->done_depth, memory_order_relaxed) >= t->cur_depth) {
        t->abort = t->superseded = true; /* see publish() */
        return;
    }
    if (t->tid == 0) {
        if ((e->deadline > 0 && e->clock() >= e->deadline) ||
            (e->node_limit && t->nodes >= e->node_limit)) {
            atomic_store_explicit(&e->stop, 1, memory_order_relaxed);
            t->abort = true;
        }
    }
}

/* Is the position at path index i a repetition of an earlier one?  Seeds
 * never come back, so only the stretch of the same level is scanned (the
 * levels along the path never rise, so the scan may stop at the first
 * other level), and every move hands the turn over (a pass included;
 * engine_search keeps only an alternating history), so only every second
 * entry can hold the same mover. */
static bool repeated(const struct ethr *t, int i, int nw)
{
    const sow_position *q = t->path[i];
    uint16_t l = t->lvl[i];
    for (int j = i - 2; j >= 0 && t->lvl[j] == l; j -= 2)
        if (efast_same_pos(t->path[j], q, nw))
            return true;
    return false;
}

static int settle_score(const struct ruleset *rs, const sow_position *p)
{
    int s2[2];
    rules_repetition_settle2(rs, p, s2);
    return 50 * (s2[p->side] - s2[!p->side]);
}

/* What every node does first: the stop poll, seldepth, the path, a
 * repetition on it, a table probe.  true: the node is done, its score in
 * *score (and *proven set). */
static inline __attribute__((always_inline)) bool node_head(struct ethr *t,
                                                            const sow_position *p, int n,
                                                            int ply, int *score, bool *proven,
                                                            const int NW, const bool is_leaf)
{
    struct engine *e = t->e;
    const struct ruleset *rs = e->rs;
    t->pvlen[ply] = ply;
    if ((t->nodes & CHECK_EVERY) == 0)
        check_abort(t);
    if (t->abort) {
        *proven = false;
        *score = 0;
        return true;
    }
    if (ply > t->seldepth)
        t->seldepth = ply;
    int pi = t->base + ply;
    const uint64_t bit = efast_pos_bit(p, NW);
    const uint64_t before = pi > 0 && t->lvl[pi - 1] == n ? t->seen[pi - 1] : 0;
    /* A leaf's entry is read by no later node (it has no children, and
     * its siblings write their own): written only for the scan. */
    if (!is_leaf) {
        t->path[pi] = p;
        t->lvl[pi] = (uint16_t)n;
        t->seen[pi] = before | bit;
    }
    if (ply > 0 && (before & bit)) {
        if (is_leaf) {
            t->path[pi] = p;
            t->lvl[pi] = (uint16_t)n;
        }
        if (repeated(t, pi, NW)) {
            *proven = false;
            *score = settle_score(rs, p);
            return true;
        }
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
            *score = 100 * v;
            return true;
        }
    }
    if (e->o.solution && ply > 0) {
        int v; /* a solution file: exact after an exit, as tables (engine_know.h) */
        if (know_probe(e->o.solution, p, &v)) {
            bump(&t->tb_hits);
            *proven = t->lvl[pi - 1] != n;
            *score = 100 * v;
            return true;
        }
    }
    return false;
}

/* ABDADA marks (e->busy; threads > 1 only): slot by the key's top bits. */
static inline uint64_t *busy_slot(const struct engine *e, uint64_t key)
{
    return &e->busy[key >> (64 - 14)];
}
_Static_assert(BUSY_SLOTS == 1 << 14, "busy_slot takes 14 bits of the key");
_Static_assert(BUSY_DEPTH - 1 > TT_MIN_DEPTH, "ABDADA needs the children's keys");

static inline bool busy_has(const struct engine *e, uint64_t key)
{
    return __atomic_load_n(busy_slot(e, key), __ATOMIC_RELAXED) == key;
}

static inline void busy_set(const struct engine *e, uint64_t key)
{
    __atomic_store_n(busy_slot(e, key), key, __ATOMIC_RELAXED);
}

static inline void busy_clear(const struct engine *e, uint64_t key)
{
    uint64_t *s = busy_slot(e, key);
    if (__atomic_load_n(s, __ATOMIC_RELAXED) == key)
        __atomic_store_n(s, 0, __ATOMIC_RELAXED);
}

/* The shapes search() is compiled for (search_t): SHAPE_OW6 is oware or
 * awari on 2x6 (two board words, six holes a row, moves on the register,
 * the evaluation by table), where constant sizes let the compiler unroll
 * the hot loops; SHAPE_ANY is every rule set, sizes read at run time. */
#define SHAPE_ANY 0
#define SHAPE_OW6 1

static bool shape_ow6(const struct efast *f)
{
    return f->gen_oware && f->pits == 6 && f->nw == 2 && f->eval_table;
}

/* The end of the game or the evaluation: depth 0, or the ply limit. */
static inline __attribute__((always_inline)) int leaf_score(struct ethr *t, const sow_position *p,
                                                            int n, int ply, bool *proven,
                                                            const int shape)
{
    struct engine *e = t->e;
    const struct ruleset *rs = e->rs;
    const bool ow6 = shape == SHAPE_OW6;
    if (!efast_has_moves_nw(&e->fx, p, ow6 ? 2 : e->fx.nw) && rs->count(rs, p, t->cache) == 0) {
        struct sow_movelist *ml = &t->ml[ply];
        rs->generate(rs, p, ml, t->cache, NULL);
        *proven = true;
        return 100 * (ml->settle[p->side] - ml->settle[!p->side]);
    }
    *proven = false;
    if (ow6)
        return efast_eval_p(&e->fx, p, n, 6);
    return e->fx.eval_table ? efast_eval(&e->fx, p, n) : eval_position(rs, &e->w, p);
}

/* A node at depth 0: search() less the table and the moves.  Its score
 * does not depend on the window (leaves neither probe nor store; their
 * key is not needed: repetitions compare the positions themselves). */
static inline __attribute__((always_inline)) int leaf(struct ethr *t, const sow_position *p,
                                                      int n, int ply, bool *proven,
                                                      const int shape)
{
    int sc;
    if (node_head(t, p, n, ply, &sc, proven, shape == SHAPE_OW6 ? 2 : t->e->fx.nw, true))
        return sc;
    return leaf_score(t, p, n, ply, proven, shape);
}

static int search_any(struct ethr *t, const sow_position *p, int n, uint64_t key, int alpha,
                      int beta, int depth, int ply, bool *proven);
static int search_ow6(struct ethr *t, const sow_position *p, int n, uint64_t key, int alpha,
                      int beta, int depth, int ply, bool *proven);

/* p has n seeds on the board (the parent's minus the move's captures).
 * One body, compiled once per shape (search_any, search_ow6). */
static inline __attribute__((always_inline)) int search_t(struct ethr *t, const sow_position *p,
                                                          int n, uint64_t key, int alpha,
                                                          int beta, int depth, int ply,
                                                          bool *proven, const int shape)
{
    struct engine *e = t->e;
    const struct ruleset *rs = e->rs;
    const bool ow6 = shape == SHAPE_OW6;
    const int NW = ow6 ? 2 : e->fx.nw;
    const bool gen_ow = ow6 || e->fx.gen_oware;
    const bool pvnode = beta - alpha > 1;
    {
        int sc;
        if (node_head(t, p, n, ply, &sc, proven, NW, false))
            return sc;
    }
    struct tte_info te;
    sow_move ttm = SOW_MOVE_NONE;
    /* Leaves do not probe: the entry would rarely beat the evaluation and
     * the probe is a cache miss (most nodes are leaves). */
    if (depth > TT_MIN_DEPTH && tte_probe_(e->tt, key, &te)) {
        ttm = te.move;
        if (ply > 0 && (te.proven || (te.depth >= depth && !pvnode))) {
            if (te.bound == TTE_BOUND_EXACT || (te.bound == TTE_BOUND_LOWER && te.score >= beta) ||
                (te.bound == TTE_BOUND_UPPER && te.score <= alpha)) {
                *proven = te.proven;
                return te.score;
            }
        }
    }
    if (depth <= 0 || ply >= ENGINE_MAX_PLY)
        return leaf_score(t, p, n, ply, proven, shape);
    struct sow_movelist *ml = &t->ml[ply];
    const int side = p->side;
    const bool leaves = depth - 1 <= 0;
    /* Children's keys only where they probe (depth - 1 > TT_MIN_DEPTH;
     * a child at TT_MIN_DEPTH makes its own key if it stores), and only
     * for the moves searched: each one's bucket is prefetched before the
     * previous child's subtree is searched (one look-ahead in the order),
     * the table move's (searched first) before the ordering. */
    const bool kids_probe = depth - 1 > TT_MIN_DEPTH;
    /* (children's keys are made where ABDADA works: BUSY_DEPTH - 1 >
     * TT_MIN_DEPTH) */
    const bool abd = e->busy && depth >= BUSY_DEPTH;
    int64_t okey[SOW_MAX_PITS + 1];
    int nexti = 0;
    uint64_t nextk = 0;
    /* The table move first, made alone (oware, awari): the other moves are
     * made only if it does not cut off (most cut nodes cut on it).  The
     * order and the tree are the same as with all moves made first. */
    struct sow_child tch;
    /* The history the order would have read before the table move's
     * subtree changed it (its moves are holes: slots below 8). */
    int32_t hsnap[8];
    _Static_assert(PICK_SLOTS >= 8, "oware and awari moves (<= 8 holes) have slots 0..7");
    const int P = ow6 ? 6 : e->fx.pits;
    const bool lazy = ttm != SOW_MOVE_NONE && gen_ow && efast_make_tt_p(&e->fx, p, ttm, &tch, P);
    if (lazy) {
        pick_hist_snap(&t->pk, p, P, hsnap);
        if (kids_probe) {
            nextk = tt_key_nw_(NW, &tch.pos);
            tte_prefetch_(e->tt, nextk);
        }
    } else {
        if (ow6)
            efast_gen_oware_p(&e->fx, p, ml, 6);
        else if (gen_ow)
            efast_gen_oware(&e->fx, p, ml);
        else
            rs->generate(rs, p, ml, t->cache, NULL);
        if (ml->n == 0) {
            *proven = true;
            return 100 * (ml->settle[p->side] - ml->settle[!p->side]);
        }
        int tti = -1;
        uint64_t ttk = 0;
        if (kids_probe && ttm != SOW_MOVE_NONE && (tti = rules_find_move(ml, ttm)) >= 0) {
            ttk = tt_key_nw_(NW, &ml->c[tti].pos);
            tte_prefetch_(e->tt, ttk);
        }
        nexti = pick_first(okey, gen_ow ? pick_keys_ow(&t->pk, ml, p, P, ply, ttm, okey, NULL)
                                        : pick_keys(&t->pk, ml, p, P, ply, ttm, okey));
        if (nexti == tti) {
            nextk = ttk;
        } else if (kids_probe) {
            nextk = tt_key_nw_(NW, &ml->c[nexti].pos);
            tte_prefetch_(e->tt, nextk);
        }
    }
    int best = -ENGINE_INF - 1, a0 = alpha;
    sow_move bestm = SOW_MOVE_NONE;
    bool allproven = true, bestproven = false;
#define SEARCH (ow6 ? search_ow6 : search_any)
    for (int k = 0;; k++) {
        const struct sow_child *ch;
        uint64_t chk;
        if (lazy && k == 0) {
            ch = &tch;
            chk = nextk;
        } else {
            if (lazy && k == 1) {
                /* The table move did not cut off: now the others, in the
                 * same order (its key is the highest: picked first). */
                if (ow6)
                    efast_gen_oware_p(&e->fx, p, ml, 6);
                else
                    efast_gen_oware(&e->fx, p, ml);
                pick_first(okey, pick_keys_ow(&t->pk, ml, p, P, ply, ttm, okey, hsnap));
                if (kids_probe && ml->n > 1) {
                    nexti = pick_next(okey, ml->n, 1);
                    nextk = tt_key_nw_(NW, &ml->c[nexti].pos);
                    tte_prefetch_(e->tt, nextk);
                }
            }
            if (k >= ml->n)
                break;
            /* Children that do not probe need no look-ahead: the next
             * move is picked only if this one does not cut off. */
            if (!kids_probe && k > 0)
                nexti = pick_next(okey, ml->n, k);
            ch = &ml->c[nexti];
            chk = nextk;
            /* ABDADA: another thread is in this child: search it last
             * (once; a demoted key is never demoted again). */
            if (abd && k > 0 && k + 1 < ml->n && okey[k] > -BUSY_DEMOTE / 2 &&
                busy_has(e, chk)) {
                okey[k] -= BUSY_DEMOTE;
                t->deferred++;
                nexti = pick_next(okey, ml->n, k);
                ch = &ml->c[nexti];
                chk = tt_key_nw_(NW, &ch->pos);
            }
            if (kids_probe && k + 1 < ml->n) {
                nexti = pick_next(okey, ml->n, k + 1);
                nextk = tt_key_nw_(NW, &ml->c[nexti].pos);
                tte_prefetch_(e->tt, nextk);
            }
        }
        /* (oware and awari: only the mover captures) */
        const int cap_own = ch->captured[side], cap_opp = ow6 ? 0 : ch->captured[!side];
        int d = 100 * (cap_own - cap_opp);
        const int cn = n - cap_own - cap_opp;
        bool cp;
        int sc;
        bump(&t->nodes);
        if (leaves) {
            /* one search whatever the window: PVS's re-search would
             * return the same score */
            sc = d - leaf(t, &ch->pos, cn, ply + 1, &cp, shape);
        } else if (k == 0) {
            sc = d - SEARCH(t, &ch->pos, cn, chk, d - beta, d - alpha, depth - 1, ply + 1, &cp);
        } else {
            if (abd)
                busy_set(e, chk);
            /* PVS: a null window first, the full one only if it fails high */
            sc = d - SEARCH(t, &ch->pos, cn, chk, d - alpha - 1, d - alpha, depth - 1, ply + 1, &cp);
            if (!t->abort && sc > alpha && sc < beta)
                sc = d - SEARCH(t, &ch->pos, cn, chk, d - beta, d - alpha, depth - 1, ply + 1, &cp);
            if (abd)
                busy_clear(e, chk);
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
            /* short copies (none below the leaves' parents): no libc call */
            for (int j = ply + 1; j < t->pvlen[ply + 1]; j++)
                t->pv[ply][j] = t->pv[ply + 1][j];
            t->pvlen[ply] = t->pvlen[ply + 1] > ply + 1 ? t->pvlen[ply + 1] : ply + 1;
            if (sc >= beta) {
                if (d <= 0) {
                    pick_cutoff(&t->pk, p, P, ply, depth, ch->move);
                    for (int j = 0; j < k; j++) {
                        const struct sow_child *c2 = &ml->c[pick_index(okey, j)];
                        if (c2->captured[side] <= c2->captured[!side])
                            pick_penalty(&t->pk, p, P, depth, c2->move);
                    }
                }
                break;
            }
        }
    }
#undef SEARCH
    int bound = best >= beta ? TTE_BOUND_LOWER : best > a0 ? TTE_BOUND_EXACT : TTE_BOUND_UPPER;
    /* A cutoff rests on the cutting move alone; otherwise on every move. */
    bool pr = bound == TTE_BOUND_LOWER ? bestproven : allproven;
    *proven = pr;
    if (depth > TT_MIN_DEPTH || pr)
        tte_store_(e->tt, key ? key : tt_key_nw_(NW, p), best, bound, pr, bestm, depth);
    return best;
}

static int search_any(struct ethr *t, const sow_position *p, int n, uint64_t key, int alpha,
                      int beta, int depth, int ply, bool *proven)
{
    return search_t(t, p, n, key, alpha, beta, depth, ply, proven, SHAPE_ANY);
}

static int search_ow6(struct ethr *t, const sow_position *p, int n, uint64_t key, int alpha,
                      int beta, int depth, int ply, bool *proven)
{
    /* The leaves' parents, the most common inner nodes, compiled with
     * their depth a constant (no table, children all leaves). */
    if (depth == 1)
        return search_t(t, p, n, key, alpha, beta, 1, ply, proven, SHAPE_OW6);
    return search_t(t, p, n, key, alpha, beta, depth, ply, proven, SHAPE_OW6);
}

/* One iteration at the root with window (alpha, beta). */
static int root_search(struct ethr *t, int alpha, int beta, int depth, bool *proven)
{
    struct engine *e = t->e;
    return (shape_ow6(&e->fx) ? search_ow6 : search_any)(
        t, &t->root, seeds_on_board(e->rs, &t->root), tt_key(e->rs, &t->root), alpha, beta,
        depth, 0, proven);
}

/* The info of thread t's iteration at depth (score, bound lb: 0 exact,
 * -1 upper, +1 lower), with the counters of all threads now. */
static void make_info(struct ethr *t, int depth, int score, bool proven, int lb,
                      struct engine_info *cur)
{
    memset(cur, 0, sizeof *cur);
    cur->depth = depth;
    cur->seldepth = t->seldepth;
    cur->score = score;
    cur->proven = proven && lb == 0;
    cur->bound_lower = lb > 0;
    cur->bound_upper = lb < 0;
    cur->pv_len = t->pvlen[0];
    memcpy(cur->pv, t->pv[0], (size_t)cur->pv_len * sizeof(sow_move));
}

/* Hand an info line to the caller (main thread only): counters now. */
static void emit(struct engine *e, struct engine_info *cur)
{
    uint64_t nodes = 0, hits = 0;
    for (int i = 0; i < e->nthreads; i++) {
        nodes += __atomic_load_n(&e->th[i]->nodes, __ATOMIC_RELAXED);
        hits += __atomic_load_n(&e->th[i]->tb_hits, __ATOMIC_RELAXED);
    }
    cur->nodes = nodes;
    cur->tb_hits = hits;
    cur->seconds = util_now() - e->t0;
    cur->hashfull = tte_hashfull(e->tt);
    if (!cur->bound_lower && !cur->bound_upper) {
        e->last = *cur;
        e->have_last = true;
    }
    if (e->info_cb)
        e->info_cb(e->info_arg, cur);
}

static void report(struct engine *e, struct ethr *t, int depth, int score, bool proven, int lb)
{
    struct engine_info cur;
    make_info(t, depth, score, proven, lb, &cur);
    emit(e, &cur);
}

/* Lazy SMP bookkeeping.  Every thread publishes each iteration it
 * completes; the deepest one is e->done (depth e->done_depth).  A thread
 * whose current iteration is not deeper than that gives it up
 * (check_abort: "superseded") and goes on deeper, and the main thread then
 * reports the published result as its own: so a helper that finishes a
 * depth first shortens the main thread's time to that depth.  With one
 * thread nothing is ever superseded (reproducible node counts). */
static void publish(struct engine *e, struct ethr *t, int depth, int score, bool proven)
{
    if (e->nthreads == 1) {
        atomic_store_explicit(&e->done_depth, depth, memory_order_relaxed);
        return;
    }
    pthread_mutex_lock(&e->mu);
    if (depth > atomic_load_explicit(&e->done_depth, memory_order_relaxed)) {
        make_info(t, depth, score, proven, 0, &e->done);
        /* (a proven score supersedes the main thread too, which adopts
         * it and stops: it cannot change with depth) */
        atomic_store_explicit(&e->done_depth, depth, memory_order_release);
    }
    pthread_mutex_unlock(&e->mu);
}

/* The main thread takes the published result (deeper than its own). */
static int adopt(struct engine *e, int *score)
{
    pthread_mutex_lock(&e->mu);
    struct engine_info cur = e->done;
    pthread_mutex_unlock(&e->mu);
    *score = cur.score;
    emit(e, &cur);
    return cur.depth;
}

static void iterate(struct ethr *t)
{
    struct engine *e = t->e;
    int score = 0;
    for (int d = 1 + (t->tid & 1); d <= t->max_depth; d++) {
        /* Skip what is done; helpers never stay behind the main thread
         * but search its depth with their own order (killers, history),
         * the first to finish a depth superseding the others.  Measured
         * in lockstep (docs/engine.md) against helpers kept one or two
         * plies ahead: 1.85x against 1.57x on oware at depth 16 with 2
         * threads, 3.34x against 2.28x with 4. */
        int done = atomic_load_explicit(&e->done_depth, memory_order_acquire);
        if (d <= done)
            d = done + 1;
        if (t->tid > 0) {
            int md = atomic_load_explicit(&e->main_depth, memory_order_relaxed);
            if (d < md)
                d = md;
        } else {
            atomic_store_explicit(&e->main_depth, d, memory_order_relaxed);
        }
        if (d > t->max_depth)
            break;
        t->cur_depth = d;
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
                    break;
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
        } else {
            for (;;) {
                t->seldepth = 0;
                s = root_search(t, alpha, beta, d, &proven);
                if (t->abort)
                    break;
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
        }
        if (t->abort) {
            if (!t->superseded)
                return;
            /* Another thread completed this depth (or a deeper one). */
            t->abort = t->superseded = false;
            if (t->tid == 0) {
                d = adopt(e, &score);
                if (e->last.proven)
                    break;
            } else {
                d = atomic_load_explicit(&e->done_depth, memory_order_acquire);
            }
            continue;
        }
        score = s;
        publish(e, t, d, s, proven);
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
    struct ethr *t = arg;
    if (t->e->o.lockstep)
        ls_wait(t->e, t->tid);
    iterate(t);
    if (t->e->o.lockstep)
        ls_exit(t->e, t->tid);
    return NULL;
}

void engine_search(struct engine *e, const sow_position *p, const sow_position *hist, int nhist,
                   const struct engine_limits *lim, struct engine_result *r)
{
    const struct ruleset *rs = e->rs;
    memset(r, 0, sizeof *r);
    e->t0 = util_now();
    /* (check_abort reads the clock in the main thread: this one) */
    e->clock = lim->cpu_clock ? util_cpu_now : util_now;
    e->deadline = lim->seconds > 0 ? e->clock() + lim->seconds : 0;
    e->node_limit = lim->nodes;
    e->have_last = false;
    memset(&e->last, 0, sizeof e->last);
    atomic_store(&e->stop, 0);
    atomic_store(&e->done_depth, 0);
    atomic_store(&e->main_depth, 0);
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
    /* The game history (for repetitions): only the stretch at p's level
     * where the movers alternate (as they do in a game; repeated() relies
     * on it). */
    int np = seeds_on_board(rs, p);
    int from = nhist;
    while (from > 0 && seeds_on_board(rs, &hist[from - 1]) == np &&
           hist[from - 1].side != (from < nhist ? hist[from].side : p->side))
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
    iterate(e->th[0]);
    /* The main thread is done (or stopped): the helpers stop too. */
    atomic_store(&e->stop, 1);
    r->main_nodes = e->th[0]->nodes;
    if (e->o.lockstep)
        ls_exit(e, 0);
    for (int i = 1; i <= started; i++)
        pthread_join(e->th[i]->th, NULL);
    r->deferred = 0;
    for (int i = 0; i < e->nthreads; i++)
        r->deferred += e->th[i]->deferred;
    /* A helper may have completed a deeper iteration at the very end. */
    if (atomic_load(&e->done_depth) > (e->have_last ? e->last.depth : 0) && e->done.pv_len) {
        int sc;
        adopt(e, &sc);
    }

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
        if (tte_probe(e->tt, tt_key_(rs, p), &te) && rules_find_move(&ml, te.move) >= 0)
            best = te.move;
        r->info.pv_len = 1;
        r->info.pv[0] = best;
    }
    r->best = best;
}
