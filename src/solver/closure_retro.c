/* The closure's values (closure.c, step 3): level by level from the fewest
 * seeds up, each node's moves generated again, then the retrograde game of
 * retro/retro.h over the level's copies (p,L), (p,H), played with a bucket
 * queue (threaded in memory from 2^16 positions), nodes numbered by their
 * place in the sorted keys.  Part of the closure solver: closure_internal.h
 * maps its files. */
#include "closure_internal.h"

/* ---- values ---- */

/* The cycle value of the normalised node (mover = side A). */
static inline int cycle_value(const struct clos *c, const sow_position *p)
{
    int s0 = 0, s1 = 0;
    for (int j = 0; j < c->pits; j++) {
        s0 += p->board.h[j];
        s1 += p->board.h[j + c->pits];
    }
    return rules_cycle_net(c->rs, s0, s1);
}

static inline int8_t clamp8(int x, int lo, int hi)
{
    return (int8_t)(x < lo ? lo : x > hi ? hi : x);
}

/* Generate node i's moves again: be, in-level children (as mode says; be and
 * cnt are left alone by LM_FILL, which looks at in-level children only). */
static inline void level_moves(struct clos *c, const struct clos_env *env, int m, uint64_t s0,
                               uint64_t i, int tid, int tbmax, struct sow_movelist *ml,
                               struct level_work *w, bool *missing, enum lm_mode mode)
{
    const struct ruleset *rs = c->rs;
    const uint64_t li = i - s0;
    sow_position p;
    clos_unpack(rs, c->K, &c->key[i * c->K], &p);
    rs->generate(rs, &p, ml, env->cache[tid], NULL);
    uint32_t *fw = mode == LM_FWD ? &w->fwd[li * (uint64_t)c->slots] : NULL;
    int b, deg = 0;
    if (ml->n > c->slots) { /* more moves than slots: cannot happen with the rule sets */
        *missing = true;
        ml->n = 0;
        b = 0;
    } else {
        b = retro_be_start(ml);
        /* keys and hashes first, cells prefetched, then the look-ups */
        uint64_t kw[SOW_MAX_PITS + 1][MAX_KEY_WORDS], kh[SOW_MAX_PITS + 1];
        int tvs[SOW_MAX_PITS + 1];
        bool tbx[SOW_MAX_PITS + 1];
        for (int k = 0; k < ml->n; k++) {
            const struct sow_child *ch = &ml->c[k];
            int cap = retro_taken(ch);
            if (cap && mode == LM_FILL)
                continue;
            tbx[k] = cap && tb_exit(env, tbmax, ch, m - cap, &tvs[k]);
            if (tbx[k])
                continue;
            clos_pack(rs, c->K, &ch->pos, kw[k]);
            if (c->set) {
                kh[k] = clos_hash(kw[k], c->K);
                set_prefetch(c, kh[k]);
            }
        }
        /* on disk the look-ups are binary searches in sorted keys (the
         * lower levels' files, the level's own keys): all of this node's at
         * once, their probes interleaved so that the cache misses overlap */
        int64_t qs[SOW_MAX_PITS + 1];
        if (c->dk || !c->set) {
            const uint64_t *ks[SOW_MAX_PITS + 1];
            uint64_t ns[SOW_MAX_PITS + 1];
            int at[SOW_MAX_PITS + 1], nq = 0;
            for (int k = 0; k < ml->n; k++) {
                int cap = retro_taken(&ml->c[k]);
                qs[k] = -1;
                if ((cap && (mode == LM_FILL || tbx[k] || !c->dk)) || (!cap && c->set))
                    continue;
                ks[nq] = cap ? dk_keys(c, m - cap, &ns[nq]) : c->key;
                if (!cap)
                    ns[nq] = c->n;
                if (!ks[nq])
                    continue;
                at[nq++] = k;
            }
            uint64_t qw[SOW_MAX_PITS + 1][MAX_KEY_WORDS];
            int64_t qo[SOW_MAX_PITS + 1];
            for (int j = 0; j < nq; j++)
                memcpy(qw[j], kw[at[j]], sizeof qw[j]);
            clos_key_find_rows(ks, ns, (const uint64_t(*)[MAX_KEY_WORDS])qw, nq, c->K, qo);
            for (int j = 0; j < nq; j++)
                qs[at[j]] = qo[j];
        }
        for (int k = 0; k < ml->n; k++) {
            const struct sow_child *ch = &ml->c[k];
            int cap = retro_taken(ch);
            if (cap && mode == LM_FILL)
                continue;
            if (cap) {
                int d = retro_gain(ch), val;
                if (tbx[k]) {
                    val = d - tvs[k];
                } else if (c->dk) { /* the lower levels are in files */
                    int64_t q = qs[k];
                    if (q < 0) {
                        *missing = true;
                        continue;
                    }
                    val = d - dk_value(c, m - cap, q);
                } else {
                    int64_t q = set_find_h(c, kw[k], kh[k]);
                    if (q < 0) {
                        *missing = true;
                        continue;
                    }
                    val = d - c->v[q];
                }
                if (val > b)
                    b = val;
                continue;
            }
            /* no set: a level on disk, solved (dk_up), its keys sorted */
            int64_t q = c->set ? set_find_h(c, kw[k], kh[k]) : qs[k];
            if (q < 0 || (uint64_t)q < s0 || (uint64_t)q - s0 >= w->nl) {
                *missing = true;
                continue;
            }
            uint32_t lq = (uint32_t)((uint64_t)q - s0);
            if (mode == LM_FWD)
                fw[deg] = lq;
            else if (mode == LM_COUNT && w->roff)
                __atomic_fetch_add(&w->roff[lq + 1], 1, __ATOMIC_RELAXED);
            else if (mode == LM_FILL) /* (no roff: the predecessors by unmoves) */
                w->rev[__atomic_fetch_add(&w->roff[lq], 1, __ATOMIC_RELAXED)] = (uint32_t)li;
            deg++;
        }
    }
    if (mode == LM_FILL)
        return;
    if (mode == LM_FWD && deg < c->slots)
        fw[deg] = UINT32_MAX;
    if (b != RETRO_NONE_EXIT)
        b = clamp8(b, -m, m); /* clamping commutes with max/min */
    w->be[li] = (int8_t)b;
    w->cnt[li] = (uint8_t)deg;
}

