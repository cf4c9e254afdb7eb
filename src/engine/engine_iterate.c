/* The engine's iterative deepening, run by every thread (Lazy SMP): the
 * aspiration windows at the root, the info lines, and what the threads
 * publish to each other (the deepest completed iteration).  Part of the
 * engine: engine_internal.h maps its files. */
#include "engine_internal.h"

/* The info of thread t's iteration at depth (score, bound lb: 0 exact,
 * -1 upper, +1 lower), with the counters of all threads now. */
static void make_info(struct ethr *t, int depth, int score, bool proven, int lb,
                      struct engine_info *cur)
{
    memset(cur, 0, sizeof *cur);
    cur->depth = depth;
    cur->seldepth = t->seldepth;
    cur->score = score;
    cur->proven = proven && lb == 0;
    cur->bound_lower = lb > 0;
    cur->bound_upper = lb < 0;
    cur->pv_len = t->pvlen[0];
    memcpy(cur->pv, t->pv[0], (size_t)cur->pv_len * sizeof(sow_move));
}

/* Hand an info line to the caller (main thread only): counters now. */
static void emit(struct engine *e, struct engine_info *cur)
{
    uint64_t nodes = 0, hits = 0;
    for (int i = 0; i < e->nthreads; i++) {
        nodes += __atomic_load_n(&e->th[i]->nodes, __ATOMIC_RELAXED);
        hits += __atomic_load_n(&e->th[i]->tb_hits, __ATOMIC_RELAXED);
    }
    cur->nodes = nodes;
    cur->tb_hits = hits;
    cur->seconds = util_now() - e->t0;
    cur->hashfull = tte_hashfull(e->tt);
    if (!cur->bound_lower && !cur->bound_upper) {
        e->last = *cur;
        e->have_last = true;
    }
    if (e->info_cb)
        e->info_cb(e->info_arg, cur);
}

static void report(struct engine *e, struct ethr *t, int depth, int score, bool proven, int lb)
{
    struct engine_info cur;
    make_info(t, depth, score, proven, lb, &cur);
    emit(e, &cur);
}

/* Lazy SMP bookkeeping.  Every thread publishes each iteration it
 * completes; the deepest one is e->done (depth e->done_depth).  A thread
 * whose current iteration is not deeper than that gives it up
 * (check_abort: "superseded") and goes on deeper, and the main thread then
 * reports the published result as its own: so a helper that finishes a
 * depth first shortens the main thread's time to that depth.  With one
 * thread nothing is ever superseded (reproducible node counts). */
static void publish(struct engine *e, struct ethr *t, int depth, int score, bool proven)
{
    if (e->nthreads == 1) {
        atomic_store_explicit(&e->done_depth, depth, memory_order_relaxed);
        return;
    }
    pthread_mutex_lock(&e->mu);
    if (depth > atomic_load_explicit(&e->done_depth, memory_order_relaxed)) {
        make_info(t, depth, score, proven, 0, &e->done);
        /* (a proven score supersedes the main thread too, which adopts
         * it and stops: it cannot change with depth) */
        atomic_store_explicit(&e->done_depth, depth, memory_order_release);
    }
    pthread_mutex_unlock(&e->mu);
}

/* The main thread takes the published result (deeper than its own). */
int eng_adopt(struct engine *e, int *score)
{
    pthread_mutex_lock(&e->mu);
    struct engine_info cur = e->done;
    pthread_mutex_unlock(&e->mu);
    *score = cur.score;
    emit(e, &cur);
    return cur.depth;
}

/* The soft limit (engine_limits.soft), after each of the main thread's
 * completed iterations: stop once the time since the start passes soft
 * times a factor that grows when the best move changes, as Stockfish's
 * time manager does.  A change counts 1.5 and halves at each iteration,
 * so the factor is 0.7 while the move stays and at most 0.7 * 4 after
 * changes at every depth: the next iteration costs about as much as all
 * before it, so stopping at 0.7 spends about the soft share on average,
 * less on a settled move and more on an open one.  One legal move: stop
 * after the first iteration (its score is still reported). */
