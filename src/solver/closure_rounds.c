/* A level's retrograde (closure.c, step 3): the game of retro/retro.h over
 * the level's copies (p,L), (p,H), played as a client of retro_rounds, the
 * loop the table builders play it with.  One client for every place a
 * level of the closure lives:
 *
 *   predecessors   reverse edges (w->roff, w->rev: in memory, and on disk
 *                  where they fit), unmoves looked up in the level's sorted
 *                  keys (on disk, single sowing: w->rev NULL), or, for a
 *                  share of a level split across MPI ranks, reverse edges
 *                  that name their owner (struct clos_ranks);
 *   seeds          the positions with an exit sorted by its value (w->order:
 *                  round t takes those with be = t for their L copies and
 *                  be = -t for their H copies, the H copy final once its
 *                  counter is 0), or, without w->order (unmoves: 4 bytes a
 *                  position less), a scan of be at each round that has one.
 *
 * Round t on each thread (items handed out first come, first served):
 *
 *     pass 0        CR_CHUNK seeds an item, each final copy claimed and
 *                   pushed onto the thread's own stack, which is worked
 *                   down to empty before the next item: a copy popped sets
 *                   its predecessors' copies final at t (claims by
 *                   compare-and-swap, counters by atomic decrement) and
 *                   pushes them;
 *     spill passes  a copy pushed onto a full stack (w->stack entries)
 *                   waits in the bitmap w->pend; while some wait, another
 *                   pass takes them (CR_PEND_WORDS words an item, only the
 *                   blocks marked in w->pdirty);
 *     supersteps    (across ranks) updates for other ranks' copies are
 *                   queued, exchanged when no local work is left, and what
 *                   arrives is the next pass, until a superstep sends
 *                   nothing anywhere.
 *
 * A barrier ends each pass, not each wave of copies: the copies final at t
 * are the round's least fixpoint (retro/retro.h), so the order the threads
 * find them in does not change them, nor the values, whatever the threads,
 * the stack's size or the ranks.  Thread-safety: one level per call; the
 * level's arrays are the call's while it runs. */
#include "closure_internal.h"

#define CR_CHUNK 2048      /* seeds (sorted entries or scanned positions) an item */
#define CR_PEND_WORDS 1024 /* words of the bitmap an item of a spill pass */
#define CR_STACK 8192      /* a thread's stack entries (w->stack: all threads', if set) */
/* Levels under this many positions: one thread (barriers cost more). */
#define CR_PAR_MIN ((uint64_t)1 << 16)
#define CR_VALUES (2 * SOW_MAX_SEEDS + 1)
/* Unmoves: a batch's predecessors at most (room for any copy's, four
 * times over: a batch of UM_BATCH copies with a few each fits). */
#define UM_PBUF (4 * TB_UNMOVE_MAX)

enum cr_preds { CR_REV, CR_UNMOVES, CR_RANKS };
enum cr_pass { CR_SPILLED, CR_ARRIVED };

/* The level being solved, shared by its threads. */
struct cr_level {
    struct clos *c;
    const struct clos_env *env;
    struct level_work *w;
    const struct clos_ranks *rk; /* across ranks, else NULL */
    int m, threads;
    enum cr_preds preds;
    uint64_t Nl;
    int8_t *xl, *xh;
    const int8_t *be;
    uint8_t *cnt;
    uint64_t occ[CR_VALUES];      /* positions with be = v at v + SOW_MAX_SEEDS (scans) */
    uint64_t any[CR_VALUES];      /* (across ranks) the same summed over the ranks */
    uint64_t soff[CR_VALUES + 1]; /* w->order's entries with be = v: [soff[v'], soff[v' + 1]) */
    uint64_t pwords, pblocks;     /* the bitmap's words, its blocks of CR_PEND_WORDS */
    uint64_t stack;               /* a thread's stack entries */
    int overflow;                 /* a copy went to the bitmap since the last spill pass */
    enum cr_pass kind;            /* the pass under way (passes after the first) */
    uint64_t *in;                 /* (across ranks) the updates that arrived */
    size_t nin;
    bool fail, stopped, looked;
    uint64_t fin; /* copies final so far */
    double t0, last;
};

/* A thread's state, across the rounds. */
struct cr_thread {
    struct cr_level *L;
    int me; /* the thread's number (its queues across ranks) */
    uint32_t *stack;
    uint64_t sp, fin;
    bool fail;
    /* unmoves: the batch taken off the stack and its predecessors */
    struct tb_unmove um[TB_UNMOVE_MAX];
    uint32_t batch[UM_BATCH], poff[UM_BATCH];
    uint16_t pcnt[UM_BATCH];
    uint32_t pbuf[UM_PBUF];
};

