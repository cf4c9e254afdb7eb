/* OGN game records (src/ogn, docs/ogn.md): the records of tests/ogn/good read
 * and written back byte for byte (Aualé's layout), messy spellings of the
 * same game read as the same game, random games of every rule set written,
 * read and written again, and malformed records each refused with its one
 * line and place.  The repetition check of the reader (it stops looking back
 * at the first different store) is checked against the obvious scan of
 * every earlier position.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ogn/ogn.h"
#include "sow/position.h"
#include "sow/rules.h"
#include "util.h"

#define OGN_DIR SOW_TEST_DATA "/../ogn"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    char *buf = malloc(OGN_MAX_TEXT + 1);
    cr_assert(buf);
    size_t n = fread(buf, 1, OGN_MAX_TEXT, f);
    fclose(f);
    buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

static struct ogn_game *parse_ok(const char *text)
{
    struct ogn_game *g = NULL;
    struct sow_error e = {0};
    enum sow_status st = ogn_parse(text, strlen(text), &g, &e);
    cr_assert_eq(st, SOW_OK, "refused: %s\n%s", e.msg, text);
    return g;
}

static char *format_ok(const struct ogn_game *g)
{
    char *s = ogn_format(g, NULL);
    cr_assert(s);
    return s;
}

/* ---- the good records ---------------------------------------------------- */

static void round_trip_file(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/good/%s", OGN_DIR, name);
    char *text = slurp(path, NULL);
    struct ogn_game *g = parse_ok(text);
    char *out = format_ok(g);
    cr_assert_str_eq(out, text, "%s written back differs:\n%s", name, out);
    ogn_free(g);
    free(out);
    free(text);
}

Test(ogn, aule_record_round_trip)
{
    round_trip_file("aule_game.ogn");
}

Test(ogn, aule_record_with_fen_and_end_round_trip)
{
    round_trip_file("aule_end.ogn");
}

Test(ogn, jerin_record_round_trip)
{
    round_trip_file("jerin.ogn");
}

Test(ogn, darra_record_round_trip)
{
    round_trip_file("darra.ogn");
}

Test(ogn, aule_record_contents)
{
    char *text = slurp(OGN_DIR "/good/aule_game.ogn", NULL);
    struct ogn_game *g = parse_ok(text);
    cr_assert_str_eq(g->rs.name, "oware");
    cr_assert_eq(g->rs.pits, 6);
    cr_assert_eq(g->nply, 12);
    cr_assert_str_eq(ogn_tag(g, "South"), "Ann \"the sower\"");
    cr_assert_str_eq(ogn_tag(g, "North"), "Bob \\ co");
    cr_assert_str_eq(g->result, "*");
    /* 4. D a+3: B's move 1B captures 3 (sow play 3A 3B 5A 6B 1A 2B 4A 1B) */
    cr_assert_eq(g->ply[7].move, 0);
    cr_assert_eq(g->ply[7].mover, SOW_B);
    cr_assert_eq(g->ply[7].captured[1], 3);
    cr_assert_eq(g->ply[7].gain2, 6);
    cr_assert_eq(g->nnotes, 1);
    cr_assert_eq(g->notes[0].ply, 8);
    cr_assert_str_eq(g->notes[0].text, "North takes 3 from South's first holes");
    char tok[SOW_POS_MAXLEN];
    pos_format(&g->rs, ogn_last(g), tok, sizeof tok);
    cr_assert_str_eq(tok, "5,3,4,4,6,1/4,5,6,0,2,5/A/0-3/-");
    ogn_free(g);
    free(text);
}