static bool soft_time_up(struct engine *e)
{
    if (!(e->soft > 0) || !e->have_last || e->last.pv_len == 0)
        return false;
    sow_move best = e->last.pv[0];
    e->changes /= 2;
    if (e->prev_best != SOW_MOVE_NONE && best != e->prev_best)
        e->changes += 1.5;
    e->prev_best = best;
    if (e->one_move)
        return true;
    return e->clock() - e->started >= e->soft * 0.7 * (1 + e->changes);
}

void eng_iterate(struct ethr *t)
{
    struct engine *e = t->e;
    int score = 0;
    for (int d = 1 + (t->tid & 1); d <= t->max_depth; d++) {
        /* Skip what is done; helpers never stay behind the main thread
         * but search its depth with their own order (killers, history),
         * the first to finish a depth superseding the others.  Measured
         * in lockstep (docs/engine.md) against helpers kept one or two
         * plies ahead: 1.85x against 1.57x on oware at depth 16 with 2
         * threads, 3.34x against 2.28x with 4. */
        int done = atomic_load_explicit(&e->done_depth, memory_order_acquire);
        if (d <= done)
            d = done + 1;
        if (t->tid > 0) {
            int md = atomic_load_explicit(&e->main_depth, memory_order_relaxed);
            if (d < md)
                d = md;
        } else {
            atomic_store_explicit(&e->main_depth, d, memory_order_relaxed);
        }
        if (d > t->max_depth)
            break;
        t->cur_depth = d;
        int delta = 40, alpha = -ENGINE_INF, beta = ENGINE_INF;
        if (d >= 4) {
            alpha = score - delta;
            beta = score + delta;
        }
        bool proven;
        int s;
        if (e->o.mtdf && d >= 2) {
            /* MTD(f): null-window tests from the last score until the
             * bounds meet (docs/engine.md: measured against PVS). */
            int lo = -ENGINE_INF - 1, hi = ENGINE_INF + 1, g = score;
            bool plo = false, phi = false;
            while (lo < hi) {
                int b = g > lo + 1 ? g : lo + 1;
                t->seldepth = 0;
                s = eng_root_search(t, b - 1, b, d, &proven);
                if (t->abort)
                    break;
                if (s < b) {
                    hi = s;
                    phi = proven;
                } else {
                    lo = s;
                    plo = proven;
                }
                g = s;
            }
            s = g;
            proven = plo && phi;
        } else {
            for (;;) {
                t->seldepth = 0;
                s = eng_root_search(t, alpha, beta, d, &proven);
                if (t->abort)
                    break;
                if (s <= alpha) {
                    if (t->tid == 0)
                        report(e, t, d, s, false, -1);
                    alpha = s - delta > -ENGINE_INF ? s - delta : -ENGINE_INF;
                } else if (s >= beta) {
                    if (t->tid == 0)
                        report(e, t, d, s, false, 1);
                    beta = s + delta < ENGINE_INF ? s + delta : ENGINE_INF;
                } else {
                    break;
                }
                delta *= 2;
            }
        }
        if (t->abort) {
            if (!t->superseded)
                return;
            /* Another thread completed this depth (or a deeper one). */
            t->abort = t->superseded = false;
            if (t->tid == 0) {
                d = eng_adopt(e, &score);
                if (e->last.proven || soft_time_up(e))
                    break;
            } else {
                d = atomic_load_explicit(&e->done_depth, memory_order_acquire);
            }
            continue;
        }
        score = s;
        publish(e, t, d, s, proven);
        if (t->tid == 0) {
            report(e, t, d, s, proven, 0);
            /* A proven root score cannot change with depth. */
            if (proven || soft_time_up(e))
                break;
        }
    }
}
