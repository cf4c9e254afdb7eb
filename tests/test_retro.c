/* The retrograde game's round loop (src/retro/rounds.c) with a toy client:
 * every work item of every pass done exactly once, rounds in order (all
 * of round t+1's work before any of round t's), empty rounds skipped, the
 * passes again() asks for, progress once per round, a thread's state begun
 * and ended once, the stop flag and failures; a client with an exchange
 * (the passes it sets off, called only when again has none) and its own
 * stop check (in place of the flag).  The builders' agreement
 * tests (test_tables.c, test_lean.c) run it with real work. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "retro/retro.h"

#define N 6
#define R (2 * N + 1)
#define PASSES 3 /* pass 0 and two more per round */
#define MAXP 4   /* with an exchange: pass 0, one of again's, two of the exchange's */
#define MAXI 64

struct toy {
    uint32_t done[R][MAXP][MAXI]; /* times each item was worked */
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
    /* the exchanging client */
    char trace[R][32];  /* per round: "a" again gave items, "0" none, "x" the exchange
                         * gave items, "." none */
    int stop_before;    /* the round its stopped() stops before */
    int stopped_calls;
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

/* The exchanging client: again has 5 items after pass 0 only; the exchange
 * has 4 twice a round, then none (the round is over). */
static void trace(struct toy *c, int t, char ch)
{
    size_t k = strlen(c->trace[t + N]);
    if (k + 1 < sizeof c->trace[t + N])
        c->trace[t + N][k] = ch;
}

static uint64_t xtoy_again(void *ctx, int t)
{
    struct toy *c = ctx;
    bool first = c->trace[t + N][0] == 0;
    trace(c, t, first ? 'a' : '0');
    return first ? 5 : 0;
}

static uint64_t xtoy_exchange(void *ctx, int t)
{
    struct toy *c = ctx;
    int k = 0;
    for (const char *s = c->trace[t + N]; *s; s++)
        k += *s == 'x';
    trace(c, t, k < 2 ? 'x' : '.');
    return k < 2 ? 4 : 0;
}

static bool xtoy_stopped(void *ctx, int t)
{
    struct toy *c = ctx;
    c->stopped_calls++;
    return t <= c->stop_before;
}

static const struct retro_round_ops xtoy_ops = {
    .seeds = toy_seeds,
    .begin = toy_begin,
    .work = toy_work,
    .again = xtoy_again,
    .exchange = xtoy_exchange,
    .stopped = xtoy_stopped,
    .progress = toy_progress,
    .end = toy_end,
};

Test(retro_rounds, exchange_passes_and_stopped)
{
    for (int threads = 1; threads <= 3; threads++) {
        struct toy c;
        struct retro_rounds rr;
        run(&c, threads, &rr);
        rr.ops = &xtoy_ops;
        c.stop_before = -N - 1; /* never */
        c.stop = 1;             /* not read: stopped() is the stop check */
        cr_assert(retro_rounds(&rr), "%d threads", threads);
        for (int t = N; t >= -N; t--) {
            bool seeded = t % 2 != 0;
            cr_assert_str_eq(c.trace[t + N], seeded ? "a0x0x0." : "", "round %d: %s", t,
                             c.trace[t + N]);
            for (int p = 0; p < MAXP; p++) {
                int k = !seeded ? 0 : p == 0 ? 3 + abs(t) : p == 1 ? 5 : 4;
                for (int i = 0; i < MAXI; i++)
                    cr_assert_eq(c.done[t + N][p][i], i < k, "%d threads, round %d pass %d item %d: %u",
                                 threads, t, p, i, c.done[t + N][p][i]);
            }
            cr_assert_eq(c.progress[t + N], seeded);
        }
        cr_assert_eq(c.order_bad, 0, "%d threads: work of a round before the last one ended",
                     threads);
        cr_assert_eq(c.stopped_calls, N, "one stop check per seeded round");
        /* stopped before round 1: rounds 5 and 3 played */
        run(&c, threads, &rr);
        rr.ops = &xtoy_ops;
        c.stop_before = 1;
        cr_assert(retro_rounds(&rr));
        cr_assert_eq(rr.rounds, 2);
        cr_assert_eq(c.stopped_calls, 3);
        cr_assert_eq(c.worked[1 + N], 0);
        cr_assert_eq(c.ended, threads);
    }
}
