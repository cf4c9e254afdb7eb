/* Endgame tables, build side (tables/tables.h): retrograde analysis of one
 * level, the level-by-level builder, the verifier and the levels the solver
 * builds in memory (tb_mem).  It uses the probe side (file.c, index.c), never
 * the other way round.  docs/tables.md "Algorithm" explains why this computes exactly the
 * value of docs/rules.md; the comments here say how.
 *
 * Per level n (E entries, mover-normalised), the index range is cut into
 * "blocks" of 2^bshift entries (a block's node state, offsets and predecessor
 * lists fit in the cache together):
 *   moves (parallel over chunks): generate every entry's moves once; best exit
 *           value (capture moves probe the lower levels; settlements) and
 *           in-level out-degree per entry; each in-level edge p -> q is
 *           appended as (q, p) to the calling thread's bin of q's block
 *           (sequential writes, no atomics);
 *   edges (parallel over blocks): each block counts and fills the reverse
 *           (CSR) lists of its own targets from the bins of all threads;
 *   seeds:  entries grouped by best exit value and block (counting sort);
 *   solve:  the retrograde game of retro/retro.h, rounds t = n .. -n.  A
 *           finalisation does not touch its predecessors at once: the node
 *           joins a queue of final nodes, whose predecessor lists become
 *           4-byte updates in a second queue; both are taken oldest first,
 *           BATCH at a time, every random address of a batch prefetched
 *           before it is used (the cache misses overlap);
 *   values: retro_value: V = clamp(cyc, lo, hi).
 */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "tables/tables.h"
#include "retro/retro.h"
#include "util.h"
#include "lean.h"
#include "progress.h"
#include "tables_internal.h"

#define CHUNK 4096
#define MAX_THREADS 64

/* What the solve keeps per entry (8 bytes): the state and where the entry's
 * predecessor list starts, so that a node that becomes final has its list's
 * offsets in the cache line that was just written (the list ends at the next
 * entry's off; entry E holds the total). */
struct node {
    int8_t be;    /* best exit value, RETRO_NONE_EXIT if none */
    uint8_t cnt;  /* in-level out-degree, counted down in the solve */
    int8_t xl;    /* X-value of (p,L): lo */
    int8_t xh;    /* X-value of (p,H): -hi */
    uint32_t off; /* first predecessor in rev[] */
};
_Static_assert(sizeof(struct node) == 8, "node packs into 8 bytes");

/* Solve updates: predecessor index | kind.  Entries < 2^31 (TB_MAX_ENTRIES). */
#define UPD_CLAIM 0x80000000u /* a child's H node is final: the L node has an option t */
#define UPD_IDX 0x7FFFFFFFu   /* else: a child's L node is final: the H node loses one */
#define UPD_SKIP 0xFFFFFFFFu  /* dropped (index 2^31 - 1 is never an entry) */
_Static_assert(TB_MAX_ENTRIES <= UPD_IDX, "indices < 2^31 - 1 leave the top bit for the kind");

/* ---- memory: regions (retro.h), edge bins ----------------------------- */

#define HUGE_2M ((size_t)2 << 20)

/* Bins: chains of 4 KB blocks of 32-bit words, filled by one thread.  The
 * blocks come from one arena (bump pointer, then per-thread free lists). */
#define BLK_WORDS 1020
struct blk {
    struct blk *next;
    uint64_t pad_;
    uint32_t w[BLK_WORDS];
};
_Static_assert(sizeof(struct blk) == 4096, "bin blocks are 4 KB");

struct bin {
    uint32_t *cur, *end; /* free space of the head block */
    struct blk *head;    /* newest block; older ones are full */
    uint32_t lastph;     /* edge bins: source high bits of the last marker */
    uint32_t edges;      /* edge bins: edges held */
};

/* Block size (entries) of the edge pass and the seeds: a block's nodes and
 * predecessor lists stay in the cache while its lists are built. */
#define BSHIFT 16

struct pool {
    struct blk *free;
    bool failed;
    char pad_[64 - sizeof(struct blk *) - sizeof(bool)]; /* own cache line */
};

/* The workspace of a build: regions reused from level to level. */
struct tb_work {
    struct retro_region nd, rev, arena, lfin; /* arena: edge bins, then the seeds */
    /* Relay rule sets: one relay cache per thread, kept from level to level
     * (6 MB each: made afresh per level, its first touch cost the jodu
     * family about a fifth of a solve's time; entries hold for any level). */
    struct sow_relay_cache *cache[MAX_THREADS];
};

static size_t arena_blocks(uint64_t E, int pits, int threads, uint64_t nblocks)
{
    /* edge bins: at most 2 words per in-level move (<= N per entry; one
     * word, plus a marker per run of sources), plus one partly filled block
     * per bin (T per block); at least one word per entry for the seeds. */
    size_t edges = (size_t)(2 * E * (uint64_t)pits / (BLK_WORDS - 2) + 1),
           seeds = (size_t)(E / BLK_WORDS + 1);
    return (edges > seeds ? edges : seeds) + (size_t)threads * nblocks + 64;
}

struct lvl {
    const struct ruleset *rs;
    const struct tb_set *lower;
    const struct tb_index *ix;
    const struct tb_build_opts *opt;
    struct tb_work *wk; /* the workspace (regions, relay caches) */
    int n, threads;
    uint64_t boards, E, nchunks, chunk;
    struct node *nd;   /* per entry, plus one holding the edge total */
    int8_t *out;       /* the level's values; the repetition settlement until then */
    uint64_t *lfin;    /* bit per entry: L node final (1 bit: stays in the cache) */
    uint32_t *rev;     /* predecessors, grouped by target */
    uint32_t *seeds;   /* entries with an exit, by (best exit, block, index) */
    uint32_t *seedoff; /* (2n+1) * nblocks + 1 offsets into seeds */
    int bshift;        /* block = 2^bshift entries */
    uint64_t nblocks;
    /* arena */
    char *arena;
    size_t arena_cap, arena_used;
    struct pool pool[MAX_THREADS];
    struct bin *ebin; /* edges: [thread][block], a thread's row from a cache line */
    uint64_t ebstride; /* bins per row: nblocks rounded up to whole cache lines */
    uint64_t moves;    /* moves generated in the move pass (children looked up) */
    struct tb_progress pr; /* progress.h */
};

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

static bool stopped(const struct lvl *L)
{
    return tb_stopped(L->opt);
}

/* The position of entry idx (normalised: side A); st/boards split. */
static void entry_pos(const struct lvl *L, uint64_t idx, sow_position *p)
{
    tb_position_of(L->ix, L->n, idx, p);
}

