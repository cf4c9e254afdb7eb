/* The closure solver (closure.h; docs/solver.md "Algorithm").
 *
 * 1. Expansion: the root's closure under all moves, discovered in rounds
 *    (each round expands a range of nodes not yet expanded, split between
 *    threads).  Every node's moves are generated once; each child is found or
 *    added in the set; exit children at levels the endgame tables cover are
 *    not added: the edge keeps the exit's value d - V(child) (KID_TB).
 * 2. Values, level by level from the fewest seeds up.  For level m, per node
 *    p: be(p) = best exit value (d - V(child), children one level down are
 *    final; a settlement is an exit), and the in-level out-degree.  Then one
 *    game on the copies (p,L) and (p,H) in X-values (X = the player for whom
 *    endless play is -infinity):
 *        (p,L) = max(be(p), (q,H) for in-level q)   = lo(p)
 *        (p,H) = min(-be(p), (q,L) for in-level q)  = -hi(p)
 *    solved by a bucket queue over t = m .. -m: an L copy is final the first
 *    time one of its options reaches t (a bucket at be, or a child's H copy
 *    final at t); an H copy when its last in-level child's L copy is final
 *    (counter), at min(-be, t) (deferred to bucket -be if that is lower).
 *    Copies never final are endless: lo = -m, hi = m.  V = clamp(cyc, lo, hi).
 *    This is the least-fixed-point (attractor) computation of the definition
 *    (W_t, L_u) for every threshold at once, on exactly the positions the root
 *    can reach, so it is exact with cycles and no result depends on a path.
 *
 * Races (threads > 1, expansion only): a cell is claimed by CAS on its key;
 * the claimer takes a node index (atomic add), writes the node, then
 * publishes the index with a release store; a thread meeting the key spins
 * until the index is published, then compares the words.  Each node is
 * expanded by exactly one thread (its round range is split), so per-node
 * arrays are written by one thread.  Which index a position gets depends on
 * timing; the closure (a set) and the values do not, and neither does the
 * node count (positions expanded = closure size).
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "closure.h"
#include "sow/util.h"

#define KID_TB UINT32_MAX   /* exit answered by the endgame tables */
#define NMV_OPEN 0xFF       /* not expanded yet */
#define UNDONE INT16_MIN
#define NO_EXIT INT16_MIN
#define EMPTY_IDX UINT32_MAX
#define D_STAY INT16_MIN    /* dcap of a move that stays in the level */

struct cell {
    uint64_t key; /* 0 = free */
    uint32_t idx; /* EMPTY_IDX until published */
    uint32_t pad_;
};
_Static_assert(sizeof(struct cell) == 16, "four cells per cache line");

struct clos {
    const struct ruleset *rs;
    int nw, S, slots;
    uint64_t side_mask[2][SOW_BOARD_WORDS]; /* lanes of A's and B's holes */
    uint64_t n, cap;
    uint64_t *pw;
    uint8_t *lvl, *nmv;
    uint32_t *kid;
    int16_t *dcap;
    int16_t *lo, *hi, *v;
    struct cell *set;
    uint64_t scap;
    /* level-solve work areas, sized cap */
    int16_t *be;
    uint8_t *cnt;
    uint32_t *roff, *rev, *order;
    int32_t *next, *stack;
    uint64_t revcap;
};

static inline uint64_t mixkey(const uint64_t *w, int S)
{
    uint64_t h = 0x243F6A8885A308D3ULL;
    for (int k = 0; k < S; k++) {
        h = (h ^ w[k]) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 29;
    }
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return h ? h : 1;
}

static inline void pack(const struct clos *c, const sow_position *p, uint64_t *w)
{
    for (int k = 0; k < c->nw; k++)
        w[k] = p->board.w[k];
    w[c->nw] = (uint64_t)p->side | (uint64_t)p->state << 8;
}

