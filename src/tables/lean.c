/* Endgame tables: the lean retrograde builder (every rule set).  This file
 * holds a level's solve; lean_moves.c its move pass, lean_run.c the levels
 * of a build (lean_level.h).
 *
 * The retrograde game of retro/retro.h, as build.c plays it, without
 * in-level edges in memory: a node that becomes final finds its predecessors
 * by un-sowing (oware, awari, darra: unmove.h, only the real predecessors,
 * the forward check decided from the child's board), or, for the relay rule
 * sets, in the predecessor lists that the move pass wrote to disk
 * (lean_relay.h), read back a block of 2^16 entries at a time.
 * Per entry of the level being built (docs/tables.md "Lean builder"):
 *
 *     struct lnode  be | cnt | xl | xh          4 bytes
 *     lfin          L node final                1 bit
 *     pend          final, not yet propagated   2 bits (L, H), when a
 *                   thread's work list is full
 *     work lists    <= E/48 entries per thread  (a cap, not a reservation),
 *                   16 bytes each: a lean_item (the 64-bit index and the
 *                   side) and the packed board
 *
 * about 4.4 bytes per entry plus at most 0.33 per thread for the work lists;
 * the values are written over the nodes at the end (V fits where be was, and
 * is then packed in place to one byte per entry) and go to the file from
 * there.  Lower levels are read where they are (pinned copies of their
 * files, or compressed files whose exits the move pass answers in batches:
 * lean_exits.c).
 * The relay path has no work lists (every final node goes to pend) and adds
 * lean_relay.h's buffers (about 1 byte per entry at most, while sorting).
 *
 * Per level: a move pass (best exit, in-level out-degree, as build.c; it
 * also notes which best-exit values each block of entries has), then
 * rounds t = n .. -n (played by retro_rounds, retro.h: this file supplies
 * a round's passes and a thread's state): the round's seeds are found by
 * scanning the blocks that have best exit t or -t; final nodes go to the
 * thread's work list (a stack) with its board packed; a node taken from it
 * is unpacked, its predecessors found and ranked, claims on L nodes already
 * final dropped by the bitmap, and the rest applied (claims and counter
 * decrements as in build.c, prefetched a batch at a time).  A full work
 * list spills into the pend bitmap, which the round's further passes scan
 * until it is empty.
 */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tables/tb_lean.h"
#include "retro/retro.h"
#include "util.h"
#include "lean.h"
#include "lean_relay.h"
#include "progress.h"
#include "tables_internal.h"
#include "unmove.h"
#include "lean_level.h"

/* One thread's state in the solve. */
struct lsolver {
    struct lean *L;
    int t;
    bool par;
    lean_item *fin; /* work list (stack) of final nodes: idx | KIND_H */
    uint64_t *fpk; /* their boards packed (PK_VALID | holes), so that taking
                    * a node needs no unrank; 0: unrank it */
    uint64_t nfin, capfin;
    sow_position *cand; /* a batch's predecessors (FBATCH * maxcand) */
    sow_move *cmv;
    lean_item *upd;     /* their updates: idx | KIND_H (claim) or idx (decrement) */
    int maxcand;
    bool failed;
    uint64_t finals; /* nodes taken from the work list, not yet counted in progress */
    struct sow_movelist ml;
    uint32_t *rbuf;  /* relay: a block's predecessor lists (lean_relay.h) */
    uint64_t rcap;
    uint64_t decs, claims, dropped; /* statistics, added to L's at the end */
    uint64_t sblocks;                /* seed blocks scanned (their mask had t or -t) */
    double idle;                     /* seconds waiting for the other threads at a round's end */
    double scan;                     /* seconds in the seed scans (drains excluded) */
    /* Updates held back by region (bucketed levels, see "Updates by
     * region"): bucket b holds bn[b] updates to entries of region b, each
     * its target (idx | KIND_H for a claim) and the target's packed board. */
    lean_item *bu;
    uint64_t *bpk;
    uint32_t *bn;
    uint32_t bcap;   /* updates a bucket holds */
    uint64_t nb;     /* buckets (regions of the level), 0: updates applied at once */
    uint64_t held;   /* updates in the buckets */
};

/* Solve progress: final nodes propagated, of the expected number (the
 * level below's share of its entries, or all 2E nodes). */
static void lsolve_progress(struct lean *L, uint64_t add)
{
    uint64_t d = __atomic_add_fetch(&L->finals, add, __ATOMIC_RELAXED);
    double f = (double)d / (L->expect > 0 ? L->expect : 2.0 * (double)(L->E ? L->E : 1));
    tb_progress_frac(&L->pr, L->sbase + (0.95 - L->sbase) * (f > 1 ? 1 : f));
}

#define PK_VALID (1ull << 63)

