/* Endgame tables built across MPI ranks (tables/tables_mpi.h, docs/distributed.md).
 * This file holds a level's solve on one rank; mpi_comm.c the buffers and
 * collectives, mpi_moves.c the passes before the solve, mpi_run.c the level
 * file and the build (mpi_level.h).
 *
 * The retrograde game of retro/retro.h.  The set of nodes final at round t
 * is the least fixpoint of its rules, so the order in which a round's work is
 * done does not change it: here each rank does its share, each rank's threads
 * theirs, and the ranks meet in supersteps.
 *
 * Two ways to find a final node's in-level predecessors, chosen per build as
 * `tables build --builder` chooses between build.c and lean.c:
 *   fast  stored edges: the move pass sends each in-level edge p -> q to q's
 *         owner (one MPI_Alltoallv), which keeps reverse (CSR) lists;
 *   lean  unmoves (unmove.h, as lean.c): the owner of a final node un-sows it,
 *         confirms each candidate with the forward generator and sends the
 *         update to the candidate's owner; nothing stored, no edge exchange;
 *         relay rule sets (no unmoves): the move pass sends each in-level
 *         edge to its target's owner piece by piece (relay_edges), which
 *         keeps its slice's predecessor lists on its own disk (lean_relay.h,
 *         as lean.c) and reads them back a block at a time (relay_scan).
 *
 * Per level, on every rank (slice [lo, hi) of the E entries, Es = hi - lo):
 *   moves   (OpenMP over chunks of the slice): best exit (probes of the lower
 *           levels, mapped from the shared directory's files; or owned: the
 *           probes batched by owner, one MPI_Alltoallv of requests and one
 *           of answers, probe_owned), in-level out-degree; fast: each
 *           in-level edge p -> q as the pair (q's local index on its owner,
 *           p's here) in the thread's buffer for q's owner (mpi_slice.h:
 *           global indices are 64-bit, every word sent a local index);
 *   edges   fast only: one MPI_Alltoallv of the pairs, the reverse lists;
 *   solve   the rounds of retro_rounds (retro/retro.h), this rank's
 *           passes and exchange supplied here; per round t: the slice's
 *           seeds, then supersteps: waves of local work (each a pass over
 *           the wave's updates: claims and counter decrements by atomics; a
 *           node that becomes final emits updates to its predecessors, into
 *           the thread's next wave or its send buffer for the predecessor's
 *           owner) until no local work is left, then the exchange: one
 *           MPI_Allgather of every rank's row (failed?, words for each rank)
 *           and one MPI_Alltoallv; the round ends when a superstep sends
 *           nothing anywhere.  Rounds with no seed on any rank are skipped
 *           (one MPI_Allreduce per level), the stop agreed before each;
 *   values  retro_value (OpenMP); every rank writes its slice
 *           into the level's temporary file at its offset (MPI-IO), the
 *           payload's checksum is chained through the ranks, rank 0 writes
 *           the header and renames (write_level: byte-identical to
 *           tb_file_write's file); then every rank maps it from the shared
 *           directory as a lower level (owned: keeps its slice).
 * Failures (memory, I/O, Ctrl-C) are agreed on at every collective, so every
 * rank returns the same status and no level file is half written.
 */
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
#include "fileio.h"
#include "tables/tables_mpi.h"
#include "tables/tb_lean.h"
#include "util.h"
#include "unmove.h"

/* ---- the solve ------------------------------------------------------------ */

/* An update of node g (global index) of the kind given: its local index
 * | kind, into this thread's next wave if g is ours, else into its send
 * buffer for g's owner. */
static inline void route(struct mlvl *L, struct mwork *W, uint64_t g, uint32_t kind)
{
    bool ok;
    if (g >= L->glo && g < L->ghi)
        ok = vec_push(&W->next, (uint32_t)(g - L->glo) | kind);
    else {
        int o = tbm_owner_of(L->bound, L->E, L->M->size, g);
        ok = vec_push(&W->send[o], (uint32_t)(g - L->bound[o]) | kind);
    }
    if (!ok)
        set_fail(L);
}

/* Own node i (local) became final: kind UPD_CLAIM for its H node (the
 * predecessors' L nodes get an option t), 0 for its L node (the
 * predecessors' H nodes lose an open child). */