/* Step p (entry idx) to entry idx+1. */
static void entry_next(const struct lvl *L, uint64_t idx, sow_position *p)
{
    if (!tb_index_next(L->ix, p->board.h))
        entry_pos(L, idx + 1, p);
}

/* In-level child's index (child c of a normalised position, mover B). */
static inline uint64_t child_index(const struct lvl *L, const sow_position *c, int n, uint64_t boards)
{
    /* relative to B, the child's mover (rules' hook; a call only where the
     * rule set indexes states) */
    int st = L->ix->states > 1 ? L->ix->rel_state(c) : 0;
    (void)n;
    return (uint64_t)st * boards + tb_rank_side(L->ix, c->board.h, 1);
}

/* child_index with N = holes per side passed in (a constant after inlining:
 * the rank's loops unroll). */
static inline __attribute__((always_inline)) uint64_t
child_index_n(const struct lvl *L, const sow_position *c, uint64_t boards, int N)
{
    /* relative to B, the child's mover (rules' hook; a call only where the
     * rule set indexes states) */
    int st = L->ix->states > 1 ? L->ix->rel_state(c) : 0;
    const uint8_t *h = c->board.h;
    uint64_t r = 0;
    int s = 0, i = 0;
    for (int k = N; k < 2 * N; k++, i++) {
        s += h[k];
        r += L->ix->t[i][s];
    }
    for (int k = 0; k < N - 1; k++, i++) {
        s += h[k];
        r += L->ix->t[i][s];
    }
    return (uint64_t)st * boards + r;
}

static struct sow_relay_cache *thread_cache(const struct ruleset *rs)
{
    return rs->relay ? rules_cache_new(16) : NULL;
}

/* The move pass's relay cache of thread w: the workspace's, made once. */
static struct sow_relay_cache *work_cache(struct lvl *L, int w)
{
    if (!L->rs->relay)
        return NULL;
    if (!L->wk->cache[w])
        L->wk->cache[w] = thread_cache(L->rs);
    return L->wk->cache[w];
}

/* Pass 1: best exits, out-degrees, and each in-level edge (q, p) into the
 * thread's bin of q's block.  Entries go in groups of MGROUP: the exits'
 * lower-level values are prefetched while the rest of the group is
 * generated, and read after it (random reads in levels of up to GBs). */
#define MGROUP 16

struct probe {
    const int8_t *v; /* the child's value in its level */
    int8_t d;        /* mover's minus opponent's capture */
    uint8_t j;       /* entry in the group */
};

/* The move pass over entries [a, b) (one chunk); N = holes per side, a
 * constant where the caller can make it one. */
static inline __attribute__((always_inline)) void
moves_range(struct lvl *L, uint64_t a, uint64_t b, struct pool *pl, struct bin *eb,
            struct sow_relay_cache *cache, struct sow_movelist *mlp, struct probe *pr, int *best,
            uint64_t *moves, int N)
{
    int sh = L->bshift, n = L->n;
    uint32_t qmask = (1u << sh) - 1;
    sow_position p;
    entry_pos(L, a, &p);
    for (uint64_t g = a; g < b; g += MGROUP) {
        uint64_t ge = g + MGROUP < b ? g + MGROUP : b;
        int np = 0;
        for (uint64_t idx = g; idx < ge; idx++) {
            L->rs->generate(L->rs, &p, mlp, cache, NULL);
            const struct sow_movelist *mlc = mlp;
            int j = (int)(idx - g), deg = 0;
            *moves += (uint64_t)mlc->n;
            best[j] = mlc->n == 0 ? mlc->settle[0] - mlc->settle[1] : RETRO_NONE_EXIT;
            for (int k = 0; k < mlc->n; k++) {
                const struct sow_child *c = &mlc->c[k];
                int cap = c->captured[0] + c->captured[1];
                if (cap) {
                    int m = n - cap;
                    uint64_t q = child_index_n(L, &c->pos, L->lower->boards[m], N);
                    const int8_t *v = L->lower->lv[m].v + q;
                    __builtin_prefetch(v);
                    pr[np].v = v;
                    pr[np].d = (int8_t)(c->captured[0] - c->captured[1]);
                    pr[np++].j = (uint8_t)j;
                } else {
                    uint32_t q = (uint32_t)child_index_n(L, &c->pos, L->boards, N);
                    edge_put(L, pl, &eb[q >> sh], q & qmask, (uint32_t)idx);
                    deg++;
                }
            }
            L->nd[idx].cnt = (uint8_t)deg;
            /* The repetition settlement, for the values pass. */
            L->out[idx] = (int8_t)rules_cycle_net(L->rs, board_sum_range(&p.board, 0, N),
                                                  board_sum_range(&p.board, N, 2 * N));
            if (idx + 1 < b)
                entry_next(L, idx, &p);
        }
        for (int i = 0; i < np; i++) {
            int e = pr[i].d - *pr[i].v;
            if (e > best[pr[i].j])
                best[pr[i].j] = e;
        }
        for (uint64_t idx = g; idx < ge; idx++) {
            L->nd[idx].be = (int8_t)best[idx - g];
            L->nd[idx].xl = L->nd[idx].xh = RETRO_UNDONE;
        }
    }
}

static void pass_moves(struct lvl *L)
{
    tb_progress_phase(&L->pr, "moves", 0.0, 0.6);
#pragma omp parallel num_threads(L->threads)
    {
        int w = omp_get_thread_num();
        struct pool *pl = &L->pool[w];
        struct bin *eb = L->ebin + (uint64_t)w * L->ebstride;
        struct sow_relay_cache *cache = work_cache(L, w);
        struct sow_movelist ml;
        struct probe pr[MGROUP * (SOW_MAX_PITS + 1)];
        int best[MGROUP];
        uint64_t moves = 0;
#pragma omp for schedule(dynamic, 1)
        for (uint64_t ch = 0; ch < L->nchunks; ch++) {
            if (stopped(L))
                continue;
            uint64_t a = ch * L->chunk, b = a + L->chunk < L->E ? a + L->chunk : L->E;
            /* The 2x6 board gets its own copy: the ranks unroll. */
            if (L->ix->pits == 6)
                moves_range(L, a, b, pl, eb, cache, &ml, pr, best, &moves, 6);
            else
                moves_range(L, a, b, pl, eb, cache, &ml, pr, best, &moves, L->ix->pits);
            tb_progress_add(&L->pr, b - a);
        }
        __atomic_fetch_add(&L->moves, moves, __ATOMIC_RELAXED);
    }
}

/* Pass 2: reverse edges per block from the bins of every thread: count into
 * off[q], inclusive prefix from the block's first edge, fill rev[--off[q]]
 * (off ends as the start of q's list).  All accesses stay in the block. */