static inline void unpack(const struct clos *c, const uint64_t *w, sow_position *p)
{
    memset(p, 0, sizeof *p);
    for (int k = 0; k < c->nw; k++)
        p->board.w[k] = w[k];
    p->side = (uint8_t)(w[c->nw] & 255);
    p->state = (uint8_t)(w[c->nw] >> 8 & 255);
}

static inline bool same_words(const uint64_t *a, const uint64_t *b, int S)
{
    uint64_t d = 0;
    for (int k = 0; k < S; k++)
        d |= a[k] ^ b[k];
    return d == 0;
}

struct clos *clos_new(const struct ruleset *rs)
{
    struct clos *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->rs = rs;
    c->nw = rs->nwords;
    c->S = rs->nwords + 1;
    c->slots = SOW_MAX_PITS + 1;
    if (rs->pits + 1 < c->slots)
        c->slots = rs->pits + 1;
    for (int w = 0; w < rs->nwords; w++) {
        c->side_mask[0][w] = board_range_word(w, 0, rs->pits) * 0xFF;
        c->side_mask[1][w] = board_range_word(w, rs->pits, rs->holes) * 0xFF;
    }
    return c;
}

static void free_arrays(struct clos *c)
{
    free(c->pw);
    free(c->lvl);
    free(c->nmv);
    free(c->kid);
    free(c->dcap);
    free(c->lo);
    free(c->hi);
    free(c->v);
    free(c->set);
    free(c->be);
    free(c->cnt);
    free(c->roff);
    free(c->rev);
    free(c->order);
    free(c->next);
    free(c->stack);
}

void clos_free(struct clos *c)
{
    if (!c)
        return;
    free_arrays(c);
    free(c);
}

void clos_reset(struct clos *c)
{
    c->n = 0;
    if (c->set)
        for (uint64_t i = 0; i < c->scap; i++)
            c->set[i] = (struct cell){0, EMPTY_IDX, 0};
}

uint64_t clos_size(const struct clos *c)
{
    return c->n;
}

#define GROW(arr, n)                                                                              \
    do {                                                                                          \
        void *np_ = realloc((arr), sizeof *(arr) * (size_t)(n));                                 \
        if (!np_)                                                                                 \
            return false;                                                                         \
        (arr) = np_;                                                                              \
    } while (0)

static bool grow_nodes(struct clos *c, uint64_t need)
{
    if (need <= c->cap)
        return true;
    uint64_t nc = c->cap ? c->cap * 2 : 4096;
    while (nc < need)
        nc *= 2;
    GROW(c->pw, nc * (uint64_t)c->S);
    GROW(c->lvl, nc);
    GROW(c->nmv, nc);
    GROW(c->kid, nc * (uint64_t)c->slots);
    GROW(c->dcap, nc * (uint64_t)c->slots);
    GROW(c->lo, nc);
    GROW(c->hi, nc);
    GROW(c->v, nc);
    c->cap = nc;
    return true;
}

static void set_put(struct cell *set, uint64_t mask, uint64_t key, uint32_t idx)
{
    uint64_t h = key & mask;
    while (set[h].key)
        h = (h + 1) & mask;
    set[h] = (struct cell){key, idx, 0};
}

static bool grow_set(struct clos *c, uint64_t ncap)
{
    struct cell *ns = malloc(sizeof *ns * (size_t)ncap);
    if (!ns)
        return false;
    for (uint64_t i = 0; i < ncap; i++)
        ns[i] = (struct cell){0, EMPTY_IDX, 0};
    for (uint64_t i = 0; i < c->n; i++)
        set_put(ns, ncap - 1, mixkey(&c->pw[i * (uint64_t)c->S], c->S), (uint32_t)i);
    free(c->set);
    c->set = ns;
    c->scap = ncap;
    return true;
}

/* Find or add the position with words w at level lv.  par: other threads
 * insert at the same time. */