/* The normalised board of a position with B to move (rotated by N), packed. */
static inline __attribute__((always_inline)) uint64_t pack_b(const struct lean *L,
                                                             const sow_position *c, int N)
{
    if (!L->pkbits)
        return 0;
    int H = 2 * N, b = L->pkbits;
    uint64_t x = PK_VALID;
    for (int i = 0; i < H; i++)
        x |= (uint64_t)c->board.h[i < N ? i + N : i - N] << (b * i);
    return x;
}

/* A normalised board (an entry's), packed. */
static inline uint64_t pack_n(const struct lean *L, const sow_position *p)
{
    if (!L->pkbits)
        return 0;
    int H = L->ix->holes, b = L->pkbits;
    uint64_t x = PK_VALID;
    for (int i = 0; i < H; i++)
        x |= (uint64_t)p->board.h[i] << (b * i);
    return x;
}

/* Final node q (with its packed board, or 0) as a normalised position. */
static inline __attribute__((always_inline)) void unpack(const struct lean *L, uint64_t q,
                                                         uint64_t pk, sow_position *p, int N)
{
    if (!pk) {
        lentry_pos(L, q, p);
        return;
    }
    memset(p, 0, sizeof *p);
    int H = 2 * N, b = L->pkbits;
    uint64_t m = (1ull << b) - 1;
    for (int i = 0; i < H; i++)
        p->board.h[i] = (uint8_t)((pk >> (b * i)) & m);
    int st = L->ix->states > 1 ? (int)(q / L->boards) : 0;
    p->state = L->ix->state_of_rel(st, SOW_A);
}

static void push(struct lsolver *S, lean_item v, uint64_t pk)
{
    struct lean *L = S->L;
    if (S->nfin == S->capfin) {
        if (S->capfin < L->qcap) {
            uint64_t nc = S->capfin ? 2 * S->capfin : 512;
            nc = nc > L->qcap ? L->qcap : nc;
            lean_item *f = realloc(S->fin, nc * sizeof *f);
            if (f)
                S->fin = f;
            uint64_t *g = f ? realloc(S->fpk, nc * sizeof *g) : NULL;
            if (g) {
                S->fpk = g;
                S->capfin = nc;
            }
        }
        if (S->nfin == S->capfin) {
            /* Spill: the node is final (its value is set); its
             * predecessors hear of it when the round scans pend. */
            uint64_t bit = 2 * (v & IDX_MASK) + (v >> 63);
            __atomic_fetch_or(&L->pend[bit >> 6], 1ull << (bit & 63), __ATOMIC_RELAXED);
            __atomic_store_n(&L->overflow, 1, __ATOMIC_RELAXED);
            return;
        }
    }
    S->fpk[S->nfin] = pk;
    S->fin[S->nfin++] = v;
    /* a statistic: a lost update is harmless, but both accesses are atomic
     * (relaxed: plain moves), so that ThreadSanitizer sees no race */
    if (S->nfin > __atomic_load_n(&L->qpeak, __ATOMIC_RELAXED))
        __atomic_store_n(&L->qpeak, S->nfin, __ATOMIC_RELAXED);
}

/* Claim: an option worth t for p's L node.  True if it made the node final
 * (the caller pushes it). */
static inline bool claim_l(struct lsolver *S, uint64_t p)
{
    struct lean *L = S->L;
    uint64_t bit = 1ull << (p & 63), *w = &L->lfin[p >> 6];
    if (S->par) {
        if (__atomic_load_n(w, __ATOMIC_RELAXED) & bit)
            return false;
        if (__atomic_fetch_or(w, bit, __ATOMIC_RELAXED) & bit)
            return false;
    } else {
        if (*w & bit)
            return false;
        *w |= bit;
    }
    L->nd[p].xl = (int8_t)S->t;
    return true;
}

/* Decrement: p's H node lost an open child.  As build.c: the thread that
 * takes the counter to zero owns the node unless -be == t, where this
 * round's seed scan may race (compare-and-swap decides).  True if it made
 * the node final (the caller pushes it). */
static inline bool dec_h(struct lsolver *S, uint64_t p)
{
    struct lean *L = S->L;
    struct lnode *x = &L->nd[p];
    uint8_t c = retro_dec(&x->cnt, S->par);
    if (c)
        return false;
    int be = x->be, t = S->t;
    if (be == RETRO_NONE_EXIT || -be > t) {
        x->xh = (int8_t)t;
        return true;
    }
    return -be == t && retro_claim(&x->xh, (int8_t)t, S->par);
}

/* One update: a claim (KIND_H: the target's L node gains an option worth
 * t) or a decrement (the target's H node lost an open child); a node made
 * final goes to the work list with its packed board: c's, packed only then
 * (most updates make nothing final), or pk where c is NULL. */
