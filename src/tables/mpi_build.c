/* Endgame tables built across MPI ranks (tables/tables_mpi.h, docs/distributed.md).
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
 *           in-level edge as the pair (q, p) in the thread's buffer for q's
 *           owner;
 *   edges   fast only: one MPI_Alltoallv of the pairs, the reverse lists;
 *   solve   per round t: the slice's seeds, then supersteps: waves of local
 *           work (OpenMP over the wave's updates: claims and counter
 *           decrements by atomics; a node that becomes final emits updates
 *           to its predecessors, into the thread's next wave or its send
 *           buffer for the predecessor's owner) until no local work is left,
 *           then one MPI_Allgather of every rank's row (failed?, words for
 *           each rank) and one MPI_Alltoallv; the round ends when a superstep
 *           sends nothing anywhere.  Rounds with no seed on any rank are
 *           skipped (one MPI_Allreduce per level);
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

#include "fileio.h"
#include "retro/retro.h"
#include "tables/tables_mpi.h"
#include "tables/tb_lean.h"
#include "util.h"
#include "lean_relay.h"
#include "tables_internal.h"
#include "unmove.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define UPD_CLAIM 0x80000000u /* H node of a child final: claim the L node */
#define UPD_IDX 0x7FFFFFFFu
#define MCHUNK 4096
#define WAVE_CHUNK 64 /* updates per OpenMP work item in a wave */
#define PROBE_PIECE ((uint64_t)1 << 22) /* own entries per probe batch (owned lower levels) */
#define WAVE_PAR 4096 /* smaller waves run on one thread (a parallel region costs more) */
#define RELAY_PIECE ((uint64_t)1 << 18) /* lean relay: own entries per edge batch */
#define RWORDS (((uint64_t)1 << LREL_BSHIFT) / 32) /* pend words of a block of lists */
#define RSMALL 64 /* fewer final nodes in a block: their lists read alone */
_Static_assert(TB_MAX_ENTRIES <= UPD_IDX, "global indices leave the top bit for the kind");

bool tb_mpi_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

/* A growable array of 32-bit words. */
struct vec {
    uint32_t *v;
    size_t n, cap;
};

static bool vec_reserve(struct vec *a, size_t more)
{
    if (a->n + more <= a->cap)
        return true;
    size_t nc = a->cap ? 2 * a->cap : 1024;
    while (nc < a->n + more)
        nc *= 2;
    uint32_t *nv = realloc(a->v, nc * sizeof *nv);
    if (!nv)
        return false;
    a->v = nv;
    a->cap = nc;
    return true;
}

static inline bool vec_push(struct vec *a, uint32_t x)
{
    if (a->n == a->cap && !vec_reserve(a, 1))
        return false;
    a->v[a->n++] = x;
    return true;
}

/* Append b to a (b emptied). */
static bool vec_take(struct vec *a, struct vec *b)
{
    if (!b->n)
        return true;
    if (!a->n && b->cap >= a->cap) { /* swap buffers instead of copying */
        struct vec t = *a;
        *a = *b;
        *b = t;
        b->n = 0;
        return true;
    }
    if (!vec_reserve(a, b->n))
        return false;
    memcpy(a->v + a->n, b->v, b->n * sizeof *b->v);
    a->n += b->n;
    b->n = 0;
    return true;
}

struct mpi {
    int rank, size;
    long nap_ns; /* coll_wait's pause between polls (0: poll without pause) */
};

/* Wait for a nonblocking collective (or receive).  OpenMPI's
 * blocking collectives poll without pause (shared memory), so a rank that
 * waits for a slower one keeps a core busy; with more ranks than cores
 * (tests, one machine) the slower rank is the one that needs that core, and
 * each superstep waits for it.  So: poll a while, then nap between polls
 * (SOW_MPI_NAP_US, default 20 microseconds; 0: poll only).  With one rank
 * per machine a nap delays a collective by at most its length: 20 us per
 * superstep, a few thousand supersteps per build of levels 0..12. */