static void expand(struct mlvl *L, struct mwork *W, uint64_t i, uint32_t kind)
{
    if (L->rel) { /* lean relay: the lists are read block by block (relay_scan) */
        uint64_t bit = 2 * i + (kind ? 1 : 0);
        __atomic_fetch_or(&L->pend[bit >> 6], (uint64_t)1 << (bit & 63), __ATOMIC_RELAXED);
        __atomic_store_n(&L->bdirty[i >> LREL_BSHIFT], 1, __ATOMIC_RELAXED);
        __atomic_store_n(&L->pending, 1, __ATOMIC_RELAXED);
        return;
    }
    if (L->rev32) {
        for (uint64_t k = L->off[i]; k < L->off[i + 1]; k++)
            route(L, W, L->rev32[k], kind);
        return;
    }
    if (L->rev64) {
        for (uint64_t k = L->off[i]; k < L->off[i + 1]; k++)
            route(L, W, L->rev64[k], kind);
        return;
    }
    /* Lean: un-sow the node, here on the final node's owner, so only real
     * updates travel.  The predecessors come filtered from q's board, as in
     * lean.c (unmove.h: the same list as every candidate confirmed by the
     * forward generator); only awari's starving moves (check) still need
     * the generator.  A claim on an own L node already final is found so
     * by apply, as any other: looking here too cost a cache miss a claim,
     * and every claim that was not dropped paid its miss twice. */
    sow_position q;
    entry_pos(L, L->lo + i, &q);
    const struct ruleset *rs = L->rs;
    bool check;
    int k = unmove_preds_(&q, L->ix->pits, unmove_skips_origin(rs), rs->family == SOW_DARRA,
                          rs->family == SOW_AWARI, true, W->cand, W->cmv, W->maxcand, &check);
    for (int j = 0; j < k; j++) {
        uint64_t p = L->bound[0] + child_index(L->ix, &W->cand[j], L->boards);
        if (check && !unmove_confirm(rs, &W->cand[j], W->cmv[j], &q, &W->ml))
            continue;
        route(L, W, p, kind);
    }
}

/* A wave's updates are applied in order, each a cache miss on its node:
 * the node of the one this many places on is fetched meanwhile. */
#define APPLY_AHEAD 8

/* An update of own node u & UPD_IDX (local index) in round t: a claim on
 * its L node, or a decrement of its H node's open children. */
static void apply(struct mlvl *L, struct mwork *W, uint32_t u, int8_t t)
{
    uint64_t i = u & UPD_IDX;
    if (u & UPD_CLAIM) {
        if (retro_claim(&L->xl[i], t, L->par))
            expand(L, W, i, 0);
        return;
    }
    uint8_t c = retro_dec(&L->cnt[i], L->par);
    int be = L->be[i];
    if (c == 0 && (be == RETRO_NONE_EXIT || -be >= t) && retro_claim(&L->xh[i], t, L->par))
        expand(L, W, i, UPD_CLAIM);
}

/* Lean relay: the final nodes of own block b (its pend bits), their
 * predecessors read from the block's lists on this rank's disk, as lean.c's
 * relay_block reads them (the whole block's lists in one read when more than
 * RSMALL nodes are pending, else each node's list alone); each update routed
 * as expand's are.  Called while no update is applied (relay_scan), so pend
 * and the block's lists are this thread's alone. */
static void relay_block(struct mlvl *L, struct mwork *W, uint64_t b)
{
    uint64_t pw = (2 * L->Es + 63) / 64, w0 = b * RWORDS, w1 = w0 + RWORDS < pw ? w0 + RWORDS : pw;
    unsigned c = 0;
    for (uint64_t w = w0; w < w1 && c <= RSMALL; w++)
        c += (unsigned)__builtin_popcountll(L->pend[w]);
    const uint32_t *off = NULL, *pr = NULL;
    bool whole = c > RSMALL;
    if (whole && !lrel_read(L->rel, b, &W->rbuf, &W->rcap, &off, &pr)) {
        set_fail(L);
        return;
    }
    uint64_t base = b << LREL_BSHIFT;
    for (uint64_t w = w0; w < w1; w++) {
        for (uint64_t x = L->pend[w]; x; x &= x - 1) {
            uint64_t bit = 64 * w + (uint64_t)__builtin_ctzll(x), q = bit >> 1;
            uint32_t kind = bit & 1 ? UPD_CLAIM : 0; /* H final: claims; L final: decrements */
            const uint32_t *list;
            uint32_t k;
            if (whole) {
                list = pr + off[q - base];
                k = off[q - base + 1] - off[q - base];
            } else if (!lrel_read_list(L->rel, b, q - base, &W->rbuf, &W->rcap, &list, &k)) {
                set_fail(L);
                return;
            }
            for (uint32_t j = 0; j < k; j++) {
                uint64_t p = L->bound[0] + list[j]; /* the lists hold level indices */
                /* a claim on an own L node already final: dropped (as expand) */
                if (kind && p >= L->glo && p < L->ghi &&
                    __atomic_load_n(&L->xl[p - L->glo], __ATOMIC_RELAXED) != RETRO_UNDONE)
                    continue;
                route(L, W, p, kind);
            }
        }
        L->pend[w] = 0;
    }
}

/* Round t's seeds in own entries [a, b): L nodes with best exit t claim
 * themselves; H nodes with best exit -t and no open in-level child are final. */
