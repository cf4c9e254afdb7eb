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
 * receives everything sent here, *nrecv words, rank 0's first.  The counts
 * are 64-bit; MPI's are ints (counts and displacements in words), so the
 * words go in rounds: in round k each pair of ranks sends words
 * [k*c, (k+1)*c) of its buffer, c = M->msg / size, so that no rank sends
 * more than M->msg words a round (2^30, 4 GB, under INT_MAX words), and
 * the rounds are as many as the largest pair count needs: one at every
 * size measured (a pair's words under 2^29 on 2 ranks).  Each round's
 * words are received straight into *recv (rank r's part of round k at
 * rd[r] + k*c, displacements from recv + k*c) while it is under INT_MAX
 * words, else through a round buffer.
 *
 *   size 2, c = 2, rank 0 sends 5 words to rank 1: round 0 words 0,1,
 *   round 1 words 2,3, round 2 word 4, each landing at 0, 2, 4 of rank 0's
 *   part of rank 1's *recv.
 *
 * A rank that cannot allocate its buffers ends the job (MPI_Abort: the
 * peers are inside the collective already; no level file is being written
 * then).  known: the words each rank sends here, if already known (the
 * solve's superstep learns them with its termination test), and maxpair
 * the largest count between any two ranks (TBM_UNKNOWN: one more
 * MPI_Allreduce finds it). */
void tbm_exchange(struct mlvl *L, struct vec *send, const uint64_t *known, uint64_t maxpair,
                  uint32_t **recv, size_t *nrecv, uint64_t *counts)
{
    int size = L->M->size, me = L->M->rank;
    uint64_t *sc = calloc((size_t)size * 3, sizeof *sc);
    int *ic = calloc((size_t)size * 4, sizeof *ic);
    if (!sc || !ic)
        MPI_Abort(MPI_COMM_WORLD, 1);
    uint64_t *rc = sc + size, *rd = rc + size; /* rd: where rank r's words go in *recv */
    int *isc = ic, *irc = isc + size, *isd = irc + size, *ird = isd + size;
    uint64_t mine = 0;
    for (int r = 0; r < size; r++) {
        sc[r] = send[r].n;
        if (r != me)
            L->sent_words += send[r].n;
    }
    if (known)
        memcpy(rc, known, (size_t)size * sizeof *rc);
    else {
        MPI_Request rq;
        MPI_Ialltoall(sc, 1, MPI_UINT64_T, rc, 1, MPI_UINT64_T, MPI_COMM_WORLD, &rq);
        tbm_coll_wait(L->M, &rq);
    }
    size_t rt = 0;
    for (int r = 0; r < size; r++) {
        rd[r] = rt;
        rt += (size_t)rc[r];
        mine = sc[r] > mine ? sc[r] : mine;
        mine = rc[r] > mine ? rc[r] : mine;
    }
    if (!known || maxpair == TBM_UNKNOWN)
        tbm_allreduce(L->M, &mine, &maxpair, 1, MPI_UINT64_T, MPI_MAX);
    uint64_t c = L->M->msg / (uint64_t)size ? L->M->msg / (uint64_t)size : 1;
    uint64_t rounds = (maxpair + c - 1) / c;
    size_t sw = 0, rw = 0; /* words of the round buffers */
    for (int r = 0; r < size; r++) {
        sw += (size_t)(sc[r] < c ? sc[r] : c);
        rw += (size_t)(rc[r] < c ? rc[r] : c);
    }
    bool direct = rt <= L->M->inplace; /* rounds received in place */
    uint32_t *sb = malloc((sw ? sw : 1) * sizeof *sb), *rb = malloc((rt ? rt : 1) * sizeof *rb);
    uint32_t *kb = direct ? rb : malloc((rw ? rw : 1) * sizeof *kb);
    if (!sb || !rb || !kb) {
        fprintf(stderr, "sow tables build: rank %d: out of memory in a message exchange\n", me);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    uint64_t bytes = (sw + rt + (direct ? 0 : rw)) * sizeof *sb;
    if (bytes > L->bufbytes)
        L->bufbytes = bytes;
    for (uint64_t k = 0; k < rounds; k++) {
        uint64_t a = k * c;
        int st = 0, rt_ = 0;
        for (int r = 0; r < size; r++) {
            isc[r] = (int)(sc[r] > a ? (sc[r] - a < c ? sc[r] - a : c) : 0);
            irc[r] = (int)(rc[r] > a ? (rc[r] - a < c ? rc[r] - a : c) : 0);
            isd[r] = st;
            /* in place: rank r's words of round k at rd[r] + a, from rb + a
             * (a <= rt whenever this rank receives anything this round) */
            ird[r] = direct ? (irc[r] ? (int)rd[r] : 0) : rt_;
            if (isc[r])
                memcpy(sb + st, send[r].v + a, (size_t)isc[r] * sizeof *sb);
            st += isc[r];
            rt_ += irc[r];
        }
        uint32_t *to = direct ? rb + (a < rt ? a : rt) : kb;
        MPI_Request rq;
        MPI_Ialltoallv(sb, isc, isd, MPI_UINT32_T, to, irc, ird, MPI_UINT32_T, MPI_COMM_WORLD,
                       &rq);
        tbm_coll_wait(L->M, &rq);
        if (!direct)
            for (int r = 0; r < size; r++)
                if (irc[r])
                    memcpy(rb + rd[r] + a, kb + ird[r], (size_t)irc[r] * sizeof *rb);
    }
    if (counts)
        memcpy(counts, rc, (size_t)size * sizeof *counts);
    if (kb != rb)
        free(kb);
    free(sb);
    free(sc);
    free(ic);
    *recv = rb;
    *nrecv = rt;
}
