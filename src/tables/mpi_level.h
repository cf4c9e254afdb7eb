/* The distributed builder's parts (not part of the API): what mpi_build.c
 * (a level's solve on each rank), mpi_comm.c (buffers and collectives),
 * mpi_moves.c (the move, edge and probe passes) and mpi_run.c (the level
 * file, the build) share.  How it works: mpi_build.c's header; the game:
 * retro/retro.h.
 *
 * Thread-safety: a struct mlvl belongs to one level on one rank; MPI calls
 * are made by the rank's main thread only (outside OpenMP regions, or as
 * thread 0 of the solve's rounds while the other threads wait).
 */
#ifndef SOW_TABLES_MPI_LEVEL_H
#define SOW_TABLES_MPI_LEVEL_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lean_relay.h"
#include "mpi_slice.h"
#include "retro/retro.h"
#include "tables/tables.h"
#include "tables_internal.h"

/* An update, the 4-byte word sent to a node's owner: the node's local index
 * on its owner (mpi_slice.h: < 2^31) | UPD_CLAIM for a claim on its L node. */
#define UPD_CLAIM 0x80000000u /* H node of a child final: claim the L node */
#define UPD_IDX 0x7FFFFFFFu
#define MCHUNK 4096
#define SEED_BATCH (1u << 22) /* a round's seeds taken at most this many entries between exchanges */
#define WAVE_CHUNK 64 /* updates per OpenMP work item in a wave */
#define PROBE_PIECE ((uint64_t)1 << 20) /* own entries per probe batch (owned lower levels) */
#define WAVE_PAR 4096 /* smaller waves are one work item, one thread's (sharing costs more) */
#define RELAY_PIECE ((uint64_t)1 << 18) /* lean relay: own entries per edge batch */
#define RWORDS (((uint64_t)1 << LREL_BSHIFT) / 32) /* pend words of a block of lists */
#define RSMALL 64 /* fewer final nodes in a block: their lists read alone */
_Static_assert(TBM_SLICE_MAX <= UPD_IDX, "local indices leave the top bit for the kind");
/* Words a rank sends in one round of an exchange at most (tbm_exchange:
 * MPI's int counts and displacements stay under INT_MAX); SOW_MPI_TEST_MSG
 * makes it small for the tests. */
#define EXCH_WORDS ((uint64_t)1 << 30)
#define TBM_UNKNOWN UINT64_MAX /* tbm_exchange's maxpair when not known */

/* A growable array of 32-bit words. */
struct vec {
    uint32_t *v;
    size_t n, cap;
};

bool tbm_vec_reserve(struct vec *a, size_t more);

static inline bool vec_push(struct vec *a, uint32_t x)
{
    if (a->n == a->cap && !tbm_vec_reserve(a, 1))
        return false;
    a->v[a->n++] = x;
    return true;
}

struct mpi {
    int rank, size;
    long nap_ns;     /* coll_wait's pause between polls (0: poll without pause) */
    uint64_t base;   /* global index of every level's entry 0 (mpi_slice.h; tests: 2^32) */
    uint64_t msg;    /* words per round of an exchange at most (EXCH_WORDS) */
    uint64_t inplace; /* words an exchange receives in place at most (INT_MAX) */
};

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
    /* owned lower levels: own[m] holds this rank's slice of level m, by
     * local index; NULL: lower levels mapped whole */
    int8_t *const *own;
    uint64_t E, boards, lo, hi, Es; /* lo, hi: the slice's level indices */
    uint64_t *bound; /* [size + 1]: the slices' first global indices (mpi_slice.h) */
    uint64_t glo, ghi; /* this rank's slice as global indices */
    uint64_t *lbound; /* owned lower levels: level m's bounds at [m * (size + 1)] */
    int8_t *be, *xl, *xh; /* per own entry (be holds the value at the end) */
    uint8_t *cnt;
    uint64_t *off;  /* fast: Es + 1, reverse lists of own entries */
    /* fast: the predecessors' global indices, 4 bytes each while every
     * global index of the level is below 2^32 (rev32), else 8 (rev64) */
    uint32_t *rev32;
    uint64_t *rev64;
    int fail;       /* out of memory on some thread */
    uint64_t moves;
    uint64_t sent_words; /* 4-byte words sent to other ranks (edges count 2) */
    uint64_t steps;      /* supersteps of the solve */
    uint64_t applied;    /* updates of own nodes applied in the solve's waves */
    double solve_s, wait_s; /* the solve's wall seconds; of them, in the supersteps' Allgather */
    uint64_t bufbytes;   /* message buffers and work lists at their largest */
};

