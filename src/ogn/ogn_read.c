/* OGN game records (ogn.h, docs/ogn.md): a record's text read.  A cursor
 * over the text that counts lines and columns for the messages (struct rd),
 * and the parser, in the record's order: the tags (the rule set and start
 * position they give), the move text (comments, move numbers, moves played
 * as ogn.c plays them), the result. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ogn/ogn_internal.h"
#include "sow/position.h"

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

/* The cursor: the text s[0..n), at byte i, which stands at line:col (both
 * from 1; the column in bytes). */
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
    while (ogn_is_ws(peek(r)))
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
    if (ogn_over_reason(g, &ml, msg, sizeof msg, num, written))
        return bad(e, w, "%s", msg);
    sow_move m;
    if (ogn_letters(&g->rs) && end == 1 && isalpha((unsigned char)name[0])) {
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
            if (ogn_letters(&g->rs))
                return bad(e, w, "move %d '%s': expected a hole A..%c (South), a..%c (North)",
                           num, written, 'A' + g->rs.pits - 1, 'a' + g->rs.pits - 1);
            return bad(e, w, "move %d '%s': %s", num, written, why);
        }
    }
    enum sow_status st = ogn_play_as(g, m, written, msg, sizeof msg);
    if (st == SOW_E_NOMEM)
        return sow_fail(e, st, "out of memory");
    if (st)
        return bad(e, w, "%s", msg);
    struct ogn_ply *y = &g->ply[g->nply - 1];
    if (cap2 >= 0 && cap2 != y->gain2 && cap2 != 2 * y->captured[y->mover]) {
        char a[16], b[16];
        ogn_fmt_half(a, sizeof a, y->gain2);
        ogn_fmt_half(b, sizeof b, cap2);
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
    if (!ogn_result2(g, want2))
        return "the game is not finished (*)";
    if (want2[0] != got2[0] || want2[1] != got2[1]) {
        char w[32];
        ogn_result(g, w, sizeof w);
        snprintf(buf, len, "the moves give %s", w);
        return buf;
    }
    return NULL;
}

/* The tags (r past a byte-order mark, if any), then the rule set and
 * start position they give (setup_rules); *rtag: where the Result tag's
 * value stands, if there is one. */
static enum sow_status read_tags(struct rd *r, struct ogn_game *g, struct where *rtag,
                                 struct sow_error *e)
{
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
    int ir = tag_index(g, "Result");
    if (ir >= 0)
        *rtag = vpos[ir];
    free(vpos);
    return st;
}

/* What the move text has read so far, beyond the game's moves: a move
 * number not yet followed by its move (its value numval, at nat), and the
 * result token (its text, at resat), after which nothing may come. */
struct mtext {
    bool number, have_result;
    struct where nat, resat;
    char result[40];
    int numval;
};

/* A comment "{ ... }" at w (r on its '{'): a note after the moves so far. */
static enum sow_status read_comment(struct rd *r, struct ogn_game *g, struct where w,
                                    struct sow_error *e)
{
    adv(r);
    size_t t0 = r->i;
    while (peek(r) >= 0 && peek(r) != '}') {
        int d = peek(r);
        if (is_ctl(d) && !ogn_is_ws(d))
            return bad(e, here(r), "control character in a comment");
        adv(r);
    }
    if (peek(r) < 0)
        return bad(e, w, "comment not closed");
    enum sow_status st = ogn_add_note_n(g, g->nply, r->s + t0, r->i - t0);
    if (st)
        return sow_fail(e, st, "out of memory");
    adv(r);
    return SOW_OK;
}

/* The move number tok[0..d) (its digits) at w: the one the moves so far
 * call for, and not a second one before their move. */
static enum sow_status move_number(const struct ogn_game *g, struct mtext *m, const char *tok,
                                   size_t d, struct where w, struct sow_error *e)
{
    long v = d > 6 ? 1000000 : strtol(tok, NULL, 10);
    int want = g->nply / 2 + 1;
    if (m->number)
        return bad(e, m->nat, "move number %d without a move", m->numval);
    if (v != want)
        return bad(e, w, "move number %ld where %d was expected", v, want);
    m->number = true;
    m->nat = w;
    m->numval = (int)v;
    return SOW_OK;
}