/* ---- the predecessors by unmoves (tables/tb_lean.h) ---- */

/* Every position with a move that captures nothing and leads to the copy,
 * looked up in the level's sorted keys; one not found is not in the
 * closure (the root does not reach it), so it has no edge here.  KF_MAX
 * look-ups at a time run interleaved (clos_key_find_rows), across copies. */
struct um_looks {
    const uint64_t *ks[KF_MAX];
    uint64_t ns[KF_MAX], qw[KF_MAX][MAX_KEY_WORDS];
    int of[KF_MAX], nq; /* the copy each look-up is for; how many wait */
};

static void um_flush(const struct clos *c, struct cr_thread *S, struct um_looks *lk)
{
    int64_t r[KF_MAX];
    clos_key_find_rows(lk->ks, lk->ns, (const uint64_t(*)[MAX_KEY_WORDS])lk->qw, lk->nq, c->K, r);
    for (int i = 0; i < lk->nq; i++)
        if (r[i] >= 0)
            S->pbuf[S->poff[lk->of[i]] + S->pcnt[lk->of[i]]++] = (uint32_t)r[i];
    lk->nq = 0;
}

/* Copies taken off the top of the stack into S->batch (at most UM_BATCH,
 * and while any copy's unmoves would fit pbuf), with their predecessors:
 * copy j's at S->pbuf[S->poff[j]], S->pcnt[j] of them; how many taken. */
static int um_preds(const struct cr_level *L, struct cr_thread *S)
{
    const struct clos *c = L->c;
    const int K = c->K;
    struct um_looks lk;
    lk.nq = 0;
    int nb = 0;
    uint32_t fill = 0;
    while (S->sp && nb < UM_BATCH && fill + TB_UNMOVE_MAX <= UM_PBUF) {
        const uint32_t e = S->stack[--S->sp];
        sow_position qp;
        clos_unpack(c->rs, K, &c->key[(uint64_t)(e >> 1) * K], &qp);
        const int k = tb_unmoves(c->rs, &qp, S->um, TB_UNMOVE_MAX);
        S->batch[nb] = e;
        S->poff[nb] = fill;
        S->pcnt[nb] = 0;
        fill += (uint32_t)k;
        for (int a = 0; a < k; a++) {
            /* an unmove keeps the board's seeds, so it packs in K words */
            if (!clos_pack(c->rs, K, &S->um[a].pos, lk.qw[lk.nq]))
                continue;
            lk.ks[lk.nq] = c->key;
            lk.ns[lk.nq] = L->Nl;
            lk.of[lk.nq++] = nb;
            if (lk.nq == KF_MAX)
                um_flush(c, S, &lk);
        }
        nb++;
    }
    if (lk.nq)
        um_flush(c, S, &lk);
    return nb;
}

/* ---- the game's steps ---- */

/* Copy e final: onto the stack, or into the bitmap if the stack is full. */
static inline __attribute__((always_inline)) void push(struct cr_thread *S, uint32_t e, bool par)
{
    struct cr_level *L = S->L;
    S->fin++;
    if (S->sp < L->stack) {
        S->stack[S->sp++] = e;
        return;
    }
    uint64_t *pw = &L->w->pend[e >> 6], bit = 1ull << (e & 63);
    uint8_t *dirty = &L->w->pdirty[(e >> 6) / CR_PEND_WORDS];
    if (par) {
        __atomic_fetch_or(pw, bit, __ATOMIC_RELAXED);
        __atomic_store_n(dirty, 1, __ATOMIC_RELEASE);
        __atomic_store_n(&L->overflow, 1, __ATOMIC_RELAXED);
    } else {
        *pw |= bit;
        *dirty = 1;
        L->overflow = 1;
    }
}

/* One update of own position p at round t: its L copy claimed (claim), or
 * one open in-level child fewer for its H copy. */
static inline __attribute__((always_inline)) void apply(struct cr_thread *S, uint32_t p, bool claim,
                                                        int t, bool par)
{
    struct cr_level *L = S->L;
    if (claim) {
        if (retro_claim(&L->xl[p], (int8_t)t, par))
            push(S, 2 * p, par);
        return;
    }
    int8_t *h = &L->xh[p];
    if ((par ? __atomic_load_n(h, __ATOMIC_RELAXED) : *h) != RETRO_UNDONE ||
        retro_dec(&L->cnt[p], par))
        return;
    if (retro_h_final_at(L->be[p], t) && retro_claim(h, (int8_t)t, par))
        push(S, 2 * p + 1, par);
}

