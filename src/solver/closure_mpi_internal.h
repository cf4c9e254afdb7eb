/* The closure on disk across MPI ranks (docs/distributed.md "The exact
 * solver across ranks"): what closure_mpi.c (the job: start, agreement,
 * messages, the build, the merge onto rank 0, the end) and
 * closure_mpi_levels.c (the two passes, level by level) share.  Compiled
 * into the sow executable only, with MPI (src/cli/meson.build); libsow
 * stays without MPI and reaches this through the weak clos_mpi_build
 * (closure_internal.h).
 *
 * Each level is split over the R ranks by a hash of the position key
 * (cm_owner: XXH3 with its own seed, so that a rank's share spreads over
 * its set as evenly as the whole level would).  Rank r keeps its files in
 * WORK/rank-r-of-R/, named and laid out as one process's (closure_disk.c):
 * disk.state (its share's counts), disk-in-LLL.keys (the seeds it owns),
 * disk-LLL.keys (its share of level LLL, sorted) and disk-LLL.values.
 *
 * Thread-safety: MPI calls from the rank's calling thread only; one build
 * at a time per process. */
#ifndef SOW_SOLVER_CLOSURE_MPI_INTERNAL_H
#define SOW_SOLVER_CLOSURE_MPI_INTERNAL_H

#include <mpi.h>

#include "closure_internal.h"
#include "tables/mpi_level.h"

/* A growable array of 64-bit words (a message being built). */
struct cm_buf {
    uint64_t *v;
    size_t n, cap;
};

/* One build across the ranks, on one rank. */
struct cm {
    struct mpi M;                    /* rank, size, the collectives' nap */
    struct clos *c;
    const struct clos_env *env;      /* this rank's (progress lines on rank 0 only) */
    struct clos_info *info;
    int top, tbmax;
    const uint64_t *rootw;
    struct dk_thread et;             /* exits buffered per level (dk_flush blocks) */
    struct cm_buf *send;             /* [size]: the words for each rank */
    uint64_t gcnt[SOW_MAX_SEEDS + 1]; /* positions of each level over all ranks */
    uint64_t piece;                  /* own positions per batch of the up pass's moves */
    double last, t0;
};

#define CM_KIND_EDGE ((uint64_t)1 << 32) /* up pass: an in-level edge, not an exit look-up */
#define CM_MISSING ((uint64_t)0x100)     /* up pass: a look-up's key not in its level (values are bytes) */

/* The rank that owns the position with key w. */
static inline int cm_owner(const uint64_t *w, int K, int size)
{
    uint64_t h = XXH3_64bits_withSeed(w, 8 * (size_t)K, 0x736f772d6d7069ull);
    return (int)(((unsigned __int128)h * (unsigned)size) >> 64);
}

/* Keys in the level files' order (word K-1 most significant). */
static inline int cm_cmp(const uint64_t *a, const uint64_t *b, int K)
{
    for (int k = K - 1; k >= 0; k--)
        if (a[k] != b[k])
            return a[k] < b[k] ? -1 : 1;
    return 0;
}

/* "none solved" or "levels up to S solved", for the resume lines. */
static inline const char *cm_solved_words(int32_t s, char *buf, size_t len)
{
    if (s < 0)
        snprintf(buf, len, "none solved");
    else
        snprintf(buf, len, "levels up to %d solved", (int)s);
    return buf;
}

/* ---- closure_mpi.c ---- */

/* A state read from disk is this solve's (fresh: the state of a new one). */
bool cm_state_matches(const struct dk_meta *st, const struct dk_meta *fresh);

bool cm_push(struct cm_buf *b, const uint64_t *w, size_t k);
/* The job ended from this rank (MPI_Abort), why on its stderr. */
_Noreturn void cm_abort(const struct cm *J, const char *why);
/* Every rank's send[r] to rank r; *recv (malloc'd, *nrecv words) what
 * came here, rcnt[r] words from rank r (rcnt may be NULL); the send
 * buffers emptied.  A rank out of memory here ends the job (cm_abort). */
void cm_exchange(struct cm *J, uint64_t **recv, size_t *nrecv, int *rcnt);
/* Sum (op MPI_SUM) or maximum (MPI_MAX) of n 64-bit words over the ranks, in place. */
void cm_reduce(struct cm *J, uint64_t *x, int n, MPI_Op op);
/* Every rank's e agreed: the first failure (lowest rank's), its info
 * (why, by_memory, need) on every rank. */
enum clos_err cm_agree(struct cm *J, enum clos_err e);

/* The message buffers given back (between levels: a level's batches may
 * have grown them past what the next one needs). */
void cm_release(struct cm *J);

/* ---- closure_mpi_reshard.c ---- */

/* Collective, when no rank has a state of this rank count: an earlier job's
 * levels in WORK with another rank count (every rank's state this solve's,
 * at the same level expanded) dealt out to this job's ranks, each rank's
 * state written, the old directories removed.  true if done (the caller
 * reads the states again); false if there was none or it failed (a note
 * on rank 0 then: the caller starts over). */
bool cm_reshard(struct cm *J, const struct dk_meta *fresh);

/* ---- closure_mpi_levels.c ---- */

/* Pass 1, level m across the ranks (every rank calls it for the same m). */
enum clos_err cm_down(struct cm *J, int m);
/* Pass 2, level m across the ranks. */
enum clos_err cm_up(struct cm *J, int m);

#endif