Test(ogn, aule_fen_is_sow_token)
{
    struct ogn_game *a = parse_ok("[FEN \"0-0-0-1-2-0-3-0-0-0-1-0-20-21-N\"]");
    struct ogn_game *b = parse_ok("[FEN \"0,0,0,1,2,0/3,0,0,0,1,0/B/20-21/-\"]");
    cr_assert(rules_same_position(&a->start, &b->start));
    cr_assert_eq(a->start.side, SOW_B);
    cr_assert_eq(a->start.store[0], 20);
    cr_assert_eq(a->start.board.h[6], 3);
    /* written back: Aualé's form for oware */
    struct ogn_game *n = ogn_new(&b->rs, &b->start);
    char *s = format_ok(n);
    cr_assert(strstr(s, "[FEN \"0-0-0-1-2-0-3-0-0-0-1-0-20-21-N\"]"), "%s", s);
    free(s);
    ogn_free(n);
    ogn_free(a);
    ogn_free(b);
}

Test(ogn, board_and_seeds_tags)
{
    struct ogn_game *g = parse_ok("[Variant \"Awari\"] [Board \"2x4\"] [Seeds \"3\"]\n1. 2A");
    cr_assert_str_eq(g->rs.name, "awari");
    cr_assert_eq(g->rs.pits, 4);
    cr_assert_eq(g->start.board.h[0], 3);
    ogn_free(g);
    /* the FEN gives the size */
    g = parse_ok("[Variant \"jodu\"] [FEN \"1,2,3/3,2,1/A\"]\n1. 3A");
    cr_assert_eq(g->rs.pits, 3);
    ogn_free(g);
    /* an alias, any case */
    g = parse_ok("[Variant \"KyeKyeMapuduo\"]");
    cr_assert_str_eq(g->rs.name, "jodu");
    ogn_free(g);
}

/* The same game spelt every way the reader accepts: the same record out. */
Test(ogn, lenient_spellings_are_the_same_game)
{
    const char *canon = "[Variant \"Oware Abapa\"]\n\n"
                        "1. C c 2. E f 3. A b 4. D a+3 { take } 5. B e 6. F d\n";
    const char *forms[] = {
        /* no numbers, no capture, CRLF, a byte-order mark */
        "\xEF\xBB\xBF[Variant \"Oware Abapa\"]\r\n\r\nC c E f A b D a {take} B e F d\r\n",
        /* numbers glued to moves, tabs, a comment over lines */
        "[ Variant   \"Oware Abapa\" ]\n1.C c\t2.E f 3.A b 4.D a+3{\n  take\n}5.B e 6.F d",
        /* sow's names in an oware record, PGN's "1..." */
        "[Variant \"Oware Abapa\"]\n1. 3A 1... 3B 2. 5A 6B 3. 1A 2B 4. 4A 1B+3 {take} 5. 2A 5B 6. 6A 4B",
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        struct ogn_game *g = parse_ok(forms[i]);
        char *s = format_ok(g);
        cr_assert_str_eq(s, canon, "form %zu:\n%s", i, s);
        free(s);
        ogn_free(g);
    }
}

Test(ogn, comments_and_marks_kept)
{
    const char *t = "[Variant \"Oware Abapa\"]\n\n"
                    "{ before } 1. C! { one } { two } c?? 2. E!? f?!\n";
    struct ogn_game *g = parse_ok(t);
    cr_assert_eq(g->nnotes, 3);
    cr_assert_eq(g->notes[0].ply, 0);
    cr_assert_eq(g->notes[1].ply, 1);
    cr_assert_str_eq(g->notes[2].text, "two");
    cr_assert_str_eq(g->ply[0].mark, "!");
    cr_assert_str_eq(g->ply[1].mark, "??");
    cr_assert_str_eq(g->ply[3].mark, "?!");
    char *s = format_ok(g);
    cr_assert_str_eq(s, t);
    /* annotate's replacement of its own comments */
    ogn_drop_notes(g, 1, "tw");
    cr_assert_eq(g->nnotes, 2);
    cr_assert_eq(ogn_add_note(g, 1, "  sow:\n +2  exact "), SOW_OK);
    cr_assert_str_eq(g->notes[2].text, "sow: +2 exact");
    cr_assert_eq(ogn_add_note(g, 0, " \n "), SOW_OK); /* empty: not kept */
    cr_assert_eq(g->nnotes, 3);
    free(s);
    ogn_free(g);
}

