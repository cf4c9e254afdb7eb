/* sow match: one game between two players, and the worker threads that
 * take the games in turn (match.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "match.h"
#include "sow/engine.h"

/* ---- games ---- */

volatile sig_atomic_t match_stop;

/* One game; a = player index playing South (side A) first.  Returns the
 * points of player a (M->spec[0]) and fills text. */
static double play_game(struct mctx *M, struct player pl[2], int g, char *text, size_t tlen)
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
        sow_move m = player_move(M, &pl[who], &p, hist, nh, &open, mv, nh);
        int i = m == SOW_MOVE_NONE ? -1 : rules_find_move(&ml, m);
        if (i < 0) {
            forfeit = who;
            how = "forfeit (no legal move given)";
            break;
        }
        hist[nh] = p;
        mv[nh++] = m;
        p = ml.c[i].pos;
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
    (void)sig;
    match_stop = 1;
}

void *match_worker(void *arg)
{
    struct mctx *M = arg;
    struct player pl[2];
    char err[320];
    bool ok0 = false, ok1 = false;
    if (player_open(M, 0, &pl[0], err, sizeof err) == 0)
        ok0 = true;
    if (ok0 && player_open(M, 1, &pl[1], err, sizeof err) == 0)
        ok1 = true;
    if (!ok0 || !ok1) {
        pthread_mutex_lock(&M->lock);
        if (!M->failed)
            snprintf(M->why, sizeof M->why, "%s", err);
        M->failed = true;
        pthread_mutex_unlock(&M->lock);
    } else {
        for (;;) {
            int g = __atomic_fetch_add(&M->next, 1, __ATOMIC_RELAXED);
            if (g >= M->games || match_stop || M->failed)
                break;
            if (M->text[g]) /* played before (--resume) */
                continue;
            char *text = malloc(65536);
            if (!text)
                break;
            M->score[g] = play_game(M, pl, g, text, 65536);
            M->text[g] = text;
            pthread_mutex_lock(&M->lock);
            fprintf(stderr, "sow match: game %d: %g\n", g + 1, M->score[g]);
            if (M->fo) { /* on disk at once: a killed match resumes from here */
                fprintf(M->fo, "%s\n", text);
                fflush(M->fo);
            }
            pthread_mutex_unlock(&M->lock);
        }
    }
    if (ok0)
        player_close(&pl[0]);
    if (ok1)
        player_close(&pl[1]);
    return NULL;
}