static void coll_wait(const struct mpi *M, MPI_Request *rq)
{
    int done = 0;
    for (int k = 0;; k++) {
        MPI_Test(rq, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        if (M->nap_ns && k >= 32) {
            struct timespec ts = {0, M->nap_ns};
            nanosleep(&ts, NULL);
        }
    }
}

/* MPI_Allreduce waited for by coll_wait. */
static void allreduce(const struct mpi *M, const void *in, void *out, int n, MPI_Datatype t,
                      MPI_Op op)
{
    MPI_Request rq;
    MPI_Iallreduce(in, out, n, t, op, MPI_COMM_WORLD, &rq);
    coll_wait(M, &rq);
}

/* MPI_Bcast waited for by coll_wait. */
static void bcast(const struct mpi *M, void *buf, int n, MPI_Datatype t, int root)
{
    MPI_Request rq;
    MPI_Ibcast(buf, n, t, root, MPI_COMM_WORLD, &rq);
    coll_wait(M, &rq);
}

static uint64_t slice_lo(uint64_t E, int size, int r)
{
    return E * (uint64_t)r / (uint64_t)size;
}

static int owner_of(uint64_t E, int size, uint64_t q)
{
    int r = E ? (int)(q * (uint64_t)size / E) : 0;
    if (r >= size)
        r = size - 1;
    while (r > 0 && slice_lo(E, size, r) > q)
        r--;
    while (r + 1 < size && slice_lo(E, size, r + 1) <= q)
        r++;
    return r;
}

/* Agree on a status: the first failure (lowest rank's) wins, its message
 * broadcast from the rank that had it. */
static enum sow_status agree(const struct mpi *M, enum sow_status st, struct sow_error *e)
{
    int mine = st != SOW_OK ? M->rank : M->size, first;
    allreduce(M, &mine, &first, 1, MPI_INT, MPI_MIN);
    if (first == M->size)
        return SOW_OK;
    int code = (int)st;
    char msg[SOW_ERROR_MSG];
    memset(msg, 0, sizeof msg);
    if (M->rank == first && e)
        snprintf(msg, sizeof msg, "%s", e->msg);
    bcast(M, &code, 1, MPI_INT, first);
    bcast(M, msg, SOW_ERROR_MSG, MPI_CHAR, first);
    if (e && M->rank != first) {
        e->status = (enum sow_status)code;
        snprintf(e->msg, sizeof e->msg, "%s", msg);
    }
    return (enum sow_status)code;
}

/* One level's state on one rank. */
struct mlvl {
    const struct ruleset *rs;
    const struct tb_set *lower;
    const struct tb_index *ix;
    const struct tb_build_opts *opt;
    const struct mpi *M;
    int n, threads;
    bool lean;      /* predecessors by unmoves (else stored reverse lists) */
    /* lean, relay rule sets (no unmoves): the predecessor lists of own
     * entries on local disk (lean_relay.h, E = Es, local indices); a node
     * made final sets its pend bit (2 per own entry: 2i L, 2i+1 H) and its
     * block's dirty byte, and relay_scan reads the lists block by block */
    struct lrel *rel;
    uint64_t *pend;
    uint8_t *bdirty;
    int pending;
    bool par;       /* more than one thread: node updates are atomic */
    /* owned lower levels: own[m] holds entries [own_lo[m], ...) of level m
     * (this rank's slice of it); NULL: lower levels mapped whole */
    int8_t *const *own;
    const uint64_t *own_lo;
    uint64_t E, boards, lo, hi, Es;
    int8_t *be, *xl, *xh; /* per own entry (be holds the value at the end) */
    uint8_t *cnt;
    uint64_t *off;  /* fast: Es + 1, reverse lists of own entries */
    uint32_t *rev;  /* fast: predecessors (global indices) */
    int t;          /* the round */
    int fail;       /* out of memory on some thread */
    uint64_t moves;
    uint64_t sent_words; /* 4-byte words sent to other ranks (edges count 2) */
    uint64_t steps;      /* supersteps of the solve */
    uint64_t bufbytes;   /* message buffers and work lists at their largest */
};

/* One thread's buffers in the solve. */
struct mwork {
    struct vec next;  /* updates of own nodes for the next wave */
    struct vec *send; /* [size]: updates for the other ranks' nodes */
    sow_position *cand; /* lean: a final node's candidate predecessors */
    sow_move *cmv;
    int maxcand;
    uint32_t *rbuf; /* lean relay: a block's lists (lrel_read) */
    uint64_t rcap;
    struct sow_movelist ml;
};

static bool stop_requested(const struct mlvl *L)
{
    return L->opt && L->opt->stop && *L->opt->stop;
}

static void set_fail(struct mlvl *L)
{
    __atomic_store_n(&L->fail, 1, __ATOMIC_RELAXED);
}

static inline uint64_t child_index(const struct tb_index *ix, const sow_position *c,
                                   uint64_t boards)
{
    int st = ix->states > 1 ? ix->rel_state(c) : 0;
    return (uint64_t)st * boards + tb_rank_side(ix, c->board.h, 1);
}

/* Entry idx of the level as a position (A to move), without tb_position_of's
 * recomputation of the level's size. */
static void entry_pos(const struct mlvl *L, uint64_t idx, sow_position *p)
{
    memset(p, 0, sizeof *p);
    int st = L->ix->states > 1 ? (int)(idx / L->boards) : 0;
    tb_unrank(L->ix, L->n, idx - (uint64_t)st * L->boards, p->board.h);
    p->side = SOW_A;
    p->state = L->ix->state_of_rel(st, SOW_A);
}

/* Moves of the slice; fast: each thread's edges (q, p) go to eb[w][owner(q)].
 * Owned lower levels: each capture's probe goes as the request (m, q) to
 * rq[w][owner of q in level m], and (own entry, captured difference + 128)
 * to rr[w][same owner], in the same order (probe_owned answers them). */
static bool pass_moves(struct mlvl *L, struct vec *eb /* [threads][size]; NULL: lean */,
                       struct vec *rq, struct vec *rr, uint64_t from, uint64_t to /* own entries */)
{
    int size = L->M->size, n = L->n;
    uint64_t nchunks = (to - from + MCHUNK - 1) / MCHUNK;
    bool ok = true;
    uint64_t moves = 0;
#pragma omp parallel num_threads(L->threads) reduction(+ : moves)
    {
        int w = omp_get_thread_num();
        struct vec *mine = eb ? eb + (size_t)w * (size_t)size : NULL;
        struct vec *myrq = rq ? rq + (size_t)w * (size_t)size : NULL;
        struct vec *myrr = rr ? rr + (size_t)w * (size_t)size : NULL;
        struct sow_relay_cache *cache = L->rs->relay ? rules_cache_new(16) : NULL;
        struct sow_movelist ml;
#pragma omp for schedule(dynamic, 1)
        for (uint64_t ch = 0; ch < nchunks; ch++) {
            if (!__atomic_load_n(&ok, __ATOMIC_RELAXED) || stop_requested(L))
                continue;
            uint64_t a = L->lo + from + ch * MCHUNK,
                     b = a + MCHUNK < L->lo + to ? a + MCHUNK : L->lo + to;
            sow_position p;
            entry_pos(L, a, &p);
            for (uint64_t idx = a; idx < b; idx++) {
                uint64_t i = idx - L->lo;
                L->rs->generate(L->rs, &p, &ml, cache, NULL);
                moves += (uint64_t)ml.n;
                int best = ml.n == 0 ? ml.settle[0] - ml.settle[1] : RETRO_NONE_EXIT, deg = 0;
                for (int k = 0; k < ml.n; k++) {
                    const struct sow_child *c = &ml.c[k];
                    int cap = c->captured[0] + c->captured[1];
                    if (cap) {
                        int m = n - cap;
                        uint64_t q = child_index(L->ix, &c->pos, L->lower->boards[m]);
                        int d = c->captured[0] - c->captured[1];
                        if (myrq) {
                            int o = owner_of(tb_level_entries(L->ix, m), size, q);
                            if (!vec_push(&myrq[o], (uint32_t)m) || !vec_push(&myrq[o], (uint32_t)q) ||
                                !vec_push(&myrr[o], (uint32_t)i) ||
                                !vec_push(&myrr[o], (uint32_t)(d + 128))) {
#pragma omp atomic write
                                ok = false;
                            }
                            continue;
                        }
                        int ev = d - L->lower->lv[m].v[q];
                        if (ev > best)
                            best = ev;
                    } else {
                        deg++;
                        if (!mine)
                            continue;
                        uint64_t q = child_index(L->ix, &c->pos, L->boards);
                        struct vec *d = &mine[owner_of(L->E, size, q)];
                        if (!vec_push(d, (uint32_t)q) || !vec_push(d, (uint32_t)idx)) {
#pragma omp atomic write
                            ok = false;
                        }
                    }
                }
                L->be[i] = (int8_t)best;
                L->cnt[i] = (uint8_t)deg;
                L->xl[i] = L->xh[i] = RETRO_UNDONE;
                if (idx + 1 < b && !tb_index_next(L->ix, p.board.h))
                    entry_pos(L, idx + 1, &p);
            }
        }
        rules_cache_free(cache);
    }
    L->moves += moves;
    return ok;
}

/* All-to-all of variable word buffers: send[r] to rank r; *recv (malloc'd)
 * receives everything sent here, *nrecv words.  Counts must fit int (a
 * superstep's or a slice's edges under 2^31 words per rank pair).  A rank
 * that cannot allocate its buffers ends the job (MPI_Abort: the peers are
 * inside the collective already; no level file is being written then).
 * known: the words each rank sends here, if already known (the solve's
 * superstep learns them with its termination test), else NULL. */
static void exchange(struct mlvl *L, struct vec *send, const int *known, uint32_t **recv,
                     size_t *nrecv, int *counts /* if not NULL: [size] words from each rank */)
{
    int size = L->M->size;
    int *sc = calloc((size_t)size * 4, sizeof *sc);
    if (!sc)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int *rc = sc + size, *sd = rc + size, *rd = sd + size;
    size_t tot = 0;
    for (int r = 0; r < size; r++) {
        sc[r] = (int)send[r].n;
        sd[r] = (int)tot;
        tot += send[r].n;
        if (r != L->M->rank)
            L->sent_words += send[r].n;
    }
    if (known)
        memcpy(rc, known, (size_t)size * sizeof *rc);
    else {
        MPI_Request rq;
        MPI_Ialltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD, &rq);
        coll_wait(L->M, &rq);
    }
    size_t rt = 0;
    for (int r = 0; r < size; r++) {
        rd[r] = (int)rt;
        rt += (size_t)rc[r];
    }
    uint32_t *sb = malloc((tot ? tot : 1) * sizeof *sb), *rb = malloc((rt ? rt : 1) * sizeof *rb);
    if (!sb || !rb) {
        fprintf(stderr, "sow tables build: rank %d: out of memory in a message exchange\n",
                L->M->rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if ((tot + rt) * sizeof *sb > L->bufbytes)
        L->bufbytes = (tot + rt) * sizeof *sb;
    for (int r = 0; r < size; r++)
        if (send[r].n)
            memcpy(sb + sd[r], send[r].v, send[r].n * sizeof *sb);
    MPI_Request rq;
    MPI_Ialltoallv(sb, sc, sd, MPI_UINT32_T, rb, rc, rd, MPI_UINT32_T, MPI_COMM_WORLD, &rq);
    coll_wait(L->M, &rq);
    if (counts)
        memcpy(counts, rc, (size_t)size * sizeof *counts);
    free(sb);
    free(sc);
    *recv = rb;
    *nrecv = rt;
}

/* Edges (fast): send the pairs to their targets' owners, build the reverse lists. */
static bool pass_edges(struct mlvl *L, struct vec *eb)
{
    int size = L->M->size, T = L->threads;
    struct vec *send = calloc((size_t)size, sizeof *send);
    if (!send)
        return false;
    bool ok = true;
    for (int r = 0; r < size && ok; r++)
        for (int w = 0; w < T && ok; w++)
            ok = vec_take(&send[r], &eb[(size_t)w * size + r]);
    for (size_t k = 0; k < (size_t)T * size; k++) {
        free(eb[k].v);
        eb[k] = (struct vec){0};
    }
    uint32_t *rb = NULL;
    size_t nr = 0;
    if (!ok) /* take part in the collective with nothing to send, then fail */
        for (int r = 0; r < size; r++)
            send[r].n = 0;
    exchange(L, send, NULL, &rb, &nr, NULL);
    for (int r = 0; r < size; r++)
        free(send[r].v);
    free(send);
    if (!ok) {
        free(rb);
        return false;
    }
    size_t ne = nr / 2;
    L->off = calloc(L->Es + 1, sizeof *L->off);
    L->rev = malloc((ne ? ne : 1) * sizeof *L->rev);
    uint64_t *at = malloc((L->Es + 1) * sizeof *at);
    if (!L->off || !L->rev || !at) {
        free(at);
        free(rb);
        return false;
    }
    for (size_t k = 0; k < ne; k++)
        L->off[rb[2 * k] - L->lo + 1]++;
    for (uint64_t i = 0; i < L->Es; i++)
        L->off[i + 1] += L->off[i];
    memcpy(at, L->off, (L->Es + 1) * sizeof *at);
    for (size_t k = 0; k < ne; k++)
        L->rev[at[rb[2 * k] - L->lo]++] = rb[2 * k + 1];
    free(at);
    free(rb);
    return true;
}

/* Edges (lean relay), after each piece of the move pass: the piece's pairs
 * (q, p) to q's owner (one MPI_Alltoallv, as pass_edges), which appends them
 * to its edge store on local disk (lean_relay.h, q as the local index q -
 * lo); the threads' buffers are emptied for the next piece.  False: out of
 * memory here (the collective is taken part in all the same) or a write
 * error (L->rel->err). */
static bool relay_edges(struct mlvl *L, struct vec *eb, bool ok)
{
    int size = L->M->size, T = L->threads;
    struct vec *send = calloc((size_t)size, sizeof *send);
    if (!send)
        MPI_Abort(MPI_COMM_WORLD, 1); /* the peers wait in the exchange */
    for (int r = 0; r < size && ok; r++)
        for (int w = 0; w < T && ok; w++)
            ok = vec_take(&send[r], &eb[(size_t)w * size + r]);
    for (size_t k = 0; k < (size_t)T * size; k++)
        eb[k].n = 0;
    if (!ok)
        for (int r = 0; r < size; r++)
            send[r].n = 0;
    uint32_t *rb = NULL;
    size_t nr = 0;
    exchange(L, send, NULL, &rb, &nr, NULL);
    for (int r = 0; r < size; r++)
        free(send[r].v);
    free(send);
    if (ok) {
        struct lrel *rel = L->rel;
        uint64_t lo = L->lo;
        size_t ne = nr / 2;
#pragma omp parallel num_threads(T) if (T > 1 && ne >= 65536)
        {
            int w = omp_get_thread_num();
#pragma omp for schedule(static)
            for (size_t k = 0; k < ne; k++)
                lrel_put(rel, w, rb[2 * k] - lo, rb[2 * k + 1]);
        }
    }
    free(rb);
    return ok && !L->rel->err;
}

/* Owned lower levels: the move pass's probes, batched by owner.  One
 * MPI_Alltoallv of the requests (m, q), each owner answers from its slices
 * (a word per probe, in the order asked), one MPI_Alltoallv of the answers;
 * then each entry's best exit takes its captures into account.  The
 * requests of the whole slice go at once (16 bytes per capture move of the
 * slice while they are in flight). */
static bool probe_owned(struct mlvl *L, struct vec *rq, struct vec *rr)
{
    int size = L->M->size, T = L->threads, me = L->M->rank;
    struct vec *send = calloc((size_t)size, sizeof *send), *rec = calloc((size_t)size, sizeof *rec),
               *ans = calloc((size_t)size, sizeof *ans);
    int *cnt = malloc((size_t)size * sizeof *cnt), *back = malloc((size_t)size * sizeof *back);
    bool ok = send && rec && ans && cnt && back;
    for (int r = 0; r < size && ok; r++)
        for (int w = 0; w < T && ok; w++)
            ok = vec_take(&send[r], &rq[(size_t)w * size + r]) &&
                 vec_take(&rec[r], &rr[(size_t)w * size + r]);
    for (size_t k = 0; k < (size_t)T * size; k++) {
        free(rq[k].v);
        free(rr[k].v);
        rq[k] = rr[k] = (struct vec){0};
    }
    int f = !ok, g = 0;
    allreduce(L->M, &f, &g, 1, MPI_INT, MPI_MAX);
    uint32_t *rb = NULL, *ab = NULL;
    size_t nr = 0, na = 0;
    if (g)
        goto out;
    exchange(L, send, NULL, &rb, &nr, cnt);
    /* answer, source by source, in the order asked: one byte per probe,
     * four to a word (answer j of a source in byte j % 4 of word j / 4) */
    size_t at = 0;
    for (int r = 0; r < size && ok; r++) {
        size_t na_r = (size_t)cnt[r] / 2;
        ok = vec_reserve(&ans[r], (na_r + 3) / 4);
        if (ok)
            memset(ans[r].v, 0, (na_r + 3) / 4 * sizeof *ans[r].v);
        for (size_t j = 0; ok && j < na_r; j++, at += 2) {
            int m = (int)rb[at];
            uint64_t q = rb[at + 1];
            ans[r].v[j / 4] |= (uint32_t)(uint8_t)L->own[m][q - L->own_lo[m]] << (8 * (j % 4));
        }
        if (ok)
            ans[r].n = (na_r + 3) / 4;
    }
    free(rb);
    f = !ok;
    allreduce(L->M, &f, &g, 1, MPI_INT, MPI_MAX);
    if (g)
        goto out;
    for (int r = 0; r < size; r++)
        back[r] = (int)((send[r].n / 2 + 3) / 4);
    exchange(L, ans, back, &ab, &na, NULL);
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

/* ---- the solve ------------------------------------------------------------ */

/* An update p | kind for a predecessor: into this thread's next wave if p is
 * ours, else into its send buffer for p's owner. */
static inline void route(struct mlvl *L, struct mwork *W, uint32_t u)
{
    uint32_t p = u & UPD_IDX;
    bool ok;
    if (p >= L->lo && p < L->hi)
        ok = vec_push(&W->next, u);
    else
        ok = vec_push(&W->send[owner_of(L->E, L->M->size, p)], u);
    if (!ok)
        set_fail(L);
}

/* Own node i (global) became final: f = i | UPD_CLAIM for its H node (the
 * predecessors' L nodes get an option t), i alone for its L node (the
 * predecessors' H nodes lose an open child). */
static void expand(struct mlvl *L, struct mwork *W, uint32_t f)
{
    uint32_t kind = f & UPD_CLAIM;
    uint64_t i = (f & UPD_IDX) - L->lo;
    if (L->rel) { /* lean relay: the lists are read block by block (relay_scan) */
        uint64_t bit = 2 * i + (kind ? 1 : 0);
        __atomic_fetch_or(&L->pend[bit >> 6], (uint64_t)1 << (bit & 63), __ATOMIC_RELAXED);
        __atomic_store_n(&L->bdirty[i >> LREL_BSHIFT], 1, __ATOMIC_RELAXED);
        __atomic_store_n(&L->pending, 1, __ATOMIC_RELAXED);
        return;
    }
    if (!L->lean) {
        for (uint64_t k = L->off[i]; k < L->off[i + 1]; k++)
            route(L, W, L->rev[k] | kind);
        return;
    }
    /* Lean: un-sow the node, here on the final node's owner, so only real
     * updates travel.  The predecessors come filtered from q's board, as in
     * lean.c (unmove.h: the same list as every candidate confirmed by the
     * forward generator); only awari's starving moves (check) still need
     * the generator.  A claim on an own L node already final is dropped. */
    sow_position q;
    entry_pos(L, f & UPD_IDX, &q);
    const struct ruleset *rs = L->rs;
    bool check;
    int k = unmove_preds_(&q, L->ix->pits, unmove_skips_origin(rs), rs->family == SOW_DARRA,
                          rs->family == SOW_AWARI, true, W->cand, W->cmv, W->maxcand, &check);
    for (int j = 0; j < k; j++) {
        uint32_t p = (uint32_t)child_index(L->ix, &W->cand[j], L->boards);
        if (kind && p >= L->lo && p < L->hi &&
            __atomic_load_n(&L->xl[p - L->lo], __ATOMIC_RELAXED) != RETRO_UNDONE)
            continue;
        if (check && !unmove_confirm(rs, &W->cand[j], W->cmv[j], &q, &W->ml))
            continue;
        route(L, W, p | kind);
    }
}

/* An update of own node u & UPD_IDX: a claim on its L node, or a decrement
 * of its H node's open children. */
static void apply(struct mlvl *L, struct mwork *W, uint32_t u)
{
    uint64_t i = (u & UPD_IDX) - L->lo;
    int8_t t = (int8_t)L->t;
    if (u & UPD_CLAIM) {
        if (retro_claim(&L->xl[i], t, L->par))
            expand(L, W, u & UPD_IDX);
        return;
    }
    uint8_t c = retro_dec(&L->cnt[i], L->par);
    int be = L->be[i];
    if (c == 0 && (be == RETRO_NONE_EXIT || -be >= t) && retro_claim(&L->xh[i], t, L->par))
        expand(L, W, u | UPD_CLAIM);
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
                uint32_t p = list[j];
                /* a claim on an own L node already final: dropped (as expand) */
                if (kind && p >= L->lo && p < L->hi &&
                    __atomic_load_n(&L->xl[p - L->lo], __ATOMIC_RELAXED) != RETRO_UNDONE)
                    continue;
                route(L, W, p | kind);
            }
        }
        L->pend[w] = 0;
    }
}

