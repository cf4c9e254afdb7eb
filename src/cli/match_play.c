/* sow match: one game between two players, and the worker threads that
 * take the games in turn (match.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "match.h"
#include "sow/engine.h"
#include "util.h"

/* ---- games ---- */

volatile sig_atomic_t match_stop;

/* One game; a = player index playing South (side A) first.  Returns the
 * points of player a (M->spec[0]) and fills text; fw gets why a player
 * forfeited ("" if none).  -1 if match_stop ended it (not a result). */
static double play_game(struct mctx *M, struct player pl[2], int g, char *text, size_t tlen,
                        char *fw, size_t fwlen)
{
    const struct ruleset *rs = &M->rs;
    int a_side = g & 1; /* game 2k: spec a plays side A; 2k+1: side B */
    sow_position open = M->open[g / 2], p = open;
    static __thread sow_position hist[MAXG];
    static __thread sow_move mv[MAXG];
    int nh = 0;
    player_newgame(&pl[0]);
    player_newgame(&pl[1]);
    struct sow_movelist ml;
    const char *how = "game over";
    int settle2[2] = {0, 0};
    int forfeit = -1;
    double left[2] = {M->tc_ms, M->tc_ms}; /* --tc: the players' clocks, ms (0: a) */
    fw[0] = 0;
    for (;;) {
        rules_generate(rs, &p, &ml);
        if (ml.n == 0) {
            settle2[0] = 2 * ml.settle[0];
            settle2[1] = 2 * ml.settle[1];
            how = rules_end_name(ml.end);
            break;
        }
        bool rep = false;
        int n = rules_board_seeds(rs, &p);
        for (int j = nh - 1; j >= 0 && rules_board_seeds(rs, &hist[j]) == n; j--)
            if (rules_same_position(&hist[j], &p) ||
                (!memcmp(&hist[j].board, &p.board, sizeof p.board) && hist[j].side == p.side &&
                 hist[j].state == p.state)) {
                rep = true;
                break;
            }
        if (rep || nh >= M->maxplies || nh >= MAXG - 1) {
            rules_repetition_settle2(rs, &p, settle2);
            how = rep ? "position repeated" : "move limit";
            break;
        }
        int who = (p.side == SOW_A) == (a_side == 0) ? 0 : 1;
        char why[200] = "";
        double t0 = util_now();
        sow_move m = player_move(M, &pl[who], &p, hist, nh, &open, mv, nh, left, why, sizeof why);
        if (match_stop)
            return -1;
        int i = m == SOW_MOVE_NONE ? -1 : rules_find_move(&ml, m);
        /* --tc: the move's wall time off the mover's clock; past --grace
         * below zero its flag falls, whatever it played */
        if (M->tc && i >= 0) {
            left[who] -= 1000 * (util_now() - t0);
            if (left[who] < -1000 * M->grace) {
                snprintf(why, sizeof why, "lost on time, its clock at %.1f s", left[who] / 1000);
                i = -1;
            } else
                left[who] += M->tc_inc;
        }
        if (i < 0) {
            forfeit = who;
            snprintf(fw, fwlen, "%c forfeits: %s", 'a' + who,
                     why[0] ? why : "no legal move given");
            how = fw;
            break;
        }
        hist[nh] = p;
        mv[nh++] = m;
        p = ml.c[i].pos;
        player_ponder(M, &pl[who], &p, hist, &open, mv, nh, left); /* --ponder */
    }
    player_unponder(M, &pl[0]);
    player_unponder(M, &pl[1]);
    if (M->tc) { /* the clocks as the game ended, for the summary (per game: no lock) */
        M->tcleft[g][0] = left[0];
        M->tcleft[g][1] = left[1];
        M->tcdone[g] = true;
    }
    /* Final seeds, times two (awari may split a seed). */
    int fa2 = 2 * p.store[0] + settle2[0], fb2 = 2 * p.store[1] + settle2[1];
    int mine = a_side == 0 ? fa2 : fb2, theirs = a_side == 0 ? fb2 : fa2;
    double pts = forfeit >= 0 ? (forfeit == 0 ? 0.0 : 1.0)
                              : mine > theirs ? 1.0 : mine < theirs ? 0.0 : 0.5;
    char pos[SOW_POS_MAXLEN];
    pos_format(rs, &open, pos, sizeof pos);
    char est[40] = "";
    if (M->have_margin && M->oexact[g / 2])
        snprintf(est, sizeof est, " (South exact %+d)", M->omargin[g / 2] / 100);
    else if (M->have_margin)
        snprintf(est, sizeof est, " (South %+.2f)", M->omargin[g / 2] / 100.0);
    size_t k = (size_t)snprintf(text, tlen, "game %d opening %s%s South=%s final %g-%g (%s) a=%g:",
                                g + 1, pos, est, a_side == 0 ? "a" : "b", fa2 / 2.0, fb2 / 2.0,
                                how, pts);
    sow_position q = open;
    for (int j = 0; j < nh && k + 20 < tlen; j++) {
        char name[SOW_MOVE_MAXLEN];
        move_format(rs, q.side, mv[j], name, sizeof name);
        k += (size_t)snprintf(text + k, tlen - k, " %s", name);
        rules_generate(rs, &q, &ml);
        q = ml.c[rules_find_move(&ml, mv[j])].pos;
    }
    return pts;
}