/* Lines stay under 80 columns, broken before a token (Aualé's rule). */
Test(ogn, long_move_text_wraps_under_80_columns)
{
    struct ruleset rs;
    cr_assert_eq(rules_init(&rs, "oware", 6, 4, NULL), SOW_OK);
    struct ogn_game *g = ogn_new(&rs, NULL);
    uint64_t seed = 7;
    for (int i = 0; i < 60 && g->end == OGN_LIVE; i++) {
        struct sow_movelist ml;
        rules_generate(&rs, ogn_last(g), &ml);
        cr_assert_eq(ogn_play(g, ml.c[util_splitmix64(&seed) % (uint64_t)ml.n].move, NULL), SOW_OK);
        if (i % 7 == 0)
            cr_assert_eq(ogn_add_note(g, i + 1, "a comment of several words to wrap"), SOW_OK);
    }
    char *s = format_ok(g);
    int lines = 0;
    for (char *l = s; *l; lines++) {
        char *nl = strchr(l, '\n');
        cr_assert(nl);
        cr_assert_lt(nl - l, 80, "line %d has %d columns", lines + 1, (int)(nl - l));
        l = nl + 1;
    }
    cr_assert_gt(lines, 12);
    struct ogn_game *h = parse_ok(s);
    char *s2 = format_ok(h);
    cr_assert_str_eq(s2, s);
    free(s);
    free(s2);
    ogn_free(g);
    ogn_free(h);
}

/* ---- random games of every rule set ---------------------------------------- */

/* The obvious repetition check: every earlier position of the record. */
static int repeated_at_slow(const struct ogn_game *g)
{
    const sow_position *q = ogn_last(g);
    for (int j = 0; j < g->nply; j++)
        if (rules_same_position(ogn_before(g, j), q))
            return j;
    return -1;
}

Test(ogn, random_games_every_rule_set_round_trip)
{
    uint64_t seed = 2024;
    int games = 0, ended = 0, repeated = 0, settled_gain = 0;
    for (int f = 0; sow_rule_names[f]; f++) {
        for (int pits = 1; pits <= 6; pits++) {
            for (int it = 0; it < 6; it++) {
                struct ruleset rs;
                int seeds = 1 + (int)(util_splitmix64(&seed) % 4);
                cr_assert_eq(rules_init(&rs, sow_rule_names[f], pits, seeds, NULL), SOW_OK);
                struct ogn_game *g = ogn_new(&rs, NULL);
                cr_assert(g);
                for (int i = 0; i < 150 && g->end == OGN_LIVE; i++) {
                    struct sow_movelist ml;
                    rules_generate(&rs, ogn_last(g), &ml);
                    if (ml.n == 0)
                        break;
                    sow_move m = ml.c[util_splitmix64(&seed) % (uint64_t)ml.n].move;
                    cr_assert_eq(ogn_play(g, m, NULL), SOW_OK);
                    int slow = repeated_at_slow(g);
                    cr_assert_eq(g->end == OGN_REPEATED, slow >= 0, "%s 2x%d move %d",
                                 rs.name, pits, i + 1);
                    if (slow >= 0)
                        cr_assert_eq(g->repeated_at, slow);
                    const struct ogn_ply *y = &g->ply[g->nply - 1];
                    if (y->gain2 != 2 * y->captured[y->mover])
                        settled_gain++;
                }
                cr_assert_eq(ogn_update_result(g), SOW_OK);
                games++;
                ended += g->end != OGN_LIVE;
                repeated += g->end == OGN_REPEATED;
                char *s = format_ok(g);
                struct ogn_game *h = parse_ok(s);
                cr_assert_eq(h->nply, g->nply);
                cr_assert_eq(h->end, g->end);
                for (int i = 0; i < g->nply; i++) {
                    cr_assert_eq(h->ply[i].move, g->ply[i].move);
                    cr_assert(rules_same_position(&h->ply[i].pos, &g->ply[i].pos));
                }
                cr_assert_str_eq(h->result, g->result);
                char *s2 = format_ok(h);
                cr_assert_str_eq(s2, s);
                free(s);
                free(s2);
                ogn_free(g);
                ogn_free(h);
            }
        }
    }
    /* the test has seen what it checks */
    cr_assert_gt(ended, games / 2, "%d of %d games ended", ended, games);
    cr_assert_gt(repeated, 0);
    cr_assert_gt(settled_gain, 0);
}