static void pass_edges(struct lvl *L, const uint32_t *ebase)
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
static void pass_seeds(struct lvl *L, uint32_t *cnt)
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

/* A work list: v[h, n) are waiting, taken oldest first from h (see take),
 * appended at n.  First in, first out: an entry waits behind the others, so
 * the prefetches issued when it was added have had time to arrive. */
struct queue {
    uint32_t *v;
    size_t h, n, cap;
};

static bool reserve(struct queue *s, size_t more)
{
    if (s->h && (s->h >= s->n - s->h || s->n + more > s->cap)) {
        memmove(s->v, s->v + s->h, (s->n - s->h) * sizeof *s->v);
        s->n -= s->h;
        s->h = 0;
    }
    if (s->n + more <= s->cap)
        return true;
    size_t nc = s->cap ? 2 * s->cap : 4096;
    while (nc < s->n + more)
        nc *= 2;
    uint32_t *nv = realloc(s->v, nc * sizeof *nv);
    if (!nv)
        return false;
    s->v = nv;
    s->cap = nc;
    return true;
}

/* Work is done in batches of BATCH: first every random address of the batch
 * is prefetched, then used, so that the cache misses overlap (the graph has
 * no locality: a level's in-level edges join random entries). */
#define BATCH 64
#define SEED_CHUNK 2048 /* seeds taken at a time in a round of the solve */

/* One solving thread's work lists: fin = nodes just final whose
 * predecessors must hear of it (index | UPD_CLAIM if its H node, else its L
 * node), upd = updates for predecessors (index | UPD_CLAIM: the L node has an
 * option worth t; else: the H node loses an open child). */
struct solver {
    struct lvl *L;
    int t;
    struct queue fin, upd;
    bool failed;
};

static inline bool lfin_get(const struct lvl *L, uint32_t r)
{
    return (__atomic_load_n(&L->lfin[r >> 6], __ATOMIC_RELAXED) >> (r & 63)) & 1;
}

/* Take the oldest BATCH (or fewer) entries of a work list into w. */
static inline size_t take(struct queue *s, uint32_t *w)
{
    size_t m = s->n - s->h < BATCH ? s->n - s->h : BATCH;
    memcpy(w, s->v + s->h, m * sizeof *w);
    s->h += m;
    if (s->h == s->n)
        s->h = s->n = 0;
    return m;
}

/* Apply the oldest BATCH updates. */
static inline __attribute__((always_inline)) void apply_batch(struct solver *S, bool par)
{
    struct lvl *L = S->L;
    int t = S->t;
    uint32_t u[BATCH];
    size_t m = take(&S->upd, u);
    /* Claims on L nodes already final are dropped by their bit in the
     * L-final bitmap, which stays in the cache, instead of a miss on the
     * node (emit_batch dropped most; this catches the nodes that became
     * final since; a stale bit only costs a useless claim). */
    for (size_t i = 0; i < m; i++) {
        if ((u[i] & UPD_CLAIM) && lfin_get(L, u[i] & UPD_IDX))
            u[i] = UPD_SKIP;
        else
            __builtin_prefetch(&L->nd[u[i] & UPD_IDX], 1);
    }
    if (!reserve(&S->fin, m)) {
        S->failed = true;
        return;
    }
    uint32_t *f = S->fin.v + S->fin.n;
    if (!par) {
        /* One thread: the same steps without branches on the outcomes (a
         * node's finalisation is data-dependent and mispredicts): every
         * update writes its candidate slot in fin and advances only if
         * the node became final; the lists of the new final nodes are
         * prefetched after the batch. */
        uint32_t *f0 = f;
        for (size_t i = 0; i < m; i++) {
            uint32_t v = u[i], r = v & UPD_IDX;
            if (v == UPD_SKIP)
                continue;
            struct node *x = &L->nd[r];
            if (v & UPD_CLAIM) {
                bool z = x->xl == RETRO_UNDONE;
                x->xl = z ? (int8_t)t : x->xl;
                L->lfin[r >> 6] |= (uint64_t)z << (r & 63);
                *f = r;
                f += z;
            } else {
                uint8_t c = --x->cnt;
                int be = x->be;
                bool z = (c == 0) & ((be == RETRO_NONE_EXIT) | (-be >= t)) & (x->xh == RETRO_UNDONE);
                x->xh = z ? (int8_t)t : x->xh;
                *f = r | UPD_CLAIM;
                f += z;
            }
        }
        for (uint32_t *g = f0; g < f; g++)
            __builtin_prefetch(&L->rev[L->nd[*g & UPD_IDX].off]);
        S->fin.n = (size_t)(f - S->fin.v);
        return;
    }
    for (size_t i = 0; i < m; i++) {
        uint32_t r = u[i] & UPD_IDX;
        struct node *x = &L->nd[r];
        if (u[i] == UPD_SKIP)
            continue;
        if (u[i] & UPD_CLAIM) {
            /* A child's H node is final at t: the L node has an option t.
             * The node's bit in the L-final bitmap is the claim (one atomic
             * where a compare-and-swap on xl plus the bit took two): the
             * thread that sets it is the only one that writes xl, and
             * nothing reads xl before the values pass. */
            uint64_t bit = 1ull << (r & 63);
            if (!(__atomic_fetch_or(&L->lfin[r >> 6], bit, __ATOMIC_RELAXED) & bit)) {
                x->xl = (int8_t)t;
                __builtin_prefetch(&L->rev[x->off]);
                *f++ = r;
            }
        } else if (retro_dec(&x->cnt, par) == 0) {
            /* Last open child: final now unless its best exit is better for
             * Y than t (then the scan of round -be finalises it).  Only this
             * thread takes the counter to zero, so the H node is its alone
             * unless -be == t: then this round's scan of the H seeds may
             * find the counter at zero too, and the compare-and-swap
             * decides (in a later round, -be > t, the scan of round -be
             * saw the counter above zero). */
            int be = x->be;
            if (be == RETRO_NONE_EXIT || -be > t) {
                x->xh = (int8_t)t;
                __builtin_prefetch(&L->rev[x->off]);
                *f++ = r | UPD_CLAIM;
            } else if (-be == t && retro_claim(&x->xh, (int8_t)t, par)) {
                __builtin_prefetch(&L->rev[x->off]);
                *f++ = r | UPD_CLAIM;
            }
        }
    }
    S->fin.n = (size_t)(f - S->fin.v);
}

