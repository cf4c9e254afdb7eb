/* Position and move notation: parse(format(p)) == p on many positions of
 * every rule set and size, and every malformed token rejected with an error
 * that names the field.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sow/position.h"
#include "sow/rules.h"
#include "util.h"

static uint64_t rnd_next(uint64_t *s)
{
    return util_splitmix64(s);
}
static int rnd(uint64_t *s, int n) { return (int)(rnd_next(s) % (uint64_t)n); }

static struct ruleset rs_for(const char *rules, int pits)
{
    struct ruleset rs;
    struct sow_error e;
    cr_assert_eq(rules_init(&rs, rules, pits, 1, &e), SOW_OK, "%s: %s", rules, e.msg);
    return rs;
}

Test(notation, round_trip_every_rule_set_and_size)
{
    uint64_t s = 12345;
    int checked = 0;
    for (int f = 0; sow_rule_names[f]; f++) {
        for (int pits = 1; pits <= SOW_MAX_PITS; pits++) {
            struct ruleset rs = rs_for(sow_rule_names[f], pits);
            for (int it = 0; it < 60; it++) {
                sow_position p;
                memset(&p, 0, sizeof p);
                int budget = 255;
                for (int i = 0; i < 2 * pits; i++) {
                    int v = rnd(&s, 4) == 0 ? rnd(&s, 40) : rnd(&s, 6);
                    if (it == 0)
                        v = budget >= 2 * pits ? (i == 0 ? 255 - (2 * pits - 1) : 1) : 0;
                    if (v > budget)
                        v = budget;
                    budget -= v;
                    p.board.h[i] = (uint8_t)v;
                }
                p.store[0] = (uint16_t)rnd(&s, 300);
                p.store[1] = (uint16_t)rnd(&s, 300);
                if (it == 1) /* the largest stores: board + stores = 65535 exactly */
                    p.store[0] = (uint16_t)(65535 - p.store[1] - (255 - budget));
                p.side = (uint8_t)rnd(&s, 2);
                if (rs.family == SOW_DARRA)
                    p.state = (uint8_t)rnd(&s, 3);
                else if (rs.family == SOW_JERIN)
                    p.state = rnd(&s, 2) ? SOW_STATE_OPEN : SOW_STATE_NONE;
                char buf[SOW_POS_MAXLEN], buf2[SOW_POS_MAXLEN];
                struct sow_error e;
                int len = pos_format(&rs, &p, buf, sizeof buf);
                cr_assert_eq(len, (int)strlen(buf));
                sow_position q;
                cr_assert_eq(pos_parse(&rs, buf, &q, &e), SOW_OK, "%s %s: %s", rs.name, buf,
                             e.msg);
                cr_assert(memcmp(&p, &q, sizeof p) == 0, "%s %s: round trip differs", rs.name, buf);
                pos_format(&rs, &q, buf2, sizeof buf2);
                cr_assert_str_eq(buf, buf2);
                int tp = 0;
                cr_assert_eq(pos_token_pits(buf, &tp, &e), SOW_OK, "%s: %s", buf, e.msg);
                cr_assert_eq(tp, pits, "%s", buf);
                checked++;
            }
        }
    }
    cr_assert_eq(checked, 8 * 18 * 60);
}

Test(notation, defaults_and_start)
{
    struct ruleset rs = rs_for("oware", 6);
    rules_init(&rs, "oware", 6, 4, NULL);
    sow_position start = rules_start(&rs), p;
    char buf[SOW_POS_MAXLEN];
    struct sow_error e;
    pos_format(&rs, &start, buf, sizeof buf);
    cr_assert_str_eq(buf, "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/-");
    cr_assert_eq(pos_parse(&rs, "4,4,4,4,4,4/4,4,4,4,4,4/A", &p, &e), SOW_OK, "%s", e.msg);
    cr_assert(memcmp(&p, &start, sizeof p) == 0);
    cr_assert_eq(pos_parse(&rs, "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0", &p, &e), SOW_OK, "%s",
                 e.msg);
    cr_assert(memcmp(&p, &start, sizeof p) == 0);
    struct ruleset j;
    cr_assert_eq(rules_init(&j, "jerin", 6, 4, &e), SOW_OK);
    sow_position js = rules_start(&j);
    pos_format(&j, &js, buf, sizeof buf);
    cr_assert_str_eq(buf, "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/open");
    struct ruleset d;
    cr_assert_eq(rules_init(&d, "darra", 12, 4, &e), SOW_OK);
    cr_assert_eq(pos_parse(&d, "1,2,3,4,5,6,7,8,9,10,11,12/0,0,0,0,0,0,0,0,0,0,0,13/B/7-9/B", &p,
                           &e),
                 SOW_OK, "%s", e.msg);
    cr_assert(p.side == SOW_B && p.state == SOW_STATE_B && p.store[0] == 7 && p.store[1] == 9);
    cr_assert(p.board.h[0] == 1 && p.board.h[11] == 12 && p.board.h[23] == 13);
}

/* Rejected, and the error names `field`. */
static void reject(const char *rules, int pits, const char *tok, const char *field)
{
    struct ruleset rs = rs_for(rules, pits);
    sow_position p;
    struct sow_error e = {0};
    cr_assert_eq(pos_parse(&rs, tok, &p, &e), SOW_E_INPUT, "%s '%s' accepted", rules, tok);
    cr_assert(strlen(e.msg) > 0 && strchr(e.msg, '\n') == NULL, "one-line error for '%s'", tok);
    cr_assert(strstr(e.msg, field) != NULL, "'%s': error \"%s\" does not name \"%s\"", tok, e.msg,
              field);
}

