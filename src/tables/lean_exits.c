/* The lean builder's exits into lower levels kept compressed (lean_run.c
 * "lower levels compressed"): the move pass cannot read them at random (a
 * block cache smaller than the levels misses on most exits: measured, see
 * docs/tables.md), so each thread queues its exits and answers them a
 * batch at a time, grouped by block: every block a batch reaches is
 * decompressed once, and each exit's value is folded into its entry's best
 * exit, as the raw path folds it at once (lean_level.h).
 *
 *   queued exit   a = g << 21 | i    g: the block's number in the set (its
 *                                    level's gbase + block), i: the entry's
 *                                    place in the block (< 2^20 values)
 *                 b = src << 8 | d   src: the entry of the level being built,
 *                                    d: the mover's capture less the
 *                                    opponent's, + 128
 *
 * Example: an exit of entry 7,000,000 that captures 3 (d = 131) into entry
 * 40,000 of a level whose blocks of 2^14 values are numbered from 120 is
 * a = (120 + 2) << 21 | 7,232, b = 7,000,000 << 8 | 131.
 *
 * A batch is counting-sorted by g into the buffer's second half, then read
 * block by block.  Thread-safety: a struct lexits is one thread's; its
 * entries lie in that thread's chunks, so the folds of two threads never
 * write the same node. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zstd.h>

#include "compress.h"
#include "lean_level.h"

struct lexit {
    uint64_t a, b;
};

/* Level of each block number of the set (lv[m].z's gbase..gbase+nblocks),
 * 0xff for numbers of no level kept compressed. */
uint8_t *lexit_levels(const struct tb_set *set, int n)
{
    uint8_t *m = malloc(set->next_block ? set->next_block : 1);
    if (!m)
        return NULL;
    memset(m, 0xff, set->next_block);
    for (int k = 0; k < n; k++) {
        const struct tbz *z = set->lv[k].v ? NULL : set->lv[k].z;
        if (z)
            memset(m + z->gbase, k, z->nblocks);
    }
    return m;
}

bool lexits_init(struct lexits *x, const struct lean *L, uint64_t cap)
{
    memset(x, 0, sizeof *x);
    x->cap = cap < 2 * LEXIT_GROUP ? 2 * LEXIT_GROUP : cap;
    x->buf = malloc(2 * x->cap * sizeof *x->buf);
    x->count = calloc(L->lower->next_block + 1, sizeof *x->count);
    x->dc = ZSTD_createDCtx();
    x->blk = malloc((size_t)1 << TBZ_BSHIFT_MAX);
    if (!x->buf || !x->count || !x->dc || !x->blk) {
        lexits_free(x);
        return false;
    }
    return true;
}

void lexits_free(struct lexits *x)
{
    free(x->buf);
    free(x->count);
    ZSTD_freeDCtx(x->dc);
    free(x->blk);
    memset(x, 0, sizeof *x);
}

void lexits_add(struct lexits *x, const struct tbz *z, uint64_t q,
                uint64_t src, int d)
{
    uint64_t g = z->gbase + (q >> z->bshift), i = q & (((uint64_t)1 << z->bshift) - 1);
    x->buf[x->n++] = (struct lexit){g << 21 | i, src << 8 | (uint64_t)(d + 128)};
}

/* A failure (a damaged block, memory) recorded once for the level. */
static void lexits_fail(struct lean *L, const struct sow_error *e)
{
    if (!__atomic_exchange_n(&L->zdamaged, true, __ATOMIC_RELAXED))
        L->zerr = *e;
}

void lexits_fail_nomem(struct lean *L)
{
    struct sow_error e;
    sow_fail(&e, SOW_E_NOMEM, "level %d: out of memory for the exits' queues", L->n);
    lexits_fail(L, &e);
}

void lexits_flush(struct lean *L, struct lexits *x)
{
    uint64_t G = L->lower->next_block, n = x->n;
    struct lexit *in = x->buf, *out = x->buf + x->cap;
    x->n = 0;
    /* counting sort by block number */
    memset(x->count, 0, (G + 1) * sizeof *x->count);
    for (uint64_t k = 0; k < n; k++)
        x->count[(in[k].a >> 21) + 1]++;
    for (uint64_t g = 0; g < G; g++)
        x->count[g + 1] += x->count[g];
    for (uint64_t k = 0; k < n; k++)
        out[x->count[in[k].a >> 21]++] = in[k];
    /* block by block: decompressed once, its exits folded */
    for (uint64_t k = 0; k < n && !L->zdamaged;) {
        uint64_t g = out[k].a >> 21;
        int m = L->zlevel[g];
        const struct tbz *z = L->lower->lv[m].z;
        struct sow_error e;
        if (tbz_block_dctx(z, g - z->gbase, x->blk, x->dc, &e) < 0) {
            lexits_fail(L, &e);
            break;
        }
        for (; k < n && out[k].a >> 21 == g; k++) {
            uint64_t src = out[k].b >> 8;
            int v = (int)(out[k].b & 0xff) - 128 - x->blk[out[k].a & ((1u << 21) - 1)];
            if (v > L->nd[src].be)
                L->nd[src].be = (int8_t)v;
        }
    }
    x->batches++;
}