/* The thread's stack worked down to empty: each copy popped makes its
 * predecessors' copies final at t where the game says so.  (q,L) final:
 * the H copies of q's predecessors count down; (q,H) final: their L copies
 * are claimed. */
static inline __attribute__((always_inline)) void drain(struct cr_thread *S, int t, enum cr_preds mode,
                                                        bool par)
{
    struct cr_level *L = S->L;
    const struct level_work *w = L->w;
    while (S->sp) {
        int nb = 1;
        uint32_t one;
        const uint32_t *eb = &one;
        if (mode == CR_UNMOVES) {
            nb = um_preds(L, S);
            eb = S->batch;
        } else {
            one = S->stack[--S->sp];
        }
        for (int j = 0; j < nb; j++) {
            const uint32_t e = eb[j], q = e >> 1;
            const bool claim = e & 1;
            if (mode == CR_RANKS) {
                const struct clos_ranks *rk = L->rk;
                for (uint64_t i = rk->roff[q]; i < rk->roff[q + 1]; i++) {
                    const int o = (int)(rk->rev[i] >> 32);
                    const uint32_t p = (uint32_t)rk->rev[i];
                    if (o == rk->me)
                        apply(S, p, claim, t, par);
                    else if (!rk->send(rk->ctx, S->me, o, (claim ? CLOS_CLAIM : 0) | p))
                        S->fail = true;
                }
                continue;
            }
            const uint32_t *pr, *pe;
            if (mode == CR_REV) {
                pr = &w->rev[w->roff[q]];
                pe = &w->rev[w->roff[q + 1]];
            } else {
                pr = &S->pbuf[S->poff[j]];
                pe = pr + S->pcnt[j];
            }
            for (; pr < pe; pr++)
                apply(S, *pr, claim, t, par);
        }
    }
}

/* Seeds [a, b) of round t: entries of w->order (L copies with be = t,
 * then H copies with be = -t), or positions scanned. */
static inline __attribute__((always_inline)) void seeds(struct cr_thread *S, int t, uint64_t a,
                                                        uint64_t b, enum cr_preds mode, bool par)
{
    struct cr_level *L = S->L;
    const uint32_t *order = L->w->order;
    int8_t *xl = L->xl, *xh = L->xh;
    const int8_t *be = L->be;
    const uint8_t *cnt = L->cnt;
    if (order) {
        const uint64_t l0 = L->soff[t + SOW_MAX_SEEDS], nlo = L->soff[t + SOW_MAX_SEEDS + 1] - l0;
        const uint64_t h0 = L->soff[-t + SOW_MAX_SEEDS];
        for (uint64_t i = a; i < b; i++) {
            if (i < nlo) {
                const uint32_t p = order[l0 + i];
                if (retro_claim(&xl[p], (int8_t)t, par))
                    push(S, 2 * p, par);
            } else {
                const uint32_t p = order[h0 + i - nlo];
                if ((par ? __atomic_load_n(&cnt[p], __ATOMIC_RELAXED) : cnt[p]) == 0 &&
                    retro_claim(&xh[p], (int8_t)t, par))
                    push(S, 2 * p + 1, par);
            }
            if (S->sp >= L->stack / 2)
                drain(S, t, mode, par);
        }
    } else {
        for (uint64_t p = a; p < b; p++) {
            if (be[p] == t && retro_claim(&xl[p], (int8_t)t, par))
                push(S, (uint32_t)(2 * p), par);
            if (be[p] == -t && (par ? __atomic_load_n(&cnt[p], __ATOMIC_RELAXED) : cnt[p]) == 0 &&
                retro_claim(&xh[p], (int8_t)t, par))
                push(S, (uint32_t)(2 * p + 1), par);
            if (S->sp >= L->stack / 2)
                drain(S, t, mode, par);
        }
    }
    drain(S, t, mode, par);
}