/* Tell the predecessors of the oldest BATCH final nodes. */
static void emit_batch(struct solver *S)
{
    struct lvl *L = S->L;
    uint32_t q[BATCH], a[BATCH], b[BATCH];
    size_t m = take(&S->fin, q);
    /* The nodes were final moments ago: their lines are cached and their
     * lists on their way (apply_batch prefetched them; again here, for
     * those that were dropped from the cache meanwhile). */
    size_t total = 0;
    for (size_t i = 0; i < m; i++) {
        uint32_t r = q[i] & UPD_IDX;
        a[i] = L->nd[r].off;
        b[i] = L->nd[r + 1].off;
        total += b[i] - a[i];
        __builtin_prefetch(&L->rev[a[i]]);
    }
    if (!reserve(&S->upd, total)) {
        S->failed = true;
        return;
    }
    uint32_t *u = S->upd.v + S->upd.n;
    for (size_t i = 0; i < m; i++) {
        /* L final -> the predecessors' H nodes lose a child (kind 0);
         * H final -> the predecessors' L nodes have an option (UPD_CLAIM),
         * dropped here already if the L-final bitmap (in the cache) says
         * the L node is final (71% of claims, counted on oware level 16).
         * The targets are prefetched for apply_batch: it takes these
         * updates after the ones queued before them. */
        if (q[i] & UPD_CLAIM) {
            for (uint32_t e = a[i]; e < b[i]; e++) {
                uint32_t r = L->rev[e];
                /* Branch-free (the outcome mispredicts): the slot is
                 * written, kept if keep; a dropped claim prefetches the
                 * final node itself (cached) instead of r's node. */
                uint32_t keep = !lfin_get(L, r), self = q[i] & UPD_IDX;
                __builtin_prefetch(&L->nd[self ^ ((r ^ self) & -keep)], 1);
                *u = r | UPD_CLAIM;
                u += keep;
            }
        } else {
            for (uint32_t e = a[i]; e < b[i]; e++) {
                __builtin_prefetch(&L->nd[L->rev[e]], 1);
                *u++ = L->rev[e];
            }
        }
    }
    S->upd.n = (size_t)(u - S->upd.v);
}

static inline __attribute__((always_inline)) void drain_(struct solver *S, bool par)
{
    while ((S->upd.n || S->fin.n) && !S->failed) {
        if (S->upd.n - S->upd.h >= BATCH || !S->fin.n)
            apply_batch(S, par);
        else
            emit_batch(S);
    }
}

static void drain_par(struct solver *S)
{
    drain_(S, true);
}

static void drain_one(struct solver *S)
{
    drain_(S, false);
}

static int solve(struct lvl *L)
{
    int n = L->n, T = L->threads;
    uint64_t nb = L->nblocks;
    tb_progress_phase(&L->pr, "solve", 0.8, 0.15 / (2 * n + 1));
    /* Rounds with no entry of best exit t or -t are empty: every
     * finalisation of a round starts from such an entry. */
    bool seeded[2 * TB_MAX_LEVEL + 1];
    for (int t = -n; t <= n; t++)
        seeded[t + n] = L->seedoff[(uint64_t)(t + n + 1) * nb] > L->seedoff[(uint64_t)(t + n) * nb];
    bool ok = true;
    volatile bool stopv[2 * TB_MAX_LEVEL + 1] = {false};
    uint64_t nextc[2 * TB_MAX_LEVEL + 1] = {0}; /* next seed chunk, per round */
#pragma omp parallel num_threads(T)
    {
        int me = omp_get_thread_num();
        /* A node is finalised once: an L node by the thread that sets its
         * L-final bit, an H node by the thread that takes its counter to
         * zero or, when a seed's scan may race with that, by
         * compare-and-swap on its value. */
        struct solver S;
        memset(&S, 0, sizeof S);
        S.L = L;
        for (int t = n; t >= -n; t--) {
            if (!seeded[t + n] && !seeded[-t + n])
                continue;
            /* One reading of the stop flag per round, shared by all. */
            if (me == 0)
                stopv[t + n] = stopped(L);
#pragma omp barrier
            if (stopv[t + n])
                break;
            S.t = t;
            /* The round's seeds (L: best exit t, H: best exit -t; each list
             * sorted by block, then index) are taken SEED_CHUNK at a time,
             * first come first served, and each thread drains what its
             * seeds set off.  Chunks rather than whole blocks: a level of a
             * million entries has only ~20 blocks, too few to share evenly. */
            const uint32_t *l0 = L->seeds + L->seedoff[(uint64_t)(t + n) * nb],
                           *l1 = L->seeds + L->seedoff[(uint64_t)(t + n + 1) * nb],
                           *h0 = L->seeds + L->seedoff[(uint64_t)(-t + n) * nb],
                           *h1 = L->seeds + L->seedoff[(uint64_t)(-t + n + 1) * nb];
            uint64_t nlc = ((uint64_t)(l1 - l0) + SEED_CHUNK - 1) / SEED_CHUNK,
                     nhc = ((uint64_t)(h1 - h0) + SEED_CHUNK - 1) / SEED_CHUNK;
            for (;;) {
                uint64_t c = __atomic_fetch_add(&nextc[t + n], 1, __ATOMIC_RELAXED);
                if (c >= nlc + nhc)
                    break;
                /* L seeds become claims on themselves; H seeds are final if
                 * no in-level child is open. */
                const uint32_t *sl = l0, *el = l0, *sh = h0, *eh = h0;
                if (c < nlc) {
                    sl = l0 + c * SEED_CHUNK;
                    el = (uint64_t)(l1 - sl) < SEED_CHUNK ? l1 : sl + SEED_CHUNK;
                } else {
                    sh = h0 + (c - nlc) * SEED_CHUNK;
                    eh = (uint64_t)(h1 - sh) < SEED_CHUNK ? h1 : sh + SEED_CHUNK;
                }
                while ((sl < el || sh < eh) && !S.failed) {
                    if (sl < el) {
                        size_t m = (size_t)(el - sl) < 4 * BATCH ? (size_t)(el - sl) : 4 * BATCH;
                        if (!reserve(&S.upd, m)) {
                            S.failed = true;
                            break;
                        }
                        for (size_t i = 0; i < m; i++)
                            S.upd.v[S.upd.n++] = sl[i] | UPD_CLAIM;
                        sl += m;
                    }
                    if (sh < eh) {
                        size_t m = (size_t)(eh - sh) < BATCH ? (size_t)(eh - sh) : BATCH;
                        if (!reserve(&S.fin, m)) {
                            S.failed = true;
                            break;
                        }
                        for (size_t i = 0; i < m; i++)
                            __builtin_prefetch(&L->nd[sh[i]], 1);
                        for (size_t i = 0; i < m; i++) {
                            struct node *x = &L->nd[sh[i]];
                            if (T > 1 ? __atomic_load_n(&x->cnt, __ATOMIC_RELAXED) == 0 &&
                                            retro_claim(&x->xh, (int8_t)t, true)
                                      : x->cnt == 0 && retro_claim(&x->xh, (int8_t)t, false))
                            {
                                __builtin_prefetch(&L->rev[x->off]);
                                S.fin.v[S.fin.n++] = sh[i] | UPD_CLAIM;
                            }
                        }
                        sh += m;
                    }
                    if (T > 1)
                        drain_par(&S);
                    else
                        drain_one(&S);
                }
            }
            if (me == 0) {
                L->pr.base += L->pr.weight;
                tb_progress_add(&L->pr, 0);
            }
#pragma omp barrier
        }
        if (S.failed)
#pragma omp atomic write
            ok = false;
        free(S.fin.v);
        free(S.upd.v);
    }
    if (!ok)
        return -1;
    return stopped(L) ? 1 : 0;
}