static void seeds(struct mlvl *L, struct mwork *W, uint64_t a, uint64_t b, int t)
{
    for (uint64_t i = a; i < b; i++) {
        int be = L->be[i];
        if (be == t && retro_claim(&L->xl[i], (int8_t)t, L->par))
            expand(L, W, i, 0);
        if (be == -t && (L->par ? __atomic_load_n(&L->cnt[i], __ATOMIC_RELAXED) : L->cnt[i]) == 0 &&
            retro_claim(&L->xh[i], (int8_t)t, L->par))
            expand(L, W, i, UPD_CLAIM);
    }
}

/* The threads' next waves into cur; false: out of memory. */
static bool collect(struct mlvl *L, struct mwork *W, struct vec *cur)
{
    bool ok = true;
    for (int w = 0; w < L->threads; w++)
        ok &= tbm_vec_take(cur, &W[w].next);
    return ok;
}

/* The solve's buffers on one rank: the threads' work (W[T]), what goes to
 * each rank (send[size]), the wave being applied (cur), and the
 * superstep's rows (row: this rank's; mat: every rank's; recvc: words from
 * each); the rounds with a seed on some rank (any[t + n]); what the pass
 * under way takes as its items (kind). */
struct msolve {
    struct mlvl *L;
    int T, size;
    struct mwork *W;
    struct vec *send, cur;
    uint64_t *row, *mat, *recvc; /* 64-bit: a pair's words may pass INT_MAX (tbm_exchange) */
    const int *any;
    int fail;
    enum { PASS_WAVE, PASS_RELAY, PASS_SEEDS } kind; /* items: chunks of cur, relay blocks,
                                                       * or seed chunks from seed_base on */
    size_t chunk;                        /* a wave's updates an item */
    uint64_t seed_items, seed_next, seed_base; /* the round's seed chunks, the next one */
    uint64_t batch;                            /* seed chunks a batch */
    int step_waves, waves; /* local waves at most between exchanges (0: until none left);
                            * those since the last */
};

static bool msolve_alloc(struct msolve *S)
{
    struct mlvl *L = S->L;
    int size = S->size, T = S->T;
    S->send = calloc((size_t)size, sizeof *S->send);
    S->W = calloc((size_t)T, sizeof *S->W);
    S->row = malloc((size_t)(size + 2) * sizeof *S->row);
    S->mat = malloc((size_t)size * (size_t)(size + 2) * sizeof *S->mat);
    S->recvc = malloc((size_t)size * sizeof *S->recvc);
    bool ok = S->send && S->W && S->row && S->mat && S->recvc;
    for (int w = 0; w < T && ok; w++) {
        struct mwork *W = &S->W[w];
        W->S = S;
        W->send = calloc((size_t)size, sizeof *W->send);
        W->maxcand = L->ix->pits * (L->n + 1) + 2;
        W->cand = L->lean ? malloc((size_t)W->maxcand * sizeof *W->cand) : NULL;
        W->cmv = L->lean ? malloc((size_t)W->maxcand) : NULL;
        ok = W->send && (!L->lean || (W->cand && W->cmv));
    }
    return ok;
}

/* Freed, the threads' buffers at their largest counted in L->bufbytes. */
static void msolve_free(struct msolve *S)
{
    struct mlvl *L = S->L;
    if (S->send)
        for (int r = 0; r < S->size; r++)
            free(S->send[r].v);
    if (S->W)
        for (int w = 0; w < S->T; w++) {
            struct mwork *W = &S->W[w];
            uint64_t b = (W->next.cap) * 4;
            if (W->send)
                for (int r = 0; r < S->size; r++) {
                    b += W->send[r].cap * 4;
                    free(W->send[r].v);
                }
            L->bufbytes += b;
            free(W->send);
            free(W->next.v);
            free(W->cand);
            free(W->cmv);
            L->bufbytes += W->rcap;
            free(W->rbuf);
        }
    free(S->W);
    free(S->send);
    free(S->cur.v);
    free(S->row);
    free(S->mat);
    free(S->recvc);
}

/* Superstep: one MPI_Allgather of every rank's row (failed, words to each
 * rank, work left: seeds, or a wave held back by SOW_MPI_STEP_WAVES) tells
 * all of them whether the round is over and what each receives; then one
 * MPI_Alltoallv, what arrives joins the next wave.  False when the round is
 * over (nothing sent anywhere, no work left on any rank) or some rank
 * failed. */