static inline __attribute__((always_inline)) void
apply_one(struct lsolver *S, lean_item v, uint64_t pk, const sow_position *c, int P)
{
    struct lean *L = S->L;
    uint64_t p = v & IDX_MASK;
    /* H final -> claims: most are on L nodes already final */
    if (v & KIND_H) {
        S->claims++;
        if (__atomic_load_n(&L->lfin[p >> 6], __ATOMIC_RELAXED) >> (p & 63) & 1)
            S->dropped++;
        else if (claim_l(S, p))
            push(S, p, c ? pack_b(L, c, P) : pk);
    } else {
        S->decs++;
        if (dec_h(S, p))
            push(S, p | KIND_H, c ? pack_b(L, c, P) : pk);
    }
}

/* Updates by region.  On a level of GBs each update is a random access to
 * the nodes (and the L-final bits), and in this machine's VM most of its
 * cost is the address translation, not the line: the guest's huge pages
 * sit on the host's small ones.  So on large levels updates are not applied
 * as they are found but held in a bucket per region of 2^LREGION entries (4
 * MB of nodes) and applied a bucket at a time, when it is full or when the
 * round's work runs out: thousands of updates to the same 4 MB then share
 * their translations and the page-table lines.  Within a round the order of
 * updates does not matter (every node made final in round t gets t). */
#define LPF 8 /* a bucket's updates prefetched this far ahead */

/* The line an update reads first: a claim's L-final bit (it touches the
 * node only when the bit is not set, and most are: prefetching the node
 * too would spend a line fill on a miss not taken), a decrement's node. */
static inline void prefetch_update(const struct lean *L, lean_item v)
{
    uint64_t p = v & IDX_MASK;
    if (v & KIND_H)
        __builtin_prefetch(&L->lfin[p >> 6]);
    else
        __builtin_prefetch(&L->nd[p], 1);
}

static void flush_bucket(struct lsolver *S, uint64_t b)
{
    struct lean *L = S->L;
    uint32_t n = S->bn[b];
    const lean_item *u = S->bu + b * S->bcap;
    const uint64_t *pk = S->bpk + b * S->bcap;
    S->bn[b] = 0;
    S->held -= n;
    for (uint32_t i = 0; i < n && i < LPF; i++)
        prefetch_update(L, u[i]);
    for (uint32_t i = 0; i < n; i++) {
        if (i + LPF < n)
            prefetch_update(L, u[i + LPF]);
        apply_one(S, u[i], pk[i], NULL, 0);
    }
}

/* Take up to FBATCH final nodes, un-sow them, apply the updates (or put
 * them in their buckets).  The predecessors come checked (unmove_preds_
 * decides from the child's board; generate() only for awari's starving
 * moves).  Applied at once, they are ranked and their nodes (or, for claims,
 * L-final bits) prefetched, and the updates are applied after the whole
 * batch, when the lines have arrived; a predecessor's board is packed only
 * if it becomes final (most do not).  Bucketed, every update carries its
 * target's packed board.  P is a constant where drain() specialises (2x6),
 * so that the loops over the holes unroll.  Returns with the work list
 * empty; bucketed updates may remain (settle() applies them). */
static inline __attribute__((always_inline)) void drain_(struct lsolver *S, const int P)
{
    struct lean *L = S->L;
    const struct ruleset *rs = L->rs;
    bool skip = unmove_skips_origin(rs), pass = rs->family == SOW_DARRA,
         awari = rs->family == SOW_AWARI;
    bool bucketed = S->nb != 0;
    int batches = 0;
    while (S->nfin && !S->failed) {
        /* Ctrl-C: the level is given up, so its work lists may be too. */
        if ((++batches & 255) == 0) {
            if (lstopped(L)) {
                S->nfin = 0;
                return;
            }
            lsolve_progress(L, S->finals);
            S->finals = 0;
        }
        uint64_t m = S->nfin < FBATCH ? S->nfin : FBATCH;
        S->finals += m;
        lean_item take[FBATCH];
        uint64_t tpk[FBATCH];
        S->nfin -= m;
        memcpy(take, S->fin + S->nfin, m * sizeof *take);
        memcpy(tpk, S->fpk + S->nfin, m * sizeof *tpk);
        int nu = 0; /* predecessors so far: S->cand[0..nu), S->upd[0..nu) */
        for (uint64_t i = 0; i < m; i++) {
            lean_item v = take[i];
            lean_item kind = v & KIND_H;
            sow_position q;
            unpack(L, v & IDX_MASK, tpk[i], &q, P);
            bool check;
            int k = unmove_preds_(&q, P, skip, pass, awari, true, S->cand + nu, S->cmv + nu,
                                  S->maxcand, &check);
            for (int j = nu; j < nu + k; j++) {
                if (check) { /* awari's starving moves: rare */
                    if (!unmove_confirm(rs, &S->cand[j], S->cmv[j], &q, &S->ml)) {
                        S->cand[j] = S->cand[nu + k - 1];
                        S->cmv[j] = S->cmv[nu + k - 1];
                        k--, j--;
                        continue;
                    }
                }
                uint64_t p = tb_index_b(L->ix, &S->cand[j], P, L->boards);
                if (bucketed) {
                    uint64_t b = p >> L->rshift;
                    if (S->bn[b] == S->bcap)
                        flush_bucket(S, b);
                    uint64_t at = b * S->bcap + S->bn[b]++;
                    S->bu[at] = p | kind;
                    S->bpk[at] = pack_b(L, &S->cand[j], P);
                    S->held++;
                    continue;
                }
                S->upd[j] = p | kind;
                prefetch_update(L, S->upd[j]);
            }
            if (!bucketed)
                nu += k;
        }
        for (int u = 0; u < nu; u++)
            apply_one(S, S->upd[u], 0, &S->cand[u], P);
    }
}