static inline uint32_t set_insert(struct clos *c, const uint64_t *w, int lv, bool par)
{
    const int S = c->S;
    uint64_t key = mixkey(w, S), mask = c->scap - 1;
    for (uint64_t h = key & mask;; h = (h + 1) & mask) {
        struct cell *cl = &c->set[h];
        uint64_t k = par ? __atomic_load_n(&cl->key, __ATOMIC_ACQUIRE) : cl->key;
        if (k == 0) {
            uint32_t idx;
            if (par) {
                if (!__atomic_compare_exchange_n(&cl->key, &k, key, false, __ATOMIC_ACQ_REL,
                                                 __ATOMIC_ACQUIRE))
                    goto taken; /* k now holds the winner's key */
                idx = (uint32_t)__atomic_fetch_add(&c->n, 1, __ATOMIC_RELAXED);
            } else {
                cl->key = key;
                idx = (uint32_t)c->n++;
            }
            memcpy(&c->pw[(uint64_t)idx * S], w, (size_t)S * 8);
            c->lvl[idx] = (uint8_t)lv;
            c->nmv[idx] = NMV_OPEN;
            if (par)
                __atomic_store_n(&cl->idx, idx, __ATOMIC_RELEASE);
            else
                cl->idx = idx;
            return idx;
        }
    taken:
        if (k == key) {
            uint32_t idx;
            if (par) {
                while ((idx = __atomic_load_n(&cl->idx, __ATOMIC_ACQUIRE)) == EMPTY_IDX)
                    __builtin_ia32_pause();
            } else {
                idx = cl->idx;
            }
            if (same_words(&c->pw[(uint64_t)idx * S], w, S))
                return idx;
        }
    }
}

/* Expand node i: generate its moves once, add the children. */
static inline void expand(struct clos *c, const struct clos_env *env, uint64_t i, int tid,
                          int tbmax, bool par, struct sow_movelist *ml, bool *bad)
{
    const struct ruleset *rs = c->rs;
    const int S = c->S, slots = c->slots;
    sow_position p;
    unpack(c, &c->pw[i * S], &p);
    rs->generate(rs, &p, ml, env->cache[tid], NULL);
    env->nodes[tid]++;
    env->visits[tid] += (uint64_t)ml->n;
    int n = c->lvl[i], side = p.side;
    if (ml->n == 0) {
        c->lo[i] = (int16_t)(ml->settle[side] - ml->settle[!side]);
        c->nmv[i] = 0;
        return;
    }
    if (ml->n > slots) {
        *bad = true;
        return;
    }
    uint32_t *kid = &c->kid[i * slots];
    int16_t *dc = &c->dcap[i * slots];
    for (int k = 0; k < ml->n; k++) {
        const struct sow_child *ch = &ml->c[k];
        int cap = ch->captured[0] + ch->captured[1];
        int d = ch->captured[side] - ch->captured[!side];
        int cl = n - cap;
        if (cap && cl <= tbmax) {
            int tv;
            if (tb_probe(env->tb, &ch->pos, &tv)) {
                if (cl <= env->tb_hits_max)
                    env->tb_hits[tid]++;
                kid[k] = KID_TB;
                dc[k] = (int16_t)(d - tv);
                continue;
            }
        }
        uint64_t w[SOW_BOARD_WORDS + 1];
        pack(c, &ch->pos, w);
        kid[k] = set_insert(c, w, cl, par);
        dc[k] = cap ? (int16_t)d : D_STAY;
    }
    c->nmv[i] = (uint8_t)ml->n;
}

static bool stopped(const struct clos_env *env)
{
    return env->stop && *env->stop;
}

/* Report progress if a second has passed since *last. */
static void tick(const struct clos_env *env, double *last, uint64_t found, uint64_t done, int level)
{
    if (!env->progress)
        return;
    double now = util_now();
    if (now - *last < 1.0)
        return;
    *last = now;
    env->progress(env->progress_arg, found, done, level);
}

