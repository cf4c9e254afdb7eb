/* sow engine: what the engine says (engine_proto.h), every line under one
 * lock: the info lines of a search (score, pv), bestmove and its ponder
 * move, in sow's notation or in letter mode. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine_proto.h"
#include "sow/position.h"

void proto_say(struct proto *P, const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&P->out);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
    pthread_mutex_unlock(&P->out);
}

/* A move as the answers name it (letters: the search's snapshot sletters). */
static void fmt_move(const struct proto *P, int side, sow_move m, char *buf, size_t len)
{
    if (P->sletters && m < P->rs.pits)
        snprintf(buf, len, "%c", (side ? 'a' : 'A') + m);
    else
        move_format(&P->rs, side, m, buf, len);
}

void proto_on_info(void *arg, const struct engine_info *in)
{
    struct proto *P = arg;
    char line[8192];
    int k = snprintf(line, sizeof line, "info depth %d seldepth %d ", in->depth, in->seldepth);
    if (in->proven && !P->sletters)
        k += snprintf(line + k, sizeof line - (size_t)k, "score exact %d", in->score / 100);
    else /* letter mode: a proven score is cp too (100 x its seeds) */
        k += snprintf(line + k, sizeof line - (size_t)k, "score cp %d%s", in->score,
                      in->bound_lower ? " lowerbound" : in->bound_upper ? " upperbound" : "");
    double t = in->seconds;
    k += snprintf(line + k, sizeof line - (size_t)k,
                  " nodes %llu nps %.0f hashfull %d tbhits %llu time %.0f",
                  (unsigned long long)in->nodes, t > 0 ? (double)in->nodes / t : 0.0,
                  in->hashfull, (unsigned long long)in->tb_hits, t * 1000);
    /* the pv: "pv 3A 1B ..."; in letter mode "pv CaA" (one run of letters,
     * as the oware GUIs read it) and nothing when it is empty */
    if (!P->sletters)
        k += snprintf(line + k, sizeof line - (size_t)k, " pv");
    sow_position q = P->spos;
    struct sow_movelist ml;
    for (int i = 0; i < in->pv_len && k < (int)sizeof line - 32; i++) {
        rules_generate(&P->rs, &q, &ml);
        int j = rules_find_move(&ml, in->pv[i]);
        if (j < 0)
            break;
        char mv[SOW_MOVE_MAXLEN];
        fmt_move(P, q.side, in->pv[i], mv, sizeof mv);
        k += snprintf(line + k, sizeof line - (size_t)k, "%s%s",
                      !P->sletters ? " " : i ? "" : " pv ", mv);
        q = ml.c[j].pos;
    }
    proto_say(P, "%s", line);
}

/* Letter mode: why the game is over at the position of the last `position`
 * command (the oware GUIs' end of game), or NULL.  No legal move is the
 * search's to find. */
const char *proto_game_ended(const struct proto *P)
{
    const sow_position *p = &P->pos;
    int total = p->store[0] + p->store[1];
    for (int i = 0; i < P->rs.holes; i++)
        total += p->board.h[i];
    if (2 * p->store[0] > total || 2 * p->store[1] > total)
        return "a player has captured more than half of the seeds";
    for (int i = 0; i < P->nhist; i++)
        if (rules_same_position(&P->hist[i], p))
            return "position repeated";
    return NULL;
}

/* bestmove's " ponder R" (with Ponder true or --letters): the PV's reply
 * to the best move, if it has one and it is legal there; else "". */
static void ponder_reply(const struct proto *P, const struct engine_result *r, char *buf,
                         size_t len)
{
    buf[0] = 0;
    if (r->info.pv_len < 2 || r->info.pv[0] != r->best)
        return;
    struct sow_movelist ml;
    rules_generate(&P->rs, &P->spos, &ml);
    int i = rules_find_move(&ml, r->best);
    if (i < 0)
        return;
    sow_position q = ml.c[i].pos;
    rules_generate(&P->rs, &q, &ml);
    if (rules_find_move(&ml, r->info.pv[1]) < 0)
        return;
    char mv[SOW_MOVE_MAXLEN];
    fmt_move(P, q.side, r->info.pv[1], mv, sizeof mv);
    snprintf(buf, len, " ponder %s", mv);
}

void proto_bestmove(struct proto *P, const struct engine_result *r, const char *over)
{
    if (r->best == SOW_MOVE_NONE) {
        proto_say(P, "info string game over: %s", over);
        proto_say(P, "bestmove %s", P->sletters ? "0000" : "(none)");
    } else {
        char mv[SOW_MOVE_MAXLEN], reply[SOW_MOVE_MAXLEN + 8] = "";
        fmt_move(P, P->spos.side, r->best, mv, sizeof mv);
        if (P->ponder_opt || P->force_letters)
            ponder_reply(P, r, reply, sizeof reply);
        if (r->swindle_replies)
            proto_say(P, "info string swindle: %d of the %d replies to %s keep their value",
                      r->swindle_keep, r->swindle_replies, mv);
        proto_say(P, "bestmove %s%s", mv, reply);
    }
}
