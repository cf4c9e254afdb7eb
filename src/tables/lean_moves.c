/* The lean builder's move pass (lean_level.h; lean.c's header says what it
 * does): best exits, in-level out-degrees and, per seed block, the mask of
 * best-exit values the rounds scan for seeds. */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compress.h"
#include "lean_level.h"
#include "move_group.h"

_Static_assert(LEXIT_GROUP >= TB_MGROUP * (SOW_MAX_PITS + 1), "a queue holds a group's exits");

/* Move pass: best exit and in-level out-degree of every entry (relay rule
 * sets: each in-level edge into the thread's edge store); the loop over a
 * chunk's groups of positions is move_group.h's, with these hooks. */
struct lmv {
    struct lean *L;
    const struct tb_mpass *P;
    struct lrel *rel; /* relay rule sets: the edges' store; else NULL */
    struct lexits *xq; /* the thread's queued exits (compressed lower levels) */
    int me;
    uint64_t *vm; /* the chunk's best exits seen (4 words: a bit per value) */
};

static inline __attribute__((always_inline)) void lmv_pos(void *x, uint64_t idx, sow_position *p)
{
    lentry_pos(((struct lmv *)x)->L, idx, p);
}

static inline __attribute__((always_inline)) void
lmv_edge(void *x, uint64_t idx, const struct sow_child *c, int N)
{
    struct lmv *v = x;
    if (v->rel)
        lrel_put(v->rel, v->me, tb_index_b(v->L->ix, &c->pos, N, v->L->boards), (uint32_t)idx);
}

/* An exit into a lower level kept compressed (lean_run.c "lower levels
 * compressed"): queued, answered a batch at a time (lean_exits.c); a raw
 * one prefetched and folded as usual. */
static inline __attribute__((always_inline)) void
lmv_zexit(void *x, struct tb_mgroup *G, int *np, uint64_t idx, int j, const struct sow_child *c,
          int N)
{
    struct lmv *v = x;
    const struct tb_mpass *P = v->P;
    int m = P->n - retro_taken(c);
    const struct tb_level *lv = &P->lower->lv[m];
    if (lv->v) {
        tb_mgroup_probe(P, G, np, j, c, N);
        return;
    }
    lexits_add(v->xq, lv->z, tb_index_b(P->ix, &c->pos, N, P->lower->boards[m]), idx,
               retro_gain(c));
}

static inline __attribute__((always_inline)) void
lmv_group(void *x, const struct tb_mgroup *G, uint64_t g, uint64_t ge)
{
    struct lnode *nd = ((struct lmv *)x)->L->nd + g;
    uint64_t *vm = ((struct lmv *)x)->vm;
    for (uint64_t i = 0; i < ge - g; i++) {
        nd[i].be = (int8_t)G->best[i];
        nd[i].cnt = (uint8_t)G->deg[i];
        nd[i].xl = nd[i].xh = RETRO_UNDONE;
        unsigned u = (unsigned)(G->best[i] + 128);
        vm[u >> 6] |= 1ull << (u & 63);
    }
    /* queued exits answered between groups: their entries' be is stored */
    struct lexits *xq = ((struct lmv *)x)->xq;
    if (xq && xq->n + LEXIT_GROUP > xq->cap)
        lexits_flush(((struct lmv *)x)->L, xq);
}

/* The move pass over entries [a, b) (one chunk, in one seed block); N =
 * holes per side, a constant where the caller makes it one. */
static inline __attribute__((always_inline)) void
moves_chunk(struct lean *L, uint64_t a, uint64_t b, int me, struct tb_mgroup *G, uint64_t *vm,
            struct lexits *xq, int N)
{
    const struct tb_mpass P = {.rs = L->rs, .ix = L->ix, .lower = L->lower, .n = L->n};
    struct lmv v = {.L = L, .P = &P, .rel = L->rel, .xq = L->zlower ? xq : NULL, .me = me, .vm = vm};
    if (L->zlower)
        tb_move_chunk(&P, G, &v, a, b, N, lmv_pos, lmv_edge, lmv_zexit, NULL, lmv_group);
    else
        tb_move_chunk(&P, G, &v, a, b, N, lmv_pos, lmv_edge, NULL, NULL, lmv_group);
}

void tb_lean_pass_moves(struct lean *L)
{
    tb_progress_phase(&L->pr, "moves", 0.0, L->rel ? 0.3 : 0.2); /* relay: edges next */
    int N = L->ix->pits;
#pragma omp parallel num_threads(L->threads)
    {
        int me = omp_get_thread_num();
        struct lrel *rel = L->rel;
        struct sow_movelist ml;
        /* relay sowings: a memo per thread, as build.c's move pass */
        struct tb_mgroup G = {.ml = &ml, .cache = L->rs->relay ? rules_cache_new(16) : NULL};
        struct lexits xq = {0};
        if (L->zlower && !lexits_init(&xq, L, L->zcap))
            lexits_fail_nomem(L);
#pragma omp for schedule(dynamic, 1)
        for (uint64_t ch = 0; ch < L->nchunks; ch++) {
            if (lstopped(L) || L->zdamaged)
                continue;
            uint64_t a = ch * L->chunk, b = a + L->chunk < L->E ? a + L->chunk : L->E;
            uint64_t vm[4] = {0, 0, 0, 0}; /* the best exits seen */
            /* 2x6 gets its own copy: the ranks unroll */
            if (N == 6)
                moves_chunk(L, a, b, me, &G, vm, &xq, 6);
            else
                moves_chunk(L, a, b, me, &G, vm, &xq, N);
            /* A chunk lies in one seed block (both powers of two). */
            for (int k = 0; k < 4; k++)
                if (vm[k])
                    __atomic_fetch_or(&L->vmask[4 * (a >> SBSHIFT) + k], vm[k], __ATOMIC_RELAXED);
            tb_progress_add(&L->pr, b - a);
        }
        if (L->zlower && !L->zdamaged && !lstopped(L)) {
            lexits_flush(L, &xq);
            __atomic_fetch_add(&L->zbatches, xq.batches, __ATOMIC_RELAXED);
        }
        lexits_free(&xq);
        __atomic_fetch_add(&L->moves, G.moves, __ATOMIC_RELAXED);
        if (rel)
            lrel_flush(rel, me);
        rules_cache_free(G.cache);
    }
}

/* Which best-exit values the level holds (the move pass noted them per seed
 * block): rounds with neither t nor -t are skipped. */
void tb_lean_level_mask(struct lean *L)
{
    /* exits answered after their group: the seed blocks' masks from the
     * final best exits */
    if (L->zlower) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(L->threads)
        for (uint64_t s = 0; s < L->nsb; s++) {
            uint64_t vm[4] = {0, 0, 0, 0}, a = s << SBSHIFT,
                     b = a + ((uint64_t)1 << SBSHIFT) < L->E ? a + ((uint64_t)1 << SBSHIFT) : L->E;
            for (uint64_t i = a; i < b; i++) {
                unsigned u = (unsigned)(L->nd[i].be + 128);
                vm[u >> 6] |= 1ull << (u & 63);
            }
            memcpy(&L->vmask[4 * s], vm, sizeof vm);
        }
    }
    memset(L->gmask, 0, sizeof L->gmask);
    for (uint64_t s = 0; s < L->nsb; s++)
        for (int k = 0; k < 4; k++)
            L->gmask[k] |= L->vmask[4 * s + k];
}

