/* The distributed builder's buffers and collectives (mpi_level.h): growable
 * word arrays, collectives that nap while they wait, one status agreed by
 * every rank, and the all-to-all exchange of words by owner. */
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
#include "util.h"

bool tbm_vec_reserve(struct vec *a, size_t more)
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

/* Append b to a (b emptied). */
bool tbm_vec_take(struct vec *a, struct vec *b)
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
    if (!tbm_vec_reserve(a, b->n))
        return false;
    memcpy(a->v + a->n, b->v, b->n * sizeof *b->v);
    a->n += b->n;
    b->n = 0;
    return true;
}

/* Wait for a nonblocking collective (or receive).  OpenMPI's
 * blocking collectives poll without pause (shared memory), so a rank that
 * waits for a slower one keeps a core busy; with more ranks than cores
 * (tests, one machine) the slower rank is the one that needs that core, and
 * each superstep waits for it.  So: poll a while, then nap between polls
 * (SOW_MPI_NAP_US, default 20 microseconds; 0: poll only).  With one rank
 * per machine a nap delays a collective by at most its length: 20 us per
 * superstep, a few thousand supersteps per build of levels 0..12. */
void tbm_coll_wait(const struct mpi *M, MPI_Request *rq)
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
void tbm_allreduce(const struct mpi *M, const void *in, void *out, int n, MPI_Datatype t,
                      MPI_Op op)
{
    MPI_Request rq;
    MPI_Iallreduce(in, out, n, t, op, MPI_COMM_WORLD, &rq);
    tbm_coll_wait(M, &rq);
}

/* MPI_Bcast waited for by coll_wait. */
void tbm_bcast(const struct mpi *M, void *buf, int n, MPI_Datatype t, int root)
{
    MPI_Request rq;
    MPI_Ibcast(buf, n, t, root, MPI_COMM_WORLD, &rq);
    tbm_coll_wait(M, &rq);
}

/* Agree on a status: the first failure (lowest rank's) wins, its message
 * broadcast from the rank that had it. */
enum sow_status tbm_agree(const struct mpi *M, enum sow_status st, struct sow_error *e)
{
    int mine = st != SOW_OK ? M->rank : M->size, first;
    tbm_allreduce(M, &mine, &first, 1, MPI_INT, MPI_MIN);
    if (first == M->size)
        return SOW_OK;
    int code = (int)st;
    char msg[SOW_ERROR_MSG];
    memset(msg, 0, sizeof msg);
    if (M->rank == first && e)
        snprintf(msg, sizeof msg, "%s", e->msg);
    tbm_bcast(M, &code, 1, MPI_INT, first);
    tbm_bcast(M, msg, SOW_ERROR_MSG, MPI_CHAR, first);
    if (e && M->rank != first) {
        e->status = (enum sow_status)code;
        snprintf(e->msg, sizeof e->msg, "%s", msg);
    }
    return (enum sow_status)code;
}

/* All-to-all of variable word buffers: send[r] to rank r; *recv (malloc'd)
 * receives everything sent here, *nrecv words.  Counts must fit int (a
 * superstep's or a slice's edges under 2^31 words per rank pair).  A rank
 * that cannot allocate its buffers ends the job (MPI_Abort: the peers are
 * inside the collective already; no level file is being written then).
 * known: the words each rank sends here, if already known (the solve's
 * superstep learns them with its termination test), else NULL. */
void tbm_exchange(struct mlvl *L, struct vec *send, const int *known, uint32_t **recv,
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
        tbm_coll_wait(L->M, &rq);
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
    tbm_coll_wait(L->M, &rq);
    if (counts)
        memcpy(counts, rc, (size_t)size * sizeof *counts);
    free(sb);
    free(sc);
    *recv = rb;
    *nrecv = rt;
}