/* Lean relay: every dirty block's final nodes (relay_block), the blocks
 * over the threads; the updates land in the threads' next waves and send
 * buffers. */
static void relay_scan(struct mlvl *L, struct mwork *W)
{
    L->pending = 0;
    uint64_t nb = L->rel->nblocks;
#pragma omp parallel for schedule(dynamic, 1) num_threads(L->threads) if (L->threads > 1 && nb > 1)
    for (uint64_t b = 0; b < nb; b++) {
        if (!L->bdirty[b])
            continue;
        L->bdirty[b] = 0;
        relay_block(L, &W[omp_get_thread_num()], b);
    }
}

/* The round's seeds in own entries [a, b): L nodes with best exit t claim
 * themselves; H nodes with best exit -t and no open in-level child are final. */
static void seeds(struct mlvl *L, struct mwork *W, uint64_t a, uint64_t b)
{
    int t = L->t;
    for (uint64_t i = a; i < b; i++) {
        int be = L->be[i];
        if (be == t && retro_claim(&L->xl[i], (int8_t)t, L->par))
            expand(L, W, (uint32_t)(L->lo + i));
        if (be == -t && (L->par ? __atomic_load_n(&L->cnt[i], __ATOMIC_RELAXED) : L->cnt[i]) == 0 &&
            retro_claim(&L->xh[i], (int8_t)t, L->par))
            expand(L, W, (uint32_t)(L->lo + i) | UPD_CLAIM);
    }
}

