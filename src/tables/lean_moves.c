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

#include "lean_level.h"

/* Move pass: best exit and in-level out-degree of every entry; the lower
 * levels' values of a group's exits are prefetched while the group is
 * generated. */
#define LGROUP 16

/* The move pass over entries [a, b) (one chunk, in one seed block); N =
 * holes per side, a constant where the caller makes it one. */
static inline __attribute__((always_inline)) void
moves_chunk(struct lean *L, uint64_t a, uint64_t b, int me, struct sow_relay_cache *cache,
            struct sow_movelist *ml, struct retro_probe *pr, int *best, int *deg, uint64_t *moves,
            uint64_t *vm, int N)
{
    int n = L->n;
    sow_position p;
    lentry_pos(L, a, &p);
    for (uint64_t g = a; g < b; g += LGROUP) {
        uint64_t ge = g + LGROUP < b ? g + LGROUP : b;
        int np = 0;
        for (uint64_t idx = g; idx < ge; idx++) {
            int j = (int)(idx - g);
            L->rs->generate(L->rs, &p, ml, cache, NULL);
            *moves += (uint64_t)ml->n;
            best[j] = retro_be_start(ml);
            deg[j] = 0;
            for (int k = 0; k < ml->n; k++) {
                const struct sow_child *c = &ml->c[k];
                int cap = retro_taken(c);
                if (!cap) {
                    deg[j]++;
                    if (L->rel)
                        lrel_put(L->rel, me, tb_index_b(L->ix, &c->pos, N, L->boards), (uint32_t)idx);
                    continue;
                }
                int m = n - cap;
                uint64_t q = tb_index_b(L->ix, &c->pos, N, L->lower->boards[m]);
                retro_probe_add(pr, &np, L->lower->lv[m].v + q, c, j);
            }
            if (idx + 1 < b)
                lentry_next(L, idx, &p);
        }
        retro_fold_probes(pr, np, best);
        for (uint64_t idx = g; idx < ge; idx++) {
            struct lnode *x = &L->nd[idx];
            x->be = (int8_t)best[idx - g];
            x->cnt = (uint8_t)deg[idx - g];
            x->xl = x->xh = RETRO_UNDONE;
            unsigned u = (unsigned)(best[idx - g] + 128);
            vm[u >> 6] |= 1ull << (u & 63);
        }
    }
}

void tb_lean_pass_moves(struct lean *L)
{
    tb_progress_phase(&L->pr, "moves", 0.0, L->rel ? 0.3 : 0.2); /* relay: edges next */
    int N = L->ix->pits;
#pragma omp parallel num_threads(L->threads)
    {
        int me = omp_get_thread_num();
        struct lrel *rel = L->rel;
        /* relay sowings: a memo per thread, as build.c's move pass */
        struct sow_relay_cache *cache = L->rs->relay ? rules_cache_new(16) : NULL;
        struct sow_movelist ml;
        struct retro_probe pr[LGROUP * (SOW_MAX_PITS + 1)];
        int best[LGROUP], deg[LGROUP];
        uint64_t moves = 0;
#pragma omp for schedule(dynamic, 1)
        for (uint64_t ch = 0; ch < L->nchunks; ch++) {
            if (lstopped(L))
                continue;
            uint64_t a = ch * L->chunk, b = a + L->chunk < L->E ? a + L->chunk : L->E;
            uint64_t vm[4] = {0, 0, 0, 0}; /* the best exits seen */
            /* 2x6 gets its own copy: the ranks unroll */
            if (N == 6)
                moves_chunk(L, a, b, me, cache, &ml, pr, best, deg, &moves, vm, 6);
            else
                moves_chunk(L, a, b, me, cache, &ml, pr, best, deg, &moves, vm, N);
            /* A chunk lies in one seed block (both powers of two). */
            for (int k = 0; k < 4; k++)
                if (vm[k])
                    __atomic_fetch_or(&L->vmask[4 * (a >> SBSHIFT) + k], vm[k], __ATOMIC_RELAXED);
            tb_progress_add(&L->pr, b - a);
        }
        __atomic_fetch_add(&L->moves, moves, __ATOMIC_RELAXED);
        if (rel)
            lrel_flush(rel, me);
        rules_cache_free(cache);
    }
}

/* Which best-exit values the level holds (the move pass noted them per seed
 * block): rounds with neither t nor -t are skipped. */
void tb_lean_level_mask(struct lean *L)
{
    memset(L->gmask, 0, sizeof L->gmask);
    for (uint64_t s = 0; s < L->nsb; s++)
        for (int k = 0; k < 4; k++)
            L->gmask[k] |= L->vmask[4 * s + k];
}