/* lo/hi from the game, V = clamp(cyc, lo, hi) (cyc is in out[] since the move
 * pass).  Returns entries with lo > hi (bugs). */
static uint64_t finish(struct lvl *L, int8_t *out, int8_t *lohi)
{
    tb_progress_phase(&L->pr, "values", 0.95, 0.05);
    int n = L->n;
    uint64_t bad = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(L->threads) reduction(+ : bad)
    for (uint64_t ch = 0; ch < L->nchunks; ch++) {
        uint64_t a = ch * L->chunk, b = a + L->chunk < L->E ? a + L->chunk : L->E;
        for (uint64_t idx = a; idx < b; idx++) {
            const struct node *x = &L->nd[idx];
            /* cyc: the move pass put it in out[] */
            out[idx] = (int8_t)retro_value(x->xl, x->xh, n, out[idx], &bad);
            if (lohi) {
                lohi[2 * idx] = (int8_t)(x->xl == RETRO_UNDONE ? -n : x->xl);
                lohi[2 * idx + 1] = (int8_t)(x->xh == RETRO_UNDONE ? n : -x->xh);
            }
        }
        tb_progress_add(&L->pr, b - a);
    }
    return bad;
}


static int level_threads(const struct tb_build_opts *opt, uint64_t E)
{
    return retro_threads(opt ? opt->threads : 0, E, MAX_THREADS);
}

static uint64_t level_blocks(uint64_t E)
{
    return (E + ((uint64_t)1 << BSHIFT) - 1) >> BSHIFT;
}

double tb_level_memory(const struct tb_index *ix, int level)
{
    double E = (double)tb_level_entries(ix, level);
    /* node 8 (with the offsets) + out 1 + L-final bit 1/8 bytes; edge bins (4 per in-level
     * move plus markers, counted as 5) and reverse edges (4 per in-level move,
     * <= N moves) live together during the edge pass (the seeds, 4 per entry,
     * reuse the bins' memory later);
     * a partly filled 4 KB bin block per block and thread (8 assumed). */
    return E * (9.125 + 9.0 * ix->pits) + 4096.0 * 8 * (double)level_blocks((uint64_t)E) +
           (1 << 22);
}

/* Reserve the workspace for levels up to E entries (virtual; pages are
 * touched as levels need them). */
static bool work_reserve(struct tb_work *wk, uint64_t E, int pits, int threads)
{
    uint64_t nb = level_blocks(E);
    const int f = RETRO_HUGE | RETRO_SPARE;
    return retro_region_get(&wk->nd, (E + 1) * sizeof(struct node), f) &&
           retro_region_get(&wk->lfin, (E / 64 + 1) * sizeof(uint64_t), f) &&
           retro_region_get(&wk->rev, (E * (uint64_t)pits + 1) * sizeof(uint32_t), f) &&
           retro_region_get(&wk->arena, arena_blocks(E, pits, threads, nb) * sizeof(struct blk), f);
}

static void work_free(struct tb_work *wk)
{
    retro_region_free(&wk->nd);
    retro_region_free(&wk->lfin);
    retro_region_free(&wk->rev);
    retro_region_free(&wk->arena);
    for (int w = 0; w < MAX_THREADS; w++) {
        rules_cache_free(wk->cache[w]);
        wk->cache[w] = NULL;
    }
}

