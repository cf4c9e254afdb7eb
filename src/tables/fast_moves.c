/* The fast builder's move, edge and seed passes (fast.h; build.c's header
 * says what each does).  Edges go into per-thread bins of 4 KB blocks
 * (sequential writes, no atomics) and become reverse (CSR) lists a block at
 * a time. */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fast.h"
#include "move_group.h"

static struct blk *blk_new(struct lvl *L, struct pool *pl)
{
    struct blk *b = pl->free;
    if (b) {
        pl->free = b->next;
        return b;
    }
    size_t at = __atomic_fetch_add(&L->arena_used, sizeof(struct blk), __ATOMIC_RELAXED);
    if (at + sizeof(struct blk) > L->arena_cap) {
        pl->failed = true;
        return NULL;
    }
    return (struct blk *)(L->arena + at);
}

static bool bin_grow(struct lvl *L, struct pool *pl, struct bin *b)
{
    struct blk *k = blk_new(L, pl);
    if (!k)
        return false;
    k->next = b->head;
    b->head = k;
    b->cur = k->w;
    b->end = k->w + BLK_WORDS;
    return true;
}

/* Edge bins hold one word per edge: the target's offset in its block and the
 * low bits of the source; a marker word (EDGE_MARK | p >> EDGE_PLO) gives the
 * high bits of the sources that follow it.  Every bin block starts with a
 * marker, so blocks can be read in any order. */
#define EDGE_MARK 0x80000000u
#define EDGE_PLO 15
_Static_assert(BSHIFT + EDGE_PLO <= 31, "target offset and source low bits fit 31 bits");
_Static_assert((TB_MAX_ENTRIES >> EDGE_PLO) < EDGE_MARK, "source high bits fit a marker");

static inline void edge_put(struct lvl *L, struct pool *pl, struct bin *b, uint32_t q_local,
                            uint32_t p)
{
    uint32_t ph = p >> EDGE_PLO;
    if (__builtin_expect(b->end - b->cur < 2, 0)) {
        if (b->cur < b->end)
            *b->cur = EDGE_MARK; /* the full block's last word: no edge */
        if (!bin_grow(L, pl, b))
            return;
        b->lastph = UINT32_MAX;
    }
    if (b->lastph != ph) {
        *b->cur++ = EDGE_MARK | ph;
        b->lastph = ph;
    }
    b->edges++;
    *b->cur++ = q_local << EDGE_PLO | (p & ((1u << EDGE_PLO) - 1));
}

/* Call f(q_local, p) for every edge of bin b. */
#define EDGE_FOR(b, QL, P, BODY)                                                                   \
    do {                                                                                           \
        const uint32_t *end_ = (b)->cur;                                                           \
        for (const struct blk *k_ = (b)->head; k_;                                                 \
             k_ = k_->next, end_ = k_ ? k_->w + BLK_WORDS : NULL) {                                \
            uint32_t ph_ = 0;                                                                      \
            for (const uint32_t *x_ = k_->w; x_ < end_; x_++) {                                    \
                uint32_t v_ = *x_;                                                                 \
                if (v_ & EDGE_MARK) {                                                              \
                    ph_ = (v_ & ~EDGE_MARK) << EDGE_PLO;                                           \
                    continue;                                                                      \
                }                                                                                  \
                uint32_t QL = v_ >> EDGE_PLO, P = ph_ | (v_ & ((1u << EDGE_PLO) - 1));             \
                BODY;                                                                              \
            }                                                                                      \
        }                                                                                          \
    } while (0)

struct sow_relay_cache *tb_fast_thread_cache(const struct ruleset *rs)
{
    return rs->relay ? rules_cache_new(16) : NULL;
}

/* The move pass's relay cache of thread w: the workspace's, made once. */
static struct sow_relay_cache *work_cache(struct lvl *L, int w)
{
    if (!L->rs->relay)
        return NULL;
    if (!L->wk->cache[w])
        L->wk->cache[w] = tb_fast_thread_cache(L->rs);
    return L->wk->cache[w];
}

/* Pass 1: best exits, out-degrees, and each in-level edge (q, p) into the
 * thread's bin of q's block; the loop over a chunk's groups of positions is
 * move_group.h's, with these hooks. */
struct fmv {
    struct lvl *L;
    struct pool *pl;
    struct bin *eb; /* the thread's bins */
    int sh;         /* block shift */
    uint32_t qmask;
};

static inline __attribute__((always_inline)) void fmv_pos(void *x, uint64_t idx, sow_position *p)
{
    entry_pos(((struct fmv *)x)->L, idx, p);
}

static inline __attribute__((always_inline)) void
fmv_edge(void *x, uint64_t idx, const struct sow_child *c, int N)
{
    struct fmv *f = x;
    uint32_t q = (uint32_t)tb_index_b(f->L->ix, &c->pos, N, f->L->boards);
    edge_put(f->L, f->pl, &f->eb[q >> f->sh], q & f->qmask, (uint32_t)idx);
}

/* The repetition settlement, for the values pass. */
static inline __attribute__((always_inline)) void
fmv_done(void *x, uint64_t idx, const sow_position *p, int N)
{
    struct lvl *L = ((struct fmv *)x)->L;
    L->out[idx] = (int8_t)rules_cycle_net(L->rs, board_sum_range(&p->board, 0, N),
                                          board_sum_range(&p->board, N, 2 * N));
}