static void drain(struct lsolver *S)
{
    if (S->L->ix->pits == 6)
        drain_(S, 6);
    else
        drain_(S, S->L->ix->pits);
}

/* The thread's round work to the end: the work list and every bucket
 * (applying a bucket can make nodes final, whose updates fill buckets
 * again).  Stopped: the buckets are dropped with the level. */
static void settle(struct lsolver *S)
{
    for (;;) {
        drain(S);
        if (!S->held || S->failed)
            break;
        if (lstopped(S->L)) {
            memset(S->bn, 0, S->nb * sizeof *S->bn);
            S->held = 0;
            break;
        }
        for (uint64_t b = 0; b < S->nb && !S->nfin; b++)
            if (S->bn[b])
                flush_bucket(S, b);
    }
}

/* Seeds of round t in seed block s: L seeds (be == t) are claimed, H seeds
 * (be == -t) are final if no in-level child is open. */
/* The packed board of entry i for a forward scan: stepped from the last
 * one asked for when that is near (tb_index_next: a few operations a step),
 * else unranked (a binary search per bar: hundreds). */
struct lwalk {
    uint64_t idx;
    bool valid;
    sow_position p;
};

static uint64_t walk_pack(const struct lean *L, struct lwalk *w, uint64_t i)
{
    if (!L->pkbits)
        return 0;
    if (!w->valid || i < w->idx || i - w->idx > 48) {
        lentry_pos(L, i, &w->p);
        w->valid = true;
    } else {
        for (; w->idx < i; w->idx++)
            lentry_next(L, w->idx, &w->p);
    }
    w->idx = i;
    return pack_n(L, &w->p);
}

static void seed_block(struct lsolver *S, uint64_t s)
{
    struct lean *L = S->L;
    int t = S->t;
    uint64_t a = s << SBSHIFT, b = a + ((uint64_t)1 << SBSHIFT);
    if (b > L->E)
        b = L->E;
    bool hl = has_value(&L->vmask[4 * s], t), hh = t != 0 && has_value(&L->vmask[4 * s], -t);
    if ((!hl && !hh) || lstopped(L))
        return;
    S->sblocks++;
    double t0 = L->stats ? util_now() : 0, td = 0;
    struct lwalk wk = {.valid = false};
    for (uint64_t i = a; i < b; i++) {
        int be = L->nd[i].be;
        if (be == t)
            if (claim_l(S, i))
                push(S, i, walk_pack(L, &wk, i));
        if (be == -t && (S->par ? __atomic_load_n(&L->nd[i].cnt, __ATOMIC_RELAXED) : L->nd[i].cnt) == 0 &&
            retro_claim(&L->nd[i].xh, (int8_t)t, S->par))
            push(S, i | KIND_H, walk_pack(L, &wk, i));
        if (S->nfin >= 4096) {
            double d0 = L->stats ? util_now() : 0;
            drain(S);
            if (L->stats)
                td += util_now() - d0;
        }
    }
    if (L->stats)
        S->scan += util_now() - t0 - td;
    drain(S);
}

/* Spilled final nodes of words [a, b) of pend. */
static void pend_words(struct lsolver *S, uint64_t a, uint64_t b)
{
    struct lean *L = S->L;
    for (uint64_t w = a; w < b; w++) {
        if (!__atomic_load_n(&L->pend[w], __ATOMIC_RELAXED))
            continue;
        uint64_t x = __atomic_exchange_n(&L->pend[w], 0, __ATOMIC_RELAXED);
        for (; x; x &= x - 1) {
            uint64_t bit = 64 * w + (uint64_t)__builtin_ctzll(x);
            push(S, (bit >> 1) | (bit & 1 ? KIND_H : 0), 0);
        }
        drain(S);
    }
}

