/* The lean builder over lower levels kept compressed (src/tables/lean_run.c
 * "lower levels compressed", lean_exits.c): the same values as the fast
 * builder over raw ones, for the single-sowing and relay rule sets, with
 * queues small enough that every level answers its exits in many batches
 * between groups; the budget choosing the path on its own; a budget too
 * small even so refused up front, with what it would need. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tables/tables.h"
#include "tables/tables_internal.h"
#include "tables/tb_lean.h"
#include "util.h"

#include "test_passive.h" /* OpenMP threads wait passively */

static struct ruleset rules(const char *name, int pits)
{
    struct ruleset rs;
    struct sow_error e;
    cr_assert_eq(rules_init(&rs, name, pits, 0, &e), SOW_OK, "%s", e.msg);
    return rs;
}

/* The format version of level n's file in dir (1 raw, 2 compressed). */
static int file_version(const char *dir, const struct ruleset *rs, int n)
{
    char path[4200];
    tb_file_name(dir, rs->name, rs->pits, n, path, sizeof path);
    struct tb_header h;
    struct sow_error e;
    cr_assert_eq(tb_file_load(path, rs, n, &h, NULL, NULL, NULL, &e), SOW_OK, "%s", e.msg);
    return (int)h.version;
}

/* Levels 0..top of dir (either version) hold what the fast builder's ref
 * set holds, value for value. */
static void same_values(const struct ruleset *rs, const char *dir, const struct tb_set *ref,
                        int top)
{
    struct tb_set *set;
    struct sow_error e;
    cr_assert_eq(tb_open_values(rs, dir, &set, &e), SOW_OK, "%s", e.msg);
    for (int n = 0; n <= top; n++) {
        uint64_t E = ref->lv[n].entries, d = 0;
        cr_assert_eq(set->lv[n].entries, E, "level %d", n);
        while (d < E && set->lv[n].v[d] == ref->lv[n].v[d])
            d++;
        cr_assert_eq(d, E, "%s level %d: entry %llu is %d, the fast builder's %d", rs->name, n,
                     (unsigned long long)d, d < E ? set->lv[n].v[d] : 0,
                     d < E ? ref->lv[n].v[d] : 0);
    }
    tb_close(set);
}

struct zcase {
    const char *rules;
    int pits, top, threads;
};

static void zlower_same(const struct zcase *c)
{
    struct ruleset rs = rules(c->rules, c->pits);
    char fast[] = "/tmp/sow-zlf-XXXXXX", lean[] = "/tmp/sow-zll-XXXXXX";
    cr_assert(mkdtemp(fast) && mkdtemp(lean));
    struct sow_error e;
    struct tb_build_opts fo = {.threads = 1, .builder = TB_BUILDER_FAST};
    cr_assert_eq(tb_build(&rs, fast, c->top, &fo, &e), SOW_OK, "%s", e.msg);
    /* queues of the least size (two groups' exits): answered after
     * nearly every group */
    struct tb_build_opts lo = {.threads = c->threads, .builder = TB_BUILDER_LEAN,
                               .lean_zqueue = 1};
    cr_assert_eq(tb_build(&rs, lean, c->top, &lo, &e), SOW_OK, "%s", e.msg);
    for (int n = 0; n < c->top; n++)
        cr_assert_eq(file_version(lean, &rs, n), 2, "level %d: lower levels compressed", n);
    cr_assert_eq(file_version(lean, &rs, c->top), 1, "the top level stays raw");
    struct tb_set *ref;
    cr_assert_eq(tb_open_values(&rs, fast, &ref, &e), SOW_OK, "%s", e.msg);
    same_values(&rs, lean, ref, c->top);
    /* resumed: the top level again over lower levels found compressed */
    char path[4200];
    tb_file_name(lean, rs.name, rs.pits, c->top, path, sizeof path);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(tb_build(&rs, lean, c->top, &lo, &e), SOW_OK, "%s", e.msg);
    same_values(&rs, lean, ref, c->top);
    tb_close(ref);
    util_rmdir_flat(fast);
    util_rmdir_flat(lean);
}

/* every rule set family: oware and awari (unmoves), darra (three index
 * states), jodu and odu (relay: their in-level edges on disk) */
Test(lean_zlower, oware_same_values_as_fast) { zlower_same(&(struct zcase){"oware", 6, 11, 2}); }
Test(lean_zlower, awari_same_values_as_fast) { zlower_same(&(struct zcase){"awari", 6, 11, 1}); }
Test(lean_zlower, darra_same_values_as_fast) { zlower_same(&(struct zcase){"darra", 6, 9, 2}); }
Test(lean_zlower, jodu_same_values_as_fast) { zlower_same(&(struct zcase){"jodu", 6, 8, 2}); }
Test(lean_zlower, odu_same_values_as_fast) { zlower_same(&(struct zcase){"odu", 4, 10, 1}); }

/* The budget alone: the top level fits with its lower levels compressed but
 * not raw, so they are compressed (and the values are the same); with less
 * still, the build is refused before any work, saying what it would need. */
Test(lean_zlower, chosen_by_the_budget_and_refused_below_it, .timeout = 240)
{
    struct ruleset rs = rules("oware", 6);
    const int top = 13;
    char fast[] = "/tmp/sow-zbf-XXXXXX", lean[] = "/tmp/sow-zbl-XXXXXX";
    cr_assert(mkdtemp(fast) && mkdtemp(lean));
    struct sow_error e;
    struct tb_build_opts fo = {.threads = 1, .builder = TB_BUILDER_FAST};
    cr_assert_eq(tb_build(&rs, fast, top - 1, &fo, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(tb_build(&rs, lean, top - 1, &fo, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(tb_build(&rs, fast, top, &fo, &e), SOW_OK, "%s", e.msg);
    struct tb_index ix;
    tb_index_init(&ix, &rs);
    double raw = 0;
    for (int n = 0; n < top; n++)
        raw += (double)tb_level_entries(&ix, n);
    uint64_t E = tb_level_entries(&ix, top);
    double need = tb_lean_level_memory(E, 2) + raw;
    /* raw misses by a byte; compressed (about a third of raw) fits */
    struct tb_build_opts lo = {.threads = 2, .builder = TB_BUILDER_LEAN, .memory_bytes = need - 1};
    cr_assert_eq(tb_build(&rs, lean, top, &lo, &e), SOW_OK, "%s", e.msg);
    for (int n = 0; n < top; n++)
        cr_assert_eq(file_version(lean, &rs, n), 2, "level %d", n);
    struct tb_set *ref;
    cr_assert_eq(tb_open_values(&rs, fast, &ref, &e), SOW_OK, "%s", e.msg);
    same_values(&rs, lean, ref, top);
    tb_close(ref);
    /* the nodes alone do not fit: refused up front, nothing written */
    lo.memory_bytes = 4.0 * (double)tb_level_entries(&ix, top + 1);
    cr_assert_eq(tb_build(&rs, lean, top + 1, &lo, &e), SOW_E_TOO_BIG);
    cr_assert(strstr(e.msg, "level 14 needs about") && strstr(e.msg, "compressed"), "%s", e.msg);
    char path[4200];
    tb_file_name(lean, rs.name, rs.pits, top + 1, path, sizeof path);
    cr_assert(access(path, F_OK) != 0, "no level file for a refused level");
    util_rmdir_flat(fast);
    util_rmdir_flat(lean);
}