static enum clos_err expand_all(struct clos *c, const struct clos_env *env, int tbmax)
{
    const uint64_t slots = (uint64_t)c->slots;
    uint64_t a = 0, end = 0;
    bool bad = false;
    int nt = env->threads;
    double last = util_now();
    while (a < c->n) {
        if (stopped(env))
            return CLOS_STOPPED;
        if (a == end) {
            /* A breadth-first layer starts: [a, end) are the positions the
             * last layer found.  The limit is checked here only, where the
             * positions found so far are the same set whatever the thread
             * count (within a layer, the order of indices is not), so that
             * a refused closure has cost the same nodes every time. */
            end = c->n;
            if (c->n > env->max_nodes)
                return CLOS_TOO_BIG;
            tick(env, &last, c->n, a, -1);
        }
        /* ... but a layer may be large: past hard_nodes stop anyway (memory;
         * then the count may depend on the threads). */
        if (c->n > env->hard_nodes)
            return CLOS_TOO_BIG;
        uint64_t want = end - a;
        uint64_t room = c->scap / 2 > c->n ? (c->scap / 2 - c->n) / slots : 0;
        if (room < want && room < 4096) {
            if (!grow_set(c, c->scap * 2))
                return CLOS_OOM;
            continue;
        }
        uint64_t r = want < room ? want : room;
        if (!grow_nodes(c, c->n + r * slots))
            return CLOS_OOM;
        uint64_t b = a + r;
        bool par = nt > 1 && r >= 256;
        if (!par) {
            struct sow_movelist ml;
            for (uint64_t i = a; i < b; i++)
                expand(c, env, i, 0, tbmax, false, &ml, &bad);
        } else {
#pragma omp parallel num_threads(nt)
            {
                struct sow_movelist ml;
                int tid = omp_get_thread_num();
                bool mybad = false;
#pragma omp for schedule(dynamic, 64) nowait
                for (uint64_t i = a; i < b; i++)
                    expand(c, env, i, tid, tbmax, true, &ml, &mybad);
                if (mybad)
                    __atomic_store_n(&bad, true, __ATOMIC_RELAXED);
            }
        }
        if (bad)
            return CLOS_OOM; /* more moves than slots: cannot happen with the rule sets */
        a = b;
    }
    return CLOS_OK;
}

static bool grow_work(struct clos *c, uint64_t nrev)
{
    uint64_t N = c->n;
    GROW(c->be, N);
    GROW(c->cnt, N);
    GROW(c->roff, N + 1);
    GROW(c->order, N);
    GROW(c->next, 2 * N);
    GROW(c->stack, 2 * N);
    if (nrev > c->revcap) {
        GROW(c->rev, nrev);
        c->revcap = nrev;
    }
    return true;
}

/* rules_cycle_value on packed words: lane sums by one multiply (the board
 * holds <= 255 seeds, so no byte sum overflows). */
static inline int cycle_value(const struct clos *c, const uint64_t *w)
{
    int side = (int)(w[c->nw] & 255), s[2] = {0, 0};
    for (int k = 0; k < c->nw; k++)
        for (int j = 0; j < 2; j++)
            s[j] += (int)(((w[k] & c->side_mask[j][k]) * BOARD_ONES) >> 56);
    return rules_cycle_net(c->rs, s[side], s[!side]);
}

static inline int16_t clamp16(int x, int lo, int hi)
{
    return (int16_t)(x < lo ? lo : x > hi ? hi : x);
}