/* Aualé's "+N" of a move that ends the game counts the settlement: the
 * reader takes it, and the move's own capture too. */
Test(ogn, final_capture_counts_the_settlement)
{
    uint64_t seed = 99;
    for (int tries = 0; tries < 5000; tries++) {
        struct ruleset rs;
        cr_assert_eq(rules_init(&rs, "jodu", 3, 2, NULL), SOW_OK);
        struct ogn_game *g = ogn_new(&rs, NULL);
        while (g->end == OGN_LIVE && g->nply < 100) {
            struct sow_movelist ml;
            rules_generate(&rs, ogn_last(g), &ml);
            if (ml.n == 0)
                break;
            ogn_play(g, ml.c[util_splitmix64(&seed) % (uint64_t)ml.n].move, NULL);
        }
        const struct ogn_ply *y = g->nply ? &g->ply[g->nply - 1] : NULL;
        if (!y || y->gain2 == 2 * y->captured[y->mover] || y->gain2 % 2) {
            ogn_free(g);
            continue;
        }
        char *s = format_ok(g);
        struct ogn_game *h = parse_ok(s);
        ogn_free(h);
        /* the last move written with its capture alone: read too */
        char name[16], with[32], alone[32];
        ogn_move_name(g, g->nply - 1, name, sizeof name);
        snprintf(with, sizeof with, " %s+%d", name, y->gain2 / 2);
        if (y->captured[y->mover])
            snprintf(alone, sizeof alone, " %s+%d", name, y->captured[y->mover]);
        else
            snprintf(alone, sizeof alone, " %s", name);
        char *at = strstr(s, with);
        cr_assert(at, "%s not in\n%s", with, s);
        char *s2 = malloc(strlen(s) + 8);
        size_t k = (size_t)(at - s);
        snprintf(s2, strlen(s) + 8, "%.*s%s%s", (int)k, s, alone, at + strlen(with));
        h = parse_ok(s2);
        cr_assert_eq(h->nply, g->nply);
        ogn_free(h);
        /* and any other number refused */
        snprintf(s2, strlen(s) + 8, "%.*s %s+%d%s", (int)k, s, name, y->gain2 / 2 + 1,
                 at + strlen(with));
        struct sow_error e;
        cr_assert_eq(ogn_parse(s2, strlen(s2), &h, &e), SOW_E_INPUT);
        cr_assert(strstr(e.msg, "captures"), "%s", e.msg);
        free(s2);
        free(s);
        ogn_free(g);
        return;
    }
    cr_assert_fail("no jodu game ended with a settlement for the last mover");
}

/* ---- malformed records ----------------------------------------------------- */

struct badcase {
    const char *text, *msg;
};

