/* libFuzzer target: the OGN record reader (ogn_parse) on arbitrary text.
 *
 * The input is the record.  Invariants:
 *  - rejected: bad input (SOW_E_INPUT) with one line "LINE:COL: what",
 *    and LINE:COL a place in the text (or just past its end);
 *  - accepted: every move is the one the rules make from the position
 *    before it (rules_generate + rules_find_move: same child position,
 *    captures and mover), every move but the last gains its mover exactly
 *    its captures, and the result is "*" or "A-B";
 *  - written back (ogn_format) and read again, the record is the same
 *    (tags, moves and their positions, comments, result), and writing that
 *    gives the same bytes (docs/ogn.md "Writing").
 *
 * Relay records of more than FUZZ_RELAY_SEEDS seeds are skipped (their
 * sowings may take seconds to prove endless); relay_too_big reads the tags
 * that size a record as the reader does, closely enough for a bound. */
#include <ctype.h>

#include "fuzz_common.h"
#include "ogn/ogn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The value of tag `name` ("[Name  "value"]", no escapes), or NULL. */
static const char *tag_value(const char *s, const char *name, char *buf, size_t len)
{
    size_t nl = strlen(name);
    for (const char *p = strchr(s, '['); p; p = strchr(p + 1, '[')) {
        const char *q = p + 1;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, name, nl) != 0 || isalnum((unsigned char)q[nl]) || q[nl] == '_')
            continue;
        q += nl;
        while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n')
            q++;
        if (*q != '"')
            continue;
        size_t o = 0;
        for (q++; *q && *q != '"' && o + 1 < len; q++)
            buf[o++] = *q;
        buf[o] = 0;
        return buf;
    }
    return NULL;
}

/* Whether the record names a relay rule set and may hold more than
 * FUZZ_RELAY_SEEDS seeds (each tag's first occurrence; a FEN counted as
 * the sum of every number in it, stores included). */
static bool relay_too_big(const char *s)
{
    char v[256];
    struct ruleset rs;
    struct sow_error e;
    const char *var = tag_value(s, "Variant", v, sizeof v);
    char name[64] = "oware";
    if (var) {
        size_t n = strlen(var) < sizeof name - 1 ? strlen(var) : sizeof name - 1;
        for (size_t i = 0; i < n; i++)
            name[i] = (char)tolower((unsigned char)var[i]);
        name[n] = 0;
    }
    if (rules_init(&rs, name, 0, -1, &e) != SOW_OK || !rs.relay)
        return false;
    long total = 0;
    if (tag_value(s, "FEN", v, sizeof v)) {
        for (const char *p = v; *p && total <= FUZZ_RELAY_SEEDS;)
            if (isdigit((unsigned char)*p)) {
                long x = strtol(p, (char **)&p, 10);
                total += x > FUZZ_RELAY_SEEDS ? FUZZ_RELAY_SEEDS + 1 : x;
            } else {
                p++;
            }
        return total > FUZZ_RELAY_SEEDS;
    }
    long pits = 6, seeds = 4;
    if (tag_value(s, "Board", v, sizeof v) && v[0] == '2' && v[1] == 'x')
        pits = strtol(v + 2, NULL, 10);
    if (tag_value(s, "Seeds", v, sizeof v))
        seeds = strtol(v, NULL, 10);
    if (pits < 0 || seeds < 0 || pits > 1000 || seeds > 1000)
        return true; /* refused by the reader, or too big: either way not wanted */
    return 2 * pits * seeds > FUZZ_RELAY_SEEDS;
}

/* A rejection's "LINE:COL: " names a place in text[0..n). */
static void check_place(const char *text, size_t n, const char *msg)
{
    int line, col, used = 0;
    if (sscanf(msg, "%d:%d: %n", &line, &col, &used) != 2 || used == 0)
        fuzz_fail("rejected without LINE:COL: '%s'", msg);
    int l = 1;
    size_t i = 0;
    while (l < line && i < n)
        if (text[i++] == '\n')
            l++;
    size_t width = 0;
    while (i + width < n && text[i + width] != '\n')
        width++;
    if (line < 1 || l != line || col < 1 || (size_t)col > width + 1)
        fuzz_fail("'%s': no such place (line %d is %zu bytes)", msg, l, width);
}