static enum sow_status solve_level(const struct ruleset *rs, const struct tb_set *lower, int n,
                                   int8_t *out, int8_t *lohi, const struct tb_build_opts *opt,
                                   struct tb_work *wk, struct sow_error *e)
{
    struct lvl L;
    memset(&L, 0, sizeof L);
    L.rs = rs;
    L.lower = lower;
    L.ix = &lower->ix;
    L.opt = opt;
    L.n = n;
    L.boards = tb_level_boards(L.ix, n);
    L.E = tb_level_entries(L.ix, n);
    L.threads = level_threads(opt, L.E);
    tb_progress_init(&L.pr, opt, n, L.E);
    /* Small chunks on small levels, so that threads do interleave there too. */
    L.chunk = L.E < (1u << 20) ? 256 : 4096;
    if (n > TB_MAX_LEVEL || L.E > TB_MAX_ENTRIES) {
        return sow_fail(e, SOW_E_TOO_BIG, "level %d: too large for one process (31-bit indices)",
                        n);
    }
    for (int m = 0; m < n; m++)
        if (!lower->lv[m].v) {
            return sow_fail(e, SOW_E_INPUT, "level %d needs level %d, which is not loaded", n, m);
        }
    L.nchunks = (L.E + L.chunk - 1) / L.chunk;
    L.bshift = BSHIFT;
    L.nblocks = level_blocks(L.E);
    int T = L.threads;
    enum sow_status rc = SOW_E_NOMEM;
    uint64_t nb = L.nblocks, V = 2 * (uint64_t)n + 1;
    uint32_t *ebase = NULL, *cnt = NULL;
    if (!work_reserve(wk, L.E, rs->pits, T))
        goto oom;
    L.wk = wk;
    L.nd = wk->nd.p;
    L.out = out;
    L.lfin = wk->lfin.p;
    memset(L.lfin, 0, (L.E / 64 + 1) * sizeof *L.lfin);
    L.rev = wk->rev.p;
    L.arena = wk->arena.p;
    L.arena_cap = wk->arena.len;
    /* The threads' rows of bins share no cache line (the move pass writes
     * a bin per edge). */
    L.ebstride = (nb * sizeof *L.ebin + 63) / 64 * 64 / sizeof *L.ebin;
    size_t ebytes = (size_t)((uint64_t)T * L.ebstride * sizeof *L.ebin) + 64; /* never 0 */
    L.ebin = aligned_alloc(64, ebytes);
    if (L.ebin)
        memset(L.ebin, 0, ebytes);
    ebase = malloc((nb + 1) * sizeof *ebase);
    cnt = malloc((V * nb + 1) * sizeof *cnt);
    L.seedoff = malloc((V * nb + 1) * sizeof *L.seedoff);
    if (!L.ebin || !ebase || !cnt || !L.seedoff)
        goto oom;
    pass_moves(&L);
    if (stopped(&L)) {
        rc = SOW_E_INTERRUPTED;
        goto done;
    }
    for (int w = 0; w < T; w++)
        if (L.pool[w].failed) {
            rc = sow_fail(e, SOW_E_NOMEM, "level %d: internal error: edge bins overflow", n);
            goto done;
        }
    uint64_t total = 0;
    for (uint64_t c = 0; c < nb; c++) {
        ebase[c] = (uint32_t)total;
        for (int w = 0; w < T; w++)
            total += L.ebin[(uint64_t)w * L.ebstride + c].edges;
        if (total > UINT32_MAX) {
            rc = sow_fail(e, SOW_E_TOO_BIG, "level %d: more than 2^32 in-level moves (uint32 edges)",
                          n);
            goto done;
        }
    }
    ebase[nb] = (uint32_t)total;
    L.nd[L.E].off = (uint32_t)total;
    pass_edges(&L, ebase);
    free(L.ebin);
    L.ebin = NULL;
    /* Every bin block is free again: the seeds reuse the arena's pages
     * (already touched, so not zeroed again). */
    L.seeds = (uint32_t *)(void *)L.arena;
    if (stopped(&L)) {
        rc = SOW_E_INTERRUPTED;
        goto done;
    }
    pass_seeds(&L, cnt);
    int sr = solve(&L);
    if (sr > 0) {
        rc = SOW_E_INTERRUPTED;
        goto done;
    }
    if (sr < 0) {
        rc = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory in the solve", n);
        goto done;
    }
    if (finish(&L, out, lohi)) {
        /* a bug, not the user's input: reported as a failure while working */
        rc = sow_fail(e, SOW_E_NOMEM, "level %d: internal error: lo > hi", n);
        goto done;
    }
    if (opt && opt->progress)
        opt->progress(opt->ctx, n, L.E, 1.0, "done");
    if (opt && opt->moves)
        *opt->moves += L.moves;
    /* ---- lean builder hook: what this level used (nodes, L-final bits,
     * lists, bins, values), for `sow bench tables` ---- */
    if (opt && opt->level_info)
        opt->level_info(opt->ctx, n, L.E, "fast",
                        (double)((L.E + 1) * sizeof(struct node) + (L.E / 64 + 1) * 8 +
                                 (uint64_t)L.nd[L.E].off * 4 + L.arena_used + L.E));
    rc = SOW_OK;
    goto done;
oom:
    rc = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory", n);
done:
    free(L.ebin);
    free(ebase);
    free(cnt);
    free(L.seedoff);
    return rc;
}

enum sow_status tb_solve_level(const struct ruleset *rs, const struct tb_set *lower, int n,
                               int8_t *out, int8_t *lohi, const struct tb_build_opts *opt,
                               struct sow_error *e)
{
    struct tb_work wk;
    memset(&wk, 0, sizeof wk);
    enum sow_status rc = solve_level(rs, lower, n, out, lohi, opt, &wk, e);
    work_free(&wk);
    return rc;
}

static double machine_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    return pages > 0 && psize > 0 ? (double)pages * (double)psize : 4e9;
}

/* Another builder holds the directory: say so once through the progress
 * callback (level -1, the phase is the message). */
static void build_waiting(void *ctx)
{
    const struct tb_build_opts *opt = ctx;
    if (opt && opt->progress)
        opt->progress(opt->ctx, -1, 0, 0, "waiting for another sow building in this directory");
}

static enum sow_status fast_build(const struct ruleset *rs, const char *dir, int max_level,
                                  const struct tb_build_opts *opt, struct sow_error *e);

enum sow_status tb_build(const struct ruleset *rs, const char *dir, int max_level,
                         const struct tb_build_opts *opt, struct sow_error *e)
{
    if (max_level < 0 || max_level > TB_MAX_LEVEL)
        return sow_fail(e, SOW_E_INPUT,
                        "--seeds %d: levels go up to %d (values are signed bytes, |V| <= n)",
                        max_level, TB_MAX_LEVEL);
    /* Before any work (fileio.h rules 3 and 4): the directory exists, this
     * process alone builds in it, and it can be written. */
    struct fio_lock lock = {-1};
    enum sow_status rc;
    if ((rc = fio_mkdir_p(dir, e)) ||
        (rc = fio_lock_dir(dir, &lock, opt ? opt->stop : NULL, build_waiting, (void *)opt, e)) ||
        (rc = fio_dir_writable(dir, e))) {
        fio_unlock(&lock);
        return rc;
    }
    /* Today's builder for the levels that fit it, the lean one (lean.c)
     * for the rest; --builder forces one. */
    int fast_to = tb_lean_fast_to(rs, dir, max_level, opt);
    rc = fast_to < max_level ? tb_lean_check(rs, dir, max_level, fast_to, opt, e) : SOW_OK;
    if (rc == SOW_OK && fast_to >= 0)
        rc = fast_build(rs, dir, fast_to, opt, e);
    if (rc == SOW_OK && fast_to < max_level)
        rc = tb_lean_build(rs, dir, max_level, fast_to, opt, e);
    fio_unlock(&lock);
    return rc;
}

/* Levels 0..max_level by the fast builder (the directory locked by the
 * caller): the missing ones must fit, refused up front otherwise. */