/* The in-memory level pass (the lower levels and the level itself in the
 * set, LM_FWD) a group of LM_GROUP nodes at a time: every node's moves
 * generated and its children's set cells prefetched, then each look-up's
 * first cell read and the node it names (key, value) prefetched, then the
 * look-ups finished, node by node in order; the same be, cnt and forward
 * slots as level_moves, whose single node's few look-ups left most of each
 * cache miss waited for (the pass's samples sat on the cell's load). */
#define LM_GROUP 8
enum { LK_TB, LK_TBV, LK_EXIT, LK_IN };

struct lm_node {
    int n, b; /* moves (-1: more than slots), best exit so far */
    uint8_t kind[SOW_MAX_PITS + 1];
    int8_t d[SOW_MAX_PITS + 1]; /* an exit's gain (LK_TB: its value) */
    uint64_t kw[SOW_MAX_PITS + 1][MAX_KEY_WORDS], kh[SOW_MAX_PITS + 1], at[SOW_MAX_PITS + 1];
    const int8_t *tv[SOW_MAX_PITS + 1]; /* LK_TBV: the table's value byte */
};

static void lm_group(struct clos *c, const struct clos_env *env, int m, uint64_t s0, uint64_t i0,
                     int g, int tid, const struct tb_direct *td, struct sow_movelist *ml,
                     struct level_work *w, bool *missing, struct lm_node *nd)
{
    const struct ruleset *rs = c->rs;
    const int K = c->K;
    const uint64_t scap = c->scap;
    const uint64_t *set = c->set;
    for (int j = 0; j < g; j++) {
        struct lm_node *x = &nd[j];
        sow_position p;
        clos_unpack(rs, K, &c->key[(i0 + (uint64_t)j) * K], &p);
        rs->generate(rs, &p, ml, env->cache[tid], NULL);
        if (ml->n > c->slots) { /* more moves than slots: cannot happen with the rule sets */
            x->n = -1;
            continue;
        }
        x->n = ml->n;
        x->b = retro_be_start(ml);
        for (int k = 0; k < ml->n; k++) {
            const struct sow_child *ch = &ml->c[k];
            int cap = retro_taken(ch), tv;
            switch (tb_exit_at(env, td, ch, m - cap, &x->tv[k], &tv)) {
            case 1:
                __builtin_prefetch(x->tv[k]);
                x->kind[k] = LK_TBV;
                x->d[k] = (int8_t)retro_gain(ch);
                continue;
            case 2:
                x->kind[k] = LK_TB;
                x->d[k] = (int8_t)(retro_gain(ch) - tv);
                continue;
            }
            x->kind[k] = cap ? LK_EXIT : LK_IN;
            x->d[k] = (int8_t)retro_gain(ch);
            clos_pack(rs, K, &ch->pos, x->kw[k]);
            x->kh[k] = clos_hash(x->kw[k], K);
            __builtin_prefetch(&set[slot_of(x->kh[k], scap)]);
        }
    }
    /* the first cell of each look-up that is empty or has its fingerprint */
    for (int j = 0; j < g; j++) {
        struct lm_node *x = &nd[j];
        for (int k = 0; k < x->n; k++) {
            if (x->kind[k] == LK_TB || x->kind[k] == LK_TBV)
                continue;
            const uint32_t fp = (uint32_t)x->kh[k];
            uint64_t s = slot_of(x->kh[k], scap);
            for (;; s = s + 1 == scap ? 0 : s + 1) {
                uint64_t y = set[s];
                if (y == EMPTY_CELL)
                    break;
                if (CELL_FP(y) == fp) {
                    __builtin_prefetch(&c->key[(uint64_t)CELL_IDX(y) * K]);
                    if (x->kind[k] == LK_EXIT)
                        __builtin_prefetch(&c->v[CELL_IDX(y)]);
                    break;
                }
            }
            x->at[k] = s;
        }
    }
    for (int j = 0; j < g; j++) {
        struct lm_node *x = &nd[j];
        const uint64_t li = i0 + (uint64_t)j - s0;
        uint32_t *fw = &w->fwd[li * (uint64_t)c->slots];
        int b = x->n < 0 ? 0 : x->b, deg = 0;
        if (x->n < 0)
            *missing = true;
        for (int k = 0; k < x->n; k++) {
            if (x->kind[k] == LK_TB || x->kind[k] == LK_TBV) {
                int val = x->kind[k] == LK_TB ? x->d[k] : x->d[k] - *x->tv[k];
                if (val > b)
                    b = val;
                continue;
            }
            int64_t q = -1;
            const uint32_t fp = (uint32_t)x->kh[k];
            for (uint64_t s = x->at[k];; s = s + 1 == scap ? 0 : s + 1) {
                uint64_t y = set[s];
                if (y == EMPTY_CELL)
                    break;
                if (CELL_FP(y) == fp && same_key(&c->key[(uint64_t)CELL_IDX(y) * K], x->kw[k], K)) {
                    q = CELL_IDX(y);
                    break;
                }
            }
            if (x->kind[k] == LK_EXIT) {
                if (q < 0) {
                    *missing = true;
                    continue;
                }
                int val = x->d[k] - c->v[q];
                if (val > b)
                    b = val;
                continue;
            }
            if (q < 0 || (uint64_t)q < s0 || (uint64_t)q - s0 >= w->nl) {
                *missing = true;
                continue;
            }
            fw[deg++] = (uint32_t)((uint64_t)q - s0);
        }
        if (deg < c->slots)
            fw[deg] = UINT32_MAX;
        if (b != RETRO_NONE_EXIT)
            b = clamp8(b, -m, m);
        w->be[li] = (int8_t)b;
        w->cnt[li] = (uint8_t)deg;
    }
}