static const struct badcase bad_records[] = {
    {"[Event Open]", "1:8: tag Event: expected a quoted value"},
    {"[Event \"Open]", "1:8: tag Event: value not closed"},
    {"[Event \"Open\nx\"]", "1:8: tag Event: value not closed"},
    {"[Site \"C:\\x\"]", "1:10: tag Site: bad escape '\\x' (only \\\" and \\\\)"},
    {"[Event \"a\tb\"]", "1:10: tag Event: control character in the value"},
    {"[ \"x\"]", "1:3: tag: expected a name after '['"},
    {"[Event\"x\"]", "1:7: tag Event: expected a space before the value"},
    {"[Event \"x\" x]", "1:12: tag Event: expected ']'"},
    {"[Date \"?\"] [Date \"?\"]", "1:12: tag Date given twice"},
    {"[Variant \"chess\"]", "1:11: Variant: unknown rule set 'chess'"},
    {"[Board \"3x6\"]", "1:9: Board '3x6': expected 2xN, N holes a side in 1..18"},
    {"[Board \"2x19\"]", "1:9: Board '2x19': expected 2xN"},
    {"[Seeds \"x\"]", "1:9: Seeds 'x': expected a whole number in 0..255"},
    {"[Board \"2x18\"] [Seeds \"8\"]", "1:24: Board 2x18, Seeds 8: "},
    {"[FEN \"4-4-4-S\"]", "1:7: FEN: expected 2N hole counts, two stores and S or N"},
    {"[FEN \"4-4-4-4-x-4-4-4-4-4-4-4-0-0-S\"]", "1:7: FEN: field 5 'x': expected a number"},
    {"[FEN \"4-4-4-4-4-4-4-4-4-4-4-4-0-0-X\"]", "1:7: FEN: expected 2N hole counts"},
    {"[FEN \"4,4,4/4,4,4/A\"] [Board \"2x6\"]", "1:7: FEN: 3 holes a side, but Board is 2x6"},
    {"[Board \"2x3\"] [FEN \"4-4-4-4-4-4-4-4-4-4-4-4-0-0-S\"]",
     "1:21: FEN: 12 holes, but the board has 6"},
    {"[FEN \"4,4,4/4,x,4/A\"]", "1:7: FEN: B row, hole 2: expected a seed count, found 'x'"},
    {"[FEN \"4,4,4/4,4,4/A/0-0/open\"]", "1:7: FEN: "},
    {"[Result \"25:23\"]", "1:10: Result '25:23': expected * or a score like 25-23"},
    {"1. G", "1:4: move 1 'G': not a hole of oware 2x6 (A..F, a..f)"},
    {"1. a", "1:4: move 1 'a': it is A's (South's) turn"},
    {"1. C C", "1:6: move 2 'C': it is B's (North's) turn"},
    {"1. Cc", "1:4: move 1 'Cc': expected a hole A..F (South), a..f (North)"},
    {"1. A+3", "1:4: move 1 'A+3': captures 0, not 3"},
    {"1. C!!!", "1:4: move 1 'C!!!': a mark is one of ! ? !! ?? !? ?!"},
    {"1. C\x01", "1:4: control character in the move text"},
    {"[Variant \"awari\"]\n1. 7A", "2:4: move 1 '7A': hole must be 1..6"},
    {"[Variant \"awari\"]\n1. C", "2:4: move 1 'C': expected a hole like 3A, 'pass'"},
    {"[Variant \"jerin\"] 1. 1A+3A", "1:22: move 1 '1A+3A': the two holes must be adjacent"},
    /* not legal: 6A of 0,... is empty */
    {"[FEN \"1-1-0-2-0-1-1-0-0-1-1-0-0-0-S\"]\n1. C",
     "2:4: move 1 'C': not legal here (legal: A B D F)"},
    /* after the end: no legal move, a repetition */
    {"[FEN \"1-1-0-2-0-1-1-0-0-1-1-0-0-0-S\"]\n1. F+2 d 2. A e 3. A f 4. A",
     "2:27: move 7 'A': the game is over (opponent has no seeds and cannot be fed)"},
    {"[Board \"2x1\"] [FEN \"1/1/A\"]\n1. A a 2. A a",
     "2:13: move 4 'a': the game is over (move 3 repeated the position after move 1)"},
    {"[Board \"2x1\"] [FEN \"0/2/B\"]\n1. a A a",
     "2:8: move 3 'a': the game is over (move 2 repeated the start position)"},
    {"2. C", "1:1: move number 2 where 1 was expected"},
    {"1. C c 1. E", "1:8: move number 1 where 2 was expected"},
    {"1. 2. C", "1:1: move number 1 without a move"},
    {"1. C c 2.", "1:8: move number 2 without a move"},
    {"1. C { good", "1:6: comment not closed"},
    {"1. C { a \x02 }", "1:10: control character in a comment"},
    {"1. C (1. D)", "1:6: variations are not read"},
    {"1. C ; x", "1:6: ';' comments are not read (use { })"},
    {"1. C $2", "1:6: '$' annotations are not read"},
    {"1. C [Event \"x\"]", "1:6: a tag after the move text"},
    {"[Result \"25-23\"]\n\n1. C", "1:10: Result '25-23': the game is not finished (*)"},
    {"1. C c 25-23", "1:8: result '25-23': the game is not finished (*)"},
    {"1. C c * C", "1:10: nothing may follow the result"},
    {"1. C c * { late }", "1:10: nothing may follow the result"},
    {"[FEN \"1-1-0-2-0-1-1-0-0-1-1-0-0-0-S\"]\n1. F+2 d 2. A e 3. A f 7-1",
     "2:24: result '7-1': the moves give 8-0"},
    {"[Result \"8-0\"] [FEN \"1-1-0-2-0-1-1-0-0-1-1-0-0-0-S\"]\n1. F+2 d 2. A e 3. A f *",
     "2:24: result '*' disagrees with the Result tag '8-0'"},
    {"[Result \"8-1\"] [FEN \"1-1-0-2-0-1-1-0-0-1-1-0-0-0-S\"]\n1. F+2 d 2. A e 3. A f",
     "1:10: Result '8-1': the moves give 8-0"},
    {"1. C\x00", "1:5: a NUL byte in the record"},
};