/* One thread's buffers in the solve. */
struct mwork {
    struct msolve *S; /* the solve (mpi_build.c) */
    struct vec next;  /* updates of own nodes for the next wave */
    struct vec *send; /* [size]: updates for the other ranks' nodes */
    sow_position *cand; /* lean: a final node's candidate predecessors */
    sow_move *cmv;
    int maxcand;
    uint32_t *rbuf; /* lean relay: a block's lists (lrel_read) */
    uint64_t rcap;
    struct sow_movelist ml;
};

/* True if the level's reverse lists take 8-byte global indices. */
static inline bool rev_wide(uint64_t E, uint64_t base)
{
    return base + E > (uint64_t)UINT32_MAX + 1;
}

static inline bool stop_requested(const struct mlvl *L)
{
    return L->opt && L->opt->stop && *L->opt->stop;
}

static inline void set_fail(struct mlvl *L)
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
static inline void entry_pos(const struct mlvl *L, uint64_t idx, sow_position *p)
{
    memset(p, 0, sizeof *p);
    int st = L->ix->states > 1 ? (int)(idx / L->boards) : 0;
    tb_unrank(L->ix, L->n, idx - (uint64_t)st * L->boards, p->board.h);
    p->side = SOW_A;
    p->state = L->ix->state_of_rel(st, SOW_A);
}

/* ---- mpi_comm.c: buffers and collectives -------------------------------- */

/* Append b's words to a and empty b; false when out of memory. */
bool tbm_vec_take(struct vec *a, struct vec *b);
/* Wait for a nonblocking collective, polling then napping (SOW_MPI_NAP_US). */
void tbm_coll_wait(const struct mpi *M, MPI_Request *rq);
void tbm_allreduce(const struct mpi *M, const void *in, void *out, int n, MPI_Datatype t,
                   MPI_Op op);
void tbm_bcast(const struct mpi *M, void *buf, int n, MPI_Datatype t, int root);
/* Every rank's status agreed: the first failure (lowest rank's) with its
 * message, on every rank. */
enum sow_status tbm_agree(const struct mpi *M, enum sow_status st, struct sow_error *e);
/* send[r]'s words to rank r, everything sent here into *recv (*nrecv words,
 * in the order of the sending ranks; counts[r]: words from rank r, if not
 * NULL); `known`: the counts to this rank, already agreed, and maxpair the
 * largest count between any two ranks (0: not known).  In rounds of at most
 * M->msg words a rank, so that MPI's int counts hold at any size. */
void tbm_exchange(struct mlvl *L, struct vec *send, const uint64_t *known, uint64_t maxpair,
                  uint32_t **recv, size_t *nrecv, uint64_t *counts);

/* ---- mpi_moves.c: the passes before the solve ----------------------------- */

/* The move pass over own entries [from, to): fast, each in-level edge into
 * eb[thread][owner]; owned lower levels, each probe as a request. */
bool tbm_pass_moves(struct mlvl *L, struct vec *eb /* [threads][size]; NULL: lean */,
                    struct vec *rq, struct vec *rr, uint64_t from, uint64_t to);
/* Fast: the edges exchanged, the reverse lists of own entries. */
bool tbm_pass_edges(struct mlvl *L, struct vec *eb);
/* Lean relay: the edges exchanged piece by piece onto this rank's disk. */
bool tbm_relay_edges(struct mlvl *L, struct vec *eb, bool ok);
/* Owned lower levels: the batched probes answered by their owners. */
bool tbm_probe_owned(struct mlvl *L, struct vec *rq, struct vec *rr);

/* ---- mpi_build.c: a level on this rank ------------------------------------ */

/* Test hook: SOW_MPI_TEST_KILL=R:L[:w] kills rank R at level L (phase). */
void tbm_test_kill(const struct mpi *M, int n, char phase);
/* Level n: *keep receives this rank's slice of the level's values. */
enum sow_status tbm_level(const struct mpi *M, const struct ruleset *rs, const struct tb_set *set,
                          int n, bool lean, int8_t *const *own, int8_t **keep, const struct tb_build_opts *opt, uint64_t *stats,
                          struct sow_error *e);

#endif
