/* sow engine: search control (engine_proto.h): go's parameters into the
 * engine's limits (a clock's share of the time), the search thread and its
 * answer, go ponder's wait and the clock thread ponderhit starts, stop.
 * The overview of the threads is cmd_engine.c's header comment. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "engine_proto.h"
#include "timeman.h"

/* The search thread: go's search of the snapshot spos (none where the game
 * is over), held back while infinite or pondering, then the answer. */
static void *search_main(void *arg)
{
    struct proto *P = arg;
    struct engine_result r;
    const char *over = P->over;
    if (over) {
        memset(&r, 0, sizeof r);
        r.best = SOW_MOVE_NONE;
    } else {
        engine_search(P->e, &P->spos, P->shist, P->snhist, &P->lim, &r);
        over = "no legal move";
    }
    /* UCI: after `go infinite` the answer waits for `stop`; after `go
     * ponder` for `ponderhit` or `stop`. */
    while ((P->infinite || __atomic_load_n(&P->pondering, __ATOMIC_ACQUIRE)) &&
           !__atomic_load_n(&P->stop_req, __ATOMIC_RELAXED)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    /* done before the answer: a GUI may send its next command the moment
     * it reads bestmove, and the main thread must then join, not refuse. */
    __atomic_store_n(&P->done, 1, __ATOMIC_RELEASE);
    proto_bestmove(P, &r, over);
    return NULL;
}

/* ponderhit's clock: stop_req at the deadline unless cancelled first. */
static void *timer_main(void *arg)
{
    struct proto *P = arg;
    pthread_mutex_lock(&P->tmu);
    int rc = 0;
    while (!P->tcancel && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&P->tcv, &P->tmu, &P->deadline);
    if (!P->tcancel)
        __atomic_store_n(&P->stop_req, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&P->tmu);
    return NULL;
}

static void timer_cancel(struct proto *P)
{
    if (!P->timer_on)
        return;
    pthread_mutex_lock(&P->tmu);
    P->tcancel = true;
    pthread_cond_signal(&P->tcv);
    pthread_mutex_unlock(&P->tmu);
    pthread_join(P->timer, NULL);
    P->timer_on = false;
}

void proto_join_search(struct proto *P)
{
    if (!P->searching)
        return;
    pthread_join(P->th, NULL);
    timer_cancel(P);
    P->searching = false;
}

/* ponderhit: the ponder move was played; the search goes on as a normal
 * one, with go's time limit from now. */
void proto_ponderhit(struct proto *P)
{
    if (!P->searching || !__atomic_load_n(&P->pondering, __ATOMIC_ACQUIRE)) {
        ERR(P, "ponderhit: not pondering (no go ponder running)");
        return;
    }
    if (P->ponder_secs > 0) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long ns = now.tv_nsec + (long long)(P->ponder_secs * 1e9);
        P->deadline.tv_sec = now.tv_sec + (time_t)(ns / 1000000000LL);
        P->deadline.tv_nsec = (long)(ns % 1000000000LL);
        P->tcancel = false;
        if (pthread_create(&P->timer, NULL, timer_main, P) != 0) {
            /* no clock: stop now rather than search past the time */
            ERR(P, "ponderhit: cannot start the clock thread (stopping)");
            __atomic_store_n(&P->stop_req, 1, __ATOMIC_RELAXED);
        } else
            P->timer_on = true;
    }
    __atomic_store_n(&P->pondering, 0, __ATOMIC_RELEASE);
}

/* A position the book holds (not after a game's end in letter mode): the
 * book's move at once, with its score, and no search.  True if it answered. */
static bool book_move(struct proto *P)
{
    if (!P->have_book)
        return false;
    P->sletters = proto_letter_mode(P);
    if (P->sletters && proto_game_ended(P))
        return false;
    const struct book_entry *t = book_find(&P->book, &P->rs, &P->pos);
    if (!t)
        return false;
    struct engine_result r = {0};
    r.best = book_choose(&P->book, t, (int)P->book_margin, &P->book_rng);
    for (int i = 0; i < t->n; i++)
        if (P->book.mov[t->first + i].move == r.best) {
            r.info.score = P->book.mov[t->first + i].score;
            r.info.proven = P->book.mov[t->first + i].flags & BOOK_EXACT;
        }
    r.info.depth = P->book.par.depth;
    r.info.pv_len = 1;
    r.info.pv[0] = r.best;
    P->spos = P->pos;
    proto_say(P, "info string book move");
    proto_on_info(P, &r.info);
    proto_bestmove(P, &r, NULL);
    return true;
}

