/* The distributed builder's passes before the solve (mpi_level.h;
 * mpi_build.c's header says what each does): the move pass over the rank's
 * slice, the exchange of in-level edges (stored or, for the relay rule sets,
 * to each rank's disk) and the probes of owned lower levels. */
#include <mpi.h>
#include <omp.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "mpi_level.h"
#include "move_group.h"
#include "tables/tb_lean.h"
#include "util.h"
#include "unmove.h"

/* Moves of the slice; fast: each thread's edges p -> q go as the pair (q's
 * local index on its owner, p's local index here) to eb[w][owner(q)].
 * Owned lower levels: each capture's probe goes as the request (m, q's
 * local index on its owner in level m) to rq[w][that owner], and (own
 * entry, captured difference + 128) to rr[w][same owner], in the same order
 * (probe_owned answers them); mapped: probed here.  The loop over a chunk's
 * groups of positions is move_group.h's, with these hooks. */
struct mmv {
    struct mlvl *L;
    const struct tb_mpass *P;
    struct vec *eb, *rq, *rr; /* the thread's, [size] each; NULL: not sent */
    bool *ok;                 /* false: out of memory (any thread) */
};

static inline __attribute__((always_inline)) void mmv_pos(void *x, uint64_t idx, sow_position *p)
{
    entry_pos(((struct mmv *)x)->L, idx, p);
}