/* Block k of the bitmap: its waiting copies taken and worked. */
static inline __attribute__((always_inline)) void spilled(struct cr_thread *S, int t, uint64_t k,
                                                          enum cr_preds mode, bool par)
{
    struct cr_level *L = S->L;
    uint64_t *pend = L->w->pend;
    uint8_t *dirty = &L->w->pdirty[k];
    if (par ? !__atomic_exchange_n(dirty, 0, __ATOMIC_ACQ_REL) : !*dirty)
        return;
    *dirty = 0;
    const uint64_t a = k * CR_PEND_WORDS, b = a + CR_PEND_WORDS < L->pwords ? a + CR_PEND_WORDS : L->pwords;
    for (uint64_t i = a; i < b; i++) {
        uint64_t x;
        if (par) {
            x = __atomic_exchange_n(&pend[i], 0, __ATOMIC_RELAXED);
        } else {
            x = pend[i];
            pend[i] = 0;
        }
        for (; x; x &= x - 1) {
            if (S->sp == L->stack)
                drain(S, t, mode, par);
            S->stack[S->sp++] = (uint32_t)(i * 64 + (uint64_t)__builtin_ctzll(x));
        }
    }
    drain(S, t, mode, par);
}

/* Updates [a, b) that arrived from other ranks. */
static inline __attribute__((always_inline)) void arrived(struct cr_thread *S, int t, uint64_t a,
                                                          uint64_t b, bool par)
{
    const uint64_t *in = S->L->in;
    for (uint64_t i = a; i < b; i++)
        apply(S, (uint32_t)in[i], (in[i] & CLOS_CLAIM) != 0, t, par);
    drain(S, t, CR_RANKS, par);
}

/* One item of a pass, for one way of finding predecessors and threading. */
static inline __attribute__((always_inline)) void item(struct cr_thread *S, int t, int pass,
                                                       uint64_t k, enum cr_preds mode, bool par)
{
    struct cr_level *L = S->L;
    if (pass == 0) {
        uint64_t a = k * CR_CHUNK, n;
        if (L->w->order)
            n = L->soff[t + SOW_MAX_SEEDS + 1] - L->soff[t + SOW_MAX_SEEDS] +
                L->soff[-t + SOW_MAX_SEEDS + 1] - L->soff[-t + SOW_MAX_SEEDS];
        else
            n = L->Nl;
        if (a < n)
            seeds(S, t, a, a + CR_CHUNK < n ? a + CR_CHUNK : n, mode, par);
    } else if (L->kind == CR_SPILLED) {
        spilled(S, t, k, mode, par);
    } else if (mode == CR_RANKS) {
        uint64_t a = k * CR_CHUNK;
        arrived(S, t, a, a + CR_CHUNK < L->nin ? a + CR_CHUNK : L->nin, par);
    }
}

/* ---- the client of retro_rounds ---- */

static uint64_t cr_seeds(void *ctx, int t)
{
    const struct cr_level *L = ctx;
    const uint64_t *occ = L->rk ? L->any : L->occ;
    if (!occ[t + SOW_MAX_SEEDS] && !occ[-t + SOW_MAX_SEEDS])
        return 0;
    uint64_t n = L->w->order ? L->soff[t + SOW_MAX_SEEDS + 1] - L->soff[t + SOW_MAX_SEEDS] +
                                   L->soff[-t + SOW_MAX_SEEDS + 1] - L->soff[-t + SOW_MAX_SEEDS]
                             : L->Nl;
    uint64_t k = (n + CR_CHUNK - 1) / CR_CHUNK;
    return k ? k : 1; /* across ranks every rank plays the round */
}

static void *cr_begin(void *ctx, int me)
{
    struct cr_level *L = ctx;
    struct cr_thread *S = malloc(sizeof *S);
    if (!S) {
        __atomic_store_n(&L->fail, true, __ATOMIC_RELAXED);
        return NULL;
    }
    S->L = L;
    S->me = me;
    S->sp = S->fin = 0;
    S->fail = false;
    S->stack = malloc(sizeof *S->stack * L->stack);
    if (!S->stack) {
        free(S);
        S = NULL;
    }
    if (!S)
        __atomic_store_n(&L->fail, true, __ATOMIC_RELAXED);
    return S;
}

static bool cr_work(void *th, int t, int pass, uint64_t k)
{
    struct cr_thread *S = th;
    struct cr_level *L = S->L;
    const bool par = L->threads > 1;
    if (L->preds == CR_RANKS && par)
        item(S, t, pass, k, CR_RANKS, true);
    else if (L->preds == CR_RANKS)
        item(S, t, pass, k, CR_RANKS, false);
    else if (L->preds == CR_REV && par)
        item(S, t, pass, k, CR_REV, true);
    else if (L->preds == CR_REV)
        item(S, t, pass, k, CR_REV, false);
    else if (par)
        item(S, t, pass, k, CR_UNMOVES, true);
    else
        item(S, t, pass, k, CR_UNMOVES, false);
    if (S->fail)
        __atomic_store_n(&L->fail, true, __ATOMIC_RELAXED);
    return !S->fail;
}