/* The threads' next waves into cur; false: out of memory. */
static bool collect(struct mlvl *L, struct mwork *W, struct vec *cur)
{
    bool ok = true;
    for (int w = 0; w < L->threads; w++)
        ok &= vec_take(cur, &W[w].next);
    return ok;
}

/* Rounds t = n .. -n of the slice, supersteps inside a round. */
static enum sow_status solve(struct mlvl *L, struct sow_error *e)
{
    int n = L->n, size = L->M->size, me = L->M->rank, T = L->threads;
    int V = 2 * n + 1;
    int *seeded = calloc((size_t)V, sizeof *seeded), *any = calloc((size_t)V, sizeof *any);
    struct vec *send = calloc((size_t)size, sizeof *send);
    struct mwork *W = calloc((size_t)T, sizeof *W);
    struct vec cur = {0};
    int *row = malloc((size_t)(size + 1) * sizeof *row),
        *mat = malloc((size_t)size * (size_t)(size + 1) * sizeof *mat),
        *recvc = malloc((size_t)size * sizeof *recvc);
    int fail = !seeded || !any || !send || !W || !row || !mat || !recvc;
    for (int w = 0; w < T && !fail; w++) {
        W[w].send = calloc((size_t)size, sizeof *W[w].send);
        W[w].maxcand = L->ix->pits * (n + 1) + 2;
        W[w].cand = L->lean ? malloc((size_t)W[w].maxcand * sizeof *W[w].cand) : NULL;
        W[w].cmv = L->lean ? malloc((size_t)W[w].maxcand) : NULL;
        fail |= !W[w].send || (L->lean && (!W[w].cand || !W[w].cmv));
    }
    if (!fail)
        for (uint64_t i = 0; i < L->Es; i++)
            if (L->be[i] != RETRO_NONE_EXIT) {
                seeded[L->be[i] + n] = 1;
                seeded[-L->be[i] + n] = 1;
            }
    int f0 = fail;
    allreduce(L->M, &f0, &fail, 1, MPI_INT, MPI_MAX);
    enum sow_status st = SOW_OK;
    if (fail) {
        st = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory in the solve", n);
        goto out;
    }
    allreduce(L->M, seeded, any, V, MPI_INT, MPI_LOR);
    uint64_t nchunks = (L->Es + MCHUNK - 1) / MCHUNK;
    for (int t = n; t >= -n && !fail; t--) {
        if (!any[t + n])
            continue;
        int flags[2] = {stop_requested(L), fail}, g[2];
        allreduce(L->M, flags, g, 2, MPI_INT, MPI_MAX);
        if (g[0] || g[1])
            break;
        if (L->opt && L->opt->progress && me == 0)
            L->opt->progress(L->opt->ctx, n, L->E, 0.8 + 0.15 * (double)(n - t) / V, "solve");
        L->t = t;
#pragma omp parallel for schedule(dynamic, 1) num_threads(T) if (T > 1)
        for (uint64_t ch = 0; ch < nchunks; ch++) {
            uint64_t a = ch * MCHUNK, b = a + MCHUNK < L->Es ? a + MCHUNK : L->Es;
            seeds(L, &W[omp_get_thread_num()], a, b);
        }
        fail |= !collect(L, W, &cur) || L->fail;
        for (;;) {
            /* Waves of local work: each wave's updates in parallel, the
             * updates they cause for own nodes form the next wave (lean
             * relay: and the lists of the nodes they made final, read
             * block by block, the next). */
            while (!fail && (cur.n || (L->rel && L->pending))) {
                if (!cur.n) {
                    relay_scan(L, W);
                    fail |= !collect(L, W, &cur) || L->fail;
                    continue;
                }
                if (cur.n * sizeof *cur.v > L->bufbytes)
                    L->bufbytes = cur.n * sizeof *cur.v;
                uint64_t nw = (cur.n + WAVE_CHUNK - 1) / WAVE_CHUNK;
#pragma omp parallel for schedule(dynamic, 1) num_threads(T) if (T > 1 && cur.n >= WAVE_PAR)
                for (uint64_t c = 0; c < nw; c++) {
                    struct mwork *w = &W[omp_get_thread_num()];
                    size_t a = c * WAVE_CHUNK, b = a + WAVE_CHUNK < cur.n ? a + WAVE_CHUNK : cur.n;
                    for (size_t k = a; k < b; k++)
                        apply(L, w, cur.v[k]);
                }
                cur.n = 0;
                fail |= !collect(L, W, &cur) || L->fail;
            }
            for (int r = 0; r < size && !fail; r++)
                for (int w = 0; w < T && !fail; w++)
                    fail |= !vec_take(&send[r], &W[w].send[r]);
            /* Superstep: one MPI_Allgather of every rank's row (failed,
             * words to each rank) tells all of them whether the round is
             * over and what each receives; then one MPI_Alltoallv. */
            row[0] = fail;
            for (int r = 0; r < size; r++)
                row[1 + r] = fail ? 0 : (int)send[r].n;
            MPI_Request rq;
            MPI_Iallgather(row, size + 1, MPI_INT, mat, size + 1, MPI_INT, MPI_COMM_WORLD, &rq);
            coll_wait(L->M, &rq);
            uint64_t total = 0;
            int gfail = 0;
            for (int r = 0; r < size; r++) {
                gfail |= mat[r * (size + 1)];
                recvc[r] = mat[r * (size + 1) + 1 + me];
                for (int k = 0; k < size; k++)
                    total += (uint64_t)mat[r * (size + 1) + 1 + k];
            }
            if (gfail) {
                fail = 1;
                break;
            }
            L->steps++;
            if (!total)
                break;
            uint32_t *rb = NULL;
            size_t nr = 0;
            exchange(L, send, recvc, &rb, &nr, NULL);
            for (int r = 0; r < size; r++)
                send[r].n = 0;
            if (vec_reserve(&cur, nr)) {
                memcpy(cur.v + cur.n, rb, nr * sizeof *rb);
                cur.n += nr;
            } else
                fail = 1;
            free(rb);
        }
    }
    {
        int flags[2] = {stop_requested(L), fail}, g[2];
        allreduce(L->M, flags, g, 2, MPI_INT, MPI_MAX);
        if (g[1])
            st = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory in the solve", n);
        else if (g[0])
            st = sow_fail(e, SOW_E_INTERRUPTED, "interrupted");
    }
out:
    if (send)
        for (int r = 0; r < size; r++)
            free(send[r].v);
    if (W)
        for (int w = 0; w < T; w++) {
            uint64_t b = (W[w].next.cap) * 4;
            if (W[w].send)
                for (int r = 0; r < size; r++) {
                    b += W[w].send[r].cap * 4;
                    free(W[w].send[r].v);
                }
            L->bufbytes += b;
            free(W[w].send);
            free(W[w].next.v);
            free(W[w].cand);
            free(W[w].cmv);
            L->bufbytes += W[w].rcap;
            free(W[w].rbuf);
        }
    free(W);
    free(send);
    free(cur.v);
    free(seeded);
    free(any);
    free(row);
    free(mat);
    free(recvc);
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
    free(L->rev);
    free(L->pend);
    free(L->bdirty);
    L->pend = NULL;
    L->bdirty = NULL;
    L->be = L->xl = L->xh = NULL;
    L->cnt = NULL;
    L->off = NULL;
    L->rev = NULL;
}

