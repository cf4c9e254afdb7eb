/* sow engine: the position command (engine_proto.h): startpos, pos TOKEN
 * or an oware GUI's fen, then the moves, in sow's notation or as oware hole
 * letters (one a token, or run together: moves CfB); fen or letters turn
 * letter mode on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_proto.h"
#include "sow/position.h"

/* Oware GUIs' fen: 12 counts, 2 stores, S/N, joined by '-'. */
static int parse_fen(struct proto *P, const char *f, sow_position *out, char *err, int errlen)
{
    const int H = P->rs.holes;
    long v[SOW_MAX_HOLES + 2];
    const char *q = f;
    sow_position p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < H + 2; i++) {
        char *end;
        if (*q < '0' || *q > '9') {
            snprintf(err, (size_t)errlen, "fen '%s': expected %d counts, 2 stores and S or N "
                     "joined by '-'", f, H);
            return -1;
        }
        v[i] = strtol(q, &end, 10);
        if (*end != '-' || v[i] > SOW_MAX_SEEDS) {
            snprintf(err, (size_t)errlen, "fen '%s': expected %d counts, 2 stores and S or N "
                     "joined by '-'", f, H);
            return -1;
        }
        q = end + 1;
    }
    if ((q[0] != 'S' && q[0] != 'N') || q[1]) {
        snprintf(err, (size_t)errlen, "fen '%s': the side to move must be S or N", f);
        return -1;
    }
    for (int i = 0; i < H; i++)
        p.board.h[i] = (uint8_t)v[i];
    p.store[0] = (uint16_t)v[H];
    p.store[1] = (uint16_t)v[H + 1];
    p.side = q[0] == 'S' ? 0 : 1;
    struct sow_error e;
    if (rules_validate(&P->rs, &p, &e) != SOW_OK) {
        snprintf(err, (size_t)errlen, "%s", e.msg);
        return -1;
    }
    *out = p;
    return 0;
}

static int parse_move(struct proto *P, const sow_position *p, const char *tok, sow_move *m,
                      bool *letter, char *err, int errlen)
{
    *letter = false;
    if (proto_is_oware(P) && tok[0] && !tok[1] && ((tok[0] >= 'A' && tok[0] < 'A' + P->rs.pits) ||
                                            (tok[0] >= 'a' && tok[0] < 'a' + P->rs.pits))) {
        int side = tok[0] >= 'a';
        if (side != p->side) {
            snprintf(err, (size_t)errlen, "move '%s': it is %s's turn", tok,
                     p->side ? "North" : "South");
            return -1;
        }
        *m = (sow_move)(tok[0] - (side ? 'a' : 'A'));
        *letter = true;
        return 0;
    }
    struct sow_error e;
    if (move_parse(&P->rs, p, tok, m, &e) != SOW_OK) {
        snprintf(err, (size_t)errlen, "%s", e.msg);
        return -1;
    }
    return 0;
}

/* The length of tok if it is two or more oware hole letters (moves CfB, as
 * the oware GUIs send a game), else 0. */
static size_t letter_run(const struct proto *P, const char *tok)
{
    if (!proto_is_oware(P))
        return 0;
    size_t n = 0;
    for (; tok[n]; n++)
        if (!((tok[n] >= 'A' && tok[n] < 'A' + P->rs.pits) ||
              (tok[n] >= 'a' && tok[n] < 'a' + P->rs.pits)))
            return 0;
    return n > 1 ? n : 0;
}

void proto_position(struct proto *P, char *args)
{
    char err[320];
    char *save = NULL;
    char *kind = strtok_r(args, " \t", &save);
    sow_position p;
    bool letters = false;
    if (!kind) {
        ERR(P, "position: expected startpos, pos TOKEN or fen F");
        return;
    }
    if (!strcmp(kind, "startpos")) {
        p = rules_start(&P->rs);
    } else if (!strcmp(kind, "pos") || !strcmp(kind, "fen")) {
        char *tok = strtok_r(NULL, " \t", &save);
        if (!tok) {
            ERR(P, "position %s: missing the position", kind);
            return;
        }
        if (!strcmp(kind, "fen")) {
            if (!proto_is_oware(P)) {
                ERR(P, "position fen: the fen notation is oware's (Rules is %s)", P->rs.name);
                return;
            }
            if (parse_fen(P, tok, &p, err, sizeof err) < 0) {
                ERR(P, "position: %s", err);
                return;
            }
            letters = true;
        } else {
            int tp = -1; /* untouched if the first row is malformed */
            struct sow_error e;
            if (pos_token_pits(tok, &tp, &e) != SOW_OK ||
                pos_parse(&P->rs, tok, &p, &e) != SOW_OK) {
                if (tp >= 0 && tp != P->rs.pits)
                    ERR(P, "position: %d holes per side, but Pits is %d", tp, P->rs.pits);
                else
                    ERR(P, "position: %s", e.msg);
                return;
            }
        }
    } else {
        ERR(P, "position: expected startpos, pos TOKEN or fen F, not '%s'", kind);
        return;
    }
    proto_new_base(P, &p);
    sow_position *hist = P->phist;
    int nh = 0;
    char *tok = strtok_r(NULL, " \t", &save);
    if (tok && strcmp(tok, "moves")) {
        ERR(P, "position: expected 'moves' after the position, not '%s'", tok);
        return;
    }
    struct sow_movelist ml;
    while (tok && (tok = strtok_r(NULL, " \t", &save))) {
        /* a run of letters (moves CfB) is one move a letter */
        size_t run = letter_run(P, tok);
        for (size_t k = 0; k < (run ? run : 1); k++) {
            char one[2] = {tok[k], 0}, where[128] = "";
            const char *mt = run ? one : tok;
            if (run)
                snprintf(where, sizeof where, " (letter %zu of '%.64s')", k + 1, tok);
            sow_move m;
            bool let;
            if (parse_move(P, &p, mt, &m, &let, err, sizeof err) < 0) {
                ERR(P, "position: %s%s", err, where);
                return;
            }
            letters |= let;
            rules_generate(&P->rs, &p, &ml);
            int i = rules_find_move(&ml, m);
            if (i < 0) {
                ERR(P, "position: move '%s' is not legal here%s", mt, where);
                return;
            }
            if (nh == HIST_MAX) {
                memmove(hist, hist + 1, sizeof hist[0] * (HIST_MAX - 1));
                nh--;
            }
            hist[nh++] = p;
            p = ml.c[i].pos;
        }
    }
    P->pos = p;
    if (proto_ensure_engine(P) == 0)
        engine_prepare(P->e, &p); /* the small levels now: stop stays fast */
    memcpy(P->hist, hist, sizeof hist[0] * (size_t)nh);
    P->nhist = nh;
    P->letters = letters;
}
