/* OGN game records (ogn.h, docs/ogn.md): the game itself, its tags,
 * comments, moves replayed with the rules and result.  Reading a record's
 * text is ogn_read.c, writing it ogn_write.c (ogn_internal.h: what they
 * share with this file). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ogn/ogn_internal.h"
#include "sow/position.h"

void ogn_fmt_half(char *buf, size_t len, int v2)
{
    if (v2 & 1)
        snprintf(buf, len, "%d.5", v2 / 2);
    else
        snprintf(buf, len, "%d", v2 / 2);
}

/* ---- the game ----------------------------------------------------------------- */

const sow_position *ogn_before(const struct ogn_game *g, int i)
{
    return i <= 0 ? &g->start : &g->ply[i - 1].pos;
}

const sow_position *ogn_last(const struct ogn_game *g)
{
    return ogn_before(g, g->nply);
}

void ogn_free(struct ogn_game *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->ntags; i++) {
        free(g->tags[i].name);
        free(g->tags[i].value);
    }
    for (int i = 0; i < g->nnotes; i++)
        free(g->notes[i].text);
    free(g->tags);
    free(g->ply);
    free(g->notes);
    free(g);
}

const char *ogn_tag(const struct ogn_game *g, const char *name)
{
    for (int i = 0; i < g->ntags; i++)
        if (strcmp(g->tags[i].name, name) == 0)
            return g->tags[i].value;
    return NULL;
}

enum sow_status ogn_set_tag(struct ogn_game *g, const char *name, const char *value)
{
    char *v = strdup(value);
    if (!v)
        return SOW_E_NOMEM;
    for (int i = 0; i < g->ntags; i++)
        if (strcmp(g->tags[i].name, name) == 0) {
            free(g->tags[i].value);
            g->tags[i].value = v;
            return SOW_OK;
        }
    if (g->ntags == g->tags_cap) {
        int cap = g->tags_cap ? 2 * g->tags_cap : 16;
        struct ogn_tag *t = realloc(g->tags, sizeof *t * (size_t)cap);
        if (!t) {
            free(v);
            return SOW_E_NOMEM;
        }
        g->tags = t;
        g->tags_cap = cap;
    }
    char *n = strdup(name);
    if (!n) {
        free(v);
        return SOW_E_NOMEM;
    }
    g->tags[g->ntags++] = (struct ogn_tag){n, v};
    return SOW_OK;
}

/* text with every white-space run made one space, trimmed; malloc'd. */
static char *normalise(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    size_t o = 0;
    bool space = false;
    for (size_t i = 0; i < n; i++) {
        if (ogn_is_ws((unsigned char)s[i])) {
            space = o > 0;
            continue;
        }
        if (space)
            d[o++] = ' ';
        space = false;
        d[o++] = s[i];
    }
    d[o] = 0;
    return d;
}

enum sow_status ogn_add_note_n(struct ogn_game *g, int ply, const char *text, size_t n)
{
    char *t = normalise(text, n);
    if (!t)
        return SOW_E_NOMEM;
    if (!t[0]) {
        free(t);
        return SOW_OK;
    }
    if (g->nnotes == g->notes_cap) {
        int cap = g->notes_cap ? 2 * g->notes_cap : 16;
        struct ogn_note *a = realloc(g->notes, sizeof *a * (size_t)cap);
        if (!a) {
            free(t);
            return SOW_E_NOMEM;
        }
        g->notes = a;
        g->notes_cap = cap;
    }
    /* kept in ply order: after the last note of the same or an earlier ply */
    int at = g->nnotes;
    while (at > 0 && g->notes[at - 1].ply > ply)
        at--;
    memmove(g->notes + at + 1, g->notes + at, sizeof *g->notes * (size_t)(g->nnotes - at));
    g->notes[at] = (struct ogn_note){ply, t};
    g->nnotes++;
    return SOW_OK;
}

enum sow_status ogn_add_note(struct ogn_game *g, int ply, const char *text)
{
    return ogn_add_note_n(g, ply, text, strlen(text));
}

void ogn_drop_notes(struct ogn_game *g, int ply, const char *prefix)
{
    int o = 0;
    size_t pl = strlen(prefix);
    for (int i = 0; i < g->nnotes; i++) {
        if (g->notes[i].ply == ply && strncmp(g->notes[i].text, prefix, pl) == 0)
            free(g->notes[i].text);
        else
            g->notes[o++] = g->notes[i];
    }
    g->nnotes = o;
}