/* Test hook (tests/mpi/run.sh): SOW_MPI_TEST_KILL=R:L kills rank R with
 * SIGKILL in the middle of level L (after its move pass), as a crashed
 * machine would; R:L:w once the level's temporary file exists, before the
 * rank has written its slice into it (phase 'w'). */
static void test_kill(const struct mpi *M, int n, char phase)
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

/* Level n: *keep receives this rank's slice of the level's values
 * (malloc'd; SOW_OK), which write_level writes at its offset.  own/own_lo:
 * the owned lower levels (NULL: mapped). */
static enum sow_status mpi_level(const struct mpi *M, const struct ruleset *rs,
                                 const struct tb_set *set, int n, bool lean,
                                 int8_t *const *own, const uint64_t *own_lo, int8_t **keep,
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
    L.own_lo = own_lo;
    L.E = tb_level_entries(L.ix, n);
    L.boards = tb_level_boards(L.ix, n);
    L.lo = slice_lo(L.E, M->size, M->rank);
    L.hi = slice_lo(L.E, M->size, M->rank + 1);
    L.Es = L.hi - L.lo;
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
    bool ok = L.be && L.xl && L.xh && L.cnt && ((lean && !relay) || eb) && (!own || (rq && rr));
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
        st = agree(M, st, e);
    }
    if (opt && opt->progress && M->rank == 0)
        opt->progress(opt->ctx, n, L.E, 0.0, "moves");
    /* Owned lower levels: the move pass in pieces of the same number of
     * entries on every rank, each piece's probes answered before the next
     * (their buffers stay at 16 B per capture move of a piece); lean relay:
     * each piece's in-level edges sent to their targets' owners before the
     * next (relay_edges: 16 B per in-level move of a piece in flight). */
    uint64_t piece = L.Es ? L.Es : 1, pieces = 1;
    if (own || relay) {
        const char *tp = getenv("SOW_MPI_TEST_PIECE"); /* tests: small pieces */
        piece = tp && atoll(tp) > 0 ? (uint64_t)atoll(tp) : relay ? RELAY_PIECE : PROBE_PIECE;
        uint64_t mine = (L.Es + piece - 1) / piece;
        allreduce(M, &mine, &pieces, 1, MPI_UINT64_T, MPI_MAX);
    }
    for (uint64_t k = 0; k < pieces && st == SOW_OK; k++) {
        uint64_t from = k * piece < L.Es ? k * piece : L.Es;
        uint64_t to = from + piece < L.Es ? from + piece : L.Es;
        if (ok)
            ok = pass_moves(&L, eb, rq, rr, from, to);
        if (!ok)
            sow_fail(e, SOW_E_NOMEM, "level %d: out of memory in the move pass", n);
        if (ok && stop_requested(&L)) {
            st = sow_fail(e, SOW_E_INTERRUPTED, "interrupted");
        } else if (!ok)
            st = SOW_E_NOMEM;
        st = agree(M, st, e);
        if (st == SOW_OK && relay) {
            if (!relay_edges(&L, eb, true))
                st = rel.err && rel.err != ENOMEM
                         ? sow_fail(e, SOW_E_IO, "level %d: writing the relay edges: %s", n,
                                    strerror(rel.err))
                         : sow_fail(e, SOW_E_NOMEM, "level %d: out of memory in the edge exchange",
                                    n);
            st = agree(M, st, e);
        }
        if (st != SOW_OK || !own)
            continue;
        if (opt && opt->progress && M->rank == 0)
            opt->progress(opt->ctx, n, L.E, 0.5 * (double)(k + 1) / (double)pieces, "moves");
        if (!probe_owned(&L, rq, rr))
            st = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory in the probe exchange", n);
        st = agree(M, st, e);
    }
    if (st == SOW_OK && relay) { /* the pairs into predecessor lists (lrel_sort) */
        if (opt && opt->progress && M->rank == 0)
            opt->progress(opt->ctx, n, L.E, 0.6, "edges");
        for (int w = 0; w < T; w++)
            lrel_flush(&rel, w);
        st = lrel_sort(&rel, T, NULL, opt, e);
        if (rel.sortbytes + 8.0 * (double)(rel.nblocks + 1) > relbytes)
            relbytes = rel.sortbytes + 8.0 * (double)(rel.nblocks + 1);
        st = agree(M, st, e);
    }
    if (st != SOW_OK)
        goto out;
    test_kill(M, n, 0);
    if (!lean) {
        if (opt && opt->progress && M->rank == 0)
            opt->progress(opt->ctx, n, L.E, 0.6, "edges");
        if (!pass_edges(&L, eb))
            st = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory in the edge exchange", n);
        st = agree(M, st, e);
        if (st != SOW_OK)
            goto out;
    }
    st = solve(&L, e);
    if (relay) { /* a read error of the lists is an I/O failure, not memory */
        if (st == SOW_E_NOMEM && rel.err && rel.err != ENOMEM)
            st = sow_fail(e, SOW_E_IO, "level %d: reading the relay edges: %s", n,
                          strerror(rel.err));
        st = agree(M, st, e);
    }
    if (st != SOW_OK)
        goto out;
    if (opt && opt->progress && M->rank == 0)
        opt->progress(opt->ctx, n, L.E, 0.95, "values");
    if (finish(&L))
        st = sow_fail(e, SOW_E_NOMEM, "level %d: internal error: lo > hi", n);
    st = agree(M, st, e);
    if (st != SOW_OK)
        goto out;
    if (opt && opt->moves) {
        uint64_t all = 0;
        allreduce(M, &L.moves, &all, 1, MPI_UINT64_T, MPI_SUM);
        *opt->moves += all;
    }
    stats[0] += L.sent_words;
    stats[1] += L.steps;
    /* bytes of this rank for the level: node state, lists, buffers */
    stats[2] = 4 * L.Es + (L.off ? 8 * (L.Es + 1) + 4 * L.off[L.Es] : 0) + L.bufbytes +
               (L.pend ? L.Es / 4 + (uint64_t)relbytes : 0);
    if (getenv("SOW_MPI_STATS")) {
        uint64_t w = 0;
        MPI_Reduce(&L.sent_words, &w, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        if (M->rank == 0)
            fprintf(stderr, "mpi: level %d: %llu positions, %.2f bytes sent per position, "
                    "%llu supersteps\n", n, (unsigned long long)L.E,
                    L.E ? 4.0 * (double)w / (double)L.E : 0.0, (unsigned long long)L.steps);
    }
    *keep = L.be;
    L.be = NULL;
out:
    for (size_t k = 0; k < (size_t)T * (size_t)M->size; k++) {
        if (eb)
            free(eb[k].v);
        if (rq)
            free(rq[k].v);
        if (rr)
            free(rr[k].v);
    }
    free(eb);
    free(rq);
    free(rr);
    if (L.rel)
        lrel_free(&rel);
    mlvl_free(&L);
    return st;
}