static bool superstep(struct msolve *S)
{
    struct mlvl *L = S->L;
    int size = S->size, me = L->M->rank;
    const size_t rw = (size_t)size + 2;
    S->row[0] = (uint64_t)S->fail;
    for (int r = 0; r < size; r++)
        S->row[1 + r] = S->fail ? 0 : S->send[r].n;
    S->row[size + 1] = S->seed_next < S->seed_items || S->cur.n; /* work left here */
    MPI_Request rq;
    MPI_Iallgather(S->row, (int)rw, MPI_UINT64_T, S->mat, (int)rw, MPI_UINT64_T, MPI_COMM_WORLD,
                   &rq);
    double t0 = util_now(); /* here a rank waits for the slowest one */
    tbm_coll_wait(L->M, &rq);
    L->wait_s += util_now() - t0;
    uint64_t total = 0, maxpair = 0, left = 0;
    int gfail = 0;
    for (int r = 0; r < size; r++) {
        gfail |= S->mat[(size_t)r * rw] != 0;
        left |= S->mat[(size_t)r * rw + 1 + (size_t)size];
        S->recvc[r] = S->mat[(size_t)r * rw + 1 + me];
        for (int k = 0; k < size; k++) {
            uint64_t w = S->mat[(size_t)r * rw + 1 + k];
            total += w;
            maxpair = w > maxpair ? w : maxpair;
        }
    }
    if (gfail) {
        S->fail = 1;
        return false;
    }
    L->steps++;
    if (!total)
        return left != 0; /* nothing to send, but seeds to take somewhere */
    uint32_t *rb = NULL;
    size_t nr = 0;
    tbm_exchange(L, S->send, S->recvc, maxpair, &rb, &nr, NULL);
    for (int r = 0; r < size; r++)
        S->send[r].n = 0;
    if (!nr) {
        /* nothing for this rank (others sent to others) */
    } else if (tbm_vec_reserve(&S->cur, nr)) {
        memcpy(S->cur.v + S->cur.n, rb, nr * sizeof *rb);
        S->cur.n += nr;
    } else
        S->fail = 1;
    free(rb);
    return true;
}

/* ---- the rounds: a client of retro_rounds (retro/retro.h) --------------
 * Round t on this rank: pass 0 takes the slice's seeds MCHUNK entries an
 * item, SEED_BATCH entries at most (the rest after the exchanges: what the
 * seeds send waits in memory until then, so a batch bounds it); then waves of local work, each a pass (again): the updates the last
 * pass made for own nodes, WAVE_CHUNK an item (a wave under WAVE_PAR is one
 * item, one thread's: sharing it costs more than it saves); lean relay,
 * when none are left: a pass over the blocks of lists with final nodes
 * pending.  When no local work is left, the superstep (exchange), whose
 * updates that arrive are the next wave; the round ends when a superstep
 * sends nothing anywhere.  Out of memory on a thread is L->fail, agreed at
 * the superstep; the stop and the failures agreed before each round. */

/* The next batch of the round's seed chunks as a pass's items. */
static uint64_t seed_batch(struct msolve *S)
{
    uint64_t k = S->seed_items - S->seed_next;
    k = k < S->batch ? k : S->batch;
    S->kind = PASS_SEEDS;
    S->seed_base = S->seed_next;
    S->seed_next += k;
    return k;
}

static uint64_t mround_seeds(void *ctx, int t)
{
    struct msolve *S = ctx;
    uint64_t k = (S->L->Es + MCHUNK - 1) / MCHUNK;
    /* every rank plays the round (an empty slice one empty item) */
    S->seed_items = S->seed_next = 0;
    if (!S->any[t + S->L->n])
        return 0;
    S->seed_items = k ? k : 1;
    return seed_batch(S); /* pass 0: from chunk 0 */
}

static void *mround_begin(void *ctx, int me)
{
    struct msolve *S = ctx;
    return &S->W[me];
}

/* Item k of round t's pass: seeds (pass 0), a chunk of the wave or a relay
 * block. */
static bool mround_work(void *th, int t, int pass, uint64_t k)
{
    struct mwork *W = th;
    struct msolve *S = W->S;
    struct mlvl *L = S->L;
    if (pass == 0 || S->kind == PASS_SEEDS) {
        uint64_t c = (pass == 0 ? 0 : S->seed_base) + k;
        uint64_t a = c * MCHUNK, b = a + MCHUNK < L->Es ? a + MCHUNK : L->Es;
        seeds(L, W, a, b, t);
    } else if (S->kind == PASS_WAVE) {
        size_t a = k * S->chunk, b = a + S->chunk < S->cur.n ? a + S->chunk : S->cur.n;
        for (size_t i = a; i < b; i++) {
            if (i + APPLY_AHEAD < b) { /* the update's node, in flight meanwhile */
                uint32_t v = S->cur.v[i + APPLY_AHEAD];
                uint64_t x = v & UPD_IDX;
                if (v & UPD_CLAIM)
                    __builtin_prefetch(&L->xl[x]);
                else {
                    __builtin_prefetch(&L->cnt[x]);
                    __builtin_prefetch(&L->be[x]);
                }
            }
            apply(L, W, S->cur.v[i], (int8_t)t);
        }
    } else if (L->bdirty[k]) {
        L->bdirty[k] = 0;
        relay_block(L, W, k);
    }
    return true;
}

/* The wave in cur as a pass's items (its size noted in L->bufbytes). */
static uint64_t wave_items(struct msolve *S)
{
    struct mlvl *L = S->L;
    if (S->cur.n * sizeof *S->cur.v > L->bufbytes)
        L->bufbytes = S->cur.n * sizeof *S->cur.v;
    S->kind = PASS_WAVE;
    L->applied += S->cur.n;
    S->chunk = S->cur.n < WAVE_PAR ? S->cur.n : WAVE_CHUNK;
    return (S->cur.n + S->chunk - 1) / S->chunk;
}