/* Relay rule sets: the final nodes of block b (its pend bits), their
 * predecessors read from the block's lists on disk.  The updates go in
 * batches of RBATCH (targets prefetched, then applied as drain_ does); a
 * node made final spills into pend (no work lists), and the block's words
 * are scanned again while its lists are at hand, so that chains inside the
 * block need no second read. */
#define RBATCH 64
#define RWORDS (((uint64_t)1 << LREL_BSHIFT) / 32) /* pend words of a block */

static void relay_apply(struct lsolver *S, const lean_item *upd, int nu)
{
    for (int u = 0; u < nu; u++)
        apply_one(S, upd[u], 0, NULL, 0); /* no packed boards: pend takes them */
}

/* Pending nodes of block b, counted up to RSMALL + 1. */
#define RSMALL 64
static unsigned relay_pending(const struct lean *L, uint64_t w0, uint64_t w1)
{
    unsigned c = 0;
    for (uint64_t w = w0; w < w1 && c <= RSMALL; w++)
        c += (unsigned)__builtin_popcountll(__atomic_load_n(&L->pend[w], __ATOMIC_RELAXED));
    return c;
}

static void relay_block(struct lsolver *S, uint64_t b)
{
    struct lean *L = S->L;
    uint64_t pw = (2 * L->E + 63) / 64, w0 = b * RWORDS, w1 = w0 + RWORDS < pw ? w0 + RWORDS : pw;
    uint64_t w = w0;
    while (w < w1 && !__atomic_load_n(&L->pend[w], __ATOMIC_RELAXED))
        w++;
    if (w == w1 || lstopped(L) || S->failed)
        return;
    /* Few final nodes: their lists alone (two small reads each, about a
     * microsecond from the page cache), else the block's (about 1 MB). */
    const uint32_t *off = NULL, *pr = NULL;
    uint64_t base = b << LREL_BSHIFT;
    lean_item upd[RBATCH];
    int nu = 0;
    bool again = true, whole = false;
    while (again) {
        if (!whole && relay_pending(L, w, w1) > RSMALL) {
            __atomic_fetch_add(&L->reads, 1, __ATOMIC_RELAXED);
            if (!lrel_read(L->rel, b, &S->rbuf, &S->rcap, &off, &pr)) {
                S->failed = true;
                return;
            }
            whole = true;
        }
        again = false;
        for (w = w0; w < w1; w++) {
            if (!__atomic_load_n(&L->pend[w], __ATOMIC_RELAXED))
                continue;
            uint64_t x = __atomic_exchange_n(&L->pend[w], 0, __ATOMIC_RELAXED);
            for (; x; x &= x - 1) {
                uint64_t bit = 64 * w + (uint64_t)__builtin_ctzll(x), q = bit >> 1;
                lean_item kind = bit & 1 ? KIND_H : 0; /* H final: claims; L final: decrements */
                const uint32_t *list;
                uint32_t k;
                S->finals++;
                if (whole) {
                    list = pr + off[q - base];
                    k = off[q - base + 1] - off[q - base];
                } else {
                    __atomic_fetch_add(&L->sreads, 1, __ATOMIC_RELAXED);
                    /* the batch's targets are values: rbuf may be reused */
                    if (!lrel_read_list(L->rel, b, q - base, &S->rbuf, &S->rcap, &list, &k)) {
                        S->failed = true;
                        return;
                    }
                }
                for (uint32_t j = 0; j < k; j++) {
                    uint64_t p = list[j]; /* the relay path stays below 2^31 entries */
                    if (kind)
                        __builtin_prefetch(&L->lfin[p >> 6]);
                    __builtin_prefetch(&L->nd[p], 1);
                    upd[nu++] = p | kind;
                    if (nu == RBATCH) {
                        relay_apply(S, upd, nu);
                        nu = 0;
                    }
                }
            }
        }
        relay_apply(S, upd, nu);
        nu = 0;
        for (w = w0; w < w1 && !again; w++)
            again = __atomic_load_n(&L->pend[w], __ATOMIC_RELAXED) != 0;
        w = w0;
    }
    lsolve_progress(L, S->finals);
    S->finals = 0;
}

/* The solve as a client of retro_rounds (retro.h): a thread's state
 * (work list, batch buffers, buckets) lives across the rounds; pass 0 of a
 * round scans its seed blocks, the later passes the spilled nodes (pend),
 * as long as a pass spilled some. */