Test(notation, rejections_name_the_field)
{
    reject("oware", 6, "", "A row");
    reject("oware", 6, "4,4,4,4,4/4,4,4,4,4/A", "A row");        /* 5 holes, rule set has 6 */
    reject("oware", 6, "4,4,4,4,4,4,4/4,4,4,4,4,4,4/A", "A row"); /* 7 */
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4/A", "B row");      /* mismatched rows */
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4,4,4/A", "B row");
    reject("oware", 6, "4,a,4,4,4,4/4,4,4,4,4,4/A", "hole 2");
    reject("oware", 6, "4,-1,4,4,4,4/4,4,4,4,4,4/A", "hole 2");
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,x,4/A", "B row");
    reject("oware", 6, "4,4,4,4,4,256/4,4,4,4,4,4/A", "hole 6");
    reject("oware", 6, "100,100,0,0,0,0/100,0,0,0,0,0/A", "board");
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4,4/C", "side");
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4,4", "side");
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4,4/", "side");
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4,4/AB", "side");
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4,4/A/0", "captured");
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4,4/A/x-0", "captured");
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4,4/A/0-", "captured");
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4,4/A/99999-0", "captured");
    /* stores + board above 65535: a capture would wrap a 16-bit store */
    reject("oware", 6, "0,0,0,0,0,1/1,1,0,0,0,0/A/65535-0", "captured");
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/X", "state");
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/open", "state");
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/A", "state");
    reject("jodu", 6, "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/B", "state");
    reject("jerin", 6, "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/A", "state");
    reject("darra", 6, "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/open", "state");
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/-x", "state");
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/-/x", "state");
    reject("oware", 6, "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/- ", "state");
    reject("oware", 6, "4,,4,4,4,4/4,4,4,4,4,4/A", "hole 2");
}

Test(notation, moves)
{
    struct ruleset rs = rs_for("oware", 6);
    sow_position a = rules_start(&rs), b = a;
    b.side = SOW_B;
    sow_move m;
    char buf[SOW_MOVE_MAXLEN];
    struct sow_error e;
    cr_assert_eq(move_parse(&rs, &a, "3A", &m, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(m, 2);
    cr_assert_eq(move_parse(&rs, &b, "6B", &m, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(m, 5);
    cr_assert_eq(move_parse(&rs, &a, "pass", &m, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(m, SOW_MOVE_PASS);
    cr_assert_eq(move_parse(&rs, &a, "3B", &m, &e), SOW_E_INPUT, "wrong side");
    cr_assert(strstr(e.msg, "turn") || strstr(e.msg, "side"), "%s", e.msg);
    cr_assert_eq(move_parse(&rs, &a, "7A", &m, &e), SOW_E_INPUT, "out of range");
    cr_assert(strstr(e.msg, "1..6"), "%s", e.msg);
    cr_assert_eq(move_parse(&rs, &a, "0A", &m, &e), SOW_E_INPUT);
    cr_assert_eq(move_parse(&rs, &a, "", &m, &e), SOW_E_INPUT);
    cr_assert_eq(move_parse(&rs, &a, "x", &m, &e), SOW_E_INPUT);
    cr_assert_eq(move_parse(&rs, &a, "3A ", &m, &e), SOW_E_INPUT, "trailing junk");
    move_format(&rs, SOW_A, 2, buf, sizeof buf);
    cr_assert_str_eq(buf, "3A");
    move_format(&rs, SOW_B, 5, buf, sizeof buf);
    cr_assert_str_eq(buf, "6B");
    move_format(&rs, SOW_A, SOW_MOVE_PASS, buf, sizeof buf);
    cr_assert_str_eq(buf, "pass");

    struct ruleset j = rs_for("jerin", 6);
    sow_position js = rules_start(&j);
    cr_assert_eq(move_parse(&j, &js, "2A+3A", &m, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(m, SOW_MOVE_DOUBLE | 1);
    move_format(&j, SOW_A, SOW_MOVE_DOUBLE | 1, buf, sizeof buf);
    cr_assert_str_eq(buf, "2A+3A");
    cr_assert_eq(move_parse(&j, &js, "2A+4A", &m, &e), SOW_E_INPUT, "not adjacent");
    cr_assert_eq(move_parse(&j, &js, "6A+7A", &m, &e), SOW_E_INPUT, "out of range");
    cr_assert_eq(move_parse(&j, &js, "2B+3B", &m, &e), SOW_E_INPUT, "wrong side");
    /* every hole of every size formats and parses back */
    for (int pits = 1; pits <= SOW_MAX_PITS; pits++) {
        struct ruleset r = rs_for("darra", pits);
        sow_position p = rules_start(&r);
        for (int side = 0; side < 2; side++) {
            p.side = (uint8_t)side;
            for (int k = 0; k < pits; k++) {
                move_format(&r, side, (sow_move)k, buf, sizeof buf);
                cr_assert_eq(move_parse(&r, &p, buf, &m, &e), SOW_OK, "%s: %s", buf, e.msg);
                cr_assert_eq(m, k);
            }
        }
    }
}

/* A refusal's need and budget print with the digits that tell them apart. */
Test(notation, refusal_sizes)
{
    struct util_gb2 g = util_gb2(19.93e9, 19.87e9);
    cr_assert_str_eq(g.need, "19.93");
    cr_assert_str_eq(g.budget, "19.87");
    g = util_gb2(20.1e9, 19.9e9);
    cr_assert_str_eq(g.need, "20.1");
    cr_assert_str_eq(g.budget, "19.9");
    g = util_gb2(19.9000001e9, 19.9e9); /* as far as nine digits go */
    cr_assert(strtod(g.need, NULL) > strtod(g.budget, NULL), "%s %s", g.need, g.budget);
    g = util_gb2(2.5e4, 2e4);
    cr_assert_str_eq(g.need, "2.5e-05");
    cr_assert_str_eq(g.budget, "2e-05");
}