void proto_go(struct proto *P, char *args)
{
    struct engine_limits lim = {0};
    double wtime = -1, btime = -1, winc = 0, binc = 0, mtg = 0;
    long long v, lo = 1, hi = 0;
    bool infinite = false, ponder = false;
    char *save = NULL;
    for (char *tok = strtok_r(args, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        char *val = NULL;
        if (!strcmp(tok, "infinite")) {
            infinite = true;
            continue;
        }
        if (!strcmp(tok, "ponder")) {
            ponder = true;
            continue;
        }
        val = strtok_r(NULL, " \t", &save);
        if (!strcmp(tok, "depth")) {
            if (!proto_parse_dec(val, lo = 1, hi = ENGINE_MAX_PLY - 1, &v))
                goto bad;
            lim.depth = (int)v;
        } else if (!strcmp(tok, "movetime")) {
            if (!proto_parse_dec(val, lo = 1, hi = 1000000000, &v))
                goto bad;
            lim.seconds = (double)v / 1000;
        } else if (!strcmp(tok, "nodes")) {
            if (!proto_parse_dec(val, lo = 1, hi = 1000000000000000000LL, &v))
                goto bad;
            lim.nodes = (uint64_t)v;
        } else if (!strcmp(tok, "wtime") || !strcmp(tok, "btime") || !strcmp(tok, "winc") ||
                   !strcmp(tok, "binc") || !strcmp(tok, "movestogo")) {
            if (!proto_parse_dec(val, lo = tok[0] == 'm' ? 1 : 0, hi = 1000000000000LL, &v))
                goto bad;
            *(!strcmp(tok, "wtime")  ? &wtime
              : !strcmp(tok, "btime") ? &btime
              : !strcmp(tok, "winc")  ? &winc
              : !strcmp(tok, "binc")  ? &binc
                                      : &mtg) = (double)v;
        } else {
            ERR(P, "go: unknown parameter '%s'", tok);
            return;
        }
        continue;
    bad:
        if (val)
            ERR(P, "go %s: '%s' is not a decimal integer in %lld..%lld", tok, val, lo, hi);
        else
            ERR(P, "go %s: missing value", tok);
        return;
    }
    /* wtime/btime: the clock of the side to move (wtime = South/A). */
    double mine = P->pos.side ? btime : wtime, inc = P->pos.side ? binc : winc;
    if (mine >= 0 && !infinite) {
        struct timeman tm = timeman_move(mine, inc, mtg);
        lim.soft = tm.soft;
        if (!lim.seconds || tm.hard < lim.seconds)
            lim.seconds = tm.hard;
    }
    if (infinite) {
        lim.depth = 0;
        lim.seconds = 0;
        lim.nodes = 0;
        lim.infinite = true;
    }
    if (proto_ensure_engine(P) < 0)
        return;
    if (!infinite && !ponder && book_move(P))
        return;
    /* go ponder: no clock until ponderhit (cmd_ponderhit starts it), which
     * gives the move its share (the soft limit) as a hard one */
    P->ponder_secs = ponder ? (lim.soft > 0 && lim.soft < lim.seconds ? lim.soft : lim.seconds) : 0;
    if (ponder)
        lim.seconds = lim.soft = 0;
    P->lim = lim;
    P->infinite = infinite;
    P->sletters = proto_letter_mode(P);
    P->over = P->sletters ? proto_game_ended(P) : NULL;
    P->spos = P->pos;
    memcpy(P->shist, P->hist, sizeof P->hist[0] * (size_t)P->nhist);
    P->snhist = P->nhist;
    __atomic_store_n(&P->stop_req, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&P->done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&P->pondering, ponder ? 1 : 0, __ATOMIC_RELAXED);
    engine_set_info(P->e, proto_on_info, P);
    if (pthread_create(&P->th, NULL, search_main, P) != 0) {
        ERR(P, "go: cannot start the search thread");
        return;
    }
    P->searching = true;
}

void proto_stop(struct proto *P)
{
    if (!P->searching)
        return;
    __atomic_store_n(&P->stop_req, 1, __ATOMIC_RELAXED);
    proto_join_search(P);
}