/* level_moves of nodes [s0, s0 + n) of level m, on env->threads threads
 * (one below 256 nodes), in chunks taken in turn.  A level of a billion
 * positions takes minutes here, so the calling thread (tid 0) says how far
 * it is (lm_pass names the pass) and watches for Ctrl-C between its chunks;
 * false: stopped, the pass left unfinished (the caller drops the level). */
static const char *const lm_pass[] = {"moves", "moves counted", "moves listed"};

/* What the threads of one clos_level_moves_all share. */
struct lm_share {
    uint64_t next, chunk; /* the next chunk's first node (level-local), its size */
    bool stop;            /* Ctrl-C seen by the calling thread */
    double t0, last;      /* the pass's start, its last line of progress */
};

/* Thread tid's part of clos_level_moves_all: chunks until none is left. */
static void lm_run(struct clos *c, const struct clos_env *env, int m, uint64_t s0, uint64_t n,
                   int tbmax, struct level_work *w, bool *missing, enum lm_mode mode, int tid,
                   struct lm_share *sh)
{
    struct sow_movelist ml;
    struct lm_node nd[LM_GROUP];
    const bool grouped = mode == LM_FWD && c->set && !c->dk;
    struct tb_direct td;
    if (grouped)
        tb_direct_init(&td, env, tbmax);
    bool miss = false;
    for (;;) {
        const uint64_t a = __atomic_fetch_add(&sh->next, sh->chunk, __ATOMIC_RELAXED);
        if (a >= n || __atomic_load_n(&sh->stop, __ATOMIC_RELAXED))
            break;
        const uint64_t b = a + sh->chunk < n ? a + sh->chunk : n;
        if (grouped)
            for (uint64_t i = s0 + a; i < s0 + b; i += LM_GROUP)
                lm_group(c, env, m, s0, i, s0 + b - i < LM_GROUP ? (int)(s0 + b - i) : LM_GROUP,
                         tid, &td, &ml, w, &miss, nd);
        else
            for (uint64_t i = s0 + a; i < s0 + b; i++)
                level_moves(c, env, m, s0, i, tid, tbmax, &ml, w, &miss, mode);
        if (tid != 0)
            continue;
        double dt = util_now() - sh->t0, rate = dt > 0 ? (double)b / dt : 0;
        clos_say(env, &sh->last, false,
                 "%s level %d: %s for %llu of %llu positions, %.2f M/s, ETA %.0f s",
                 c->dk ? "closure on disk," : "closure", m, lm_pass[mode], (unsigned long long)b,
                 (unsigned long long)n, rate / 1e6, rate > 0 ? (double)(n - b) / rate : 0.0);
        if (clos_stopped(env)) {
            __atomic_store_n(&sh->stop, true, __ATOMIC_RELAXED);
            break;
        }
    }
    if (miss)
        __atomic_store_n(missing, true, __ATOMIC_RELAXED);
}

bool clos_level_moves_all(struct clos *c, const struct clos_env *env, int m, uint64_t s0,
                          uint64_t n, int tbmax, struct level_work *w, bool *missing,
                          enum lm_mode mode)
{
    const int nt = env->threads;
    struct lm_share sh = {.chunk = n >= BIG_LINE ? 4096 : 256, .t0 = util_now()};
    sh.last = env->eager_lines ? 0 : sh.t0;
    if (nt > 1 && n >= 256) {
#pragma omp parallel num_threads(nt)
        lm_run(c, env, m, s0, n, tbmax, w, missing, mode, omp_get_thread_num(), &sh);
    } else {
        lm_run(c, env, m, s0, n, tbmax, w, missing, mode, 0, &sh);
    }
    return !sh.stop;
}

/* roff[q + 1] holding q's in-level predecessors counted: each list's start
 * (roff[q]) and end (roff[q + 1]). */
void clos_roff_sum(uint32_t *roff, uint64_t Nl)
{
    for (uint64_t p = 0; p < Nl; p++)
        roff[p + 1] += roff[p];
}

/* After rev was filled at the cursors roff[q]++ (which then hold where the
 * next list starts), roff back to the lists' starts. */
void clos_roff_back(uint32_t *roff, uint64_t Nl)
{
    for (uint64_t p = Nl; p > 0; p--)
        roff[p] = roff[p - 1];
    roff[0] = 0;
}