void ogn_name(const struct ruleset *rs, int side, sow_move m, char *buf, size_t len)
{
    if (ogn_letters(rs) && m < rs->pits)
        snprintf(buf, len, "%c", (side == SOW_A ? 'A' : 'a') + m);
    else
        move_format(rs, side, m, buf, len);
}

void ogn_move_name(const struct ogn_game *g, int i, char *buf, size_t len)
{
    ogn_name(&g->rs, g->ply[i].mover, g->ply[i].move, buf, len);
}

static int seeds_in_game(const struct ogn_game *g)
{
    return rules_board_seeds(&g->rs, &g->start) + g->start.store[0] + g->start.store[1];
}

bool ogn_result2(const struct ogn_game *g, int sc2[2])
{
    const sow_position *p = ogn_last(g);
    sc2[0] = 2 * p->store[0];
    sc2[1] = 2 * p->store[1];
    if (g->end == OGN_OVER) {
        sc2[0] += 2 * g->settle[0];
        sc2[1] += 2 * g->settle[1];
        return true;
    }
    if (g->end == OGN_REPEATED) {
        int s2[2];
        rules_repetition_settle2(&g->rs, p, s2);
        sc2[0] += s2[0];
        sc2[1] += s2[1];
        return true;
    }
    int total = seeds_in_game(g);
    return p->store[0] * 2 > total || p->store[1] * 2 > total;
}

void ogn_result(const struct ogn_game *g, char *buf, size_t len)
{
    int sc2[2];
    if (!ogn_result2(g, sc2)) {
        snprintf(buf, len, "*");
        return;
    }
    char a[16], b[16];
    ogn_fmt_half(a, sizeof a, sc2[0]);
    ogn_fmt_half(b, sizeof b, sc2[1]);
    snprintf(buf, len, "%s-%s", a, b);
}

enum sow_status ogn_update_result(struct ogn_game *g)
{
    ogn_result(g, g->result, sizeof g->result);
    return ogn_set_tag(g, "Result", g->result);
}

/* Legal moves of p (names as the record writes them) into buf. */
static void legal_list(const struct ruleset *rs, const sow_position *p,
                       const struct sow_movelist *ml, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    for (int j = 0; j < ml->n && o + 1 < len; j++) {
        char mv[SOW_MOVE_MAXLEN];
        ogn_name(rs, p->side, ml->c[j].move, mv, sizeof mv);
        int w = snprintf(buf + o, len - o, "%s%s", j ? " " : "", mv);
        if (w < 0 || (size_t)w >= len - o)
            break;
        o += (size_t)w;
    }
}

bool ogn_over_reason(const struct ogn_game *g, struct sow_movelist *ml, char *msg, size_t msglen,
                     int num, const char *written)
{
    if (g->end == OGN_REPEATED) {
        if (g->repeated_at == 0)
            snprintf(msg, msglen, "move %d '%s': the game is over (move %d repeated the start "
                                  "position)",
                     num, written, g->nply);
        else
            snprintf(msg, msglen, "move %d '%s': the game is over (move %d repeated the "
                                  "position after move %d)",
                     num, written, g->nply, g->repeated_at);
        return true;
    }
    rules_generate(&g->rs, ogn_last(g), ml);
    if (ml->n == 0) {
        snprintf(msg, msglen, "move %d '%s': the game is over (%s)", num, written,
                 rules_end_name(ml->end));
        return true;
    }
    return false;
}

