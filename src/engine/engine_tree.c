/* The engine's tree search (engine.c): a node's head (stop checks,
 * repetitions, settlements, table and solution probes), the ABDADA marks,
 * the leaves, and the PVS search itself, with its twin specialised for
 * oware 2x6 (search_ow6); eng_root_search is one iteration at the root.
 * Part of the engine: engine_internal.h maps its files. */
#include "engine_internal.h"

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

/* A known value V (seeds) reached in the level, as an evaluation: a
 * centi-seed nearer zero than the proven V, so that of two lines worth V
 * the side ahead prefers the one that reaches the exit (proven) and the
 * side behind the one that does not, as mate distances do in chess. */
static inline int known_inlevel(int v)
{
    return 100 * v - (v > 0) + (v < 0);
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
    /* V(p) is the exact value of an exit into p.  After a move that stays
     * in the level (below a root the tables know, or jerin's unindexed
     * opening) the move's value is clamp(cyc(parent), -hi, -lo)
     * (docs/rules.md), not -V(p), and the game's repetitions may settle it
     * otherwise; nor do equal values tell which move makes progress toward
     * the exit.  So in the level V is only the evaluation at the horizon
     * (known_inlevel), and inner nodes there are searched as any other. */
    if (ply > 0 && (n <= e->tbmax || e->o.solution)) {
        const bool exits = t->lvl[pi - 1] != n; /* p entered by an exit */
        int v;
        if ((exits || is_leaf) &&
            ((n <= e->tbmax && tb_probe(e->set, p, &v)) ||
             (e->o.solution && know_probe(e->o.solution, p, &v)))) { /* engine_know.h */
            bump(&t->tb_hits);
            *proven = exits;
            *score = exits ? 100 * v : known_inlevel(v);
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

/* The table's entry at an inner node: its move (*ttm) for the order, and
 * the node's score where the entry decides it (true: *score and *proven
 * set).  Leaves do not probe: the entry would rarely beat the evaluation
 * and the probe is a cache miss (most nodes are leaves). */
static inline __attribute__((always_inline)) bool node_probe(struct ethr *t, uint64_t key,
                                                             int alpha, int beta, int depth,
                                                             int ply, sow_move *ttm, int *score,
                                                             bool *proven)
{
    const bool pvnode = beta - alpha > 1;
    struct tte_info te;
    if (depth > TT_MIN_DEPTH && tte_probe_(t->e->tt, key, &te)) {
        *ttm = te.move;
        if (ply > 0 && (te.proven || (te.depth >= depth && !pvnode))) {
            if (te.bound == TTE_BOUND_EXACT || (te.bound == TTE_BOUND_LOWER && te.score >= beta) ||
                (te.bound == TTE_BOUND_UPPER && te.score <= alpha)) {
                *proven = te.proven;
                *score = te.score;
                return true;
            }
        }
    }
    return false;
}

/* All of p's moves into ml, by the shape's generator. */
static inline __attribute__((always_inline)) void gen_moves(struct ethr *t, const sow_position *p,
                                                            struct sow_movelist *ml,
                                                            const int shape)
{
    struct engine *e = t->e;
    if (shape == SHAPE_OW6)
        efast_gen_oware_p(&e->fx, p, ml, 6);
    else if (e->fx.gen_oware)
        efast_gen_oware(&e->fx, p, ml);
    else
        e->rs->generate(e->rs, p, ml, t->cache, NULL);
}

/* The order of ml's moves (okey) and the first one's index (returned).
 * Where children probe, the first child's key in *nextk, its bucket
 * prefetched (the table move's, searched first, before the ordering). */
static inline __attribute__((always_inline)) int
order_moves(struct ethr *t, const sow_position *p, const struct sow_movelist *ml, int64_t *okey,
            sow_move ttm, int ply, const int P, const int NW, const bool gen_ow,
            const bool kids_probe, uint64_t *nextk)
{
    struct engine *e = t->e;
    int tti = -1;
    uint64_t ttk = 0;
    if (kids_probe && ttm != SOW_MOVE_NONE && (tti = rules_find_move(ml, ttm)) >= 0) {
        ttk = tt_key_nw_(NW, &ml->c[tti].pos);
        tte_prefetch_(e->tt, ttk);
    }
    int first = pick_first(okey, gen_ow ? pick_keys_ow(&t->pk, ml, p, P, ply, ttm, okey, NULL)
                                        : pick_keys(&t->pk, ml, p, P, ply, ttm, okey));
    if (first == tti) {
        *nextk = ttk;
    } else if (kids_probe) {
        *nextk = tt_key_nw_(NW, &ml->c[first].pos);
        tte_prefetch_(e->tt, *nextk);
    }
    return first;
}

/* The table move (made alone, oware and awari) did not cut off: now the
 * others, in the same order (its key is the highest: picked first), by the
 * history before its subtree changed it (hsnap); the look-ahead as in
 * next_child. */
static inline __attribute__((always_inline)) void
lazy_rest(struct ethr *t, const sow_position *p, struct sow_movelist *ml, int64_t *okey,
          sow_move ttm, const int32_t *hsnap, int ply, const int P, const int NW,
          const bool kids_probe, const int shape, int *nexti, uint64_t *nextk)
{
    struct engine *e = t->e;
    if (shape == SHAPE_OW6)
        efast_gen_oware_p(&e->fx, p, ml, 6);
    else
        efast_gen_oware(&e->fx, p, ml);
    pick_first(okey, pick_keys_ow(&t->pk, ml, p, P, ply, ttm, okey, hsnap));
    if (kids_probe && ml->n > 1) {
        *nexti = pick_next(okey, ml->n, 1);
        *nextk = tt_key_nw_(NW, &ml->c[*nexti].pos);
        tte_prefetch_(e->tt, *nextk);
    }
}

/* The k-th child in order (k < ml->n), its key in *chk where children
 * probe (*nexti, *nextk: the look-ahead picked for it), then the next
 * look-ahead: the (k+1)-th picked, its bucket prefetched before this
 * child's subtree is searched. */
static inline __attribute__((always_inline)) const struct sow_child *
next_child(struct ethr *t, const struct sow_movelist *ml, int64_t *okey, int k, const int NW,
           const bool kids_probe, const bool abd, int *nexti, uint64_t *nextk, uint64_t *chk)
{
    struct engine *e = t->e;
    /* Children that do not probe need no look-ahead: the next
     * move is picked only if this one does not cut off. */
    if (!kids_probe && k > 0)
        *nexti = pick_next(okey, ml->n, k);
    const struct sow_child *ch = &ml->c[*nexti];
    *chk = *nextk;
    /* ABDADA: another thread is in this child: search it last
     * (once; a demoted key is never demoted again). */
    if (abd && k > 0 && k + 1 < ml->n && okey[k] > -BUSY_DEMOTE / 2 && busy_has(e, *chk)) {
        okey[k] -= BUSY_DEMOTE;
        t->deferred++;
        *nexti = pick_next(okey, ml->n, k);
        ch = &ml->c[*nexti];
        *chk = tt_key_nw_(NW, &ch->pos);
    }
    if (kids_probe && k + 1 < ml->n) {
        *nexti = pick_next(okey, ml->n, k + 1);
        *nextk = tt_key_nw_(NW, &ml->c[*nexti].pos);
        tte_prefetch_(e->tt, *nextk);
    }
    return ch;
}

/* Below the leaves (engine_opts.qdepth = qd plies): the node's evaluation
 * for its quiet moves ("stand pat": the mover may always decline to
 * capture), then the moves that net the mover seeds, largest gain first,
 * each searched the same way with one ply less, in the window (alpha,
 * beta) (fail-soft).  Never proven but where the game ends or a table
 * answers (node_head, leaf_score); no table entries. */
static int quiesce(struct ethr *t, const sow_position *p, int n, int alpha, int beta, int ply,
                   int qd, bool *proven, const int shape)
{
    struct engine *e = t->e;
    const bool ow6 = shape == SHAPE_OW6;
    int sc;
    if (node_head(t, p, n, ply, &sc, proven, ow6 ? 2 : e->fx.nw, qd == 0))
        return sc;
    const int stand = leaf_score(t, p, n, ply, proven, shape);
    if (*proven || qd == 0 || stand >= beta || ply + 1 >= ENGINE_MAX_PLY)
        return stand;
    struct sow_movelist *ml = &t->ml[ply];
    gen_moves(t, p, ml, shape);
    const int side = p->side;
    int gain[SOW_MAX_PITS + 1], best = stand;
    for (int k = 0; k < ml->n; k++) /* (oware and awari: only the mover captures) */
        gain[k] = ml->c[k].captured[side] - (ow6 ? 0 : ml->c[k].captured[!side]);
    if (best > alpha)
        alpha = best;
    for (;;) {
        int k = -1;
        for (int j = 0; j < ml->n; j++)
            if (gain[j] > 0 && (k < 0 || gain[j] > gain[k]))
                k = j;
        if (k < 0)
            break;
        const struct sow_child *ch = &ml->c[k];
        const int d = 100 * gain[k];
        gain[k] = 0;
        bool cp;
        bump(&t->nodes);
        sc = d - quiesce(t, &ch->pos, n - ch->captured[0] - ch->captured[1], d - beta, d - alpha,
                         ply + 1, qd - 1, &cp, shape);
        if (t->abort)
            break;
        if (sc > best) {
            best = sc;
            if (sc > alpha && (alpha = sc) >= beta)
                break;
        }
    }
    *proven = false;
    return t->abort ? 0 : best;
}

#define SEARCH (shape == SHAPE_OW6 ? search_ow6 : search_any)

/* The k-th child's score for the mover (d: what the move nets, cn: the
 * child's seeds), *cp: whether it is proven. */
static inline __attribute__((always_inline)) int
search_child(struct ethr *t, const struct sow_child *ch, uint64_t chk, int cn, int d, int alpha,
             int beta, int depth, int ply, int k, const bool leaves, const bool abd, bool *cp,
             const int shape)
{
    struct engine *e = t->e;
    int sc;
    if (leaves && e->o.qdepth > 0) {
        /* the capture search, in the full window (its score depends on it) */
        sc = d - quiesce(t, &ch->pos, cn, d - beta, d - alpha, ply + 1, e->o.qdepth, cp, shape);
    } else if (leaves) {
        /* one search whatever the window: PVS's re-search would
         * return the same score */
        sc = d - leaf(t, &ch->pos, cn, ply + 1, cp, shape);
    } else if (k == 0) {
        sc = d - SEARCH(t, &ch->pos, cn, chk, d - beta, d - alpha, depth - 1, ply + 1, cp);
    } else {
        if (abd)
            busy_set(e, chk);
        /* late-move reduction: a quiet late move a ply or two shallower,
         * the null window; searched in full only if it fails high */
        int r = e->lmr && d <= 0 && k >= 3 && depth >= 3 ? 1 + (k >= 5 && depth >= 6) : 0;
        sc = r ? d - SEARCH(t, &ch->pos, cn, chk, d - alpha - 1, d - alpha, depth - 1 - r,
                            ply + 1, cp)
               : alpha + 1;
        /* PVS: a null window first, the full one only if it fails high */
        if (!t->abort && sc > alpha)
            sc = d - SEARCH(t, &ch->pos, cn, chk, d - alpha - 1, d - alpha, depth - 1, ply + 1,
                            cp);
        if (!t->abort && sc > alpha && sc < beta)
            sc = d - SEARCH(t, &ch->pos, cn, chk, d - beta, d - alpha, depth - 1, ply + 1, cp);
        if (abd)
            busy_clear(e, chk);
    }
    return sc;
}

#undef SEARCH

/* The PV at ply: m, then the child's. */
static inline __attribute__((always_inline)) void pv_update(struct ethr *t, int ply, sow_move m)
{
    t->pv[ply][ply] = m;
    /* short copies (none below the leaves' parents): no libc call */
    for (int j = ply + 1; j < t->pvlen[ply + 1]; j++)
        t->pv[ply][j] = t->pv[ply + 1][j];
    t->pvlen[ply] = t->pvlen[ply + 1] > ply + 1 ? t->pvlen[ply + 1] : ply + 1;
}

/* A cutoff by m, the k-th move, that captures nothing more than the
 * other side: the history and killers reward it, and penalise the
 * earlier moves that captured no more either. */
static inline __attribute__((always_inline)) void
cut_history(struct ethr *t, const sow_position *p, const struct sow_movelist *ml,
            const int64_t *okey, int k, const int P, int ply, int depth, sow_move m)
{
    const int side = p->side;
    pick_cutoff(&t->pk, p, P, ply, depth, m);
    for (int j = 0; j < k; j++) {
        const struct sow_child *c2 = &ml->c[pick_index(okey, j)];
        if (c2->captured[side] <= c2->captured[!side])
            pick_penalty(&t->pk, p, P, depth, c2->move);
    }
}

/* p has n seeds on the board (the parent's minus the move's captures).
 * One body, compiled once per shape (search_any, search_ow6); its parts
 * are always-inlined helpers (the same code as one piece). */
static inline __attribute__((always_inline)) int search_t(struct ethr *t, const sow_position *p,
                                                          int n, uint64_t key, int alpha,
                                                          int beta, int depth, int ply,
                                                          bool *proven, const int shape)
{
    struct engine *e = t->e;
    const bool ow6 = shape == SHAPE_OW6;
    const int NW = ow6 ? 2 : e->fx.nw;
    const bool gen_ow = ow6 || e->fx.gen_oware;
    sow_move ttm = SOW_MOVE_NONE;
    int sc;
    if (node_head(t, p, n, ply, &sc, proven, NW, false))
        return sc;
    if (node_probe(t, key, alpha, beta, depth, ply, &ttm, &sc, proven))
        return sc;
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
        gen_moves(t, p, ml, shape);
        if (ml->n == 0) {
            *proven = true;
            return 100 * (ml->settle[p->side] - ml->settle[!p->side]);
        }
        nexti = order_moves(t, p, ml, okey, ttm, ply, P, NW, gen_ow, kids_probe, &nextk);
    }
    int best = -ENGINE_INF - 1, a0 = alpha;
    sow_move bestm = SOW_MOVE_NONE;
    bool allproven = true, bestproven = false;
    /* At a root whose moves the tables sort (engine_root.c), only those
     * keeping its value are searched; ks counts the moves searched, which
     * PVS and the reductions go by.  The root's table entry then holds the
     * best of them: harmless, since below the root its position is only
     * ever met as a repetition, settled before any probe. */
    const bool filtered = ply == 0 && e->root_filter;
    int ks = 0;
    for (int k = 0;; k++) {
        const struct sow_child *ch;
        uint64_t chk;
        if (lazy && k == 0) {
            ch = &tch;
            chk = nextk;
        } else {
            if (lazy && k == 1)
                lazy_rest(t, p, ml, okey, ttm, hsnap, ply, P, NW, kids_probe, shape, &nexti,
                          &nextk);
            if (k >= ml->n)
                break;
            ch = next_child(t, ml, okey, k, NW, kids_probe, abd, &nexti, &nextk, &chk);
        }
        if (filtered && !eng_root_allows(e, ch->move))
            continue;
        /* (oware and awari: only the mover captures) */
        const int cap_own = ch->captured[side], cap_opp = ow6 ? 0 : ch->captured[!side];
        int d = 100 * (cap_own - cap_opp);
        const int cn = n - cap_own - cap_opp;
        bool cp;
        bump(&t->nodes);
        sc = search_child(t, ch, chk, cn, d, alpha, beta, depth, ply, ks++, leaves, abd, &cp,
                          shape);
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
            pv_update(t, ply, ch->move);
            if (sc >= beta) {
                if (d <= 0)
                    cut_history(t, p, ml, okey, k, P, ply, depth, ch->move);
                break;
            }
        }
    }
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
int eng_root_search(struct ethr *t, int alpha, int beta, int depth, bool *proven)
{
    struct engine *e = t->e;
    return (shape_ow6(&e->fx) ? search_ow6 : search_any)(
        t, &t->root, seeds_on_board(e->rs, &t->root), tt_key(e->rs, &t->root), alpha, beta,
        depth, 0, proven);
}