static inline __attribute__((always_inline)) void
mmv_edge(void *x, uint64_t idx, const struct sow_child *c, int N)
{
    struct mmv *v = x;
    struct mlvl *L = v->L;
    if (!v->eb)
        return;
    uint64_t g = L->bound[0] + tb_index_b(L->ix, &c->pos, N, L->boards);
    int o = tbm_owner_of(L->bound, L->E, L->M->size, g);
    struct vec *d = &v->eb[o];
    if (!vec_push(d, (uint32_t)(g - L->bound[o])) || !vec_push(d, (uint32_t)(idx - L->lo)))
        __atomic_store_n(v->ok, false, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) void
mmv_exit(void *x, struct tb_mgroup *G, int *np, uint64_t idx, int j, const struct sow_child *c,
         int N)
{
    struct mmv *v = x;
    if (!v->rq) {
        tb_mgroup_probe(v->P, G, np, j, c, N);
        return;
    }
    struct mlvl *L = v->L;
    int size = L->M->size, m = L->n - retro_taken(c);
    const uint64_t *lb = L->lbound + (size_t)m * (size_t)(size + 1);
    uint64_t g = lb[0] + tb_index_b(L->ix, &c->pos, N, L->lower->boards[m]);
    int o = tbm_owner_of(lb, lb[size] - lb[0], size, g);
    if (!vec_push(&v->rq[o], (uint32_t)m) || !vec_push(&v->rq[o], (uint32_t)(g - lb[o])) ||
        !vec_push(&v->rr[o], (uint32_t)(idx - L->lo)) ||
        !vec_push(&v->rr[o], (uint32_t)(retro_gain(c) + 128)))
        __atomic_store_n(v->ok, false, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) void
mmv_group(void *x, const struct tb_mgroup *G, uint64_t g, uint64_t ge)
{
    const struct mlvl *L = ((struct mmv *)x)->L;
    uint64_t i0 = g - L->lo; /* own entry of level entry g */
    int8_t *be = L->be + i0, *xl = L->xl + i0, *xh = L->xh + i0;
    uint8_t *cnt = L->cnt + i0;
    for (uint64_t i = 0; i < ge - g; i++) {
        be[i] = (int8_t)G->best[i];
        cnt[i] = (uint8_t)G->deg[i];
        xl[i] = xh[i] = RETRO_UNDONE;
    }
}

/* The moves of level entries [a, b); N = holes per side, a constant where
 * the caller makes it one. */
static inline __attribute__((always_inline)) void
moves_chunk(struct mmv *v, struct tb_mgroup *G, uint64_t a, uint64_t b, int N)
{
    tb_move_chunk(v->P, G, v, a, b, N, mmv_pos, mmv_edge, mmv_exit, NULL, mmv_group);
}

bool tbm_pass_moves(struct mlvl *L, struct vec *eb /* [threads][size]; NULL: lean */,
                    struct vec *rq, struct vec *rr, uint64_t from, uint64_t to /* own entries */)
{
    int size = L->M->size;
    uint64_t nchunks = (to - from + MCHUNK - 1) / MCHUNK;
    bool ok = true;
    uint64_t moves = 0;
    const struct tb_mpass P = {.rs = L->rs, .ix = L->ix, .lower = L->lower, .n = L->n};
#pragma omp parallel num_threads(L->threads) reduction(+ : moves)
    {
        int w = omp_get_thread_num();
        struct mmv v = {.L = L, .P = &P, .ok = &ok};
        v.eb = eb ? eb + (size_t)w * (size_t)size : NULL;
        v.rq = rq ? rq + (size_t)w * (size_t)size : NULL;
        v.rr = rr ? rr + (size_t)w * (size_t)size : NULL;
        struct sow_movelist ml;
        struct tb_mgroup G = {.ml = &ml, .cache = L->rs->relay ? rules_cache_new(16) : NULL};
#pragma omp for schedule(dynamic, 1)
        for (uint64_t ch = 0; ch < nchunks; ch++) {
            if (!__atomic_load_n(&ok, __ATOMIC_RELAXED) || stop_requested(L))
                continue;
            uint64_t a = L->lo + from + ch * MCHUNK,
                     b = a + MCHUNK < L->lo + to ? a + MCHUNK : L->lo + to;
            /* 2x6 gets its own copy: the ranks unroll */
            if (L->ix->pits == 6)
                moves_chunk(&v, &G, a, b, 6);
            else
                moves_chunk(&v, &G, a, b, L->ix->pits);
        }
        moves += G.moves;
        rules_cache_free(G.cache);
    }
    L->moves += moves;
    return ok;
}

/* Edges (fast): send the pairs to their targets' owners, build the reverse
 * lists: the pairs from rank r are (own local target, r's local source),
 * the source's global index bound[r] + its local one. */
bool tbm_pass_edges(struct mlvl *L, struct vec *eb)
{
    int size = L->M->size, T = L->threads;
    struct vec *send = calloc((size_t)size, sizeof *send);
    uint64_t *cnt = calloc((size_t)size, sizeof *cnt);
    if (!send || !cnt)
        MPI_Abort(MPI_COMM_WORLD, 1); /* the peers wait in the exchange */
    bool ok = true;
    for (int r = 0; r < size && ok; r++)
        for (int w = 0; w < T && ok; w++)
            ok = tbm_vec_take(&send[r], &eb[(size_t)w * size + r]);
    for (size_t k = 0; k < (size_t)T * size; k++) {
        free(eb[k].v);
        eb[k] = (struct vec){0};
    }
    uint32_t *rb = NULL;
    size_t nr = 0;
    if (!ok) /* take part in the collective with nothing to send, then fail */
        for (int r = 0; r < size; r++)
            send[r].n = 0;
    tbm_exchange(L, send, NULL, TBM_UNKNOWN, &rb, &nr, cnt);
    for (int r = 0; r < size; r++)
        free(send[r].v);
    free(send);
    if (!ok) {
        free(cnt);
        free(rb);
        return false;
    }
    size_t ne = nr / 2;
    bool wide = rev_wide(L->E, L->bound[0]);
    L->off = calloc(L->Es + 1, sizeof *L->off);
    if (wide)
        L->rev64 = malloc((ne ? ne : 1) * sizeof *L->rev64);
    else
        L->rev32 = malloc((ne ? ne : 1) * sizeof *L->rev32);
    uint64_t *at = malloc((L->Es + 1) * sizeof *at);
    if (!L->off || !(L->rev32 || L->rev64) || !at) {
        free(at);
        free(cnt);
        free(rb);
        return false;
    }
    for (size_t k = 0; k < ne; k++)
        L->off[rb[2 * k] + 1]++;
    for (uint64_t i = 0; i < L->Es; i++)
        L->off[i + 1] += L->off[i];
    memcpy(at, L->off, (L->Es + 1) * sizeof *at);
    size_t k = 0;
    for (int r = 0; r < size; r++) {
        uint64_t base = L->bound[r];
        for (size_t end = k + cnt[r] / 2; k < end; k++) {
            uint64_t p = base + rb[2 * k + 1];
            if (wide)
                L->rev64[at[rb[2 * k]]++] = p;
            else
                L->rev32[at[rb[2 * k]]++] = (uint32_t)p;
        }
    }
    free(at);
    free(cnt);
    free(rb);
    return true;
}

/* Edges (lean relay), after each piece of the move pass: the piece's pairs
 * (q, p) to q's owner (one MPI_Alltoallv, as pass_edges), which appends them
 * to its edge store on local disk (lean_relay.h: q as its local index, p as
 * its level index, which is below 2^32: mrun_check refuses larger levels
 * here); the threads' buffers are emptied for the next piece.  False: out of
 * memory here (the collective is taken part in all the same) or a write
 * error (L->rel->err). */
bool tbm_relay_edges(struct mlvl *L, struct vec *eb, bool ok)
{
    int size = L->M->size, T = L->threads;
    struct vec *send = calloc((size_t)size, sizeof *send);
    uint64_t *cnt = calloc((size_t)size, sizeof *cnt);
    if (!send || !cnt)
        MPI_Abort(MPI_COMM_WORLD, 1); /* the peers wait in the exchange */
    for (int r = 0; r < size && ok; r++)
        for (int w = 0; w < T && ok; w++)
            ok = tbm_vec_take(&send[r], &eb[(size_t)w * size + r]);
    for (size_t k = 0; k < (size_t)T * size; k++)
        eb[k].n = 0;
    if (!ok)
        for (int r = 0; r < size; r++)
            send[r].n = 0;
    uint32_t *rb = NULL;
    size_t nr = 0;
    tbm_exchange(L, send, NULL, TBM_UNKNOWN, &rb, &nr, cnt);
    for (int r = 0; r < size; r++)
        free(send[r].v);
    free(send);
    if (ok) {
        struct lrel *rel = L->rel;
        size_t k0 = 0;
        for (int r = 0; r < size; r++) {
            const uint32_t *pr = rb + 2 * k0;
            size_t ne = cnt[r] / 2;
            uint64_t base = L->bound[r] - L->bound[0]; /* rank r's first level index */
#pragma omp parallel num_threads(T) if (T > 1 && ne >= 65536)
            {
                int w = omp_get_thread_num();
#pragma omp for schedule(static)
                for (size_t k = 0; k < ne; k++)
                    lrel_put(rel, w, pr[2 * k], (uint32_t)(base + pr[2 * k + 1]));
            }
            k0 += ne;
        }
    }
    free(cnt);
    free(rb);
    return ok && !L->rel->err;
}

/* Owned lower levels: the move pass's probes, batched by owner.  One
 * MPI_Alltoallv of the requests (m, q), each owner answers from its slices
 * (a word per probe, in the order asked), one MPI_Alltoallv of the answers;
 * then each entry's best exit takes its captures into account.  The
 * requests of the whole slice go at once (16 bytes per capture move of the
 * slice while they are in flight). */
bool tbm_probe_owned(struct mlvl *L, struct vec *rq, struct vec *rr)
{
    int size = L->M->size, T = L->threads, me = L->M->rank;
    struct vec *send = calloc((size_t)size, sizeof *send), *rec = calloc((size_t)size, sizeof *rec),
               *ans = calloc((size_t)size, sizeof *ans);
    uint64_t *cnt = malloc((size_t)size * sizeof *cnt), *back = malloc((size_t)size * sizeof *back);
    bool ok = send && rec && ans && cnt && back;
    for (int r = 0; r < size && ok; r++)
        for (int w = 0; w < T && ok; w++)
            ok = tbm_vec_take(&send[r], &rq[(size_t)w * size + r]) &&
                 tbm_vec_take(&rec[r], &rr[(size_t)w * size + r]);
    for (size_t k = 0; k < (size_t)T * size; k++) {
        free(rq[k].v);
        free(rr[k].v);
        rq[k] = rr[k] = (struct vec){0};
    }
    int f = !ok, g = 0;
    tbm_allreduce(L->M, &f, &g, 1, MPI_INT, MPI_MAX);
    uint32_t *rb = NULL, *ab = NULL;
    size_t nr = 0, na = 0;
    if (g)
        goto out;
    tbm_exchange(L, send, NULL, TBM_UNKNOWN, &rb, &nr, cnt);
    /* answer, source by source, in the order asked: one byte per probe,
     * four to a word (answer j of a source in byte j % 4 of word j / 4) */
    size_t at = 0;
    for (int r = 0; r < size && ok; r++) {
        size_t na_r = (size_t)cnt[r] / 2;
        ok = tbm_vec_reserve(&ans[r], (na_r + 3) / 4);
        if (ok && na_r)
            memset(ans[r].v, 0, (na_r + 3) / 4 * sizeof *ans[r].v);
        for (size_t j = 0; ok && j < na_r; j++, at += 2) {
            int m = (int)rb[at];
            uint64_t q = rb[at + 1]; /* the local index in this rank's slice of level m */
            ans[r].v[j / 4] |= (uint32_t)(uint8_t)L->own[m][q] << (8 * (j % 4));
        }
        if (ok)
            ans[r].n = (na_r + 3) / 4;
    }
    free(rb);
    f = !ok;
    tbm_allreduce(L->M, &f, &g, 1, MPI_INT, MPI_MAX);
    if (g)
        goto out;
    for (int r = 0; r < size; r++)
        back[r] = (send[r].n / 2 + 3) / 4;
    tbm_exchange(L, ans, back, TBM_UNKNOWN, &ab, &na, NULL);
    at = 0; /* first word of the current source's answers */
    for (int r = 0; r < size; r++) {
        for (size_t k = 0, j = 0; k < rec[r].n; k += 2, j++) {
            uint64_t i = rec[r].v[k];
            int8_t v = (int8_t)(uint8_t)(ab[at + j / 4] >> (8 * (j % 4)));
            int ev = (int)rec[r].v[k + 1] - 128 - v;
            if (ev > L->be[i])
                L->be[i] = (int8_t)ev;
        }
        at += (size_t)back[r];
    }
    free(ab);
    (void)me;
out:
    for (int r = 0; send && r < size; r++)
        free(send[r].v);
    for (int r = 0; rec && r < size; r++)
        free(rec[r].v);
    for (int r = 0; ans && r < size; r++)
        free(ans[r].v);
    free(send);
    free(rec);
    free(ans);
    free(cnt);
    free(back);
    return !g;
}