static void *lsolve_begin(void *ctx, int me)
{
    (void)me;
    struct lean *L = ctx;
    struct lsolver *S = calloc(1, sizeof *S);
    if (!S)
        return NULL;
    S->L = L;
    S->par = L->threads > 1;
    S->maxcand = L->ix->pits * (L->n + 1) + 2;
    size_t nc = (size_t)S->maxcand * FBATCH;
    S->cand = malloc(nc * sizeof *S->cand);
    S->cmv = malloc(nc);
    S->upd = malloc(nc * sizeof *S->upd);
    if (!S->cand || !S->cmv || !S->upd)
        S->failed = true;
    if (L->bcap) {
        S->nb = (L->E >> L->rshift) + 1;
        S->bcap = L->bcap;
        S->bn = calloc(S->nb, sizeof *S->bn);
        S->bu = malloc(S->nb * S->bcap * sizeof *S->bu);
        S->bpk = malloc(S->nb * S->bcap * sizeof *S->bpk);
        if (!S->bn || !S->bu || !S->bpk)
            S->failed = true;
    }
    return S;
}

/* The thread's statistics into the level's; its memory freed. */
static void lsolve_end(void *th)
{
    struct lsolver *S = th;
    struct lean *L = S->L;
    __atomic_fetch_add(&L->decs, S->decs, __ATOMIC_RELAXED);
    __atomic_fetch_add(&L->claims, S->claims, __ATOMIC_RELAXED);
    __atomic_fetch_add(&L->dropped, S->dropped, __ATOMIC_RELAXED);
    __atomic_fetch_add(&L->sblocks, S->sblocks, __ATOMIC_RELAXED);
#pragma omp critical(lean_scan)
    L->scan += S->scan;
    __atomic_fetch_add(&L->listbytes,
                       S->capfin * 12 + (uint64_t)S->maxcand * FBATCH * (sizeof *S->cand + 5) +
                           S->rcap + (uint64_t)lean_bucket_bytes(L->E, L->rshift, L->squeeze),
                       __ATOMIC_RELAXED);
    free(S->rbuf);
    free(S->bn);
    free(S->bu);
    free(S->bpk);
    free(S->fin);
    free(S->fpk);
    free(S->upd);
    free(S->cand);
    free(S->cmv);
    free(S);
}

/* Round t's seed blocks (every block; seed_block skips those whose mask
 * has neither t nor -t); none if the level has neither. */
static uint64_t lsolve_seeds(void *ctx, int t)
{
    struct lean *L = ctx;
    return has_value(L->gmask, t) || has_value(L->gmask, -t) ? L->nsb : 0;
}

/* Pass 0: seed block s; later passes: spilled nodes, a relay block's
 * lists at a time, else 4096 words of pend. */
static bool lsolve_work(void *th, int t, int pass, uint64_t s)
{
    struct lsolver *S = th;
    struct lean *L = S->L;
    S->t = t;
    if (S->failed)
        return false;
    if (pass == 0)
        seed_block(S, s);
    else if (L->rel)
        relay_block(S, s);
    else {
        uint64_t pw = (2 * L->E + 63) / 64, a = s * 4096;
        pend_words(S, a, a + 4096 < pw ? a + 4096 : pw);
    }
    return !S->failed;
}

static bool lsolve_settle(void *th, int t)
{
    struct lsolver *S = th;
    S->t = t;
    settle(S);
    lsolve_progress(S->L, S->finals);
    S->finals = 0;
    return !S->failed;
}

/* Spilled nodes, until none are left (each pass may spill again): another
 * pass over pend unless stopped. */
static uint64_t lsolve_again(void *ctx, int t)
{
    (void)t;
    struct lean *L = ctx;
    if (!__atomic_load_n(&L->overflow, __ATOMIC_RELAXED) || lstopped(L))
        return 0;
    __atomic_store_n(&L->overflow, 0, __ATOMIC_RELAXED);
    L->scans++;
    return L->rel ? L->rel->nblocks : ((2 * L->E + 63) / 64 + 4095) / 4096;
}

static enum sow_status solve(struct lean *L)
{
    static const struct retro_round_ops ops = {
        .seeds = lsolve_seeds,
        .begin = lsolve_begin,
        .work = lsolve_work,
        .settle = lsolve_settle,
        .again = lsolve_again,
        .end = lsolve_end,
    };
    tb_progress_phase(&L->pr, "solve", L->sbase, 0.0);
    struct retro_rounds R = {.ops = &ops,
                             .ctx = L,
                             .n = L->n,
                             .threads = L->threads,
                             .stop = L->opt ? L->opt->stop : NULL,
                             .timed = L->stats};
    bool ok = retro_rounds(&R);
    L->rounds = R.rounds;
    L->idle = R.idle;
    if (!ok)
        return SOW_E_NOMEM;
    return lstopped(L) ? SOW_E_INTERRUPTED : SOW_OK;
}

