/* The engine's lockstep mode (engine_opts.lockstep): the threads take
 * turns of 256 nodes (below).  Part of the engine: engine_internal.h maps
 * its files. */
#include "engine_internal.h"

/* ---- lockstep (engine_opts.lockstep) ----
 * The threads take turns of 256 nodes, round robin over those still
 * running: T equal cores simulated on any machine, whatever its load, and
 * the whole search is deterministic.  Measurement only (bench engine). */

/* Hand the turn to the next running thread after tid (lock held). */
static void ls_next(struct engine *e, int tid)
{
    int n = e->nthreads, j = tid;
    do
        j = (j + 1) % n;
    while (!e->ls_running[j] && j != tid);
    e->ls_turn = j;
    pthread_cond_broadcast(&e->ls_cv);
}

void ls_wait(struct engine *e, int tid)
{
    pthread_mutex_lock(&e->ls_mu);
    while (e->ls_turn != tid)
        pthread_cond_wait(&e->ls_cv, &e->ls_mu);
    pthread_mutex_unlock(&e->ls_mu);
}

void ls_yield(struct engine *e, int tid)
{
    pthread_mutex_lock(&e->ls_mu);
    ls_next(e, tid);
    while (e->ls_turn != tid)
        pthread_cond_wait(&e->ls_cv, &e->ls_mu);
    pthread_mutex_unlock(&e->ls_mu);
}

void ls_exit(struct engine *e, int tid)
{
    pthread_mutex_lock(&e->ls_mu);
    e->ls_running[tid] = false;
    if (e->ls_turn == tid)
        ls_next(e, tid);
    pthread_mutex_unlock(&e->ls_mu);
}
