/* The round loop of a parallel level solve (retro.h "rounds"): one OpenMP
 * parallel region over every round, the stop check, the work counters, the
 * barriers and the passes a round's exchanges set off; what a round does is
 * the client's (struct retro_round_ops). */
#include <omp.h>
#include <string.h>

#include "retro.h"

#define MAX_ROUNDS (2 * 127 + 1) /* values are int8: |t| <= 127 */

/* Items 0 .. k-1 of a pass, taken first come, first served from *next
 * (a counter of its own cache line); then the thread's settle.  A thread
 * that failed takes none. */
static void pass(const struct retro_rounds *R, void *th, bool *ok, int t, int p, uint64_t k,
                 uint64_t *next)
{
    const struct retro_round_ops *o = R->ops;
    while (*ok) {
        uint64_t i = __atomic_fetch_add(next, 1, __ATOMIC_RELAXED);
        if (i >= k)
            break;
        *ok = o->work(th, t, p, i);
    }
    if (*ok && o->settle)
        *ok = o->settle(th, t);
}

/* A barrier, its wait added to *idle when timed. */
static void meet(const struct retro_rounds *R, double *idle)
{
    double t0 = R->timed ? omp_get_wtime() : 0;
#pragma omp barrier
    if (R->timed)
        *idle += omp_get_wtime() - t0;
}

/* Whether the solve stops before round t: one reading (the client's
 * stopped, else the stop flag) by thread 0, shared through *flag by every
 * thread (a barrier). */
static bool round_stopped(const struct retro_rounds *R, volatile bool *flag, int t)
{
    const struct retro_round_ops *o = R->ops;
    if (!o->stopped)
        return retro_round_stopped(flag, R->stop);
    if (omp_get_thread_num() == 0)
        *flag = o->stopped(R->ctx, t);
#pragma omp barrier
    return *flag;
}

/* Thread 0 while the others wait, after a pass: the next pass's items
 * (again, else the exchange's), 0 when the round is over. */
static uint64_t next_pass(const struct retro_rounds *R, int t)
{
    const struct retro_round_ops *o = R->ops;
    uint64_t k = o->again ? o->again(R->ctx, t) : 0;
    return k || !o->exchange ? k : o->exchange(R->ctx, t);
}

bool retro_rounds(struct retro_rounds *R)
{
    const struct retro_round_ops *o = R->ops;
    int n = R->n;
    /* Per round: its stop flag and its seed counter (a round's own, so that
     * no thread resets what another may still read); one counter for the
     * later passes, reset by thread 0 while the others wait. */
    volatile bool stopv[MAX_ROUNDS];
    uint64_t next[MAX_ROUNDS][8], more_next = 0;
    volatile uint64_t more = 0;
    memset((void *)stopv, 0, sizeof stopv);
    memset(next, 0, sizeof next);
    bool all_ok = true;
    uint64_t rounds = 0;
    double idle_all = 0;
    if (n < 0 || 2 * n + 1 > MAX_ROUNDS)
        return false;
#pragma omp parallel num_threads(R->threads > 0 ? R->threads : 1)
    {
        int me = omp_get_thread_num();
        void *th = o->begin ? o->begin(R->ctx, me) : NULL;
        bool ok = th || !o->begin;
        double idle = 0;
        for (int t = n; t >= -n; t--) {
            uint64_t k = o->seeds(R->ctx, t);
            if (!k)
                continue;
            if (round_stopped(R, &stopv[t + n], t))
                break;
            if (me == 0)
                rounds++;
            pass(R, th, &ok, t, 0, k, &next[t + n][0]);
            for (int p = 1;; p++) {
                meet(R, &idle);
                if (!o->again && !o->exchange)
                    break;
                if (me == 0) {
                    more_next = 0;
                    more = next_pass(R, t);
                }
#pragma omp barrier
                if (!more)
                    break;
                pass(R, th, &ok, t, p, more, &more_next);
            }
            if (me == 0 && o->progress)
                o->progress(R->ctx, t);
        }
        if (th && o->end)
            o->end(th);
        if (!ok)
#pragma omp atomic write
            all_ok = false;
        if (R->timed)
#pragma omp atomic
            idle_all += idle;
    }
    R->rounds = rounds;
    R->idle = idle_all;
    return all_ok;
}
