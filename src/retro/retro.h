/* The retrograde game: what every solver of a level plays.
 *
 * Four clients solve levels (positions of one seed count) by this game: the
 * fast and lean table builders (tables/build.c, tables/lean.c), the
 * distributed builder (tables/mpi_build.c) and the exact solver's closure
 * (in memory and on disk).  They differ only in
 *   numbering     a dense combinatorial index (tables/index.c) or sorted
 *                 sparse keys (the closure);
 *   predecessors  stored reverse edges, unmoves (tables/unmove.h), or
 *                 predecessor lists on disk (tables/lean_relay.h);
 *   place         memory, disk, or a slice on each MPI rank.
 * The game itself, its node state, its primitives (claims, decrements,
 * values) and the parallel level's shared parts live here: threads,
 * regions (retro.c) and the round loop (retro_rounds, rounds.c: one OpenMP
 * region over the rounds, stop checks, barriers, exchanges), which the
 * fast, lean and distributed builders drive with their own seeds and
 * propagation (the distributed one also its exchange between ranks).  docs/tables.md
 * "Algorithm" says why it computes exactly the value of docs/rules.md; this
 * says what it is.
 *
 * The game, per level n.  Every position p of the level has two nodes:
 * (p,L), where X (the player to move, who takes endless play as -inf) is to
 * choose, and (p,H), where Y is.  An exit is a move that leaves the level
 * (it captures, or the game ends by a settlement); p's best exit value be
 * (for X) comes from the lower levels.  The X-values, found in rounds
 * t = n, n-1, .., -n:
 *     (p,L) = max(be(p),  X-value of (q,H) for each in-level child q),
 *     (p,H) = min(-be(p), X-value of (q,L) for each in-level child q);
 * (p,L) is final at the first round one of its options reaches t: its best
 * exit (be = t: a seed) or a child's H node final at t (a claim); (p,H) is
 * final once all its in-level children's L nodes are final (its counter of
 * open children reaches 0) and its best exit is no better for Y than t
 * (-be >= t, or no exit).  The nodes final at round t are the least fixpoint
 * of those rules, so the order in which a round's work is done does not
 * change them: any number of threads, ranks or work lists give the same
 * values.  Never final: endless play (L: lo = -n, H: hi = +n).  At the end
 *     lo = X(p,L), hi = -X(p,H), V = clamp(cyc, lo, hi)
 * where cyc is the repetition rule's settlement of the position's seeds
 * (rules_cycle_net).  A node with lo > hi is a bug (counted, never seen).
 *
 * Node state per position (each client packs it its own way):
 *
 *     be   int8   best exit value, RETRO_NONE_EXIT if none
 *     cnt  uint8  in-level out-degree, counted down while solving
 *     xl   int8   X-value of (p,L) = lo, RETRO_UNDONE until final
 *     xh   int8   X-value of (p,H) = -hi, RETRO_UNDONE until final
 *
 * Example (n = 2): p has one exit worth +1 to its mover and one in-level
 * child q, whose only move is an exit worth +2 to q's mover.  Round t = 2:
 * (q,L) is a seed, xl(q) = 2, so p's counter goes 1 -> 0, but -be(p) = -1
 * is better for Y than 2.  t = 1: (p,L) is a seed, xl(p) = 1.  t = -1:
 * (p,H) is final, xh(p) = -1.  t = -2: (q,H) is final, xh(q) = -2.  So
 * lo(p) = hi(p) = 1 and V(p) = 1 (moving to q would give the opponent 2),
 * V(q) = 2.
 *
 * Thread-safety: the inline primitives are safe for concurrent callers on
 * the same node when `par` is true (atomics), and for one thread when it is
 * false (plain operations, so that one thread's cache misses overlap);
 * retro_threads is pure; a region belongs to one caller; retro_rounds runs
 * one solve per call (its clients' callbacks: below).
 */
#ifndef SOW_RETRO_H
#define SOW_RETRO_H

#include <omp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sow/rules.h"

#define RETRO_UNDONE ((int8_t)-128)    /* an X-value not final yet */
#define RETRO_NONE_EXIT ((int8_t)-128) /* be: no exit move */

/* Set *a from RETRO_UNDONE to v; true if this call did it.  `par` is a
 * compile-time constant at every call (always inlined): with one thread the
 * plain operations let the cache misses overlap; with more, the first
 * compare-and-swap wins. */