void match_on_sigint(int sig)
{
    match_stop = sig;
}

/* A worker's players failed to open (or to start again): the match fails
 * with the first such reason and status. */
static void worker_failed(struct mctx *M, const char *err, int status)
{
    pthread_mutex_lock(&M->lock);
    if (!M->failed) {
        snprintf(M->why, sizeof M->why, "%s", err);
        M->fail_status = status;
    }
    M->failed = true;
    pthread_mutex_unlock(&M->lock);
}

/* A player that cannot start is the SPEC's fault (exit 2) unless it is a
 * sow engine (memory). */
static int open_status(const struct mctx *M, int who)
{
    return M->spec[who].kind == P_CMD ? CLI_BAD : CLI_FAIL;
}

/* A worker's player closed, its --ponder counts added to the match's. */
static void worker_close(struct mctx *M, struct player *pl)
{
    int k = (int)(pl->sp - M->spec);
    pthread_mutex_lock(&M->lock);
    M->ptries[k] += pl->ptries;
    M->phits[k] += pl->phits;
    pthread_mutex_unlock(&M->lock);
    player_close(pl);
}

void *match_worker(void *arg)
{
    struct mctx *M = arg;
    struct player pl[2];
    char err[320];
    bool ok[2] = {false, false};
    for (int k = 0; k < 2; k++) {
        if (player_open(M, k, &pl[k], err, sizeof err) < 0) {
            worker_failed(M, err, open_status(M, k));
            break;
        }
        ok[k] = true;
    }
    /* Every worker's players open before the first game: a program that
     * cannot start fails the match with one line, not after some games
     * (match_run counts the workers in M->opening). */
    pthread_mutex_lock(&M->lock);
    M->opening--;
    pthread_cond_broadcast(&M->opened);
    while (M->opening > 0)
        pthread_cond_wait(&M->opened, &M->lock);
    pthread_mutex_unlock(&M->lock);
    while (ok[0] && ok[1]) {
        int g = __atomic_fetch_add(&M->next, 1, __ATOMIC_RELAXED);
        if (g >= M->games || match_stop || M->failed)
            break;
        if (M->text[g]) /* played before (--resume) */
            continue;
        /* a program killed in the last game (timeout, crash) starts again */
        for (int k = 0; k < 2; k++)
            if (pl[k].gone) {
                worker_close(M, &pl[k]);
                ok[k] = false;
                if (player_open(M, k, &pl[k], err, sizeof err) < 0) {
                    worker_failed(M, err, CLI_FAIL);
                    break;
                }
                ok[k] = true;
            }
        if (!ok[0] || !ok[1])
            break;
        char *text = malloc(65536);
        if (!text)
            break;
        char fw[300];
        double pts = play_game(M, pl, g, text, 65536, fw, sizeof fw);
        if (pts < 0) { /* interrupted: not a result, not in --out */
            free(text);
            break;
        }
        M->score[g] = pts;
        M->text[g] = text;
        pthread_mutex_lock(&M->lock);
        /* the standing and an ETA from this run's rate (a match runs hours) */
        M->done++;
        M->ended++;
        M->points += pts;
        double eta = (util_now() - M->t_run) / M->ended * (M->games - M->done);
        fprintf(stderr, "sow match: game %d: %g%s%s%s; %d of %d done, a %g (%.1f%%), ETA %.0f s\n",
                g + 1, M->score[g], fw[0] ? " (" : "", fw, fw[0] ? ")" : "", M->done, M->games,
                M->points, 100.0 * M->points / M->done, eta);
        if (M->fo) { /* on disk at once: a killed match resumes from here */
            fprintf(M->fo, "%s\n", text);
            fflush(M->fo);
        }
        pthread_mutex_unlock(&M->lock);
    }
    for (int k = 0; k < 2; k++)
        if (ok[k])
            worker_close(M, &pl[k]);
    return NULL;
}