static void check_moves(const struct ogn_game *g)
{
    for (int i = 0; i < g->nply; i++) {
        const sow_position *p = ogn_before(g, i);
        const struct ogn_ply *y = &g->ply[i];
        struct sow_movelist ml;
        rules_generate(&g->rs, p, &ml);
        int k = rules_find_move(&ml, y->move);
        if (k < 0)
            fuzz_fail("%s: move %d (%d) accepted but not legal", g->rs.name, i + 1, y->move);
        const struct sow_child *c = &ml.c[k];
        if (memcmp(&c->pos, &y->pos, sizeof c->pos) != 0 || c->captured[0] != y->captured[0] ||
            c->captured[1] != y->captured[1] || y->mover != p->side)
            fuzz_fail("%s: move %d is not what the rules make of it", g->rs.name, i + 1);
        if (i + 1 < g->nply && y->gain2 != 2 * y->captured[y->mover])
            fuzz_fail("%s: move %d gains %d/2 but captures %d", g->rs.name, i + 1, y->gain2,
                      y->captured[y->mover]);
    }
    const char *r = g->result;
    if (strcmp(r, "*") != 0) {
        int used = 0;
        double a, b;
        if (sscanf(r, "%lf-%lf%n", &a, &b, &used) != 2 || (size_t)used != strlen(r))
            fuzz_fail("%s: result '%s'", g->rs.name, r);
    }
}

static void same_record(const struct ogn_game *a, const struct ogn_game *b)
{
    if (strcmp(a->rs.name, b->rs.name) != 0 || a->rs.pits != b->rs.pits ||
        memcmp(&a->start, &b->start, sizeof a->start) != 0)
        fuzz_fail("read back: rule set or start differs (%s, %s)", a->rs.name, b->rs.name);
    if (a->ntags != b->ntags || a->nply != b->nply || a->nnotes != b->nnotes ||
        a->end != b->end || strcmp(a->result, b->result) != 0)
        fuzz_fail("read back: %d tags %d moves %d comments %d end '%s', then %d %d %d %d '%s'",
                  a->ntags, a->nply, a->nnotes, (int)a->end, a->result, b->ntags, b->nply,
                  b->nnotes, (int)b->end, b->result);
    for (int i = 0; i < a->ntags; i++)
        if (strcmp(a->tags[i].name, b->tags[i].name) != 0 ||
            strcmp(a->tags[i].value, b->tags[i].value) != 0)
            fuzz_fail("read back: tag %d [%s \"%s\"] became [%s \"%s\"]", i, a->tags[i].name,
                      a->tags[i].value, b->tags[i].name, b->tags[i].value);
    for (int i = 0; i < a->nply; i++)
        if (a->ply[i].move != b->ply[i].move || a->ply[i].gain2 != b->ply[i].gain2 ||
            strcmp(a->ply[i].mark, b->ply[i].mark) != 0 ||
            memcmp(&a->ply[i].pos, &b->ply[i].pos, sizeof a->ply[i].pos) != 0)
            fuzz_fail("read back: move %d differs", i + 1);
    for (int i = 0; i < a->nnotes; i++)
        if (a->notes[i].ply != b->notes[i].ply || strcmp(a->notes[i].text, b->notes[i].text) != 0)
            fuzz_fail("read back: comment %d '%s' after %d became '%s' after %d", i,
                      a->notes[i].text, a->notes[i].ply, b->notes[i].text, b->notes[i].ply);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    for (size_t i = 0; i < size; i++)
        if (!text[i])
            text[i] = ' '; /* the reader goes on past a NUL: so does the scan */
    if (relay_too_big(text)) {
        free(text);
        return 0;
    }
    struct ogn_game *g = NULL, *h = NULL;
    struct sow_error e;
    fuzz_clear_error(&e);
    enum sow_status st = ogn_parse((const char *)data, size, &g, &e);
    if (st != SOW_OK) {
        fuzz_check_input("ogn_parse", st, &e);
        check_place((const char *)data, size, e.msg);
        free(text);
        return 0;
    }
    check_moves(g);
    size_t n1, n2;
    char *w1 = ogn_format(g, &n1);
    if (!w1)
        abort();
    fuzz_clear_error(&e);
    if (ogn_parse(w1, n1, &h, &e) != SOW_OK)
        fuzz_fail("what sow wrote does not read back: %s\n%s", e.msg, w1);
    same_record(g, h);
    char *w2 = ogn_format(h, &n2);
    if (!w2)
        abort();
    if (n1 != n2 || memcmp(w1, w2, n1) != 0)
        fuzz_fail("written twice, two texts:\n%s\n--\n%s", w1, w2);
    free(w1);
    free(w2);
    ogn_free(g);
    ogn_free(h);
    free(text);
    return 0;
}