static inline __attribute__((always_inline)) void
fmv_group(void *x, const struct tb_mgroup *G, uint64_t g, uint64_t ge)
{
    struct node *nd = ((struct fmv *)x)->L->nd + g;
    for (uint64_t i = 0; i < ge - g; i++) {
        nd[i].be = (int8_t)G->best[i];
        nd[i].cnt = (uint8_t)G->deg[i];
        nd[i].xl = nd[i].xh = RETRO_UNDONE;
    }
}

/* The move pass over entries [a, b) (one chunk); N = holes per side, a
 * constant where the caller can make it one. */
static inline __attribute__((always_inline)) void
moves_range(struct lvl *L, uint64_t a, uint64_t b, struct pool *pl, struct bin *eb,
            struct tb_mgroup *G, int N)
{
    const struct tb_mpass P = {.rs = L->rs, .ix = L->ix, .lower = L->lower, .n = L->n};
    struct fmv f = {.L = L, .pl = pl, .eb = eb, .sh = L->bshift,
                    .qmask = (1u << L->bshift) - 1};
    tb_move_chunk(&P, G, &f, a, b, N, fmv_pos, fmv_edge, NULL, fmv_done, fmv_group);
}

void tb_fast_pass_moves(struct lvl *L)
{
    tb_progress_phase(&L->pr, "moves", 0.0, 0.6);
#pragma omp parallel num_threads(L->threads)
    {
        int w = omp_get_thread_num();
        struct pool *pl = &L->pool[w];
        struct bin *eb = L->ebin + (uint64_t)w * L->ebstride;
        struct sow_movelist ml;
        struct tb_mgroup G = {.ml = &ml, .cache = work_cache(L, w)};
#pragma omp for schedule(dynamic, 1)
        for (uint64_t ch = 0; ch < L->nchunks; ch++) {
            if (stopped(L))
                continue;
            uint64_t a = ch * L->chunk, b = a + L->chunk < L->E ? a + L->chunk : L->E;
            /* The 2x6 board gets its own copy: the ranks unroll. */
            if (L->ix->pits == 6)
                moves_range(L, a, b, pl, eb, &G, 6);
            else
                moves_range(L, a, b, pl, eb, &G, L->ix->pits);
            tb_progress_add(&L->pr, b - a);
        }
        __atomic_fetch_add(&L->moves, G.moves, __ATOMIC_RELAXED);
    }
}

/* Pass 2: reverse edges per block from the bins of every thread: count into
 * off[q], inclusive prefix from the block's first edge, fill rev[--off[q]]
 * (off ends as the start of q's list).  All accesses stay in the block. */
void tb_fast_pass_edges(struct lvl *L, const uint32_t *ebase)
{
    tb_progress_phase(&L->pr, "edges", 0.6, 0.15);
    int T = L->threads;
#pragma omp parallel for schedule(dynamic, 1) num_threads(T)
    for (uint64_t c = 0; c < L->nblocks; c++) {
        uint64_t base = c << L->bshift, len = (uint64_t)1 << L->bshift;
        if (base + len > L->E)
            len = L->E - base;
        struct node *o = L->nd + base;
        for (uint64_t i = 0; i < len; i++)
            o[i].off = 0;
        for (int w = 0; w < T; w++) {
            const struct bin *b = &L->ebin[(uint64_t)w * L->ebstride + c];
            EDGE_FOR(b, ql, p, (void)p; o[ql].off++);
        }
        uint32_t s = ebase[c];
        for (uint64_t i = 0; i < len; i++) {
            s += o[i].off;
            o[i].off = s;
        }
        for (int w = 0; w < T; w++) {
            const struct bin *b = &L->ebin[(uint64_t)w * L->ebstride + c];
            EDGE_FOR(b, ql, p, L->rev[--o[ql].off] = p);
        }
        tb_progress_add(&L->pr, len);
    }
}

/* Entries with an exit, grouped by (best exit + n, block), index order inside
 * a group: the seeds of round t in block c are one contiguous run. */
void tb_fast_pass_seeds(struct lvl *L, uint32_t *cnt)
{
    int V = 2 * L->n + 1;
    uint64_t nb = L->nblocks;
#pragma omp parallel for schedule(dynamic, 1) num_threads(L->threads)
    for (uint64_t c = 0; c < nb; c++) {
        uint64_t a = c << L->bshift, b = a + ((uint64_t)1 << L->bshift);
        if (b > L->E)
            b = L->E;
        for (int v = 0; v < V; v++)
            cnt[(uint64_t)v * nb + c] = 0;
        for (uint64_t p = a; p < b; p++)
            if (L->nd[p].be != RETRO_NONE_EXIT)
                cnt[(uint64_t)(L->nd[p].be + L->n) * nb + c]++;
    }
    uint32_t s = 0;
    for (uint64_t i = 0; i < (uint64_t)V * nb; i++) {
        uint32_t k = cnt[i];
        L->seedoff[i] = s;
        s += k;
    }
    L->seedoff[(uint64_t)V * nb] = s;
#pragma omp parallel for schedule(dynamic, 1) num_threads(L->threads)
    for (uint64_t c = 0; c < nb; c++) {
        uint64_t a = c << L->bshift, b = a + ((uint64_t)1 << L->bshift);
        if (b > L->E)
            b = L->E;
        uint32_t at[2 * TB_MAX_LEVEL + 1];
        for (int v = 0; v < V; v++)
            at[v] = L->seedoff[(uint64_t)v * nb + c];
        for (uint64_t p = a; p < b; p++)
            if (L->nd[p].be != RETRO_NONE_EXIT)
                L->seeds[at[L->nd[p].be + L->n]++] = (uint32_t)p;
    }
}