/* After a pass: the threads' next waves into cur, the next wave's items;
 * none left: lean relay, the blocks with final nodes pending; else 0 (the
 * exchange). */
static uint64_t mround_again(void *ctx, int t)
{
    (void)t;
    struct msolve *S = ctx;
    struct mlvl *L = S->L;
    S->cur.n = 0; /* applied (only a wave pass leaves cur not empty) */
    S->fail |= !collect(L, S->W, &S->cur) || L->fail;
    if (S->fail)
        return 0;
    if (S->cur.n) {
        if (!S->step_waves || ++S->waves < S->step_waves)
            return wave_items(S);
        return 0; /* the exchange first; the wave stays in cur, what arrives joins it */
    }
    if (L->rel && L->pending) {
        L->pending = 0;
        S->kind = PASS_RELAY;
        return L->rel->nblocks;
    }
    return 0;
}

/* No local work left: what the threads have for other ranks gathered by
 * rank, supersteps until updates arrive here (the next wave's items),
 * this rank has seeds left (their next batch) or the round is over
 * everywhere (0). */
static uint64_t mround_exchange(void *ctx, int t)
{
    (void)t;
    struct msolve *S = ctx;
    S->waves = 0;
    for (;;) {
        for (int r = 0; r < S->size && !S->fail; r++)
            for (int w = 0; w < S->T && !S->fail; w++)
                S->fail |= !tbm_vec_take(&S->send[r], &S->W[w].send[r]);
        if (!superstep(S))
            return 0;
        if (S->cur.n)
            return wave_items(S);
        if (S->seed_next < S->seed_items)
            return seed_batch(S);
    }
}

/* Before round t: the stop and the failures agreed by every rank. */
static bool mround_stopped(void *ctx, int t)
{
    (void)t;
    struct msolve *S = ctx;
    int flags[2] = {stop_requested(S->L), S->fail}, g[2];
    tbm_allreduce(S->L->M, flags, g, 2, MPI_INT, MPI_MAX);
    return g[0] || g[1];
}

static void mround_progress(void *ctx, int t)
{
    struct mlvl *L = ((struct msolve *)ctx)->L;
    if (L->opt && L->opt->progress && L->M->rank == 0)
        L->opt->progress(L->opt->ctx, L->n, L->E,
                         0.8 + 0.15 * (double)(L->n - t + 1) / (2 * L->n + 1), "solve");
}

/* Rounds t = n .. -n of the slice (retro_rounds).  Rounds with no seed on
 * any rank are skipped (one MPI_Allreduce per level). */
static enum sow_status solve(struct mlvl *L, struct sow_error *e)
{
    static const struct retro_round_ops ops = {
        .seeds = mround_seeds,
        .begin = mround_begin,
        .work = mround_work,
        .again = mround_again,
        .exchange = mround_exchange,
        .stopped = mround_stopped,
        .progress = mround_progress,
    };
    int n = L->n, V = 2 * n + 1;
    struct msolve S = {.L = L, .T = L->threads, .size = L->M->size};
    /* tests: small batches */
    uint64_t batch = (uint64_t)util_env_long("SOW_MPI_TEST_PIECE", 1, LONG_MAX, SEED_BATCH);
    S.batch = (batch + MCHUNK - 1) / MCHUNK;
    /* Local waves between exchanges, 1 unless SOW_MPI_STEP_WAVES says
     * otherwise (0: until none is left).  Without a limit a rank's cascade
     * of own updates runs to its end while the others, their work done,
     * wait at the superstep; one wave a superstep ships the updates for
     * the others sooner, at the cost of more supersteps (oware level 22 on
     * 2 ranks: the waits halved, the solve 23% shorter, docs/distributed.md).
     * The same on every rank (a collective is entered by all of them). */
    S.step_waves = (int)util_env_long("SOW_MPI_STEP_WAVES", 0, INT_MAX, 1);
    int *seeded = calloc((size_t)V, sizeof *seeded), *any = calloc((size_t)V, sizeof *any);
    int fail = !msolve_alloc(&S) || !seeded || !any;
    if (!fail)
        for (uint64_t i = 0; i < L->Es; i++)
            if (L->be[i] != RETRO_NONE_EXIT) {
                seeded[L->be[i] + n] = 1;
                seeded[-L->be[i] + n] = 1;
            }
    int f0 = fail;
    tbm_allreduce(L->M, &f0, &fail, 1, MPI_INT, MPI_MAX);
    enum sow_status st = SOW_OK;
    if (fail) {
        st = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory in the solve", n);
        goto out;
    }
    tbm_allreduce(L->M, seeded, any, V, MPI_INT, MPI_LOR);
    S.any = any;
    struct retro_rounds R = {.ops = &ops, .ctx = &S, .n = n, .threads = S.T};
    double t0 = util_now();
    retro_rounds(&R); /* (no thread fails: failures are S.fail, agreed) */
    L->solve_s = util_now() - t0;
    int flags[2] = {stop_requested(L), S.fail}, g[2];
    tbm_allreduce(L->M, flags, g, 2, MPI_INT, MPI_MAX);
    if (g[1])
        st = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory in the solve", n);
    else if (g[0])
        st = sow_fail(e, SOW_E_INTERRUPTED, "interrupted");
out:
    msolve_free(&S);
    free(seeded);
    free(any);
    return st;
}