/* The in-level predecessors of copies batch[j0 .. j1) (level-local
 * indices, once per move, as reverse edges would list them: pbuf at
 * j * TB_UNMOVE_MAX, pcnt[j] of them), for a level on disk of a
 * single-sowing rule set: each node's unmoves (tables/tb_lean.h: every
 * position with a move that captures nothing and leads to it) looked up in
 * the level's sorted keys; one not found is not in the closure (the root
 * does not reach it), so it has no edge here.  KF_MAX look-ups at a time
 * run interleaved (clos_key_find_rows), across nodes.  Thread tid's buffers. */
struct um_looks {
    const uint64_t *ks[KF_MAX];
    uint64_t ns[KF_MAX], qw[KF_MAX][MAX_KEY_WORDS];
    int of[KF_MAX], nq; /* the copy each look-up is for; how many wait */
};

/* The waiting look-ups made, each found one appended to its copy's list. */
static void um_flush(const struct clos *c, struct level_work *w, struct um_looks *lk)
{
    int64_t r[KF_MAX];
    clos_key_find_rows(lk->ks, lk->ns, (const uint64_t(*)[MAX_KEY_WORDS])lk->qw, lk->nq, c->K, r);
    for (int i = 0; i < lk->nq; i++)
        if (r[i] >= 0)
            w->pbuf[(size_t)lk->of[i] * TB_UNMOVE_MAX + w->pcnt[lk->of[i]]++] = (uint32_t)r[i];
    lk->nq = 0;
}

static void um_chunk(const struct clos *c, struct level_work *w, int j0, int j1, int tid)
{
    const int K = c->K;
    struct tb_unmove *um = &w->um[(size_t)tid * TB_UNMOVE_MAX];
    struct um_looks lk;
    lk.nq = 0;
    for (int j = j0; j < j1; j++) {
        sow_position qp;
        clos_unpack(c->rs, K, &c->key[(uint64_t)((uint32_t)w->batch[j] >> 1) * K], &qp);
        const int k = tb_unmoves(c->rs, &qp, um, TB_UNMOVE_MAX);
        w->pcnt[j] = 0;
        for (int a = 0; a < k; a++) {
            /* an unmove keeps the board's seeds, so it packs in K words */
            if (!clos_pack(c->rs, K, &um[a].pos, lk.qw[lk.nq]))
                continue;
            lk.ks[lk.nq] = c->key;
            lk.ns[lk.nq] = w->nl;
            lk.of[lk.nq++] = j;
            if (lk.nq == KF_MAX)
                um_flush(c, w, &lk);
        }
    }
    if (lk.nq)
        um_flush(c, w, &lk);
}

/* um_chunk of batch[0 .. nb), split between w->nt threads (the look-ups
 * only read the keys; each copy's list is written by one thread). */
static void um_batch(const struct clos *c, struct level_work *w, int nb)
{
    if (w->nt > 1 && nb >= 64) {
#pragma omp parallel num_threads(w->nt)
        {
            int tid = omp_get_thread_num(), nt = omp_get_num_threads();
            um_chunk(c, w, nb * tid / nt, nb * (tid + 1) / nt, tid);
        }
    } else {
        um_chunk(c, w, 0, nb, 0);
    }
}

/* The stack refilled with copies waiting in w->pend (they were final while
 * the stack of w->scap entries was full): up to scap of them, from the word
 * *cur on, round the bitmap; returns how many. */
static int64_t pend_refill(struct level_work *w, uint64_t words, uint64_t *cur, uint64_t *npend)
{
    int64_t sp = 0;
    while (*npend && sp < w->scap) {
        uint64_t x = w->pend[*cur];
        while (x && sp < w->scap) {
            w->stack[sp++] = (int32_t)(*cur * 64 + (uint64_t)__builtin_ctzll(x));
            x &= x - 1;
            (*npend)--;
        }
        w->pend[*cur] = x;
        if (!x)
            *cur = *cur + 1 == words ? 0 : *cur + 1;
    }
    return sp;
}

/* The retrograde's start: every copy of nodes [s0, s0 + Nl) not final;
 * with links (w->next) each exit-valued copy in its bucket head[be + M]
 * (H only where no in-level move is left), else, for the scans, the nodes
 * with be = t counted in occurs[t + M]. */
static void retro_seed(struct clos *c, struct level_work *w, uint64_t s0, uint64_t Nl,
                       int32_t *head, uint64_t *occurs)
{
    int8_t *xl = c->lo + s0, *xh = c->hi + s0;
    const int8_t *be = w->be;
    int32_t *next = w->next;
    const bool scan = !next;
    for (int t = 0; t < 2 * SOW_MAX_SEEDS + 1; t++)
        head[t] = -1;
    for (uint64_t p = 0; p < Nl; p++) {
        int b = be[p];
        xl[p] = xh[p] = RETRO_UNDONE;
        if (b != RETRO_NONE_EXIT && scan) {
            occurs[b + SOW_MAX_SEEDS]++;
        } else if (b != RETRO_NONE_EXIT) {
            int32_t e = (int32_t)(2 * p);
            next[e] = head[b + SOW_MAX_SEEDS];
            head[b + SOW_MAX_SEEDS] = e;
            if (w->cnt[p] == 0) {
                next[e + 1] = head[-b + SOW_MAX_SEEDS];
                head[-b + SOW_MAX_SEEDS] = e + 1;
            }
        }
    }
}

/* The retrograde's look at the clock: a line of progress (threshold t, fin
 * copies final) at most once a second; false: stopped by Ctrl-C. */