enum sow_status ogn_play_as(struct ogn_game *g, sow_move m, const char *written, char *msg,
                            size_t msglen)
{
    const sow_position before = *ogn_last(g), *p = &before; /* the array may move */
    int num = g->nply + 1;
    struct sow_movelist ml;
    if (ogn_over_reason(g, &ml, msg, msglen, num, written))
        return SOW_E_INPUT;
    int k = rules_find_move(&ml, m);
    if (k < 0) {
        char legal[200];
        legal_list(&g->rs, p, &ml, legal, sizeof legal);
        snprintf(msg, msglen, "move %d '%s': not legal here (legal: %s)", num, written, legal);
        return SOW_E_INPUT;
    }
    if (g->nply == g->ply_cap) {
        int cap = g->ply_cap ? 2 * g->ply_cap : 64;
        struct ogn_ply *a = realloc(g->ply, sizeof *a * (size_t)cap);
        if (!a) {
            snprintf(msg, msglen, "out of memory");
            return SOW_E_NOMEM;
        }
        g->ply = a;
        g->ply_cap = cap;
    }
    struct ogn_ply *y = &g->ply[g->nply];
    memset(y, 0, sizeof *y);
    y->move = m;
    y->mover = p->side;
    y->captured[0] = ml.c[k].captured[0];
    y->captured[1] = ml.c[k].captured[1];
    y->pos = ml.c[k].pos;
    g->nply++;
    /* Repetition (rules.md): the same position earlier in the record.
     * Stores only grow, so the search stops at the first different store. */
    const sow_position *q = &y->pos;
    g->end = OGN_LIVE;
    for (int j = g->nply - 1; j >= 0; j--) {
        const sow_position *r = ogn_before(g, j);
        if (r->store[0] != q->store[0] || r->store[1] != q->store[1])
            break;
        if (rules_same_position(r, q)) {
            g->end = OGN_REPEATED;
            g->repeated_at = j;
            break;
        }
    }
    int s2[2] = {0, 0};
    if (g->end == OGN_REPEATED) {
        rules_repetition_settle2(&g->rs, q, s2);
    } else {
        struct sow_movelist next;
        rules_generate(&g->rs, q, &next);
        if (next.n == 0) {
            g->end = OGN_OVER;
            g->settle[0] = next.settle[0];
            g->settle[1] = next.settle[1];
            s2[0] = 2 * next.settle[0];
            s2[1] = 2 * next.settle[1];
        }
    }
    y->gain2 = 2 * y->captured[y->mover] + s2[y->mover];
    return SOW_OK;
}

enum sow_status ogn_play(struct ogn_game *g, sow_move m, struct sow_error *e)
{
    char name[SOW_MOVE_MAXLEN], msg[SOW_ERROR_MSG];
    ogn_name(&g->rs, ogn_last(g)->side, m, name, sizeof name);
    enum sow_status st = ogn_play_as(g, m, name, msg, sizeof msg);
    if (st != SOW_OK)
        return sow_fail(e, st, "%s", msg);
    return SOW_OK;
}

/* The FEN of p: Aualé's form for oware, sow's token for the others. */
static void fen_of(const struct ruleset *rs, const sow_position *p, char *buf, size_t len)
{
    if (!ogn_letters(rs) || p->state != SOW_STATE_NONE) {
        pos_format(rs, p, buf, len);
        return;
    }
    size_t o = 0;
    for (int i = 0; i < rs->holes; i++)
        o += (size_t)snprintf(buf + o, len - o, "%d-", p->board.h[i]);
    snprintf(buf + o, len - o, "%d-%d-%c", p->store[0], p->store[1], p->side ? 'N' : 'S');
}

struct ogn_game *ogn_new(const struct ruleset *rs, const sow_position *start)
{
    struct ogn_game *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->rs = *rs;
    g->start = start ? *start : rules_start(rs);
    snprintf(g->result, sizeof g->result, "*");
    static const char *const roster[] = {"Event", "Site", "Date", "Round", "South", "North"};
    enum sow_status st = ogn_set_tag(g, "Variant", ogn_letters(rs) ? "Oware Abapa" : rs->name);
    for (size_t i = 0; i < sizeof roster / sizeof roster[0]; i++)
        st = st ? st : ogn_set_tag(g, roster[i], "?");
    st = st ? st : ogn_set_tag(g, "Result", "*");
    char buf[SOW_POS_MAXLEN + 8];
    if (!st && rs->pits != 6) {
        snprintf(buf, sizeof buf, "2x%d", rs->pits);
        st = ogn_set_tag(g, "Board", buf);
    }
    if (!st && rs->seeds != 4) {
        snprintf(buf, sizeof buf, "%d", rs->seeds);
        st = ogn_set_tag(g, "Seeds", buf);
    }
    sow_position s0 = rules_start(rs);
    if (!st && !rules_same_position(&s0, &g->start)) {
        fen_of(rs, &g->start, buf, sizeof buf);
        st = ogn_set_tag(g, "FEN", buf);
    }
    if (st) {
        ogn_free(g);
        return NULL;
    }
    return g;
}