static bool cr_settle(void *th, int t)
{
    (void)t;
    struct cr_thread *S = th;
    __atomic_fetch_add(&S->L->fin, S->fin, __ATOMIC_RELAXED);
    S->fin = 0;
    return !S->fail;
}

/* Copies waiting in the bitmap: a spill pass over its blocks. */
static uint64_t cr_again(void *ctx, int t)
{
    (void)t;
    struct cr_level *L = ctx;
    if (!L->overflow)
        return 0;
    L->overflow = 0;
    L->kind = CR_SPILLED;
    return L->pblocks;
}

/* No local work left: the round is over in one process; across ranks,
 * supersteps until updates arrive here (the next pass's items) or the
 * round is over everywhere (0). */
static uint64_t cr_exchange(void *ctx, int t)
{
    (void)t;
    struct cr_level *L = ctx;
    const struct clos_ranks *rk = L->rk;
    if (!rk)
        return 0;
    for (;;) {
        free(L->in);
        L->in = NULL;
        L->nin = 0;
        int r = rk->superstep(rk->ctx, L->fail, &L->in, &L->nin);
        if (r < 0)
            L->stopped = true;
        if (r <= 0)
            return 0;
        if (L->nin) {
            L->kind = CR_ARRIVED;
            return (L->nin + CR_CHUNK - 1) / CR_CHUNK;
        }
    }
}

static bool cr_stopped(void *ctx, int t)
{
    (void)t;
    struct cr_level *L = ctx;
    if (!L->stopped)
        L->stopped = L->rk ? L->rk->stopped(L->rk->ctx, L->fail) : L->fail || clos_stopped(L->env);
    return L->stopped;
}

/* A line at most once a second (the first at once with eager_lines). */
static void cr_progress(void *ctx, int t)
{
    struct cr_level *L = ctx;
    if (L->rk)
        return;
    bool force = L->env->eager_lines && !L->looked;
    L->looked = true;
    clos_say(L->env, &L->last, force, "%s level %d: retrograde at %d (from %d down to %d), %llu "
             "of %llu bounds final, %.0f s so far", L->c->dk ? "closure on disk," : "closure",
             L->m, t, L->m, -L->m, (unsigned long long)L->fin, (unsigned long long)(2 * L->Nl),
             util_now() - L->t0);
    if (clos_stopped(L->env)) /* (a line may stop it: the next round's check) */
        L->stopped = true;
}

static void cr_end(void *th)
{
    struct cr_thread *S = th;
    free(S->stack);
    free(S);
}

/* w->order and L->soff from be: positions with an exit, by its value (in
 * position order within a value: a counting sort, its counts per thread);
 * false if out of memory. */
static bool sort_seeds(struct cr_level *L, int nt)
{
    uint32_t *order = L->w->order;
    const int8_t *be = L->be;
    const uint64_t Nl = L->Nl;
    uint64_t(*cnt)[CR_VALUES] = calloc((size_t)nt, sizeof *cnt);
    if (!cnt)
        return false;
#pragma omp parallel num_threads(nt)
    {
        const int me = omp_get_thread_num(), k = omp_get_num_threads();
        const uint64_t a = Nl * (uint64_t)me / (uint64_t)k, b = Nl * (uint64_t)(me + 1) / (uint64_t)k;
        for (uint64_t p = a; p < b; p++)
            if (be[p] != RETRO_NONE_EXIT)
                cnt[me][be[p] + SOW_MAX_SEEDS]++;
#pragma omp barrier
#pragma omp single
        {
            uint64_t s = 0;
            for (int v = 0; v < CR_VALUES; v++) {
                L->soff[v] = s;
                uint64_t tot = 0;
                for (int i = 0; i < k; i++) {
                    uint64_t x = cnt[i][v];
                    cnt[i][v] = s;
                    s += x;
                    tot += x;
                }
                L->occ[v] = tot;
            }
            L->soff[CR_VALUES] = s;
        }
        for (uint64_t p = a; p < b; p++)
            if (be[p] != RETRO_NONE_EXIT)
                order[cnt[me][be[p] + SOW_MAX_SEEDS]++] = (uint32_t)p;
    }
    free(cnt);
    return true;
}

