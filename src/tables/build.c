/* Endgame tables, the fast builder: retrograde analysis of one level with
 * its in-level edges stored (fast.h; the game: retro/retro.h).  This file
 * holds the solve; fast_moves.c the passes before it; build_run.c, verify.c
 * and mem_levels.c use it.  The build side uses the probe side (file.c,
 * index.c), never the other way round.  docs/tables.md "Algorithm" explains
 * why this computes exactly the value of docs/rules.md; the comments here
 * say how.
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
 *   solve:  the retrograde game of retro/retro.h, rounds t = n .. -n
 *           (played by retro_rounds: this file supplies a round's seed
 *           chunks and a thread's work lists).  A finalisation does not
 *           touch its predecessors at once: the node joins a queue of
 *           final nodes, whose predecessor lists become
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
#include "fast.h"

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
    if (s->v && s->n + more <= s->cap) /* allocated even for 0: v + n is then defined */
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

/* The solve as a client of retro_rounds (retro.h): the threads' work
 * lists, a round's seeds and their drains.  A node is finalised once: an L
 * node by the thread that sets its L-final bit, an H node by the thread
 * that takes its counter to zero or, when a seed's scan may race with
 * that, by compare-and-swap on its value. */
static void *solve_begin(void *ctx, int me)
{
    (void)me;
    struct solver *S = calloc(1, sizeof *S);
    if (S)
        S->L = ctx;
    return S;
}

static void solve_end(void *th)
{
    struct solver *S = th;
    free(S->fin.v);
    free(S->upd.v);
    free(S);
}

/* Round t's seeds (L: best exit t, H: best exit -t; each list sorted by
 * block, then index): [*l0, *l1) and [*h0, *h1). */
static void round_seeds(const struct lvl *L, int t, const uint32_t **l0, const uint32_t **l1,
                        const uint32_t **h0, const uint32_t **h1)
{
    uint64_t nb = L->nblocks;
    int n = L->n;
    *l0 = L->seeds + L->seedoff[(uint64_t)(t + n) * nb];
    *l1 = L->seeds + L->seedoff[(uint64_t)(t + n + 1) * nb];
    *h0 = L->seeds + L->seedoff[(uint64_t)(-t + n) * nb];
    *h1 = L->seeds + L->seedoff[(uint64_t)(-t + n + 1) * nb];
}

/* The round's seeds are taken SEED_CHUNK at a time (the L seeds' chunks,
 * then the H seeds'), and each thread drains what its seeds set off.
 * Chunks rather than whole blocks: a level of a million entries has only
 * ~20 blocks, too few to share evenly.  Rounds with no entry of best exit
 * t or -t have none and are skipped: every finalisation of a round starts
 * from such an entry. */
static uint64_t solve_seeds(void *ctx, int t)
{
    const uint32_t *l0, *l1, *h0, *h1;
    round_seeds(ctx, t, &l0, &l1, &h0, &h1);
    return ((uint64_t)(l1 - l0) + SEED_CHUNK - 1) / SEED_CHUNK +
           ((uint64_t)(h1 - h0) + SEED_CHUNK - 1) / SEED_CHUNK;
}

/* Seed chunk c of round t: L seeds become claims on themselves; H seeds
 * are final if no in-level child is open. */
static bool seed_chunk(void *th, int t, int pass, uint64_t c)
{
    (void)pass;
    struct solver *S = th;
    struct lvl *L = S->L;
    int T = L->threads;
    S->t = t;
    const uint32_t *l0, *l1, *h0, *h1;
    round_seeds(L, t, &l0, &l1, &h0, &h1);
    uint64_t nlc = ((uint64_t)(l1 - l0) + SEED_CHUNK - 1) / SEED_CHUNK;
    const uint32_t *sl = l0, *el = l0, *sh = h0, *eh = h0;
    if (c < nlc) {
        sl = l0 + c * SEED_CHUNK;
        el = (uint64_t)(l1 - sl) < SEED_CHUNK ? l1 : sl + SEED_CHUNK;
    } else {
        sh = h0 + (c - nlc) * SEED_CHUNK;
        eh = (uint64_t)(h1 - sh) < SEED_CHUNK ? h1 : sh + SEED_CHUNK;
    }
    while ((sl < el || sh < eh) && !S->failed) {
        if (sl < el) {
            size_t m = (size_t)(el - sl) < 4 * BATCH ? (size_t)(el - sl) : 4 * BATCH;
            if (!reserve(&S->upd, m)) {
                S->failed = true;
                break;
            }
            for (size_t i = 0; i < m; i++)
                S->upd.v[S->upd.n++] = sl[i] | UPD_CLAIM;
            sl += m;
        }
        if (sh < eh) {
            size_t m = (size_t)(eh - sh) < BATCH ? (size_t)(eh - sh) : BATCH;
            if (!reserve(&S->fin, m)) {
                S->failed = true;
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
                    S->fin.v[S->fin.n++] = sh[i] | UPD_CLAIM;
                }
            }
            sh += m;
        }
        if (T > 1)
            drain_par(S);
        else
            drain_one(S);
    }
    return !S->failed;
}