static enum sow_status fast_build(const struct ruleset *rs, const char *dir, int max_level,
                                  const struct tb_build_opts *opt, struct sow_error *e)
{
    struct tb_set *set = tb_set_new(rs, dir);
    if (!set)
        return sow_fail(e, SOW_E_NOMEM, "out of memory");
    enum sow_status rc = SOW_OK;
    struct tb_work wk;
    memset(&wk, 0, sizeof wk);
    /* Levels built here, kept in memory for the levels above (huge pages:
     * the exits probe them at random). */
    struct retro_region *built = calloc(TB_MAX_LEVEL + 1, sizeof *built);
    if (!built) {
        tb_close(set);
        return sow_fail(e, SOW_E_NOMEM, "out of memory");
    }
    uint64_t maxE = 0;
    double limit = opt && opt->memory_bytes > 0 ? opt->memory_bytes : 0.75 * machine_memory();
    /* An address-space limit (ulimit -v) refuses like --memory, up front and
     * saying what fits (README "Exit statuses"); the workspace is reserved
     * as address space, hence the margin. */
    const char *by = "the memory limit", *raise = "--memory";
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
        0.75 * (double)as.rlim_cur < limit) {
        limit = 0.75 * (double)as.rlim_cur;
        by = "3/4 of the address-space limit";
        raise = "ulimit -v";
    }
    /* Existing levels are checked completely; missing ones must fit. */
    double lower_bytes = 0;
    bool missing[TB_MAX_LEVEL + 1] = {0};
    for (int n = 0; n <= max_level; n++) {
        char path[4200];
        tb_file_name(dir, rs->name, rs->pits, n, path, sizeof path);
        uint64_t E = tb_level_entries(&set->ix, n);
        if (fio_exists(path)) {
            rc = tb_set_load_level(set, n, e);
            if (rc != SOW_OK) {
                if (e) {
                    size_t l = strlen(e->msg);
                    snprintf(e->msg + l, sizeof e->msg - l, " (delete it to rebuild)");
                }
                goto out;
            }
        } else {
            missing[n] = true;
            maxE = E > maxE ? E : maxE;
            if (E > TB_MAX_ENTRIES) {
                rc = sow_fail(e, SOW_E_TOO_BIG,
                              "level %d has %llu entries, more than one process indexes (%llu); "
                              "build up to level %d",
                              n, (unsigned long long)E, (unsigned long long)TB_MAX_ENTRIES, n - 1);
                goto out;
            }
            double need = tb_level_memory(&set->ix, n) + lower_bytes;
            if (need > limit) {
                int fit = n - 1;
                rc = sow_fail(e, SOW_E_TOO_BIG,
                              "level %d needs about %.1f GB but %s is %.1f GB (%s); "
                              "levels up to %d fit: use --seeds %d or raise %s",
                              n, need / 1e9, by, limit / 1e9, raise, fit, fit, raise);
                goto out;
            }
        }
        lower_bytes += (double)E;
    }
    /* One workspace for every level, sized for the largest. */
    if (maxE && !work_reserve(&wk, maxE, rs->pits, level_threads(opt, maxE))) {
        /* Nothing is built yet: a refusal up front, like the memory limit. */
        rc = sow_fail(e, SOW_E_TOO_BIG,
                      "level %d: the workspace does not fit the address space (ulimit -v); "
                      "use a smaller --seeds or raise the limit",
                      max_level);
        goto out;
    }
    for (int n = 0; n <= max_level; n++) {
        if (!missing[n]) {
            if (opt && opt->level_done)
                opt->level_done(opt->ctx, n, set->lv[n].entries, 0, false);
            continue;
        }
        double t0 = util_now();
        uint64_t E = tb_level_entries(&set->ix, n);
        int8_t *v = retro_region_get(&built[n], E ? E : 1, (E >= HUGE_2M ? RETRO_HUGE : 0) | RETRO_SPARE);
        if (!v) {
            rc = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory", n);
            goto out;
        }
        rc = solve_level(rs, set, n, v, NULL, opt, &wk, e);
        if (rc == SOW_OK)
            rc = tb_file_write(dir, rs, n, v, E, e);
        if (rc != SOW_OK)
            goto out;
        /* The written file holds exactly v: the next levels probe v itself. */
        tb_set_put_level(set, n, v, E);
        if (opt && opt->level_done)
            opt->level_done(opt->ctx, n, E, util_now() - t0, true);
        if (opt && opt->stop && *opt->stop) {
            rc = SOW_E_INTERRUPTED;
            goto out;
        }
    }
out:
    tb_close(set);
    work_free(&wk);
    for (int n = 0; n <= max_level; n++)
        retro_region_free(&built[n]);
    free(built);
    return rc;
}

/* ---- verification --------------------------------------------------------- */

enum sow_status tb_verify_level(const struct tb_set *set, int n, const struct tb_build_opts *opt,
                                int64_t *nbad, struct sow_error *e)
{
    uint64_t E;
    const int8_t *v = tb_level_values(set, n, &E);
    if (!v)
        return sow_fail(e, SOW_E_INPUT, "level %d is not loaded", n);
    int8_t *re = malloc(E ? E : 1), *lohi = malloc(2 * (E ? E : 1));
    if (!re || !lohi) {
        free(re);
        free(lohi);
        return sow_fail(e, SOW_E_NOMEM, "level %d: out of memory", n);
    }
    enum sow_status rc = tb_solve_level(&set->rs, set, n, re, lohi, opt, e);
    if (rc != SOW_OK) {
        free(re);
        free(lohi);
        if (rc == SOW_E_INTERRUPTED)
            sow_fail(e, rc, "interrupted");
        return rc;
    }
    struct lvl L;
    memset(&L, 0, sizeof L);
    L.rs = &set->rs;
    L.lower = set;
    L.ix = &set->ix;
    L.n = n;
    L.boards = set->boards[n];
    L.E = E;
    int threads = opt && opt->threads > 0 ? opt->threads : omp_get_max_threads();
    L.chunk = CHUNK;
    uint64_t nchunks = (E + CHUNK - 1) / CHUNK;
    uint64_t bad = 0, first = UINT64_MAX;
    char why[160] = "";
    /* Local checks against the successors: the stored value is the
     * recomputed one, within [-n, n], at least every exit, equal to the best
     * exit without in-level moves; and the recomputed bounds satisfy
     * lo = max(exits, -hi(q)), hi = max(exits, -lo(q)) over in-level q. */
#pragma omp parallel num_threads(threads)
    {
        struct sow_relay_cache *cache = thread_cache(&set->rs);
        struct sow_movelist ml;
#pragma omp for schedule(dynamic, 1) reduction(+ : bad)
        for (uint64_t ch = 0; ch < nchunks; ch++) {
            uint64_t a = ch * CHUNK, b = a + CHUNK < E ? a + CHUNK : E;
            sow_position p;
            entry_pos(&L, a, &p);
            for (uint64_t idx = a; idx < b; idx++) {
                const char *w = NULL;
                set->rs.generate(&set->rs, &p, &ml, cache, NULL);
                int best = RETRO_NONE_EXIT, blo = RETRO_NONE_EXIT, bhi = RETRO_NONE_EXIT, inlevel = 0;
                if (ml.n == 0)
                    best = ml.settle[0] - ml.settle[1];
                for (int k = 0; k < ml.n; k++) {
                    const struct sow_child *c = &ml.c[k];
                    int cap = c->captured[0] + c->captured[1];
                    if (cap) {
                        int m = n - cap;
                        uint64_t q = child_index(&L, &c->pos, m, set->boards[m]);
                        int e = c->captured[0] - c->captured[1] - set->lv[m].v[q];
                        if (e > best)
                            best = e;
                    } else {
                        uint64_t q = child_index(&L, &c->pos, n, L.boards);
                        inlevel++;
                        if (-lohi[2 * q + 1] > blo)
                            blo = -lohi[2 * q + 1];
                        if (-lohi[2 * q] > bhi)
                            bhi = -lohi[2 * q];
                    }
                }
                int lo = lohi[2 * idx], hi = lohi[2 * idx + 1];
                int wlo = best > blo ? best : blo, whi = best > bhi ? best : bhi;
                if (v[idx] != re[idx])
                    w = "differs from the recomputed value";
                else if (v[idx] < -n || v[idx] > n)
                    w = "out of range";
                else if (best != RETRO_NONE_EXIT && v[idx] < best)
                    w = "below the value of an exit move";
                else if (!inlevel && v[idx] != best)
                    w = "not the best exit although no move stays in the level";
                else if (lo != (wlo < -n ? -n : wlo) || hi != (whi < -n ? -n : whi))
                    w = "bounds inconsistent with the successors";
                if (w) {
                    bad++;
#pragma omp critical(tb_verify)
                    if (idx < first) {
                        first = idx;
                        snprintf(why, sizeof why, "level %d entry %llu: %s (stored %d)", n,
                                 (unsigned long long)idx, w, v[idx]);
                    }
                }
                if (idx + 1 < b)
                    entry_next(&L, idx, &p);
            }
        }
        rules_cache_free(cache);
    }
    free(re);
    free(lohi);
    if (bad)
        sow_fail(e, SOW_OK, "%s; %llu bad entries", why, (unsigned long long)bad);
    *nbad = (int64_t)bad;
    return SOW_OK;
}