/* ---- the level file ---------------------------------------------------------- */

/* XXH3-64 of the level's payload, E bytes in index order spread over the
 * ranks' slices, without moving the slices: the streaming state is handed
 * from rank to rank (rank r hashes its slice after rank r - 1's, a message
 * of sizeof(XXH3_state_t) bytes each), the last rank's digest is broadcast.
 * The streaming API's result does not depend on how the input is cut, so
 * the sum is XXH3_64bits of the whole payload, as tb_file_write computes it.
 * The state is xxhash.h's plain struct; its one pointer, extSecret (the
 * default secret, a static array of each process), is this process's own
 * after the copy.  Sequential, but each rank's share is its slice in
 * memory: about 1/10 s per GB. */
static uint64_t chain_checksum(const struct mpi *M, const int8_t *slice, uint64_t Es)
{
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    if (M->rank > 0) {
        XXH3_state_t in;
        MPI_Request rq;
        MPI_Irecv(&in, (int)sizeof in, MPI_BYTE, M->rank - 1, 7, MPI_COMM_WORLD, &rq);
        coll_wait(M, &rq);
        const unsigned char *secret = st.extSecret;
        st = in;
        st.extSecret = secret;
    }
    XXH3_64bits_update(&st, slice, (size_t)Es);
    if (M->rank + 1 < M->size)
        MPI_Send(&st, (int)sizeof st, MPI_BYTE, M->rank + 1, 7, MPI_COMM_WORLD);
    uint64_t sum = M->rank + 1 == M->size ? XXH3_64bits_digest(&st) : 0;
    bcast(M, &sum, 1, MPI_UINT64_T, M->size - 1);
    return sum;
}

static enum sow_status mpi_io_fail(int rc, const char *what, const char *path,
                                   struct sow_error *e)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    msg[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = 0;
    return sow_fail(e, SOW_E_IO, "%s %s: %s", what, path, msg);
}