/* lo, hi, V = clamp(cyc, lo, hi) into out (which may be the nodes' memory:
 * then V goes into be first and is packed afterwards), and (lo, hi) into
 * lohi[2 * idx] if lohi is not NULL. */
static uint64_t finish(struct lean *L, int8_t *out, int8_t *lohi)
{
    tb_progress_phase(&L->pr, "values", 0.95, 0.05);
    int n = L->n, N = L->ix->pits;
    bool inplace = (void *)out == (void *)L->nd;
    uint64_t bad = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(L->threads) reduction(+ : bad)
    for (uint64_t ch = 0; ch < L->nchunks; ch++) {
        uint64_t a = ch * L->chunk, b = a + L->chunk < L->E ? a + L->chunk : L->E;
        sow_position p;
        lentry_pos(L, a, &p);
        for (uint64_t idx = a; idx < b; idx++) {
            const struct lnode *x = &L->nd[idx];
            int cyc = rules_cycle_net(L->rs, board_sum_range(&p.board, 0, N),
                                      board_sum_range(&p.board, N, 2 * N));
            int v = retro_value(x->xl, x->xh, n, cyc, &bad);
            if (lohi) { /* as the fast builder's finish (build.c) */
                lohi[2 * idx] = (int8_t)(x->xl == RETRO_UNDONE ? -n : x->xl);
                lohi[2 * idx + 1] = (int8_t)(x->xh == RETRO_UNDONE ? n : -x->xh);
            }
            if (inplace)
                L->nd[idx].be = (int8_t)v;
            else
                out[idx] = (int8_t)v;
            if (idx + 1 < b)
                lentry_next(L, idx, &p);
        }
        tb_progress_add(&L->pr, b - a);
    }
    if (inplace) /* byte i <= node i's first byte: forward order never overwrites unread nodes */
        for (uint64_t i = 0; i < L->E; i++)
            out[i] = L->nd[i].be;
    return bad;
}

int tb_lean_threads(const struct tb_build_opts *opt, uint64_t E)
{
    return retro_threads(opt ? opt->threads : 0, E, LMAX_THREADS);
}

/* Level n's struct lean: sizes, threads, chunks, seed blocks, work list
 * and bucket capacities, the packing of boards into work lists; a level too
 * large for the lean builder (tb_lean_max_entries), or a lower level not
 * loaded, refused. */
static enum sow_status lean_init(struct lean *L, const struct ruleset *rs,
                                 const struct tb_set *lower, int n,
                                 const struct tb_build_opts *opt, const double *ratio,
                                 struct sow_error *e)
{
    TB_LEVEL_START(L, rs, lower, n, opt);
    L->stats = getenv("SOW_LEAN_STATS") != NULL;
    bool relay = !tb_unmove_supported(rs);
    L->sbase = relay ? 0.4 : 0.2;
    enum sow_status st = tb_level_solvable(lower, n, L->E, tb_lean_max_entries(rs), true, e);
    if (st != SOW_OK)
        return st;
    for (int m = 0; m < n; m++)
        L->zlower |= !lower->lv[m].v && lower->lv[m].z;
    L->threads = tb_lean_threads(opt, L->E);
    L->nsb = (L->E + ((uint64_t)1 << SBSHIFT) - 1) >> SBSHIFT;
    L->qcap = relay ? 0 /* relay: every final node goes to pend */
                    : opt && opt->lean_queue_cap > 0 ? (uint64_t)opt->lean_queue_cap
                                                     : lean_qcap(L->E);
    L->rshift = lean_region_shift(opt);
    L->bcap = relay ? 0 : lean_bcap(L->E, L->rshift);
    /* The share of nodes that become final changes slowly from level to
     * level: the one below predicts this one's (for the ETA). */
    L->expect = ratio && *ratio > 0 ? *ratio * (double)L->E : 0;
    {
        int b = 1;
        while ((1 << b) <= n)
            b++;
        L->pkbits = b * L->ix->holes <= 63 && !relay ? b : 0;
    }
    return SOW_OK;
}

/* Solve level n; out may be NULL (then the values stay in the nodes' memory
 * and *values points at them); lohi (or NULL) gets the forced bounds. */