static bool retro_look(const struct clos *c, const struct clos_env *env, int m, int t,
                       uint64_t fin, uint64_t Nl, double t0, double *last)
{
    clos_say(env, last, false, "%s level %d: retrograde at %d (from %d down to %d), %llu "
             "of %llu bounds final, %.0f s so far", c->dk ? "closure on disk," : "closure",
             m, t, m, -m, (unsigned long long)fin, (unsigned long long)(2 * Nl),
             util_now() - t0);
    return !clos_stopped(env);
}

/* The retrograde's end: lo and hi of nodes [s0, s0 + Nl) from their copies'
 * thresholds, a copy never final at its worst (-m for L, m for H). */
static void retro_clamp(struct clos *c, int m, uint64_t s0, uint64_t Nl, int nt)
{
    int8_t *xl = c->lo + s0, *xh = c->hi + s0;
#pragma omp parallel for schedule(static, 1 << 14) num_threads(nt) if (nt > 1 && Nl >= (1 << 16))
    for (uint64_t p = 0; p < Nl; p++) {
        xl[p] = (int8_t)(xl[p] == RETRO_UNDONE ? -m : clamp8(xl[p], -m, m));
        xh[p] = (int8_t)(xh[p] == RETRO_UNDONE ? m : clamp8(-xh[p], -m, m));
    }
}

/* The bucket-queue retrograde with reverse edges and bucket links, on
 * env->threads threads (clos_solve_level's fast case; same values: the
 * copies final at each t are the round's least fixpoint, docs/retro.h).
 * The stack is an append-only log of the level's final copies: each copy
 * becomes final once, so 2 Nl entries hold them all.  Round t: one thread
 * empties bucket t into the log, then waves: the threads split the log's
 * last wave [lo, hi) and append what its copies make final (claims by
 * compare-and-swap, counters by atomic decrement, an H copy whose counter
 * reaches 0 with a better exit for Y pushed onto its bucket's list by
 * compare-and-swap); the round ends with an empty wave. */
#define PAR_BUF 64
/* Levels under this many positions: one thread (barriers cost more). */
#define PAR_MIN ((uint64_t)1 << 16)
/* The reverse CSR of the in-level edges (roff, rev) from the forward slots,
 * on nt threads from PAR_MIN positions: the counts and the lists' places
 * by atomic adds, so that a list's order depends on the threads; the
 * retrograde's values do not (a round's copies final are its least
 * fixpoint, retro/retro.h), and one thread lists them in node order. */
static void reverse_edges(const struct clos *c, uint64_t Nl, struct level_work *w, int nt)
{
    const int slots = c->slots;
    const uint32_t *fwd = w->fwd;
    const uint8_t *cnt = w->cnt;
    uint32_t *roff = w->roff, *rev = w->rev;
    memset(roff, 0, sizeof *roff * (Nl + 1));
    if (nt > 1 && Nl >= PAR_MIN) {
#pragma omp parallel num_threads(nt)
        {
#pragma omp for schedule(static, 4096)
            for (uint64_t p = 0; p < Nl; p++)
                for (int k = 0; k < cnt[p]; k++)
                    __atomic_fetch_add(&roff[fwd[p * slots + k] + 1], 1, __ATOMIC_RELAXED);
#pragma omp single
            clos_roff_sum(roff, Nl);
#pragma omp for schedule(static, 4096)
            for (uint64_t p = 0; p < Nl; p++)
                for (int k = 0; k < cnt[p]; k++)
                    rev[__atomic_fetch_add(&roff[fwd[p * slots + k]], 1, __ATOMIC_RELAXED)] =
                        (uint32_t)p;
        }
    } else {
        for (uint64_t p = 0; p < Nl; p++)
            for (int k = 0; k < cnt[p]; k++)
                roff[fwd[p * slots + k] + 1]++;
        clos_roff_sum(roff, Nl);
        for (uint64_t p = 0; p < Nl; p++)
            for (int k = 0; k < cnt[p]; k++) {
                uint32_t q = fwd[p * slots + k];
                rev[roff[q]++] = (uint32_t)p;
            }
    }
    clos_roff_back(roff, Nl);
}

/* A thread's newly final copies, put into the shared log PAR_BUF at a time
 * (one atomic add for the lot, not one a copy). */
struct par_out {
    int32_t buf[PAR_BUF];
    int nb;
};

static inline void par_flush(struct par_out *o, int32_t *log, uint64_t *tail)
{
    if (!o->nb)
        return;
    uint64_t at = __atomic_fetch_add(tail, (uint64_t)o->nb, __ATOMIC_RELAXED);
    memcpy(&log[at], o->buf, sizeof *o->buf * (size_t)o->nb);
    o->nb = 0;
}

static inline void par_append(struct par_out *o, int32_t e, int32_t *log, uint64_t *tail)
{
    o->buf[o->nb++] = e;
    if (o->nb == PAR_BUF)
        par_flush(o, log, tail);
}