Test(ogn, malformed_records_refused_with_place)
{
    for (size_t i = 0; i < sizeof bad_records / sizeof bad_records[0]; i++) {
        const struct badcase *b = &bad_records[i];
        size_t len = strlen(b->text);
        if (strstr(b->msg, "NUL"))
            len++;
        struct ogn_game *g = NULL;
        struct sow_error e = {0};
        enum sow_status st = ogn_parse(b->text, len, &g, &e);
        cr_expect_eq(st, SOW_E_INPUT, "accepted: %s", b->text);
        if (st == SOW_OK) {
            ogn_free(g);
            continue;
        }
        cr_expect(strncmp(e.msg, b->msg, strlen(b->msg)) == 0, "record %zu %s\n  got  %s\n  want %s",
                  i, b->text, e.msg, b->msg);
        cr_expect_null(strchr(e.msg, '\n'), "two lines: %s", e.msg);
    }
}

/* The corpus the CLI and Python tests share: each record of bad/ refused. */
Test(ogn, bad_corpus_refused)
{
    char *list = slurp(OGN_DIR "/bad/expect.txt", NULL);
    int n = 0;
    for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
        char *tab = strchr(line, '\t');
        cr_assert(tab, "bad line in expect.txt: %s", line);
        *tab = 0;
        char path[512];
        snprintf(path, sizeof path, "%s/bad/%s", OGN_DIR, line);
        size_t len;
        char *text = slurp(path, &len);
        struct ogn_game *g = NULL;
        struct sow_error e = {0};
        cr_expect_eq(ogn_parse(text, len, &g, &e), SOW_E_INPUT, "%s accepted", line);
        cr_expect_str_eq(e.msg, tab + 1, "%s", line);
        free(text);
        n++;
    }
    cr_assert_gt(n, 4);
    free(list);
}

Test(ogn, too_long_refused)
{
    size_t n = OGN_MAX_TEXT + 1;
    char *t = malloc(n);
    memset(t, ' ', n);
    struct ogn_game *g;
    struct sow_error e;
    cr_assert_eq(ogn_parse(t, n, &g, &e), SOW_E_INPUT);
    cr_assert(strstr(e.msg, "longer than"), "%s", e.msg);
    free(t);
}