static void solve_progress(void *ctx, int t)
{
    (void)t;
    struct lvl *L = ctx;
    L->pr.base += L->pr.weight;
    tb_progress_add(&L->pr, 0);
}

/* The rounds t = n .. -n; 1 if stopped, -1 out of memory. */
static int solve(struct lvl *L)
{
    static const struct retro_round_ops ops = {
        .seeds = solve_seeds,
        .begin = solve_begin,
        .work = seed_chunk,
        .progress = solve_progress,
        .end = solve_end,
    };
    tb_progress_phase(&L->pr, "solve", 0.8, 0.15 / (2 * L->n + 1));
    struct retro_rounds R = {.ops = &ops,
                             .ctx = L,
                             .n = L->n,
                             .threads = L->threads,
                             .stop = L->opt ? L->opt->stop : NULL};
    if (!retro_rounds(&R))
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

int tb_fast_threads(const struct tb_build_opts *opt, uint64_t E)
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
bool tb_fast_work_reserve(struct tb_work *wk, uint64_t E, int pits, int threads)
{
    uint64_t nb = level_blocks(E);
    const int f = RETRO_HUGE | RETRO_SPARE;
    return retro_region_get(&wk->nd, (E + 1) * sizeof(struct node), f) &&
           retro_region_get(&wk->lfin, (E / 64 + 1) * sizeof(uint64_t), f) &&
           retro_region_get(&wk->rev, (E * (uint64_t)pits + 1) * sizeof(uint32_t), f) &&
           retro_region_get(&wk->arena, arena_blocks(E, pits, threads, nb) * sizeof(struct blk), f);
}

void tb_fast_work_free(struct tb_work *wk)
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

/* Level n's struct lvl: sizes, threads, chunks, blocks, progress; a level
 * too large for 31-bit indices, or a lower level not loaded, refused. */
static enum sow_status level_init(struct lvl *L, const struct ruleset *rs,
                                  const struct tb_set *lower, int n,
                                  const struct tb_build_opts *opt, struct sow_error *e)
{
    TB_LEVEL_START(L, rs, lower, n, opt);
    L->threads = tb_fast_threads(opt, L->E);
    enum sow_status st = tb_level_solvable(lower, n, L->E, TB_MAX_ENTRIES, false, e);
    if (st != SOW_OK)
        return st;
    L->bshift = BSHIFT;
    L->nblocks = level_blocks(L->E);
    return SOW_OK;
}

/* Each block's first edge (ebase[0..nblocks]) from the bins' counts, and
 * the edge total after the last node; false past 2^32 edges. */
static bool edge_offsets(struct lvl *L, uint32_t *ebase)
{
    uint64_t total = 0, nb = L->nblocks;
    for (uint64_t c = 0; c < nb; c++) {
        ebase[c] = (uint32_t)total;
        for (int w = 0; w < L->threads; w++)
            total += L->ebin[(uint64_t)w * L->ebstride + c].edges;
        if (total > UINT32_MAX)
            return false;
    }
    ebase[nb] = (uint32_t)total;
    L->nd[L->E].off = (uint32_t)total;
    return true;
}

enum sow_status tb_fast_solve_level(const struct ruleset *rs, const struct tb_set *lower, int n,
                                   int8_t *out, int8_t *lohi, const struct tb_build_opts *opt,
                                   struct tb_work *wk, struct sow_error *e)
{
    struct lvl L;
    enum sow_status rc = level_init(&L, rs, lower, n, opt, e);
    if (rc != SOW_OK)
        return rc;
    int T = L.threads;
    rc = SOW_E_NOMEM;
    uint64_t nb = L.nblocks, V = 2 * (uint64_t)n + 1;
    uint32_t *ebase = NULL, *cnt = NULL;
    if (!tb_fast_work_reserve(wk, L.E, rs->pits, T))
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
    tb_fast_pass_moves(&L);
    if (stopped(&L)) {
        rc = SOW_E_INTERRUPTED;
        goto done;
    }
    for (int w = 0; w < T; w++)
        if (L.pool[w].failed) {
            rc = sow_fail(e, SOW_E_NOMEM, "level %d: internal error: edge bins overflow", n);
            goto done;
        }
    if (!edge_offsets(&L, ebase)) {
        rc = sow_fail(e, SOW_E_TOO_BIG, "level %d: more than 2^32 in-level moves (uint32 edges)",
                      n);
        goto done;
    }
    tb_fast_pass_edges(&L, ebase);
    free(L.ebin);
    L.ebin = NULL;
    /* Every bin block is free again: the seeds reuse the arena's pages
     * (already touched, so not zeroed again). */
    L.seeds = (uint32_t *)(void *)L.arena;
    if (stopped(&L)) {
        rc = SOW_E_INTERRUPTED;
        goto done;
    }
    tb_fast_pass_seeds(&L, cnt);
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
    enum sow_status rc = tb_fast_solve_level(rs, lower, n, out, lohi, opt, &wk, e);
    tb_fast_work_free(&wk);
    return rc;
}