/* The bucket-queue retrograde of one level: nodes order[0..cnt). */
static void solve_level(struct clos *c, int m, const uint32_t *L, uint64_t cnt)
{
    const int slots = c->slots;
    int16_t *xl = c->lo, *xh = c->hi, *be = c->be;
    int32_t head[2 * SOW_MAX_SEEDS + 1];
    int32_t *next = c->next, *stack = c->stack;
    for (int t = 0; t < 2 * SOW_MAX_SEEDS + 1; t++)
        head[t] = -1;
    for (uint64_t j = 0; j < cnt; j++) {
        uint32_t p = L[j];
        int b, deg = 0;
        if (c->nmv[p] == 0) {
            b = c->lo[p]; /* settlement */
        } else {
            b = NO_EXIT;
            const uint32_t *kid = &c->kid[(uint64_t)p * slots];
            const int16_t *dc = &c->dcap[(uint64_t)p * slots];
            for (int k = 0; k < c->nmv[p]; k++) {
                int val;
                if (dc[k] == D_STAY) {
                    deg++;
                    continue;
                }
                val = kid[k] == KID_TB ? dc[k] : dc[k] - c->v[kid[k]];
                if (val > b)
                    b = val;
            }
        }
        if (b != NO_EXIT)
            b = clamp16(b, -m, m); /* clamping commutes with max/min */
        be[p] = (int16_t)b;
        c->cnt[p] = (uint8_t)deg;
        xl[p] = xh[p] = UNDONE;
        if (b != NO_EXIT) {
            int32_t e = (int32_t)(2 * p);
            next[e] = head[b + SOW_MAX_SEEDS];
            head[b + SOW_MAX_SEEDS] = e;
            if (deg == 0) {
                next[e + 1] = head[-b + SOW_MAX_SEEDS];
                head[-b + SOW_MAX_SEEDS] = e + 1;
            }
        }
    }
    for (int t = m; t >= -m; t--) {
        int sp = 0;
        for (int32_t e = head[t + SOW_MAX_SEEDS]; e >= 0; e = next[e]) {
            uint32_t p = (uint32_t)e >> 1;
            int16_t *x = (e & 1) ? &xh[p] : &xl[p];
            if (*x == UNDONE) {
                *x = (int16_t)t;
                stack[sp++] = e;
            }
        }
        while (sp) {
            int32_t e = stack[--sp];
            uint32_t q = (uint32_t)e >> 1;
            const uint32_t *pr = &c->rev[c->roff[q]], *pe = &c->rev[c->roff[q + 1]];
            if (!(e & 1)) { /* (q,L) final at t: H copies of its predecessors count down */
                for (; pr < pe; pr++) {
                    uint32_t p = *pr;
                    if (xh[p] != UNDONE || --c->cnt[p])
                        continue;
                    int val = be[p] == NO_EXIT || -be[p] >= t ? t : -be[p];
                    if (val == t) {
                        xh[p] = (int16_t)t;
                        stack[sp++] = (int32_t)(2 * p + 1);
                    } else {
                        next[2 * p + 1] = head[val + SOW_MAX_SEEDS];
                        head[val + SOW_MAX_SEEDS] = (int32_t)(2 * p + 1);
                    }
                }
            } else { /* (q,H) final at t: L copies of its predecessors reach t */
                for (; pr < pe; pr++) {
                    uint32_t p = *pr;
                    if (xl[p] == UNDONE) {
                        xl[p] = (int16_t)t;
                        stack[sp++] = (int32_t)(2 * p);
                    }
                }
            }
        }
    }
    for (uint64_t j = 0; j < cnt; j++) {
        uint32_t p = L[j];
        int lo = xl[p] == UNDONE ? -m : clamp16(xl[p], -m, m);
        int hi = xh[p] == UNDONE ? m : clamp16(-xh[p], -m, m);
        xl[p] = (int16_t)lo;
        xh[p] = (int16_t)hi;
        c->v[p] = clamp16(cycle_value(c, &c->pw[(uint64_t)p * c->S]), lo, hi);
    }
}