static bool solve_level_par(struct clos *c, const struct clos_env *env, int m, uint64_t s0,
                            uint64_t Nl, struct level_work *w)
{
    int8_t *xl = c->lo + s0, *xh = c->hi + s0;
    const int8_t *be = w->be;
    uint8_t *cnt = w->cnt;
    int32_t head[2 * SOW_MAX_SEEDS + 1];
    int32_t *next = w->next, *log = w->stack;
    const uint32_t *roff = w->roff, *rev = w->rev;
    uint64_t occurs[2 * SOW_MAX_SEEDS + 1] = {0};
    uint64_t tail = 0, lo = 0, hi = 0, waves = 0;
    bool stop = false;
    const double t0 = util_now();
    double last = env->eager_lines ? 0 : t0;

    retro_seed(c, w, s0, Nl, head, occurs);
#pragma omp parallel num_threads(env->threads)
    {
        struct par_out out = {.nb = 0};
        for (int t = m; t >= -m && !stop; t--) {
#pragma omp single
            {
                for (int32_t e = head[t + SOW_MAX_SEEDS]; e >= 0; e = next[e]) {
                    int8_t *x = (e & 1) ? &xh[(uint32_t)e >> 1] : &xl[(uint32_t)e >> 1];
                    if (*x == RETRO_UNDONE) {
                        *x = (int8_t)t;
                        log[tail++] = e;
                    }
                }
                lo = hi;
                hi = tail;
            } /* (a barrier) */
            while (lo < hi) {
#pragma omp for schedule(dynamic, 256)
                for (uint64_t i = lo; i < hi; i++) {
                    const int32_t e = log[i];
                    const uint32_t q = (uint32_t)e >> 1;
                    const uint32_t *pr = &rev[roff[q]], *pe = &rev[roff[q + 1]];
                    if (!(e & 1)) {
                        /* (q,L) final at t: H copies of its predecessors count down */
                        for (; pr < pe; pr++) {
                            uint32_t p = *pr;
                            if (__atomic_load_n(&xh[p], __ATOMIC_RELAXED) != RETRO_UNDONE ||
                                retro_dec(&cnt[p], true))
                                continue;
                            if (retro_h_final_at(be[p], t)) {
                                __atomic_store_n(&xh[p], (int8_t)t, __ATOMIC_RELAXED);
                                par_append(&out, (int32_t)(2 * p + 1), log, &tail);
                            } else {
                                int32_t *h = &head[-be[p] + SOW_MAX_SEEDS];
                                int32_t old = __atomic_load_n(h, __ATOMIC_RELAXED);
                                do
                                    next[2 * p + 1] = old;
                                while (!__atomic_compare_exchange_n(h, &old, (int32_t)(2 * p + 1), true,
                                                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED));
                            }
                        }
                    } else {
                        /* (q,H) final at t: L copies of its predecessors reach t */
                        for (; pr < pe; pr++)
                            if (retro_claim(&xl[*pr], (int8_t)t, true))
                                par_append(&out, (int32_t)(2 * *pr), log, &tail);
                    }
                }
                par_flush(&out, log, &tail);
#pragma omp barrier
#pragma omp single
                {
                    lo = hi;
                    hi = tail;
                    if (++waves % 64 == 0)
                        stop = !retro_look(c, env, m, t, tail, Nl, t0, &last);
                }
                if (stop)
                    break;
            }
            /* every thread past its last read of stop before one writes it */
#pragma omp barrier
#pragma omp single
            if (!stop)
                stop = !retro_look(c, env, m, t, tail, Nl, t0, &last);
        }
    }
    if (stop)
        return false;
    retro_clamp(c, m, s0, Nl, env->threads);
    return true;
}
#undef PAR_BUF

/* The bucket-queue retrograde of level m, nodes [s0, s0 + Nl), with its
 * reverse edges in w->roff, w->rev.  Each node has two copies, L (lo: the
 * mover's best so far) and H (hi); a copy is final once its value t is
 * known, and the thresholds t go from m down to -m.  The buckets of t are
 * either linked lists (w->next) or, with w->next NULL, a scan of the level
 * at each t that occurs: L at t where be = t, H at t where be = -t and no
 * in-level move is left; the scan finds the same copies as the lists (the
 * closure on disk, 8 bytes a position less), at 2m + 1 passes over be and
 * cnt at most.  A line of progress at most once a second (the threshold t
 * and the copies final so far); false: stopped by Ctrl-C, lo and hi left
 * unfinished (the caller drops the level). */
