/* `solve` with endgame tables equals `solve` without them: for every
 * rule set, tables of a small board are built into a temporary directory, and
 * random positions both inside and above the tables' levels are solved with
 * and without probing them — values and every move's value must agree, and
 * the tables must actually be hit. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sow/position.h"
#include "sow/search.h"
#include "tables/tables.h"
#include "util.h"
#include "test_scale.h"

static uint64_t rng = 0xC0FFEE;
static int rndi(int n)
{
    return (int)(util_splitmix64(&rng) % (uint64_t)n);
}

static void random_pos(const struct ruleset *rs, int minn, int maxn, sow_position *p)
{
    struct sow_error e;
    for (;;) {
        memset(p, 0, sizeof *p);
        int n = minn + rndi(maxn - minn + 1);
        for (int k = 0; k < n; k++)
            p->board.h[rndi(rs->holes)]++;
        p->side = (uint8_t)rndi(2);
        if (rs->family == SOW_DARRA)
            p->state = (uint8_t)rndi(3);
        if (rules_validate(rs, p, &e) == SOW_OK)
            return;
    }
}

static void check(const char *name, int pits, int levels, int above)
{
    struct ruleset rs;
    char dir[] = "/tmp/sow-solve-tables-XXXXXX";
    struct sow_error e;
    cr_assert_eq(rules_init(&rs, name, pits, 1, &e), SOW_OK, "%s", e.msg);
    cr_assert(mkdtemp(dir), "mkdtemp");
    struct tb_build_opts bo = {.threads = 1};
    cr_assert_eq(tb_build(&rs, dir, levels, &bo, &e), SOW_OK, "%s", e.msg);
    struct tb_set *tb;
    tb_open(&rs, dir, &tb, &e);
    cr_assert(tb, "%s", e.msg);
    cr_assert_geq(tb_max_level(tb), levels);

    /* a: the closure alone; b: the closure over the loaded tables; c: the
     * loaded tables, the levels above them solved in memory, the closure
     * for what the budget leaves */
    struct search_opts plain = {.threads = 1, .hash_mb = 2, .level_budget = -1};
    struct search_opts probed = {.threads = 1, .hash_mb = 2, .tb = tb, .level_budget = -1};
    struct search_opts built = {.threads = 1, .hash_mb = 2, .tb = tb, .level_budget = 20000};
    struct search_ctx *a, *b, *c;
    cr_assert_eq(search_new(&rs, &plain, &a, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(search_new(&rs, &probed, &b, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(search_new(&rs, &built, &c, &e), SOW_OK, "%s", e.msg);
    uint64_t hits = 0;
    int count = (int)test_scaled(300);
    for (int i = 0; i < count; i++) {
        sow_position p;
        random_pos(&rs, 0, levels + above, &p);
        int va, vb, vc;
        cr_assert_eq(search_value(a, &p, &va), 0);
        cr_assert_eq(search_value(b, &p, &vb), 0);
        cr_assert_eq(search_value(c, &p, &vc), 0);
        char tok[SOW_POS_MAXLEN];
        pos_format(&rs, &p, tok, sizeof tok);
        cr_assert_eq(va, vb, "%s %s: %d without tables, %d with", name, tok, va, vb);
        cr_assert_eq(va, vc, "%s %s: %d without tables, %d with tables and levels built", name,
                     tok, va, vc);
        if (i % 3 == 0) {
            int ma[SOW_MAX_PITS + 1], mb[SOW_MAX_PITS + 1], mc[SOW_MAX_PITS + 1];
            int na = search_move_values(a, &p, ma), nb = search_move_values(b, &p, mb);
            cr_assert_eq(na, nb);
            cr_assert_eq(search_move_values(c, &p, mc), na);
            for (int k = 0; k < na; k++) {
                cr_assert_eq(ma[k], mb[k], "%s %s move %d: %d without tables, %d with", name,
                             tok, k, ma[k], mb[k]);
                cr_assert_eq(ma[k], mc[k], "%s %s move %d: %d without tables, %d with levels",
                             name, tok, k, ma[k], mc[k]);
            }
        }
    }
    uint64_t nodes;
    search_counters(b, &nodes, &hits);
    cr_assert_gt(hits, 0, "%s: the tables were never probed successfully", name);
    search_free(a);
    search_free(b);
    search_free(c);
    tb_close(tb);
    util_rmdir_flat(dir); /* the level files and the builder's lock */
}

#define SOLVE_TABLES(id, name)                                                                    \
    Test(solve_tables, id, .timeout = 300) { check(name, 4, 8, 3); }

SOLVE_TABLES(oware, "oware")
SOLVE_TABLES(awari, "awari")
SOLVE_TABLES(jodu, "jodu")
SOLVE_TABLES(jodu_ibadan, "jodu-ibadan")
SOLVE_TABLES(jodu_starve, "jodu-starve")
SOLVE_TABLES(odu, "odu")
SOLVE_TABLES(jerin, "jerin")
SOLVE_TABLES(darra, "darra")