static inline __attribute__((always_inline)) bool retro_claim(int8_t *a, int8_t v, bool par)
{
    if (!par) {
        if (*a != RETRO_UNDONE)
            return false;
        *a = v;
        return true;
    }
    if (__atomic_load_n(a, __ATOMIC_RELAXED) != RETRO_UNDONE)
        return false;
    int8_t expect = RETRO_UNDONE;
    return __atomic_compare_exchange_n(a, &expect, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* One open in-level child fewer: the counter after the decrement. */
static inline __attribute__((always_inline)) uint8_t retro_dec(uint8_t *c, bool par)
{
    return par ? __atomic_sub_fetch(c, 1, __ATOMIC_RELAXED) : --*c;
}

/* An H node whose counter reached 0 at round t is final at t unless its
 * best exit is better for Y than t. */
static inline bool retro_h_final_at(int be, int t)
{
    return be == RETRO_NONE_EXIT || -be >= t;
}

/* The value of a position of level n from its final X-values and its
 * repetition settlement cyc; *bad counts lo > hi. */
static inline int retro_value(int8_t xl, int8_t xh, int n, int cyc, uint64_t *bad)
{
    int lo = xl == RETRO_UNDONE ? -n : xl;
    int hi = xh == RETRO_UNDONE ? n : -xh;
    *bad += lo > hi;
    return cyc < lo ? lo : cyc > hi ? hi : cyc;
}

/* A position's moves, read as the game reads them.  A position without
 * moves ends the game: its settlement is its one exit, so be starts there;
 * otherwise be starts at "no exit" and the capturing moves are folded in. */
static inline int retro_be_start(const struct sow_movelist *ml)
{
    return ml->n == 0 ? ml->settle[0] - ml->settle[1] : RETRO_NONE_EXIT;
}

/* Seeds a move takes off the board: 0 keeps the child in the level (an
 * in-level edge), k > 0 makes it an exit into level n - k. */
static inline int retro_taken(const struct sow_child *c)
{
    return c->captured[0] + c->captured[1];
}

/* What an exit's capture is worth to the mover: its seeds less the
 * opponent's (both can take in relay rule sets). */
static inline int retro_gain(const struct sow_child *c)
{
    return c->captured[0] - c->captured[1];
}

/* An exit probed in a lower level, folded into its position's best exit
 * once the group's probes have arrived (the move passes prefetch a group's
 * lower-level values while they generate the rest of the group). */
struct retro_probe {
    const int8_t *v; /* the child's value in its level (for the child's mover) */
    int8_t d;        /* the mover's capture minus the opponent's */
    uint8_t j;       /* the position's place in the group */
};

/* Exit c of the group's position j, whose child's value is at v in its
 * level: v prefetched, the probe appended to pr[*np] (read by
 * retro_fold_probes after the group). */
static inline __attribute__((always_inline)) void
retro_probe_add(struct retro_probe *pr, int *np, const int8_t *v, const struct sow_child *c, int j)
{
    __builtin_prefetch(v);
    pr[*np].v = v;
    pr[*np].d = (int8_t)retro_gain(c);
    pr[*np].j = (uint8_t)j;
    ++*np;
}

/* best[j] = max(best[j], d - v) over the np probes. */
static inline void retro_fold_probes(const struct retro_probe *pr, int np, int *best)
{
    for (int i = 0; i < np; i++) {
        int e = pr[i].d - *pr[i].v;
        if (e > best[pr[i].j])
            best[pr[i].j] = e;
    }
}

/* Whether the solve stops before round t: one reading of the stop flag per
 * round, by thread 0, shared by every thread of the enclosing OpenMP
 * parallel region (they meet at a barrier here, so call it from all of
 * them, at the same rounds). */
static inline bool retro_round_stopped(volatile bool *flag, const volatile sig_atomic_t *stop)
{
    if (omp_get_thread_num() == 0)
        *flag = stop && *stop;
#pragma omp barrier
    return *flag;
}

/* The threads a level of E positions is solved with: `asked` (> 0), else
 * every core, but one below 200,000 positions (thread start-up and barriers
 * cost more than they save there, badly so on a loaded machine); at most
 * max. */
int retro_threads(int asked, uint64_t E, int max);

/* ---- rounds: a parallel level's round loop ----------------------------- */

/* A solve that plays the rounds t = n .. -n with OpenMP threads supplies
 * what its rounds do as callbacks; retro_rounds owns the rest: one
 * parallel region over every round (the threads and their state live
 * across rounds), the round loop, the stop check (once per round), the
 * work items handed out first come, first served, the barriers, the
 * exchanges' place in a round and the round count.  The callbacks are
 * called per round or per work item (thousands of nodes), never per node:
 * the client's per-node loops stay inside them, inlined.  Round t, on every
 * thread:
 *
 *     stop check (a barrier; stopped: no more rounds)
 *     pass 0:  items 0 .. seeds(t)-1: work(th, t, 0, item) each;
 *              settle(th, t)                    the thread's work done
 *     barrier                                   the pass done, everywhere
 *     again:   thread 0 alone: k = again(t), and if that is 0,
 *              k = exchange(t); barrier; if k == 0 the round is over, else
 *              pass 1, 2, ..: items 0 .. k-1 as above, then settle,
 *              barrier, again ...
 *     progress(t) by thread 0
 *
 * All of round t's work ends before any of the next round's starts (the
 * values a round gives are t); inside a pass there is no barrier.  A round
 * with seeds(t) == 0 is skipped (no stop check, no barrier); absent again
 * and exchange end every round after pass 0.  A solve spread over several
 * processes (the MPI builder: a slice of the level each) plays the same
 * rounds: its again runs its local work to the end pass by pass, its
 * exchange sends what the passes left for the other processes' nodes and
 * turns what arrives into a pass, and its stopped agrees the stop with the
 * others; thread 0 makes every call that talks to them, the others wait at
 * the barrier.  Every callback is optional but seeds and work. */
struct retro_round_ops {
    /* Round t's work items in pass 0 (its seeds, cut as the client likes),
     * 0 if it has none; called by every thread, so the same for each (and
     * for every process, where there are several). */
    uint64_t (*seeds)(void *ctx, int t);
    /* Thread me's state, NULL if out of memory (the thread then only meets
     * the others at the barriers, and the solve fails). */
    void *(*begin)(void *ctx, int me);
    /* One work item of round t's pass; false if the thread failed (it takes
     * no more work). */
    bool (*work)(void *th, int t, int pass, uint64_t item);
    /* The work this thread's items set off, finished; false if failed. */
    bool (*settle)(void *th, int t);
    /* Thread 0 while the others wait: another pass's items (0: none). */
    uint64_t (*again)(void *ctx, int t);
    /* Thread 0 while the others wait, when again has none: the exchange
     * with the other processes; another pass's items (what arrived), 0 when
     * the round is over everywhere. */
    uint64_t (*exchange)(void *ctx, int t);
    /* Thread 0 before round t, in place of reading stop: whether the solve
     * stops (a solve over several processes agrees on it with them). */
    bool (*stopped)(void *ctx, int t);
    /* Thread 0, after round t. */
    void (*progress)(void *ctx, int t);
    /* The thread's state let go (every state begin gave). */
    void (*end)(void *th);
};

struct retro_rounds {
    const struct retro_round_ops *ops;
    void *ctx;                         /* the client's level, passed to the ops */
    int n, threads;                    /* rounds t = n .. -n (|n| <= 127), threads asked */
    const volatile sig_atomic_t *stop; /* set asynchronously to stop; may be NULL */
    bool timed;                        /* measure idle (a clock read per barrier) */
    /* out */
    uint64_t rounds; /* rounds played: with seeds, not stopped */
    double idle;     /* thread-seconds waiting at the passes' ends (timed only) */
};

/* Play the rounds (see above).  False if a thread failed (begin, work or
 * settle); whether the stop flag ended it early is the caller's to read.
 * One call at a time per struct; the ops' thread-safety is the client's:
 * work, settle and begin/end run on every thread at once, again and
 * exchange, stopped and progress on thread 0 alone (all but progress while
 * the others wait). */
bool retro_rounds(struct retro_rounds *R);

/* ---- regions: the large arrays of a level ------------------------------ */

/* A large anonymous mapping, 2 MB aligned, reserved without commitment
 * (MAP_NORESERVE: pages are touched as a level needs them, zeroed by the
 * kernel once, not once per level) and reused by the levels of a build. */
struct retro_region {
    void *map, *p;
    size_t maplen, len;
};

enum {
    RETRO_HUGE = 1,  /* transparent huge pages asked for (random accesses over GBs) */
    RETRO_SPARE = 2, /* a region that has to grow reserves 4x the need, so the next
                      * (larger) levels reuse the pages already touched */
};

/* At least `need` bytes of r (its contents are not kept when it grows);
 * NULL if the mapping is refused. */
void *retro_region_get(struct retro_region *r, size_t need, int flags);
void retro_region_free(struct retro_region *r);

#endif