enum sow_status tb_lean_level(const struct ruleset *rs, const struct tb_set *lower, int n, int8_t *out,
                      int8_t *lohi,
                      const struct tb_build_opts *opt, struct lean_work *wk, int8_t **values,
                      double *peak, double *ratio, const char *tmpdir, struct sow_error *e)
{
    struct lean L;
    bool relay = !tb_unmove_supported(rs);
    enum sow_status st = lean_init(&L, rs, lower, n, opt, ratio, e);
    if (st != SOW_OK)
        return st;
    if (wk->squeeze > 0 && !relay && !(opt && opt->lean_queue_cap > 0)) {
        L.squeeze = wk->squeeze;
        L.qcap = lean_qcap_squeezed(L.E, L.squeeze);
        L.bcap >>= L.squeeze;
    }
    uint64_t E1 = L.E ? L.E : 1;
    size_t ndb = E1 * sizeof(struct lnode), lfb = (E1 / 64 + 1) * 8, pdb = (2 * E1 / 64 + 1) * 8,
           vmb = (L.nsb + 1) * 32;
    L.nd = retro_region_get(&wk->nd, ndb, RETRO_HUGE);
    L.lfin = retro_region_get(&wk->lfin, lfb, RETRO_HUGE);
    L.pend = retro_region_get(&wk->pend, pdb, RETRO_HUGE);
    L.vmask = retro_region_get(&wk->vmask, vmb, RETRO_HUGE);
    if (!L.nd || !L.lfin || !L.pend || !L.vmask)
        return sow_fail(e, SOW_E_NOMEM, "level %d: out of memory (lean builder, %.1f GB)", n,
                        (double)(ndb + lfb + pdb + vmb) / 1e9);
    memset(L.lfin, 0, lfb);
    memset(L.pend, 0, pdb);
    memset(L.vmask, 0, vmb);
    struct lrel rel;
    double relbytes = 0;
    if (relay) {
        enum sow_status r = lrel_new(&rel, L.E, L.ix->pits, L.threads, tmpdir, e);
        if (r != SOW_OK)
            return r;
        L.rel = &rel;
        relbytes = (double)rel.threads * (double)rel.S * sizeof(struct lrel_buf) +
                   8.0 * (double)(rel.nblocks + 1);
    }
    if (L.zlower) { /* exits queued by block (lean_exits.c), zcap a thread */
        L.zcap = wk->zcap ? wk->zcap : lean_qcap(L.E) / 2;
        if (!(L.zlevel = lexit_levels(lower, n))) {
            if (relay)
                lrel_free(&rel);
            return sow_fail(e, SOW_E_NOMEM, "level %d: out of memory", n);
        }
    }
    double t0 = util_now();
    tb_lean_pass_moves(&L);
    double t1 = util_now();
    free(L.zlevel);
    if (lstopped(&L) || L.zdamaged) {
        if (relay)
            lrel_free(&rel);
        if (L.zdamaged) {
            *e = L.zerr;
            return e->status;
        }
        return sow_fail(e, SOW_E_INTERRUPTED, "interrupted");
    }
    if (relay) {
        tb_progress_phase(&L.pr, "edges", 0.3, 0.1);
        enum sow_status r = lrel_sort(&rel, L.threads, &L.pr, opt, e);
        if (r != SOW_OK) {
            lrel_free(&rel);
            return r;
        }
        if (rel.sortbytes + 8.0 * (double)(rel.nblocks + 1) > relbytes)
            relbytes = rel.sortbytes + 8.0 * (double)(rel.nblocks + 1);
    }
    tb_lean_level_mask(&L);
    double t2 = util_now();
    enum sow_status rc = solve(&L);
    double t3 = util_now();
    int relerr = relay ? rel.err : 0;
    uint64_t edges = relay ? rel.edges : 0, nblk = relay ? rel.nblocks : 0;
    if (relay)
        lrel_free(&rel);
    L.rel = NULL;
    if (rc == SOW_E_INTERRUPTED)
        return sow_fail(e, rc, "interrupted");
    if (rc != SOW_OK && relerr && relerr != ENOMEM)
        return sow_fail(e, SOW_E_IO, "level %d: reading the relay edges: %s", n, strerror(relerr));
    if (rc != SOW_OK)
        return sow_fail(e, rc, "level %d: out of memory in the solve", n);
    int8_t *dst = out ? out : (int8_t *)L.nd;
    if (finish(&L, dst, lohi))
        return sow_fail(e, SOW_E_IO, "level %d: internal error: lo > hi", n);
    if (values)
        *values = dst;
    if (ratio && L.E)
        *ratio = (double)L.finals / (double)L.E;
    if (peak) {
        /* relay: the edge store's largest phase (buffers or sort) next to
         * the solve's block buffers, which are counted in listbytes */
        *peak = (double)(ndb + lfb + pdb + vmb) +
                ((double)L.listbytes > relbytes ? (double)L.listbytes : relbytes);
    }
    if (opt && opt->progress)
        opt->progress(opt->ctx, n, L.E, 1.0, "done");
    if (L.stats) /* a diagnostic for docs/tables.md's cost figures (not part of the CLI) */
        tb_lean_stats(&L, edges, nblk, peak, (double[4]){t1 - t0, t2 - t1, t3 - t2, util_now() - t3});
    if (opt && opt->moves)
        *opt->moves += L.moves;
    return 0;
}