/* lo, hi, V = clamp(cycle net, lo, hi) into be; the count of lo > hi. */
static uint64_t finish(struct mlvl *L)
{
    int n = L->n, N = L->ix->pits;
    uint64_t nchunks = (L->Es + MCHUNK - 1) / MCHUNK, bad = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(L->threads) reduction(+ : bad)
    for (uint64_t ch = 0; ch < nchunks; ch++) {
        uint64_t a = ch * MCHUNK, b = a + MCHUNK < L->Es ? a + MCHUNK : L->Es;
        sow_position p;
        entry_pos(L, L->lo + a, &p);
        for (uint64_t i = a; i < b; i++) {
            int cyc = rules_cycle_net(L->rs, board_sum_range(&p.board, 0, N),
                                      board_sum_range(&p.board, N, 2 * N));
            L->be[i] = (int8_t)retro_value(L->xl[i], L->xh[i], n, cyc, &bad);
            if (i + 1 < b && !tb_index_next(L->ix, p.board.h))
                entry_pos(L, L->lo + i + 1, &p);
        }
    }
    return bad;
}

static void mlvl_free(struct mlvl *L)
{
    free(L->be);
    free(L->xl);
    free(L->xh);
    free(L->cnt);
    free(L->off);
    free(L->rev32);
    free(L->rev64);
    free(L->bound);
    free(L->lbound);
    free(L->pend);
    free(L->bdirty);
    L->pend = NULL;
    L->bdirty = NULL;
    L->be = L->xl = L->xh = NULL;
    L->cnt = NULL;
    L->off = NULL;
    L->rev32 = NULL;
    L->rev64 = NULL;
    L->bound = NULL;
    L->lbound = NULL;
}

/* Test hook (tests/mpi/run.sh): SOW_MPI_TEST_KILL=R:L kills rank R with
 * SIGKILL in the middle of level L (after its move pass), as a crashed
 * machine would; R:L:w once the level's temporary file exists, before the
 * rank has written its slice into it (phase 'w'). */
void tbm_test_kill(const struct mpi *M, int n, char phase)
{
    const char *k = getenv("SOW_MPI_TEST_KILL");
    int r, l;
    char ph = 0;
    if (!k || sscanf(k, "%d:%d:%c", &r, &l, &ph) < 2)
        return;
    if (r == M->rank && l == n && ph == phase)
        raise(SIGKILL);
}

static int level_threads(const struct tb_build_opts *opt, uint64_t Es)
{
    return retro_threads(opt ? opt->threads : 0, Es, INT_MAX);
}

/* The move pass over the slice.  Owned lower levels: in pieces of the
 * same number of entries on every rank, each piece's probes answered
 * before the next (their buffers stay at 16 B per capture move of a
 * piece); lean relay: each piece's in-level edges sent to their targets'
 * owners before the next (relay_edges: 16 B per in-level move of a piece
 * in flight).  ok: the buffers were had.  The status agreed by all ranks. */
static enum sow_status move_pieces(struct mlvl *L, struct vec *eb, struct vec *rq,
                                   struct vec *rr, bool relay, bool ok, struct sow_error *e)
{
    enum sow_status st = SOW_OK;
    uint64_t piece = L->Es ? L->Es : 1, pieces = 1;
    if (L->own || relay) {
        piece = (uint64_t)util_env_long("SOW_MPI_TEST_PIECE", 1, LONG_MAX, /* tests: small pieces */
                                        relay ? RELAY_PIECE : PROBE_PIECE);
        uint64_t mine = (L->Es + piece - 1) / piece;
        tbm_allreduce(L->M, &mine, &pieces, 1, MPI_UINT64_T, MPI_MAX);
    }
    for (uint64_t k = 0; k < pieces && st == SOW_OK; k++) {
        uint64_t from = k * piece < L->Es ? k * piece : L->Es;
        uint64_t to = from + piece < L->Es ? from + piece : L->Es;
        if (ok)
            ok = tbm_pass_moves(L, eb, rq, rr, from, to);
        if (!ok)
            sow_fail(e, SOW_E_NOMEM, "level %d: out of memory in the move pass", L->n);
        if (ok && stop_requested(L)) {
            st = sow_fail(e, SOW_E_INTERRUPTED, "interrupted");
        } else if (!ok)
            st = SOW_E_NOMEM;
        st = tbm_agree(L->M, st, e);
        if (st == SOW_OK && relay) {
            if (!tbm_relay_edges(L, eb, true))
                st = L->rel->err && L->rel->err != ENOMEM
                         ? sow_fail(e, SOW_E_IO, "level %d: writing the relay edges: %s", L->n,
                                    strerror(L->rel->err))
                         : sow_fail(e, SOW_E_NOMEM, "level %d: out of memory in the edge exchange",
                                    L->n);
            st = tbm_agree(L->M, st, e);
        }
        if (st != SOW_OK || !L->own)
            continue;
        if (L->opt && L->opt->progress && L->M->rank == 0)
            L->opt->progress(L->opt->ctx, L->n, L->E, 0.5 * (double)(k + 1) / (double)pieces,
                             "moves");
        if (!tbm_probe_owned(L, rq, rr))
            st = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory in the probe exchange", L->n);
        st = tbm_agree(L->M, st, e);
    }
    return st;
}