/* Level n's file, written once, by all ranks (no rank holds the level):
 *
 *   rank 0   PATH.tmp created (fio_out_begin: the fixed name this job owns
 *            under the directory lock, a leftover removed), sized 128 + E
 *   every r  writes its slice at offset 128 + lo(r) (MPI-IO, the file
 *            opened on MPI_COMM_SELF, independent writes: each rank's part
 *            is one contiguous range), MPI_File_sync, close
 *   chain    the payload's XXH3-64 (chain_checksum)
 *   rank 0   the header (tb_header_encode, as tb_file_write), then
 *            fio_out_commit: fsync, rename to PATH, fsync of the directory
 *
 * so the file is byte-identical to tb_file_write's, and appears whole or
 * not at all.  Any rank's failure is agreed on and rank 0 removes the
 * temporary file; a rank killed meanwhile makes mpirun end the job, which
 * may leave PATH.tmp (as a single process killed while writing does): it is
 * never read as a level (`tables info` lists it), and the rerun removes it
 * before writing the level again. */
static enum sow_status write_level(const struct mpi *M, const struct ruleset *rs,
                                   const char *dir, int n, const int8_t *slice, uint64_t E,
                                   struct sow_error *e)
{
    char path[4096], tmp[4200];
    tb_file_name(dir, rs->name, rs->pits, n, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    uint64_t lo = slice_lo(E, M->size, M->rank), Es = slice_lo(E, M->size, M->rank + 1) - lo;
    struct fio_out o = {.fd = -1};
    enum sow_status st = SOW_OK;
    if (M->rank == 0) {
        st = fio_out_begin(&o, path, tmp, e);
        if (st == SOW_OK && ftruncate(o.fd, (off_t)(TB_HEADER_SIZE + E)) < 0)
            st = sow_fail(e, SOW_E_IO, "writing %s: %s", tmp, strerror(errno));
    }
    st = agree(M, st, e);
    if (st == SOW_OK) {
        test_kill(M, n, 'w');
        MPI_File fh;
        int rc = MPI_File_open(MPI_COMM_SELF, tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        if (rc != MPI_SUCCESS) {
            st = mpi_io_fail(rc, "cannot open", tmp, e);
        } else {
            /* (counts are ints: E < 2^31) */
            rc = MPI_File_write_at(fh, (MPI_Offset)(TB_HEADER_SIZE + lo), slice, (int)Es,
                                   MPI_BYTE, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                rc = MPI_File_sync(fh);
            int rc2 = MPI_File_close(&fh);
            rc = rc == MPI_SUCCESS ? rc2 : rc;
            if (rc != MPI_SUCCESS)
                st = mpi_io_fail(rc, "writing", tmp, e);
        }
    }
    st = agree(M, st, e);
    uint64_t sum = st == SOW_OK ? chain_checksum(M, slice, Es) : 0;
    if (M->rank == 0 && st == SOW_OK) {
        uint8_t h[TB_HEADER_SIZE];
        tb_header_encode(h, rs, n, TB_FORMAT_VERSION, E, sum);
        tb_header_seal(h);
        st = fio_write_all(&o, h, TB_HEADER_SIZE, e); /* at offset 0: nothing written by o yet */
        if (st == SOW_OK)
            st = fio_out_commit(&o, e);
    }
    if (M->rank == 0)
        fio_out_abort(&o); /* the temporary file, if not renamed (safe after commit) */
    return agree(M, st, e);
}

/* Bytes one rank needs for level n on top of the (mapped) lower levels:
 * 4 bytes of node state per own entry (no rank holds the whole level:
 * write_level) and, fast: an 8-byte list offset and per
 * in-level move (<= N per entry) 8 bytes in the send buffers, 8 received and
 * 4 in the reverse lists; lean: the updates of a wave and of a superstep,
 * about 8 bytes per own entry at their largest (bench/mpi-tables.sh measures
 * it); owned lower levels: 16 bytes per probe in flight, taken as one per
 * entry of a piece (0.37 measured on oware 2x6 at levels <= 12); lean
 * relay: the pend bits (2 per own entry), the edge store's largest phase
 * (lrel_memory: its buffers or its sort) and the edges of a piece in flight
 * (<= N per entry, 8 bytes sent, 8 received, 8 while gathered). */
static double rank_memory(const struct tb_index *ix, int n, int size, bool lean, bool relay,
                          int threads, bool owned)
{
    double Es = (double)tb_level_entries(ix, n) / size + 1;
    double piece = Es < (double)PROBE_PIECE ? Es : (double)PROBE_PIECE;
    double rpiece = Es < (double)RELAY_PIECE ? Es : (double)RELAY_PIECE;
    double rel = relay && lean ? 0.25 * Es + lrel_memory((uint64_t)Es, ix->pits, threads) +
                                     24.0 * ix->pits * rpiece
                               : 0.0;
    return Es * (lean ? 4.0 + 8.0 : 12.0 + 20.0 * ix->pits) + (owned ? 16.0 * piece : 0.0) +
           rel + (1 << 22);
}

enum sow_status tb_build_mpi(const struct ruleset *rs, const char *dir, int max_level,
                             const struct tb_build_opts *opt, int *rankp, struct sow_error *e)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        int prov;
        MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &prov);
    }
    struct mpi M;
    MPI_Comm_rank(MPI_COMM_WORLD, &M.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &M.size);
    {
        const char *nap = getenv("SOW_MPI_NAP_US"); /* coll_wait; the same on every rank */
        M.nap_ns = nap && *nap ? 1000 * atol(nap) : 20000;
        if (M.nap_ns < 0 || M.nap_ns > 999999999)
            M.nap_ns = 20000;
    }
    *rankp = M.rank;
    /* progress and level lines on rank 0 only */
    struct tb_build_opts o = opt ? *opt : (struct tb_build_opts){0};
    if (M.rank != 0) {
        o.progress = NULL;
        o.level_done = NULL;
        o.level_info = NULL;
    }
    enum sow_status st = SOW_OK;
    struct fio_lock lock = {-1};
    struct tb_set *set = NULL;
    int8_t *vals = NULL; /* this rank's slice of the level being written */
    int8_t *own[TB_MAX_LEVEL + 1] = {0}; /* owned lower levels: this rank's slices */
    uint64_t own_lo[TB_MAX_LEVEL + 1] = {0};
    unsigned char missing[TB_MAX_LEVEL + 1] = {0};
    if (max_level < 0 || max_level > TB_MAX_LEVEL)
        st = sow_fail(e, SOW_E_INPUT, "--seeds %d: levels go up to %d", max_level, TB_MAX_LEVEL);
    else if (!(set = tb_set_new(rs, dir)))
        st = sow_fail(e, SOW_E_NOMEM, "out of memory");
    /* As tb_build (fileio.h rules 3 and 4), on rank 0 for the job: the
     * directory exists, this job alone builds in it, it can be written. */
    if (st == SOW_OK && M.rank == 0 &&
        ((st = fio_mkdir_p(dir, e)) || (st = fio_lock_dir(dir, &lock, o.stop, NULL, NULL, e)) ||
         (st = fio_dir_writable(dir, e))))
        fio_unlock(&lock);
    st = agree(&M, st, e);
    if (st != SOW_OK)
        goto out;
    /* rank 0 decides which levels exist; every rank loads (and checks) them */
    if (M.rank == 0)
        for (int n = 0; n <= max_level; n++) {
            char path[4200];
            tb_file_name(dir, rs->name, rs->pits, n, path, sizeof path);
            missing[n] = !fio_exists(path);
        }
    MPI_Bcast(missing, TB_MAX_LEVEL + 1, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD);
    double limit = o.memory_bytes > 0 ? o.memory_bytes : 0.75 * util_phys_memory();
    /* The builder, as tb_build picks it: lean if asked for, or (auto) if
     * the stored edges do not fit (relay rule sets: lean with the edges on
     * each rank's disk, relay_edges). */
    bool lean = o.builder == TB_BUILDER_LEAN, relay = !tb_unmove_supported(rs);
    int rthreads = o.threads > 0 ? o.threads : omp_get_max_threads();
    if (o.builder == TB_BUILDER_AUTO) {
        double lower = 0;
        for (int n = 0; n <= max_level; n++) {
            uint64_t E = tb_level_entries(&set->ix, n);
            if (E > TB_MAX_ENTRIES)
                break;
            if (missing[n] && lower + rank_memory(&set->ix, n, M.size, false, relay, rthreads, false) >
                                 limit)
                lean = true;
            lower += (double)E;
        }
    }
    /* Lower levels: mapped whole on every rank (the page cache holds what
     * is probed), or owned: each rank keeps its slice of each level and the
     * probes go to the owners in batches (probe_owned).  Owned when the
     * lower levels of the top level would take more than half of a rank's
     * budget; SOW_MPI_LOWER=owned|mapped decides instead (tests, bench). */
    bool owned;
    {
        double all = 0;
        for (int n = 0; n < max_level; n++)
            all += (double)tb_level_entries(&set->ix, n);
        const char *how = getenv("SOW_MPI_LOWER");
        owned = how && strcmp(how, "owned") == 0 ? true
                : how && strcmp(how, "mapped") == 0 ? false
                                                    : all > limit / 2;
    }
    double lower = 0;
    for (int n = 0; n <= max_level && st == SOW_OK; n++) {
        uint64_t E = tb_level_entries(&set->ix, n);
        if (!missing[n]) {
            st = tb_set_load_level(set, n, e);
            if (st != SOW_OK && e) {
                size_t l = strlen(e->msg);
                snprintf(e->msg + l, sizeof e->msg - l, " (delete it to rebuild)");
            }
            if (st == SOW_OK && owned) { /* keep the slice, drop the rest */
                uint64_t a = slice_lo(E, M.size, M.rank), b = slice_lo(E, M.size, M.rank + 1);
                own_lo[n] = a;
                own[n] = malloc(b > a ? b - a : 1);
                if (!own[n])
                    st = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory", n);
                else
                    memcpy(own[n], set->lv[n].v + a, b - a);
                tb_set_own_level(set, n, NULL, NULL, 0);
            }
        } else if (E > TB_MAX_ENTRIES) {
            st = sow_fail(e, SOW_E_TOO_BIG, "level %d has %llu entries, more than 31-bit indices",
                          n, (unsigned long long)E);
        } else {
            double need = (owned ? lower / M.size : lower) +
                          rank_memory(&set->ix, n, M.size, lean, relay, rthreads, owned);
            if (need > limit)
                st = sow_fail(e, SOW_E_TOO_BIG,
                              "level %d needs about %.1f GB per rank (%s) but the memory limit "
                              "is %.1f GB (--memory); levels up to %d fit",
                              n, need / 1e9, lean ? "lean" : "stored edges", limit / 1e9, n - 1);
        }
        lower += (double)E;
    }
    st = agree(&M, st, e);
    if (st != SOW_OK)
        goto out;
    uint64_t stats[3] = {0, 0, 0}; /* words sent to other ranks, supersteps, level bytes */
    uint64_t peak_level = 0;
    for (int n = 0; n <= max_level; n++) {
        uint64_t E = tb_level_entries(&set->ix, n);
        if (!missing[n]) {
            if (o.level_done)
                o.level_done(o.ctx, n, E, 0, false);
            continue;
        }
        double t0 = util_now();
        st = mpi_level(&M, rs, set, n, lean, owned ? own : NULL, own_lo, &vals, &o, stats, e);
        own_lo[n] = slice_lo(E, M.size, M.rank);
        if (st != SOW_OK)
            goto out;
        /* every rank writes its slice into the one file (write_level) */
        st = write_level(&M, rs, dir, n, vals, E, e);
        if (owned) { /* the slice is this rank's part of the lower level now */
            own[n] = vals;
            vals = NULL;
        }
        free(vals);
        vals = NULL;
        /* mapped: every rank maps the new level from the shared directory
         * (and checks it): the levels above probe it there */
        if (st == SOW_OK && !owned)
            st = agree(&M, tb_set_load_level(set, n, e), e);
        if (st != SOW_OK)
            goto out;
        uint64_t lb = stats[2], mb = 0;
        allreduce(&M, &lb, &mb, 1, MPI_UINT64_T, MPI_MAX);
        if (mb > peak_level)
            peak_level = mb;
        if (o.level_info) /* the largest rank's bytes for the level */
            o.level_info(o.ctx, n, E,
                         owned ? (lean ? "mpi lean/owned" : "mpi fast/owned")
                               : (lean ? "mpi lean" : "mpi fast"),
                         (double)mb);
        if (o.level_done)
            o.level_done(o.ctx, n, E, util_now() - t0, true);
        int s = o.stop && *o.stop, g = 0;
        allreduce(&M, &s, &g, 1, MPI_INT, MPI_MAX);
        if (g) {
            st = sow_fail(e, SOW_E_INTERRUPTED, "interrupted");
            goto out;
        }
    }
    if (getenv("SOW_MPI_STATS")) {
        /* sow bench tables --mpi, bench/mpi-tables.sh: bytes between ranks,
         * supersteps, peak memory */
        uint64_t all = 0, pos = 0, rss, maxrss = 0;
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        rss = (uint64_t)ru.ru_maxrss * 1024;
        for (int n = 0; n <= max_level; n++)
            pos += missing[n] ? tb_level_entries(&set->ix, n) : 0;
        MPI_Reduce(&stats[0], &all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(&rss, &maxrss, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
        if (M.rank == 0)
            fprintf(stderr,
                    "mpi: %d ranks, %s, %llu positions built, %llu bytes sent between ranks "
                    "(%.2f per position), %llu supersteps, peak memory per rank %.1f MB "
                    "(rss), %.1f MB (level arrays and buffers)\n",
                    M.size,
                    owned ? (lean ? "lean-owned" : "fast-owned") : (lean ? "lean" : "fast"),
                    (unsigned long long)pos,
                    (unsigned long long)(4 * all),
                    pos ? 4.0 * (double)all / (double)pos : 0.0, (unsigned long long)stats[1],
                    (double)maxrss / 1e6, (double)peak_level / 1e6);
    }
out:
    tb_close(set);
    fio_unlock(&lock);
    free(vals);
    for (int n = 0; n <= TB_MAX_LEVEL; n++)
        free(own[n]);
    return st;
}

void tb_mpi_finish(void)
{
    int inited = 0, done = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&done);
    if (inited && !done)
        MPI_Finalize();
}
