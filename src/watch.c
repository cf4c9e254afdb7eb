/* A deadline's watch thread (watch.h). */
#include "watch.h"

#include <string.h>

static double seconds_on(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *watch_run(void *arg)
{
    struct watch *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        if ((w->until > 0 && seconds_on(w->clock) >= w->until) || (w->quit && w->quit(w->arg))) {
            __atomic_store_n(&w->flag, 1, __ATOMIC_RELAXED); /* read by other threads */
            break;
        }
        /* (the condition variable's clock is the realtime one: only the
         * wait's length is taken from it) */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 5 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

void watch_start(struct watch *w, clockid_t clock, double until, bool (*quit)(void *arg),
                 void *arg)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->clock = clock;
    w->until = until;
    w->quit = quit;
    w->arg = arg;
    w->running = pthread_create(&w->th, NULL, watch_run, w) == 0;
    if (!w->running)
        w->flag = 1;
}

void watch_end(struct watch *w)
{
    if (w->running) {
        pthread_mutex_lock(&w->mu);
        w->done = true;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->th, NULL);
    }
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
}
