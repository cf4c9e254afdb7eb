/* The closure's values (closure.c, step 3): level by level from the fewest
 * seeds up, each node's moves generated again (exits valued from the lower
 * levels, in-level children found), the reverse edges, then the retrograde
 * game of retro/retro.h over the level's copies (p,L), (p,H)
 * (closure_rounds.c), nodes numbered by their place in the sorted keys.  Part of the closure solver: closure_internal.h
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

/* V of nodes s0 .. s0+Nl-1, their bounds solved (clos_retro): the
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
    free(w->order);
    free(w->pdirty);
    free(w->pend);
    free(w->be);
    free(w->cnt);
    free(w->fwd);
    free(w->roff);
    free(w->rev);
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
    enum clos_err e = CLOS_OK;
    if (!clos_retro_alloc(&w, L, true) || !w.be || !w.cnt || !w.fwd || !w.roff || !w.rev)
        e = CLOS_OOM;
    /* the retrograde reads them at random, by predecessor */
    util_huge(w.be, L + 1);
    util_huge(w.cnt, L + 1);
    util_huge(w.roff, sizeof *w.roff * (size_t)(L + 1));
    util_huge(w.order, sizeof *w.order * (size_t)(L + 1));
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
        w.stack = env->um_stack;
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
        e = clos_retro(c, env, m, s0, Nl, &w, NULL);
        if (e != CLOS_OK)
            break;
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
