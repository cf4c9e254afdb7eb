/* OGN game records (ogn.h, docs/ogn.md): parse, replay, write. */
#include "ogn/ogn.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sow/position.h"

/* ---- small helpers ---------------------------------------------------------- */

static bool is_ws(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_ctl(int c)
{
    return (c >= 0 && c < 0x20) || c == 0x7f;
}

/* A score or capture "12" or "12.5" into twice its value; -1 if malformed. */
static int parse_half(const char *s, size_t n)
{
    size_t i = 0;
    int v = 0;
    if (n == 0 || !isdigit((unsigned char)s[0]))
        return -1;
    while (i < n && isdigit((unsigned char)s[i])) {
        if (v > 100000)
            return -1;
        v = v * 10 + (s[i++] - '0');
    }
    v *= 2;
    if (i == n)
        return v;
    if (n - i == 2 && s[i] == '.' && s[i + 1] == '5')
        return v + 1;
    return -1;
}

static void fmt_half(char *buf, size_t len, int v2)
{
    if (v2 & 1)
        snprintf(buf, len, "%d.5", v2 / 2);
    else
        snprintf(buf, len, "%d", v2 / 2);
}

/* "A-B" into doubled scores; false if malformed. */
static bool parse_score(const char *s, int sc2[2])
{
    const char *dash = strchr(s, '-');
    if (!dash)
        return false;
    sc2[0] = parse_half(s, (size_t)(dash - s));
    sc2[1] = parse_half(dash + 1, strlen(dash + 1));
    return sc2[0] >= 0 && sc2[1] >= 0;
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
        if (is_ws((unsigned char)s[i])) {
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

static enum sow_status add_note_n(struct ogn_game *g, int ply, const char *text, size_t n)
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
    return add_note_n(g, ply, text, strlen(text));
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

static bool letters(const struct ruleset *rs)
{
    return rs->family == SOW_OWARE;
}

void ogn_name(const struct ruleset *rs, int side, sow_move m, char *buf, size_t len)
{
    if (letters(rs) && m < rs->pits)
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

/* Final (or current) score, doubled: false if the game is not decided. */
static bool result2(const struct ogn_game *g, int sc2[2])
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
    if (!result2(g, sc2)) {
        snprintf(buf, len, "*");
        return;
    }
    char a[16], b[16];
    fmt_half(a, sizeof a, sc2[0]);
    fmt_half(b, sizeof b, sc2[1]);
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

/* Is the game over before move num?  Then the message, and true; else the
 * legal moves of the last position in *ml. */
static bool over_reason(const struct ogn_game *g, struct sow_movelist *ml, char *msg,
                        size_t msglen, int num, const char *written)
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

/* Play m after the last move; `written` names it in the message of a refusal. */
static enum sow_status play(struct ogn_game *g, sow_move m, const char *written, char *msg,
                            size_t msglen)
{
    const sow_position before = *ogn_last(g), *p = &before; /* the array may move */
    int num = g->nply + 1;
    struct sow_movelist ml;
    if (over_reason(g, &ml, msg, msglen, num, written))
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
    enum sow_status st = play(g, m, name, msg, sizeof msg);
    if (st != SOW_OK)
        return sow_fail(e, st, "%s", msg);
    return SOW_OK;
}

/* The FEN of p: Aualé's form for oware, sow's token for the others. */
static void fen_of(const struct ruleset *rs, const sow_position *p, char *buf, size_t len)
{
    if (!letters(rs) || p->state != SOW_STATE_NONE) {
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
    enum sow_status st = ogn_set_tag(g, "Variant", letters(rs) ? "Oware Abapa" : rs->name);
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

/* ---- reading ------------------------------------------------------------------ */

struct rd {
    const char *s;
    size_t n, i;
    int line, col;
};

static int peek(const struct rd *r)
{
    return r->i < r->n ? (unsigned char)r->s[r->i] : -1;
}

static void adv(struct rd *r)
{
    if (r->i >= r->n)
        return;
    if (r->s[r->i] == '\n') {
        r->line++;
        r->col = 1;
    } else {
        r->col++;
    }
    r->i++;
}

static void skip_ws(struct rd *r)
{
    while (is_ws(peek(r)))
        adv(r);
}

struct where {
    int line, col;
};

static struct where here(const struct rd *r)
{
    return (struct where){r->line, r->col};
}

static enum sow_status bad(struct sow_error *e, struct where w, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static enum sow_status bad(struct sow_error *e, struct where w, const char *fmt, ...)
{
    char msg[SOW_ERROR_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sow_fail(e, SOW_E_INPUT, "%d:%d: %s", w.line, w.col, msg);
}

static enum sow_status read_tag(struct rd *r, struct ogn_game *g, struct where *vpos,
                                struct sow_error *e)
{
    struct where open = here(r);
    adv(r); /* '[' */
    skip_ws(r);
    size_t n0 = r->i;
    struct where nat = here(r);
    while (peek(r) >= 0 && (isalnum(peek(r)) || peek(r) == '_'))
        adv(r);
    if (r->i == n0)
        return bad(e, nat, "tag: expected a name after '['");
    char name[64];
    if (r->i - n0 >= sizeof name)
        return bad(e, nat, "tag: the name is longer than %zu characters", sizeof name - 1);
    memcpy(name, r->s + n0, r->i - n0);
    name[r->i - n0] = 0;
    size_t before = r->i;
    skip_ws(r);
    if (peek(r) != '"')
        return bad(e, here(r), "tag %s: expected a quoted value", name);
    if (r->i == before)
        return bad(e, here(r), "tag %s: expected a space before the value", name);
    struct where q = here(r);
    adv(r);
    *vpos = here(r);
    char *v = malloc(r->n - r->i + 1);
    if (!v)
        return sow_fail(e, SOW_E_NOMEM, "out of memory");
    size_t o = 0;
    for (;;) {
        int c = peek(r);
        if (c < 0 || c == '\n' || c == '\r') {
            free(v);
            return bad(e, q, "tag %s: value not closed", name);
        }
        if (c == '"')
            break;
        if (c == '\\') {
            struct where bs = here(r);
            adv(r);
            int d = peek(r);
            if (d != '"' && d != '\\') {
                free(v);
                if (d < 0 || is_ctl(d))
                    return bad(e, bs, "tag %s: bad escape (only \\\" and \\\\)", name);
                return bad(e, bs, "tag %s: bad escape '\\%c' (only \\\" and \\\\)", name, d);
            }
            v[o++] = (char)d;
            adv(r);
            continue;
        }
        if (is_ctl(c)) {
            free(v);
            return bad(e, here(r), "tag %s: control character in the value", name);
        }
        v[o++] = (char)c;
        adv(r);
    }
    v[o] = 0;
    adv(r); /* '"' */
    skip_ws(r);
    if (peek(r) != ']') {
        free(v);
        return bad(e, here(r), "tag %s: expected ']'", name);
    }
    adv(r);
    if (ogn_tag(g, name)) {
        free(v);
        return bad(e, open, "tag %s given twice", name);
    }
    enum sow_status st = ogn_set_tag(g, name, v);
    free(v);
    if (st)
        return sow_fail(e, st, "out of memory");
    return SOW_OK;
}

static int tag_index(const struct ogn_game *g, const char *name)
{
    for (int i = 0; i < g->ntags; i++)
        if (strcmp(g->tags[i].name, name) == 0)
            return i;
    return -1;
}

/* Aualé's FEN "h1-...-h2N-SA-SB-S" as sow's token, for pits holes a side
 * (pits 0: counted here, into *pits).  false and a reason if malformed. */
static bool aule_fen(const char *f, int *pits, char *tok, size_t len, char *why, size_t wlen)
{
    long v[2 * SOW_MAX_PITS + 2];
    int nv = 0;
    const char *c = f;
    for (;;) {
        const char *end = strchr(c, '-');
        size_t fl = end ? (size_t)(end - c) : strlen(c);
        if (!end) { /* the last field: the side to move */
            if (fl != 1 || (c[0] != 'S' && c[0] != 'N')) {
                snprintf(why, wlen, "expected 2N hole counts, two stores and S or N, separated "
                                    "by '-' (or a position token A1,...,AN/B1,...,BN/SIDE)");
                return false;
            }
            break;
        }
        bool digits = fl > 0 && fl <= 5;
        for (size_t i = 0; i < fl && digits; i++)
            digits = isdigit((unsigned char)c[i]);
        if (!digits) {
            snprintf(why, wlen, "field %d '%.*s': expected a number", nv + 1,
                     (int)(fl > 8 ? 8 : fl), c);
            return false;
        }
        if (nv == 2 * SOW_MAX_PITS + 2) {
            snprintf(why, wlen, "more than %d holes", 2 * SOW_MAX_PITS);
            return false;
        }
        v[nv++] = strtol(c, NULL, 10);
        c = end + 1;
    }
    int holes = nv - 2;
    if (holes < 2 || holes % 2) {
        snprintf(why, wlen, "expected 2N hole counts, two stores and S or N, separated by '-' "
                            "(or a position token A1,...,AN/B1,...,BN/SIDE)");
        return false;
    }
    if (*pits && holes != 2 * *pits) {
        snprintf(why, wlen, "%d holes, but the board has %d", holes, 2 * *pits);
        return false;
    }
    *pits = holes / 2;
    size_t o = 0;
    for (int i = 0; i < holes && o < len; i++)
        o += (size_t)snprintf(tok + o, len - o, "%s%ld", i == 0 ? "" : i == holes / 2 ? "/" : ",",
                              v[i]);
    if (o < len)
        snprintf(tok + o, len - o, "/%c/%ld-%ld", c[0] == 'S' ? 'A' : 'B', v[holes], v[holes + 1]);
    return true;
}

/* The known tags into g->rs and g->start. */
static enum sow_status setup_rules(struct ogn_game *g, const struct where *vpos,
                                   struct sow_error *e)
{
    int iv = tag_index(g, "Variant"), ib = tag_index(g, "Board"), is = tag_index(g, "Seeds"),
        ifen = tag_index(g, "FEN"), ir = tag_index(g, "Result");
    char name[48] = "oware";
    struct sow_error re;
    struct ruleset any;
    if (iv >= 0) {
        const char *v = g->tags[iv].value;
        size_t n = strlen(v);
        if (n >= sizeof name)
            n = sizeof name - 1;
        for (size_t i = 0; i < n; i++)
            name[i] = (char)tolower((unsigned char)v[i]);
        name[n] = 0;
        if (strcmp(name, "oware abapa") == 0)
            snprintf(name, sizeof name, "oware");
        if (rules_init(&any, name, 0, -1, &re) != SOW_OK)
            return bad(e, vpos[iv], "Variant: %s", re.msg);
    }
    long pits = 0, seeds = 4;
    if (ib >= 0) {
        const char *v = g->tags[ib].value;
        char *end;
        if (v[0] != '2' || v[1] != 'x' || !isdigit((unsigned char)v[2]) ||
            (pits = strtol(v + 2, &end, 10)) < 1 || pits > SOW_MAX_PITS || *end)
            return bad(e, vpos[ib], "Board '%s': expected 2xN, N holes a side in 1..%d", v,
                       SOW_MAX_PITS);
    }
    if (is >= 0) {
        const char *v = g->tags[is].value;
        char *end;
        if (!isdigit((unsigned char)v[0]) || (seeds = strtol(v, &end, 10)) > SOW_MAX_SEEDS ||
            *end)
            return bad(e, vpos[is], "Seeds '%s': expected a whole number in 0..%d", v,
                       SOW_MAX_SEEDS);
    }
    char tok[SOW_POS_MAXLEN + 64];
    const char *fen = ifen >= 0 ? g->tags[ifen].value : NULL;
    if (fen) {
        int fp = (int)pits;
        if (strlen(fen) >= SOW_POS_MAXLEN)
            return bad(e, vpos[ifen], "FEN: longer than %d characters", SOW_POS_MAXLEN - 1);
        if (strchr(fen, '/')) {
            if (pos_token_pits(fen, &fp, &re) != SOW_OK)
                return bad(e, vpos[ifen], "FEN: %s", re.msg);
            if (pits && fp != pits)
                return bad(e, vpos[ifen], "FEN: %d holes a side, but Board is 2x%ld", fp, pits);
            snprintf(tok, sizeof tok, "%s", fen);
        } else {
            char why[200];
            if (!aule_fen(fen, &fp, tok, sizeof tok, why, sizeof why))
                return bad(e, vpos[ifen], "FEN: %s", why);
        }
        pits = fp;
    }
    if (rules_init(&g->rs, name, (int)pits, (int)seeds, &re) != SOW_OK) {
        struct where w = is >= 0 ? vpos[is] : ib >= 0 ? vpos[ib] : iv >= 0 ? vpos[iv] : vpos[ifen];
        return bad(e, w, "Board 2x%d, Seeds %ld: %s", pits ? (int)pits : 6, seeds, re.msg);
    }
    g->start = rules_start(&g->rs);
    if (fen && pos_parse(&g->rs, tok, &g->start, &re) != SOW_OK)
        return bad(e, vpos[ifen], "FEN: %s", re.msg);
    if (ir >= 0) {
        const char *v = g->tags[ir].value;
        int sc2[2];
        if (strcmp(v, "*") != 0 && !parse_score(v, sc2))
            return bad(e, vpos[ir], "Result '%s': expected * or a score like 25-23", v);
    }
    return SOW_OK;
}

/* A move token "C", "f+2", "3A+4?", "2A+3A": name, capture (x2, -1 if none)
 * and mark; then played.  The token is tok[0..n). */
static enum sow_status read_move(struct ogn_game *g, const char *tok, size_t n, struct where w,
                                 struct sow_error *e)
{
    int num = g->nply + 1;
    char written[64];
    snprintf(written, sizeof written, "%.*s%s", (int)(n > 40 ? 40 : n), tok, n > 40 ? "..." : "");
    size_t end = n, m0;
    while (end > 0 && (tok[end - 1] == '!' || tok[end - 1] == '?'))
        end--;
    char mark[3] = "";
    m0 = end;
    if (n - m0 > 2)
        return bad(e, w, "move %d '%s': a mark is one of ! ? !! ?? !? ?!", num, written);
    memcpy(mark, tok + m0, n - m0);
    mark[n - m0] = 0;
    int cap2 = -1;
    for (size_t i = end; i-- > 0;) {
        if (tok[i] == '+') {
            int c2 = parse_half(tok + i + 1, end - i - 1);
            if (c2 >= 0) {
                cap2 = c2;
                end = i;
            }
            break;
        }
    }
    char name[32];
    if (end == 0 || end >= sizeof name)
        return bad(e, w, "move %d '%s': expected a move", num, written);
    memcpy(name, tok, end);
    name[end] = 0;
    const sow_position *p = ogn_last(g);
    const char *turn = p->side == SOW_A ? "A's (South's)" : "B's (North's)";
    char msg[SOW_ERROR_MSG];
    struct sow_movelist ml;
    if (over_reason(g, &ml, msg, sizeof msg, num, written))
        return bad(e, w, "%s", msg);
    sow_move m;
    if (letters(&g->rs) && end == 1 && isalpha((unsigned char)name[0])) {
        int c = (unsigned char)name[0];
        int side = isupper(c) ? SOW_A : SOW_B;
        int k = tolower(c) - 'a';
        if (k >= g->rs.pits)
            return bad(e, w, "move %d '%s': not a hole of %s 2x%d (A..%c, a..%c)", num, written,
                       g->rs.name, g->rs.pits, 'A' + g->rs.pits - 1, 'a' + g->rs.pits - 1);
        if (side != p->side)
            return bad(e, w, "move %d '%s': it is %s turn", num, written, turn);
        m = (sow_move)k;
    } else {
        struct sow_error me;
        if (move_parse(&g->rs, p, name, &m, &me) != SOW_OK) {
            /* move_parse's message starts "move 'X': " */
            const char *why = strstr(me.msg, "': ");
            why = why ? why + 3 : me.msg;
            if (strstr(why, "turn"))
                return bad(e, w, "move %d '%s': it is %s turn", num, written, turn);
            if (letters(&g->rs))
                return bad(e, w, "move %d '%s': expected a hole A..%c (South), a..%c (North)",
                           num, written, 'A' + g->rs.pits - 1, 'a' + g->rs.pits - 1);
            return bad(e, w, "move %d '%s': %s", num, written, why);
        }
    }
    enum sow_status st = play(g, m, written, msg, sizeof msg);
    if (st == SOW_E_NOMEM)
        return sow_fail(e, st, "out of memory");
    if (st)
        return bad(e, w, "%s", msg);
    struct ogn_ply *y = &g->ply[g->nply - 1];
    if (cap2 >= 0 && cap2 != y->gain2 && cap2 != 2 * y->captured[y->mover]) {
        char a[16], b[16];
        fmt_half(a, sizeof a, y->gain2);
        fmt_half(b, sizeof b, cap2);
        return bad(e, w, "move %d '%s': captures %s, not %s", num, written, a, b);
    }
    memcpy(y->mark, mark, sizeof mark);
    return SOW_OK;
}

/* Does the result text r agree with the moves?  NULL, or why not. */
static const char *check_result(const struct ogn_game *g, const char *r, char *buf, size_t len)
{
    int want2[2], got2[2] = {-1, -1};
    if (strcmp(r, "*") == 0)
        return NULL;
    parse_score(r, got2);
    if (!result2(g, want2))
        return "the game is not finished (*)";
    if (want2[0] != got2[0] || want2[1] != got2[1]) {
        char w[32];
        ogn_result(g, w, sizeof w);
        snprintf(buf, len, "the moves give %s", w);
        return buf;
    }
    return NULL;
}

static enum sow_status parse(struct rd *r, struct ogn_game *g, struct sow_error *e)
{
    /* a byte-order mark */
    if (r->n >= 3 && memcmp(r->s, "\xEF\xBB\xBF", 3) == 0)
        r->i = 3;
    /* tags */
    struct where *vpos = NULL;
    int vcap = 0;
    enum sow_status st = SOW_OK;
    for (;;) {
        skip_ws(r);
        if (peek(r) != '[')
            break;
        if (g->ntags == vcap) {
            vcap = vcap ? 2 * vcap : 16;
            struct where *a = realloc(vpos, sizeof *a * (size_t)vcap);
            if (!a) {
                free(vpos);
                return sow_fail(e, SOW_E_NOMEM, "out of memory");
            }
            vpos = a;
        }
        struct where v;
        st = read_tag(r, g, &v, e);
        if (st) {
            free(vpos);
            return st;
        }
        vpos[g->ntags - 1] = v;
    }
    st = setup_rules(g, vpos, e);
    struct where rtag = {0, 0};
    int ir = tag_index(g, "Result");
    if (ir >= 0)
        rtag = vpos[ir];
    free(vpos);
    if (st)
        return st;

    /* move text */
    bool number = false, have_result = false;
    struct where nat = {0, 0}, resat = {0, 0};
    char result[40] = "";
    int numval = 0;
    for (;;) {
        skip_ws(r);
        int c = peek(r);
        if (c < 0)
            break;
        struct where w = here(r);
        if (have_result)
            return bad(e, w, "nothing may follow the result");
        if (c == '{') {
            adv(r);
            size_t t0 = r->i;
            while (peek(r) >= 0 && peek(r) != '}') {
                int d = peek(r);
                if (is_ctl(d) && !is_ws(d))
                    return bad(e, here(r), "control character in a comment");
                adv(r);
            }
            if (peek(r) < 0)
                return bad(e, w, "comment not closed");
            st = add_note_n(g, g->nply, r->s + t0, r->i - t0);
            if (st)
                return sow_fail(e, st, "out of memory");
            adv(r);
            continue;
        }
        if (c == '(')
            return bad(e, w, "variations are not read");
        if (c == '[')
            return bad(e, w, "a tag after the move text");
        if (c == ';')
            return bad(e, w, "';' comments are not read (use { })");
        if (c == '$')
            return bad(e, w, "'$' annotations are not read");
        size_t t0 = r->i;
        while (peek(r) >= 0 && !is_ws(peek(r)) && peek(r) != '{' && peek(r) != '(')
            adv(r);
        const char *tok = r->s + t0;
        size_t n = r->i - t0;
        size_t d = 0;
        while (d < n && isdigit((unsigned char)tok[d]))
            d++;
        if (d > 0 && d < n && tok[d] == '.') {
            size_t k = d;
            while (k < n && tok[k] == '.')
                k++;
            if (k == n || !isdigit((unsigned char)tok[k])) { /* a move number */
                long v = d > 6 ? 1000000 : strtol(tok, NULL, 10);
                int want = g->nply / 2 + 1;
                if (number)
                    return bad(e, nat, "move number %d without a move", numval);
                if (v != want)
                    return bad(e, w, "move number %ld where %d was expected", v, want);
                number = true;
                nat = w;
                numval = (int)v;
                if (k == n)
                    continue;
                /* "1.C": the move follows without a space */
                tok += k;
                n -= k;
                w.col += (int)k;
                for (d = 0; d < n && isdigit((unsigned char)tok[d]);)
                    d++;
            }
        }
        char tb[40];
        snprintf(tb, sizeof tb, "%.*s", (int)(n < sizeof tb ? n : sizeof tb - 1), tok);
        int sc2[2];
        if ((n == 1 && tok[0] == '*') ||
            (n < sizeof tb && strchr(tb, '-') && d > 0 && parse_score(tb, sc2))) {
            if (number)
                return bad(e, nat, "move number %d without a move", numval);
            have_result = true;
            resat = w;
            snprintf(result, sizeof result, "%s", tb);
            continue;
        }
        number = false;
        for (size_t i = 0; i < n; i++)
            if (is_ctl((unsigned char)tok[i]))
                return bad(e, w, "control character in the move text");
        st = read_move(g, tok, n, w, e);
        if (st)
            return st;
    }
    if (number)
        return bad(e, nat, "move number %d without a move", numval);

    /* the result */
    char why[64];
    const char *rt = ogn_tag(g, "Result");
    const char *no;
    if (rt && (no = check_result(g, rt, why, sizeof why)))
        return bad(e, rtag, "Result '%s': %s", rt, no);
    if (have_result && (no = check_result(g, result, why, sizeof why)))
        return bad(e, resat, "result '%s': %s", result, no);
    if (have_result && rt) {
        int a2[2] = {-1, -1}, b2[2] = {-1, -1};
        bool star_a = strcmp(rt, "*") == 0, star_b = strcmp(result, "*") == 0;
        if (!star_a)
            parse_score(rt, a2);
        if (!star_b)
            parse_score(result, b2);
        if (star_a != star_b || a2[0] != b2[0] || a2[1] != b2[1])
            return bad(e, resat, "result '%s' disagrees with the Result tag '%s'", result, rt);
    }
    snprintf(g->result, sizeof g->result, "%s", rt ? rt : have_result ? result : "*");
    return SOW_OK;
}

enum sow_status ogn_parse(const char *text, size_t len, struct ogn_game **out,
                          struct sow_error *e)
{
    if (len > OGN_MAX_TEXT)
        return sow_fail(e, SOW_E_INPUT, "1:1: the record is longer than %d bytes", OGN_MAX_TEXT);
    for (size_t i = 0; i < len; i++)
        if (text[i] == 0) {
            struct rd r = {text, i, 0, 1, 1};
            while (r.i < i)
                adv(&r);
            return bad(e, here(&r), "a NUL byte in the record");
        }
    struct ogn_game *g = calloc(1, sizeof *g);
    if (!g)
        return sow_fail(e, SOW_E_NOMEM, "out of memory");
    struct rd r = {text, len, 0, 1, 1};
    enum sow_status st = parse(&r, g, e);
    if (st) {
        ogn_free(g);
        return st;
    }
    *out = g;
    return SOW_OK;
}

/* ---- writing ------------------------------------------------------------------ */

struct wr {
    char *s;
    size_t len, cap;
    size_t line0; /* where the current move-text line starts */
    bool oom;
};

static void put(struct wr *w, const char *s, size_t n)
{
    if (w->oom)
        return;
    if (w->len + n + 1 > w->cap) {
        size_t cap = w->cap ? w->cap : 1024;
        while (cap < w->len + n + 1)
            cap *= 2;
        char *a = realloc(w->s, cap);
        if (!a) {
            w->oom = true;
            return;
        }
        w->s = a;
        w->cap = cap;
    }
    memcpy(w->s + w->len, s, n);
    w->len += n;
    w->s[w->len] = 0;
}

static void puts_(struct wr *w, const char *s)
{
    put(w, s, strlen(s));
}

/* One move-text token: on this line while the line stays under 80 columns
 * (Aualé's rule), else on the next. */
static void token(struct wr *w, const char *t, size_t n)
{
    size_t cur = w->len - w->line0;
    if (cur > 0 && cur + 1 + n < 80) {
        put(w, " ", 1);
    } else if (cur > 0) {
        put(w, "\n", 1);
        w->line0 = w->len;
    }
    put(w, t, n);
}

static void tokens_of_note(struct wr *w, const char *text)
{
    token(w, "{", 1);
    const char *s = text;
    while (*s) {
        const char *sp = strchr(s, ' ');
        size_t n = sp ? (size_t)(sp - s) : strlen(s);
        token(w, s, n);
        s += n;
        if (*s == ' ')
            s++;
    }
    token(w, "}", 1);
}

char *ogn_format(const struct ogn_game *g, size_t *len)
{
    struct wr w = {0};
    for (int i = 0; i < g->ntags; i++) {
        puts_(&w, "[");
        puts_(&w, g->tags[i].name);
        puts_(&w, " \"");
        for (const char *c = g->tags[i].value; *c; c++) {
            if (*c == '"' || *c == '\\')
                put(&w, "\\", 1);
            put(&w, c, 1);
        }
        puts_(&w, "\"]\n");
    }
    bool text = g->nply > 0 || g->nnotes > 0 || strcmp(g->result, "*") != 0;
    if (text) {
        if (g->ntags)
            puts_(&w, "\n");
        w.line0 = w.len;
        int k = 0;
        for (; k < g->nnotes && g->notes[k].ply == 0; k++)
            tokens_of_note(&w, g->notes[k].text);
        for (int i = 0; i < g->nply; i++) {
            char t[64], mv[SOW_MOVE_MAXLEN];
            if (i % 2 == 0) {
                snprintf(t, sizeof t, "%d.", i / 2 + 1);
                token(&w, t, strlen(t));
            }
            ogn_move_name(g, i, mv, sizeof mv);
            char cap[24] = "";
            if (g->ply[i].gain2 > 0) {
                cap[0] = '+';
                fmt_half(cap + 1, sizeof cap - 1, g->ply[i].gain2);
            }
            snprintf(t, sizeof t, "%s%s%s", mv, cap, g->ply[i].mark);
            token(&w, t, strlen(t));
            for (; k < g->nnotes && g->notes[k].ply == i + 1; k++)
                tokens_of_note(&w, g->notes[k].text);
        }
        for (; k < g->nnotes; k++) /* past the moves: kept with the last */
            tokens_of_note(&w, g->notes[k].text);
        if (strcmp(g->result, "*") != 0)
            token(&w, g->result, strlen(g->result));
        puts_(&w, "\n");
    }
    if (!w.s && !w.oom)
        puts_(&w, "");
    if (w.oom) {
        free(w.s);
        return NULL;
    }
    if (len)
        *len = w.len;
    return w.s;
}