static enum clos_err solve_levels(struct clos *c, const struct clos_env *env)
{
    const uint64_t N = c->n, slots = (uint64_t)c->slots;
    /* in-level edges -> reverse CSR */
    uint64_t nrev = 0;
    for (uint64_t i = 0; i < N; i++)
        for (int k = 0; k < c->nmv[i]; k++) {
            nrev += c->dcap[i * slots + k] == D_STAY;
        }
    if (!grow_work(c, nrev ? nrev : 1))
        return CLOS_OOM;
    memset(c->roff, 0, sizeof *c->roff * (N + 1));
    for (uint64_t i = 0; i < N; i++)
        for (int k = 0; k < c->nmv[i]; k++) {
            if (c->dcap[i * slots + k] == D_STAY)
                c->roff[c->kid[i * slots + k] + 1]++;
        }
    for (uint64_t i = 0; i < N; i++)
        c->roff[i + 1] += c->roff[i];
    /* fill with cnt as a cursor (cnt is rewritten per level) */
    uint32_t *cur = c->order; /* borrowed before it holds the level order */
    memcpy(cur, c->roff, sizeof *cur * N);
    for (uint64_t i = 0; i < N; i++)
        for (int k = 0; k < c->nmv[i]; k++) {
            if (c->dcap[i * slots + k] == D_STAY)
                c->rev[cur[c->kid[i * slots + k]]++] = (uint32_t)i;
        }
    /* nodes by level, fewest seeds first */
    uint64_t start[SOW_MAX_SEEDS + 2] = {0};
    for (uint64_t i = 0; i < N; i++)
        start[c->lvl[i] + 1]++;
    for (int m = 0; m <= SOW_MAX_SEEDS; m++)
        start[m + 1] += start[m];
    uint64_t pos[SOW_MAX_SEEDS + 1];
    memcpy(pos, start, sizeof pos);
    for (uint64_t i = 0; i < N; i++)
        c->order[pos[c->lvl[i]]++] = (uint32_t)i;
    double last = util_now();
    for (int m = 0; m <= SOW_MAX_SEEDS; m++) {
        if (start[m + 1] == start[m])
            continue;
        if (stopped(env))
            return CLOS_STOPPED;
        tick(env, &last, N, N, m);
        solve_level(c, m, &c->order[start[m]], start[m + 1] - start[m]);
    }
    return CLOS_OK;
}

enum clos_err clos_build(struct clos *c, const struct clos_env *env, const sow_position *root)
{
    clos_reset(c);
    if (!c->set && !grow_set(c, 1 << 12))
        return CLOS_OOM;
    if (!grow_nodes(c, 1))
        return CLOS_OOM;
    uint64_t w[SOW_BOARD_WORDS + 1];
    pack(c, root, w);
    int n = rules_board_seeds(c->rs, root);
    /* exits into levels the tables hold are answered by them */
    int tbmax = env->tb ? tb_max_level(env->tb) : -1;
    set_insert(c, w, n, false);
    enum clos_err e = expand_all(c, env, tbmax);
    if (e == CLOS_OK)
        e = solve_levels(c, env);
    if (e != CLOS_OK)
        clos_reset(c);
    return e;
}

bool clos_find(const struct clos *c, const sow_position *p, int *lo, int *hi, int *v,
               bool *expanded)
{
    if (!c->n)
        return false;
    uint64_t w[SOW_BOARD_WORDS + 1];
    pack(c, p, w);
    const int S = c->S;
    uint64_t key = mixkey(w, S), mask = c->scap - 1;
    for (uint64_t h = key & mask; c->set[h].key; h = (h + 1) & mask) {
        const struct cell *cl = &c->set[h];
        if (cl->key == key && same_words(&c->pw[(uint64_t)cl->idx * S], w, S)) {
            uint32_t i = cl->idx;
            if (lo)
                *lo = c->lo[i];
            if (hi)
                *hi = c->hi[i];
            if (v)
                *v = c->v[i];
            if (expanded)
                *expanded = c->nmv[i] != NMV_OPEN;
            return true;
        }
    }
    return false;
}