static bool solve_level_serial(struct clos *c, const struct clos_env *env, int m, uint64_t s0,
                               uint64_t Nl, struct level_work *w)
{
    int8_t *xl = c->lo + s0, *xh = c->hi + s0, *be = w->be;
    int32_t head[2 * SOW_MAX_SEEDS + 1];
    int32_t *next = w->next, *stack = w->stack;
    const bool scan = !next;
    /* a copy final while the stack is full waits in pend (um_preds) */
    const int64_t scap = w->scap;
    uint64_t npend = 0, cur = 0, words = (2 * Nl + 63) / 64;
    uint64_t fin = 0, steps = 0; /* copies final; stack pops since the last look at the clock */
    const double t0 = util_now();
    double last = env->eager_lines ? 0 : t0;
#define PUSH(e_)                                                                                  \
    do {                                                                                          \
        int32_t x_ = (e_);                                                                        \
        fin++;                                                                                    \
        if (sp < scap) {                                                                          \
            stack[sp++] = x_;                                                                     \
        } else {                                                                                  \
            w->pend[(uint32_t)x_ >> 6] |= 1ull << (x_ & 63);                                      \
            npend++;                                                                              \
        }                                                                                         \
    } while (0)
    uint64_t occurs[2 * SOW_MAX_SEEDS + 1] = {0}; /* nodes with be = t, for the scans */
    bool looked = false; /* (eager_lines) the first look at the clock made */

    retro_seed(c, w, s0, Nl, head, occurs);
    for (int t = m; t >= -m; t--) {
        int64_t sp = 0;
        if (!scan) {
            for (int32_t e = head[t + SOW_MAX_SEEDS]; e >= 0; e = next[e]) {
                uint32_t p = (uint32_t)e >> 1;
                int8_t *x = (e & 1) ? &xh[p] : &xl[p];
                if (*x == RETRO_UNDONE) {
                    *x = (int8_t)t;
                    PUSH(e);
                }
            }
        } else if (occurs[t + SOW_MAX_SEEDS] || occurs[-t + SOW_MAX_SEEDS]) {
            for (uint64_t p = 0; p < Nl; p++) {
                if (be[p] == RETRO_NONE_EXIT)
                    continue;
                if (be[p] == t && xl[p] == RETRO_UNDONE) {
                    xl[p] = (int8_t)t;
                    PUSH((int32_t)(2 * p));
                }
                if (be[p] == -t && w->cnt[p] == 0 && xh[p] == RETRO_UNDONE) {
                    xh[p] = (int8_t)t;
                    PUSH((int32_t)(2 * p + 1));
                }
            }
        }
        while (sp || (npend && (sp = pend_refill(w, words, &cur, &npend)))) {
            if (++steps >= (1u << 16) || (env->eager_lines && !looked)) {
                steps = 0;
                looked = true;
                if (!retro_look(c, env, m, t, fin, Nl, t0, &last))
                    return false;
            }
            /* one copy at a time with reverse edges; with unmoves a batch,
             * its look-ups made first (um_batch) */
            int nb = 1;
            int32_t one;
            const int32_t *eb = &one;
            if (w->rev) {
                one = stack[--sp];
            } else {
                nb = sp < UM_BATCH ? (int)sp : UM_BATCH;
                sp -= nb;
                memcpy(w->batch, &stack[sp], sizeof *stack * (size_t)nb);
                um_batch(c, w, nb);
                steps += (uint64_t)nb; /* a batch costs about nb pops' look-ups */
                eb = w->batch;
            }
            for (int j = 0; j < nb; j++) {
                int32_t e = eb[j];
                uint32_t q = (uint32_t)e >> 1;
                const uint32_t *pr, *pe;
                if (w->rev) {
                    pr = &w->rev[w->roff[q]];
                    pe = &w->rev[w->roff[q + 1]];
                } else {
                    pr = &w->pbuf[(size_t)j * TB_UNMOVE_MAX];
                    pe = pr + w->pcnt[j];
                }
                if (!(e & 1)) {
                    /* (q,L) final at t: H copies of its predecessors count down */
                    for (; pr < pe; pr++) {
                        uint32_t p = *pr;
                        if (xh[p] != RETRO_UNDONE || --w->cnt[p])
                            continue;
                        int val = retro_h_final_at(be[p], t) ? t : -be[p];
                        if (val == t) {
                            xh[p] = (int8_t)t;
                            PUSH((int32_t)(2 * p + 1));
                        } else if (!scan) {
                            next[2 * p + 1] = head[val + SOW_MAX_SEEDS];
                            head[val + SOW_MAX_SEEDS] = (int32_t)(2 * p + 1);
                        } /* else the scan at val finds it: be = -val, cnt 0 */
                    }
                } else {
                    /* (q,H) final at t: L copies of its predecessors reach t */
                    for (; pr < pe; pr++) {
                        uint32_t p = *pr;
                        if (xl[p] == RETRO_UNDONE) {
                            xl[p] = (int8_t)t;
                            PUSH((int32_t)(2 * p));
                        }
                    }
                }
            }
        }
    }
#undef PUSH
    retro_clamp(c, m, s0, Nl, env->threads);
    return true;
}

/* The threaded queue where it can run (reverse edges and bucket links in
 * memory, a log of 2 Nl entries, a level worth the barriers), else the
 * serial one; the same values either way. */
bool clos_solve_level(struct clos *c, const struct clos_env *env, int m, uint64_t s0, uint64_t Nl,
                      struct level_work *w)
{
    if (w->rev && w->next && env->threads > 1 && Nl >= (env->par_min ? env->par_min : PAR_MIN) &&
        w->scap >= (int64_t)(2 * Nl))
        return solve_level_par(c, env, m, s0, Nl, w);
    return solve_level_serial(c, env, m, s0, Nl, w);
}

/* V of nodes s0 .. s0+Nl-1, their bounds solved (clos_solve_level): the
 * repetition rule's value clamped into them.  keys: those nodes' keys (the
 * node array, or a block read back from a level's file on disk). */
void clos_level_values(struct clos *c, uint64_t s0, uint64_t Nl, const uint64_t *keys, int threads)
{
    /* each position alone: any split gives the same bytes */
#pragma omp parallel for schedule(static, 4096) num_threads(threads) if (threads > 1 && Nl >= PAR_MIN)
    for (uint64_t p = 0; p < Nl; p++) {
        sow_position pos;
        clos_unpack(c->rs, c->K, &keys[p * c->K], &pos);
        c->v[s0 + p] = clamp8(cycle_value(c, &pos), c->lo[s0 + p], c->hi[s0 + p]);
    }
}

void clos_free_work(struct level_work *w)
{
    free(w->um);
    free(w->pbuf);
    free(w->pcnt);
    free(w->batch);
    free(w->pend);
    free(w->be);
    free(w->cnt);
    free(w->fwd);
    free(w->roff);
    free(w->rev);
    free(w->next);
    free(w->stack);
}