/* The level's counts into stats (words sent, supersteps, this rank's
 * bytes: node state, lists, buffers), and SOW_MPI_STATS's line. */
static void level_stats(const struct mlvl *L, uint64_t *stats, double relbytes)
{
    stats[0] += L->sent_words;
    stats[1] += L->steps;
    stats[2] = 4 * L->Es +
               (L->off ? 8 * (L->Es + 1) + (L->rev64 ? 8 : 4) * L->off[L->Es] : 0) + L->bufbytes +
               (L->pend ? L->Es / 4 + (uint64_t)relbytes : 0);
    if (getenv("SOW_MPI_STATS")) {
        /* and per rank (up to 64 ranks): the solve's seconds, those spent
         * waiting for the other ranks at the supersteps, the updates applied */
        enum { SHOWN = 64 };
        const int R = L->M->size;
        uint64_t w = 0;
        double mine[3] = {L->solve_s, L->wait_s, (double)L->applied}, all[3 * SHOWN];
        MPI_Reduce(&L->sent_words, &w, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        if (R <= SHOWN)
            MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (L->M->rank == 0) {
            fprintf(stderr, "mpi: level %d: %llu positions, %.2f bytes sent per position, "
                    "%llu supersteps\n", L->n, (unsigned long long)L->E,
                    L->E ? 4.0 * (double)w / (double)L->E : 0.0, (unsigned long long)L->steps);
            for (int r = 0; R <= SHOWN && r < R; r++)
                fprintf(stderr, "mpi: level %d rank %d: solve %.2f s, %.2f s of it waiting at "
                        "supersteps, %.0f updates applied\n", L->n, r, all[3 * r],
                        all[3 * r + 1], all[3 * r + 2]);
        }
    }
}

/* L's level n, this rank's slice of it, and the slices' bounds (with
 * owned lower levels also theirs, for the probes' owners).  A bound array
 * that cannot be allocated stays NULL: tbm_level's move pass then fails,
 * agreed by every rank. */
static void mlvl_slice(struct mlvl *L, const struct mpi *M, int n, bool own)
{
    L->E = tb_level_entries(L->ix, n);
    L->boards = tb_level_boards(L->ix, n);
    L->lo = tbm_slice_lo(L->E, M->size, M->rank);
    L->hi = tbm_slice_lo(L->E, M->size, M->rank + 1);
    L->Es = L->hi - L->lo;
    L->glo = M->base + L->lo;
    L->ghi = M->base + L->hi;
    L->bound = malloc(((size_t)M->size + 1) * sizeof *L->bound);
    if (L->bound)
        tbm_bounds(L->E, M->base, M->size, L->bound);
    if (own && (L->lbound = malloc((size_t)(n + 1) * ((size_t)M->size + 1) * sizeof *L->lbound)))
        for (int m = 0; m < n; m++)
            tbm_bounds(tb_level_entries(L->ix, m), M->base, M->size,
                       L->lbound + (size_t)m * ((size_t)M->size + 1));
}

/* The n buffers of v (NULL: none) given back, left empty. */
static void vecs_clear(struct vec *v, size_t n)
{
    for (size_t k = 0; v && k < n; k++) {
        free(v[k].v);
        v[k] = (struct vec){0};
    }
}

/* Level n: *keep receives this rank's slice of the level's values
 * (malloc'd; SOW_OK), which write_level writes at its offset.  own:
 * the owned lower levels (NULL: mapped). */
enum sow_status tbm_level(const struct mpi *M, const struct ruleset *rs,
                                 const struct tb_set *set, int n, bool lean,
                                 int8_t *const *own, int8_t **keep,
                                 const struct tb_build_opts *opt, uint64_t *stats,
                                 struct sow_error *e)
{
    struct mlvl L;
    memset(&L, 0, sizeof L);
    L.rs = rs;
    L.lower = set;
    L.ix = &set->ix;
    L.opt = opt;
    L.M = M;
    L.n = n;
    L.lean = lean;
    L.own = own;
    mlvl_slice(&L, M, n, own != NULL);
    int T = level_threads(opt, L.Es);
    L.threads = T;
    L.par = T > 1;
    size_t Es1 = L.Es ? L.Es : 1;
    L.be = malloc(Es1);
    L.xl = malloc(Es1);
    L.xh = malloc(Es1);
    L.cnt = malloc(Es1);
    /* lean on a relay rule set: the edges stored on each rank's disk */
    bool relay = lean && !tb_unmove_supported(rs);
    struct lrel rel;
    double relbytes = 0;
    struct vec *eb = lean && !relay ? NULL : calloc((size_t)T * (size_t)M->size, sizeof *eb);
    struct vec *rq = own ? calloc((size_t)T * (size_t)M->size, sizeof *rq) : NULL;
    struct vec *rr = own ? calloc((size_t)T * (size_t)M->size, sizeof *rr) : NULL;
    enum sow_status st = SOW_OK;
    bool ok = L.be && L.xl && L.xh && L.cnt && ((lean && !relay) || eb) &&
              (!own || (rq && rr && L.lbound)) && L.bound;
    if (relay) {
        /* the temporary files in $TMPDIR (or /tmp): each rank's own, local
         * disk; unlinked as soon as made, so a kill leaves nothing */
        if (ok && (st = lrel_new(&rel, L.Es, L.ix->pits, T, NULL, e)) == SOW_OK) {
            L.rel = &rel;
            L.pend = calloc((2 * L.Es + 63) / 64 + 1, sizeof *L.pend);
            L.bdirty = calloc(rel.nblocks + 1, 1);
            ok = L.pend && L.bdirty;
            relbytes = (double)rel.threads * (double)rel.S * sizeof(struct lrel_buf) +
                       8.0 * (double)(rel.nblocks + 1);
        }
        st = tbm_agree(M, st, e);
    }
    if (opt && opt->progress && M->rank == 0)
        opt->progress(opt->ctx, n, L.E, 0.0, "moves");
    if (st == SOW_OK) /* (agreed: every rank takes this branch or none) */
        st = move_pieces(&L, eb, rq, rr, relay, ok, e);
    /* the probe exchange's buffers (a piece's requests and answers) are
     * not needed past the move pass: given back before the solve's own */
    vecs_clear(rq, (size_t)T * (size_t)M->size);
    vecs_clear(rr, (size_t)T * (size_t)M->size);
    if (st == SOW_OK && relay) { /* the pairs into predecessor lists (lrel_sort) */
        if (opt && opt->progress && M->rank == 0)
            opt->progress(opt->ctx, n, L.E, 0.6, "edges");
        for (int w = 0; w < T; w++)
            lrel_flush(&rel, w);
        st = lrel_sort(&rel, T, NULL, opt, e);
        if (rel.sortbytes + 8.0 * (double)(rel.nblocks + 1) > relbytes)
            relbytes = rel.sortbytes + 8.0 * (double)(rel.nblocks + 1);
        st = tbm_agree(M, st, e);
    }
    if (st != SOW_OK)
        goto out;
    tbm_test_kill(M, n, 0);
    if (!lean) {
        if (opt && opt->progress && M->rank == 0)
            opt->progress(opt->ctx, n, L.E, 0.6, "edges");
        if (!tbm_pass_edges(&L, eb))
            st = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory in the edge exchange", n);
        st = tbm_agree(M, st, e);
        if (st != SOW_OK)
            goto out;
    }
    st = solve(&L, e);
    if (relay) { /* a read error of the lists is an I/O failure, not memory */
        if (st == SOW_E_NOMEM && rel.err && rel.err != ENOMEM)
            st = sow_fail(e, SOW_E_IO, "level %d: reading the relay edges: %s", n,
                          strerror(rel.err));
        st = tbm_agree(M, st, e);
    }
    if (st != SOW_OK)
        goto out;
    if (opt && opt->progress && M->rank == 0)
        opt->progress(opt->ctx, n, L.E, 0.95, "values");
    if (finish(&L))
        st = sow_fail(e, SOW_E_NOMEM, "level %d: internal error: lo > hi", n);
    st = tbm_agree(M, st, e);
    if (st != SOW_OK)
        goto out;
    if (opt && opt->moves) {
        uint64_t all = 0;
        tbm_allreduce(M, &L.moves, &all, 1, MPI_UINT64_T, MPI_SUM);
        *opt->moves += all;
    }
    level_stats(&L, stats, relbytes);
    *keep = L.be;
    L.be = NULL;
out:
    vecs_clear(eb, (size_t)T * (size_t)M->size);
    vecs_clear(rq, (size_t)T * (size_t)M->size);
    vecs_clear(rr, (size_t)T * (size_t)M->size);
    free(eb);
    free(rq);
    free(rr);
    if (L.rel)
        lrel_free(&rel);
    mlvl_free(&L);
    return st;
}