double clos_retro_bytes(uint64_t n, bool order, uint64_t stack, int threads)
{
    const double pw = (double)((2 * n + 63) / 64);
    const double st = stack ? (double)stack : (double)CR_STACK * threads;
    return (order ? 4.0 * (double)n : 0.0) + 8.0 * pw + pw / CR_PEND_WORDS + 1.0 + 4.0 * st +
           (double)threads * sizeof(struct cr_thread);
}

bool clos_retro_alloc(struct level_work *w, uint64_t n, bool order)
{
    const uint64_t pw = (2 * n + 63) / 64;
    w->pend = malloc(sizeof *w->pend * (pw + 1));
    w->pdirty = malloc(pw / CR_PEND_WORDS + 1);
    w->order = order ? malloc(sizeof *w->order * (n + 1)) : NULL;
    return w->pend && w->pdirty && (!order || w->order);
}

enum clos_err clos_retro(struct clos *c, const struct clos_env *env, int m, uint64_t s0,
                         uint64_t Nl, struct level_work *w, const struct clos_ranks *rk)
{
    static const struct retro_round_ops ops = {
        .seeds = cr_seeds,
        .begin = cr_begin,
        .work = cr_work,
        .settle = cr_settle,
        .again = cr_again,
        .exchange = cr_exchange,
        .stopped = cr_stopped,
        .progress = cr_progress,
        .end = cr_end,
    };
    const uint64_t par_min = env->par_min ? env->par_min : CR_PAR_MIN;
    struct cr_level L = {
        .c = c,
        .env = env,
        .w = w,
        .rk = rk,
        .m = m,
        .threads = env->threads > 1 && Nl >= par_min ? env->threads : 1,
        .preds = rk ? CR_RANKS : w->rev ? CR_REV : CR_UNMOVES,
        .Nl = Nl,
        .xl = c->lo + s0,
        .xh = c->hi + s0,
        .be = w->be,
        .cnt = w->cnt,
        .pwords = (2 * Nl + 63) / 64,
        .t0 = util_now(),
    };
    L.pblocks = (L.pwords + CR_PEND_WORDS - 1) / CR_PEND_WORDS;
    L.last = env->eager_lines ? 0 : L.t0;
    uint64_t st = w->stack ? w->stack : CR_STACK * (uint64_t)L.threads;
    L.stack = (st + (uint64_t)L.threads - 1) / (uint64_t)L.threads;
    if (L.stack < 1)
        L.stack = 1;
    memset(L.xl, (uint8_t)RETRO_UNDONE, Nl);
    memset(L.xh, (uint8_t)RETRO_UNDONE, Nl);
    memset(w->pend, 0, sizeof *w->pend * L.pwords);
    memset(w->pdirty, 0, L.pblocks);
    if (w->order) {
        L.fail = !sort_seeds(&L, L.threads);
    } else {
        for (uint64_t p = 0; p < Nl; p++)
            if (L.be[p] != RETRO_NONE_EXIT)
                L.occ[L.be[p] + SOW_MAX_SEEDS]++;
    }
    if (rk) { /* (across ranks: no rank leaves before the others know) */
        if (rk->stopped(rk->ctx, L.fail))
            return L.fail ? CLOS_OOM : CLOS_STOPPED;
        memcpy(L.any, L.occ, sizeof L.any);
        rk->sum(rk->ctx, L.any, CR_VALUES);
    } else if (L.fail) {
        return CLOS_OOM;
    }
    struct retro_rounds R = {.ops = &ops, .ctx = &L, .n = m, .threads = L.threads};
    bool ok = retro_rounds(&R);
    free(L.in);
    if (!ok || L.fail)
        return CLOS_OOM;
    if (L.stopped)
        return CLOS_STOPPED;
    /* lo and hi from the copies' thresholds, a copy never final at its
     * worst (-m for L, m for H) */
    int8_t *xl = L.xl, *xh = L.xh;
    const int nt = L.threads;
#pragma omp parallel for schedule(static, 1 << 14) num_threads(nt) if (nt > 1)
    for (uint64_t p = 0; p < Nl; p++) {
        int lo = xl[p] == RETRO_UNDONE ? -m : xl[p], hi = xh[p] == RETRO_UNDONE ? m : -xh[p];
        xl[p] = (int8_t)(lo < -m ? -m : lo > m ? m : lo);
        xh[p] = (int8_t)(hi < -m ? -m : hi > m ? m : hi);
    }
    return CLOS_OK;
}