/* Levels above `done` (those up to it are solved: a resumed solve). */
enum clos_err clos_solve_levels(struct clos *c, const struct clos_env *env, int tbmax,
                                struct clos_info *info, int done_level)
{
    const uint64_t slots = (uint64_t)c->slots;
    uint64_t L = 0;
    for (int m = 0; m <= SOW_MAX_SEEDS; m++)
        if (c->start[m + 1] - c->start[m] > L)
            L = c->start[m + 1] - c->start[m];
    /* the budget is checked with every move an in-level edge (the bound);
     * the peak noted is what was held: reverse edges as the levels had */
    double b = clos_arrays_bytes(c, c->cap, c->scap) + clos_level_work_per(c) * (double)L;
    if (clos_over(c, env, b)) {
        info->by_memory = true;
        info->need = b;
        struct util_gb2 g = util_gb2(b, env->memory);
        snprintf(info->why, sizeof info->why,
                 "%llu positions, every layer expanded; solving its largest level (%llu "
                 "positions) needs %s GB, the budget is %s GB: raise --memory, or solve more "
                 "levels first", (unsigned long long)c->n, (unsigned long long)L, g.need,
                 g.budget);
        return CLOS_TOO_BIG;
    }
    if (L * slots >= UINT32_MAX)
        return CLOS_TOO_BIG;
    struct level_work w = {0};
    w.be = malloc(L + 1);
    w.cnt = malloc(L + 1);
    w.fwd = malloc(sizeof *w.fwd * (size_t)(L * slots + 1));
    w.roff = malloc(sizeof *w.roff * (size_t)(L + 1));
    w.rev = malloc(sizeof *w.rev * 1024); /* sized per level to its in-level edges */
    uint64_t revcap = 1024;
    w.next = malloc(sizeof *w.next * (size_t)(2 * L + 1));
    w.stack = malloc(sizeof *w.stack * (size_t)(2 * L + 1));
    w.scap = (int64_t)(2 * L + 1);
    enum clos_err e = CLOS_OK;
    if (!w.be || !w.cnt || !w.fwd || !w.roff || !w.rev || !w.next || !w.stack)
        e = CLOS_OOM;
    /* the retrograde reads them at random, by predecessor */
    util_huge(w.be, L + 1);
    util_huge(w.cnt, L + 1);
    util_huge(w.roff, sizeof *w.roff * (size_t)(L + 1));
    util_huge(w.next, sizeof *w.next * (size_t)(2 * L + 1));
    double last = 0, t0 = util_now(), lastck = t0;
    uint64_t done = done_level >= 0 ? c->start[done_level + 1] : 0, resumed = done;
    int saved = done_level;
    int m = done_level + 1;
    for (; e == CLOS_OK && m <= SOW_MAX_SEEDS; m++) {
        uint64_t s0 = c->start[m], Nl = c->start[m + 1] - s0;
        if (!Nl)
            continue;
        if (clos_stopped(env)) {
            e = CLOS_STOPPED;
            break;
        }
        if (env->work && m - 1 > saved && util_now() - lastck >= CKPT_EVERY) {
            if (clos_ck_save_values(c, env, m - 1))
                saved = m - 1;
            lastck = util_now();
        }
        bool missing = false;
        w.nl = Nl;
        if (!clos_level_moves_all(c, env, m, s0, Nl, tbmax, &w, &missing, LM_FWD)) {
            e = CLOS_STOPPED;
            break;
        }
        uint64_t edges = 0;
        for (uint64_t p = 0; p < Nl; p++)
            edges += w.cnt[p];
        if (edges > revcap) {
            uint32_t *nr = realloc(w.rev, sizeof *nr * (size_t)edges);
            if (!nr) {
                e = CLOS_OOM;
                break;
            }
            w.rev = nr;
            revcap = edges;
        }
        if (missing) { /* a child not in the closure: cannot happen */
            e = CLOS_OOM;
            break;
        }
        reverse_edges(c, Nl, &w, env->threads);
        if (!clos_solve_level(c, env, m, s0, Nl, &w)) {
            e = CLOS_STOPPED;
            break;
        }
        clos_level_values(c, s0, Nl, &c->key[s0 * c->K], env->threads);
        done += Nl;
        double dt = util_now() - t0, rate = dt > 0 ? (double)(done - resumed) / dt : 0;
        clos_say(env, &last, Nl >= BIG_LINE || env->eager_lines,
                 "closure level %d solved: %llu positions, %llu of %llu done, %.2f M/s, ETA %.0f s", m,
                 (unsigned long long)Nl, (unsigned long long)done, (unsigned long long)c->n, rate / 1e6,
                 rate > 0 ? (double)(c->n - done) / rate : 0.0);
    }
    if (e == CLOS_STOPPED) { /* Ctrl-C, between levels or within one */
        const int kept = m - 1;
        if (env->work && kept > saved && clos_ck_save_values(c, env, kept))
            saved = kept;
        if (env->work && saved >= 0)
            clos_say(env, &last, true, "stopped while solving level %d: levels up to %d kept in %s", m,
                     saved, env->work);
    }
    clos_note_peak(c, clos_arrays_bytes(c, c->cap, c->scap) + (clos_level_work_per(c) - 4.0 * c->slots) * (double)L +
                          4.0 * (double)revcap);
    clos_free_work(&w);
    if (e == CLOS_OK && env->work && saved < SOW_MAX_SEEDS)
        clos_ck_save_values(c, env, SOW_MAX_SEEDS); /* a rerun answers at once */
    info->solve_s = util_now() - t0;
    return e;
}
