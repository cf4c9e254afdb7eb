/* The retrograde game's round loop (src/retro/rounds.c) with a toy client:
 * every work item of every pass done exactly once, rounds in order (all
 * of round t+1's work before any of round t's), empty rounds skipped, the
 * passes again() asks for, progress once per round, a thread's state begun
 * and ended once, the stop flag and failures.  The builders' agreement
 * tests (test_tables.c, test_lean.c) run it with real work. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "retro/retro.h"

#define N 6
#define R (2 * N + 1)
#define PASSES 3 /* pass 0 and two more per round */
#define MAXI 64

struct toy {
    uint32_t done[R][PASSES][MAXI]; /* times each item was worked */
    uint64_t worked[R];             /* items worked per round, all passes */
    int passes[R];                  /* again() calls per round */
    int progress[R];
    int order_bad;    /* work seen for a round while a later one had started */
    int last_round;   /* the lowest round progress reported so far */
    int begun, ended; /* thread states */
    int fail_at;      /* round whose item 0 fails (N + 1: none) */
    int null_thread;  /* thread whose begin gives NULL (-1: none) */
    int stop_after;   /* round after which the stop flag is set (N + 1: none) */
    volatile sig_atomic_t stop;
};

struct toy_thread {
    struct toy *c;
    int me;
};

/* Rounds with odd t have seeds (3 + |t| items), the others none. */
static uint64_t toy_seeds(void *ctx, int t)
{
    (void)ctx;
    return t % 2 ? (uint64_t)(3 + abs(t)) : 0;
}

static void *toy_begin(void *ctx, int me)
{
    struct toy *c = ctx;
    if (me == c->null_thread)
        return NULL;
    struct toy_thread *th = malloc(sizeof *th);
    th->c = c;
    th->me = me;
    __atomic_fetch_add(&c->begun, 1, __ATOMIC_RELAXED);
    return th;
}

static bool toy_work(void *thp, int t, int pass, uint64_t item)
{
    struct toy_thread *th = thp;
    struct toy *c = th->c;
    /* every round above t has reported its progress (its work is over) */
    if (__atomic_load_n(&c->last_round, __ATOMIC_ACQUIRE) != t + 2)
        __atomic_fetch_add(&c->order_bad, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->done[t + N][pass][item], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->worked[t + N], 1, __ATOMIC_RELAXED);
    return !(t == c->fail_at && item == 0);
}

/* Two more passes of 5 items, then none. */
static uint64_t toy_again(void *ctx, int t)
{
    struct toy *c = ctx;
    return ++c->passes[t + N] < PASSES ? 5 : 0;
}

static void toy_progress(void *ctx, int t)
{
    struct toy *c = ctx;
    c->progress[t + N]++;
    __atomic_store_n(&c->last_round, t, __ATOMIC_RELEASE);
    if (t == c->stop_after)
        c->stop = 1;
}

static void toy_end(void *thp)
{
    struct toy_thread *th = thp;
    __atomic_fetch_add(&th->c->ended, 1, __ATOMIC_RELAXED);
    free(th);
}

static const struct retro_round_ops toy_ops = {
    .seeds = toy_seeds,
    .begin = toy_begin,
    .work = toy_work,
    .again = toy_again,
    .progress = toy_progress,
    .end = toy_end,
};

static void run(struct toy *c, int threads, struct retro_rounds *rr)
{
    memset(c, 0, sizeof *c);
    c->fail_at = N + 1;
    c->null_thread = -1;
    c->stop_after = N + 1;
    c->last_round = N + 1; /* the first seeded round is N - 1 */
    memset(rr, 0, sizeof *rr);
    rr->ops = &toy_ops;
    rr->ctx = c;
    rr->n = N;
    rr->threads = threads;
    rr->stop = &c->stop;
    rr->timed = true;
}

Test(retro_rounds, every_item_once_rounds_in_order)
{
    for (int threads = 1; threads <= 3; threads++) {
        struct toy c;
        struct retro_rounds rr;
        run(&c, threads, &rr);
        cr_assert(retro_rounds(&rr), "%d threads", threads);
        int played = 0;
        for (int t = N; t >= -N; t--) {
            bool seeded = t % 2 != 0;
            played += seeded;
            cr_assert_eq(c.progress[t + N], seeded, "round %d: progress %d", t, c.progress[t + N]);
            cr_assert_eq(c.passes[t + N], seeded ? PASSES : 0, "round %d: %d passes", t,
                         c.passes[t + N]);
            for (int p = 0; p < PASSES; p++) {
                int k = !seeded ? 0 : p == 0 ? 3 + abs(t) : 5;
                for (int i = 0; i < MAXI; i++)
                    cr_assert_eq(c.done[t + N][p][i], i < k, "%d threads, round %d pass %d item %d: %u",
                                 threads, t, p, i, c.done[t + N][p][i]);
            }
        }
        cr_assert_eq(c.order_bad, 0, "%d threads: work of a round before the last one ended",
                     threads);
        cr_assert_eq(rr.rounds, (uint64_t)played);
        cr_assert_eq(c.begun, threads);
        cr_assert_eq(c.ended, threads);
        cr_assert(rr.idle >= 0);
    }
}

Test(retro_rounds, stop_flag_ends_at_the_next_round)
{
    for (int threads = 1; threads <= 3; threads += 2) {
        struct toy c;
        struct retro_rounds rr;
        run(&c, threads, &rr);
        c.stop_after = 3;
        cr_assert(retro_rounds(&rr));
        /* rounds 5, 3 played; 1 and below not */
        cr_assert_eq(rr.rounds, 2, "%d threads: %llu rounds", threads,
                     (unsigned long long)rr.rounds);
        cr_assert(c.worked[3 + N] > 0);
        for (int t = 1; t >= -N; t--)
            cr_assert_eq(c.worked[t + N], 0, "round %d worked after the stop", t);
        cr_assert_eq(c.ended, threads);
    }
}

Test(retro_rounds, failures_are_reported)
{
    struct toy c;
    struct retro_rounds rr;
    run(&c, 2, &rr);
    c.fail_at = -3;
    cr_assert(!retro_rounds(&rr), "a failed work item");
    cr_assert_eq(c.ended, 2);
    run(&c, 3, &rr);
    c.null_thread = 1;
    cr_assert(!retro_rounds(&rr), "a thread without state");
    cr_assert_eq(c.begun, 2);
    cr_assert_eq(c.ended, 2);
    /* the other threads did every item */
    cr_assert_eq(c.done[-5 + N][0][7], 1);
}
