/* A deadline for code that polls a stop flag and reads no clock itself
 * (the exact solver's closure, closure.h): a thread that sets the flag when
 * a clock passes a deadline, or when the caller's quit test says so.  It
 * looks every 5 ms, so the flag comes at most that late.
 *
 *   struct watch w;
 *   watch_start(&w, CLOCK_MONOTONIC, util_now() + 0.5, NULL, NULL);
 *   ... clos_build with env.stop = &w.flag ...
 *   watch_end(&w);            (joins the thread; w.flag says if it fired)
 *
 * clock: CLOCK_MONOTONIC (util_now's seconds), or a thread's CPU clock
 * (pthread_getcpuclockid), whose time a search limited by CPU time counts.
 * If the thread cannot be started, the flag is set at once: no watch, no
 * unbounded work.
 *
 * Thread-safety: one caller starts and ends a watch; the flag is written by
 * the watch's thread with a relaxed atomic store, to be read by any thread
 * with a relaxed atomic load (watch_fired; clos_stopped and the relay
 * cache's stop test read their flag so); quit runs on the watch's thread and
 * must be safe there (read atomics or sig_atomic_t flags). */
#ifndef SOW_WATCH_H
#define SOW_WATCH_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>

struct watch {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done, running;
    clockid_t clock;
    double until;                 /* on clock, seconds; <= 0: no deadline */
    bool (*quit)(void *arg);      /* may be NULL */
    void *arg;
    volatile sig_atomic_t flag;   /* set once: the deadline passed, or quit */
};

/* Has the watch set its flag?  (Any thread.) */
static inline bool watch_fired(const struct watch *w)
{
    return __atomic_load_n(&w->flag, __ATOMIC_RELAXED) != 0;
}

void watch_start(struct watch *w, clockid_t clock, double until, bool (*quit)(void *arg),
                 void *arg);
void watch_end(struct watch *w);

#endif