/* One token of the move text at w (r on it): a move number ("12." or
 * "12...", its move may follow without a space: "1.C"), the result ("*"
 * or a score) or a move, played. */
static enum sow_status read_token(struct rd *r, struct ogn_game *g, struct mtext *m,
                                  struct where w, struct sow_error *e)
{
    size_t t0 = r->i;
    while (peek(r) >= 0 && !ogn_is_ws(peek(r)) && peek(r) != '{' && peek(r) != '(')
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
            enum sow_status st = move_number(g, m, tok, d, w, e);
            if (st || k == n)
                return st;
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
        if (m->number)
            return bad(e, m->nat, "move number %d without a move", m->numval);
        m->have_result = true;
        m->resat = w;
        snprintf(m->result, sizeof m->result, "%s", tb);
        return SOW_OK;
    }
    m->number = false;
    for (size_t i = 0; i < n; i++)
        if (is_ctl((unsigned char)tok[i]))
            return bad(e, w, "control character in the move text");
    return read_move(g, tok, n, w, e);
}

/* The move text, after the tags: comments, move numbers and moves, and
 * at its end the result; what sow does not read refused. */
static enum sow_status read_move_text(struct rd *r, struct ogn_game *g, struct mtext *m,
                                      struct sow_error *e)
{
    for (;;) {
        skip_ws(r);
        int c = peek(r);
        if (c < 0)
            break;
        struct where w = here(r);
        if (m->have_result)
            return bad(e, w, "nothing may follow the result");
        if (c == '(')
            return bad(e, w, "variations are not read");
        if (c == '[')
            return bad(e, w, "a tag after the move text");
        if (c == ';')
            return bad(e, w, "';' comments are not read (use { })");
        if (c == '$')
            return bad(e, w, "'$' annotations are not read");
        enum sow_status st = c == '{' ? read_comment(r, g, w, e) : read_token(r, g, m, w, e);
        if (st)
            return st;
    }
    if (m->number)
        return bad(e, m->nat, "move number %d without a move", m->numval);
    return SOW_OK;
}

/* The result: the Result tag's (at rtag) and the move text's agree with the
 * moves and with each other; the game's result is the tag's, else the move
 * text's, else "*". */
static enum sow_status set_result(struct ogn_game *g, struct where rtag, const struct mtext *m,
                                  struct sow_error *e)
{
    char why[64];
    const char *rt = ogn_tag(g, "Result");
    const char *no;
    if (rt && (no = check_result(g, rt, why, sizeof why)))
        return bad(e, rtag, "Result '%s': %s", rt, no);
    if (m->have_result && (no = check_result(g, m->result, why, sizeof why)))
        return bad(e, m->resat, "result '%s': %s", m->result, no);
    if (m->have_result && rt) {
        int a2[2] = {-1, -1}, b2[2] = {-1, -1};
        bool star_a = strcmp(rt, "*") == 0, star_b = strcmp(m->result, "*") == 0;
        if (!star_a)
            parse_score(rt, a2);
        if (!star_b)
            parse_score(m->result, b2);
        if (star_a != star_b || a2[0] != b2[0] || a2[1] != b2[1])
            return bad(e, m->resat, "result '%s' disagrees with the Result tag '%s'", m->result,
                       rt);
    }
    /* cut to what g->result holds (a score with many leading zeros is longer) */
    snprintf(g->result, sizeof g->result, "%.*s", (int)sizeof g->result - 1,
             rt ? rt : m->have_result ? m->result : "*");
    return SOW_OK;
}

static enum sow_status parse(struct rd *r, struct ogn_game *g, struct sow_error *e)
{
    /* a byte-order mark */
    if (r->n >= 3 && memcmp(r->s, "\xEF\xBB\xBF", 3) == 0)
        r->i = 3;
    struct where rtag = {0, 0};
    struct mtext m = {0};
    enum sow_status st = read_tags(r, g, &rtag, e);
    st = st ? st : read_move_text(r, g, &m, e);
    return st ? st : set_result(g, rtag, &m, e);
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