/* ---- levels built in memory (tb_mem, tables/tables.h) ------------------------- */

struct tb_mem {
    struct tb_set *set;
    int top;            /* levels 0..top held */
    bool full;          /* a level was refused for RAM: try no higher one */
    uint64_t used;      /* positions built (borrowed levels not counted) */
};

struct tb_mem *tb_mem_new(const struct ruleset *rs, const struct tb_set *tables)
{
    struct tb_mem *m = calloc(1, sizeof *m);
    if (!m || !(m->set = tb_set_new(rs, ""))) {
        free(m);
        return NULL;
    }
    if (tables)
        tb_set_borrow(m->set, tables);
    m->top = tb_max_level(m->set);
    return m;
}

void tb_mem_free(struct tb_mem *m)
{
    if (!m)
        return;
    tb_close(m->set);
    free(m);
}

const struct tb_set *tb_mem_set(const struct tb_mem *m)
{
    return m->set;
}

int tb_mem_top(const struct tb_mem *m)
{
    return m->top;
}

uint64_t tb_mem_built(const struct tb_mem *m)
{
    return m->used;
}

/* May level k (the next one) be built, `used` positions being built already?
 * Its positions in *E, the bytes its build needs in *need; *ram tells a
 * refusal for memory (o->memory, else 3/4 of RAM) from one for the budget
 * or the index width. */
static bool mem_fits(const struct tb_mem *m, int k, uint64_t used, const struct tb_mem_opts *o,
                     uint64_t *E, double *need, bool *ram)
{
    *ram = false;
    if (m->full || k > TB_MAX_LEVEL)
        return false;
    *E = tb_level_entries(&m->set->ix, k);
    if (*E > o->budget || used > o->budget - *E || *E > TB_MAX_ENTRIES)
        return false;
    double mem = o->memory > 0 ? o->memory : 0.75 * util_phys_memory();
    *need = tb_level_memory(&m->set->ix, k) + 3.0 * (double)(used + *E);
    /* compressed levels below: decompressed before k is built */
    *need += (double)tb_set_compressed_bytes(m->set);
    *ram = mem > 0 && *need > mem;
    return !*ram;
}

uint64_t tb_mem_plan(const struct tb_mem *m, int n, const struct tb_mem_opts *o)
{
    uint64_t used = m->used, add = 0, E;
    double need;
    bool ram;
    for (int k = m->top + 1; k <= n && mem_fits(m, k, used, o, &E, &need, &ram); k++) {
        used += E;
        add += E;
    }
    return add;
}

static void mem_progress(void *ctx, int level, uint64_t entries, double frac, const char *phase)
{
    const struct tb_mem_opts *o = ctx;
    if (frac >= 1.0 && o->note)
        o->note(o->ctx, level, entries, 0, false);
    (void)phase;
}

enum sow_status tb_mem_extend(struct tb_mem *m, int n, const struct tb_mem_opts *o,
                              struct sow_error *e)
{
    struct tb_work wk;
    memset(&wk, 0, sizeof wk);
    enum sow_status st = SOW_OK;
    while (m->top < n) {
        int k = m->top + 1;
        uint64_t E;
        double need;
        bool ram;
        if (!mem_fits(m, k, m->used, o, &E, &need, &ram)) {
            if (ram) {
                m->full = true;
                if (o->note)
                    o->note(o->ctx, k, E, need, true);
            }
            break;
        }
        /* levels under 100,000 positions on one thread: there start-up and
         * barriers cost more than a second thread saves (measured) */
        struct tb_build_opts bo = {
            .threads = E >= 100000 ? o->threads : 1,
            .stop = o->stop,
            .progress = mem_progress,
            .ctx = (void *)o,
        };
        int8_t *v = malloc(E ? E : 1), *lohi = malloc(E ? 2 * E : 1);
        if (!v || !lohi) {
            free(v);
            free(lohi);
            st = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory", k);
            break;
        }
        /* a level kept by an earlier run (o->load) is
         * taken as built, with the moves its build counted */
        uint64_t moves = 0;
        if (!o->load || !o->load(o->ctx, k, v, lohi, E, &moves)) {
            /* the builder reads lower levels as arrays: compressed
             * ones borrowed from the tables are decompressed into the set now */
            for (int j = 0; j < k && st == SOW_OK; j++)
                st = tb_set_inflate_level(m->set, j, o->threads, e);
            bo.moves = &moves;
            if (st == SOW_OK)
                st = solve_level(&m->set->rs, m->set, k, v, lohi, &bo, &wk, e);
            if (st != SOW_OK) {
                free(v);
                free(lohi);
                break;
            }
            if (o->save)
                o->save(o->ctx, k, v, lohi, E, moves);
        }
        tb_set_own_level(m->set, k, v, lohi, E);
        if (o->moves)
            *o->moves += moves;
        if (o->entries)
            *o->entries += E;
        m->used += E;
        m->top = k;
    }
    /* The workspace is kept across the levels of one call only. */
    work_free(&wk);
    return st;
}
