/* The engine's swindle (engine_opts.swindle, src/engine/engine_swindle.c)
 * against its slow twin: the move values of docs/rules.md read from tables
 * that hold every level with its bounds, for the root's moves and for
 * every reply to each.  The swindle's move is the search's own or one worth
 * the root's value; its count of the opponent's replies that keep theirs
 * is never below the twin's; and where the engine's tables hold the root
 * and every reply to a candidate leaves its level (so no count rests on a
 * cycle or the game's history), the counts are the twin's and its move
 * leaves the smallest share of them.  Above the engine's tables, moves
 * within the level are candidates too, and are played. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "sow/engine.h"
#include "sow/position.h"
#include "tables/tables.h"

#define TWIN_SEED 0x9E3779B97F4A7C15ULL
#include "test_twin.h"

/* The twin's count after move i of p: the replies worth the child's
 * value, of *all; *exits: the replies too all leave their level. */
static int twin_keep(const struct ruleset *rs, const struct tb_set *tb,
                     const struct sow_movelist *ml, int i, int *all, bool *exits)
{
    const struct sow_child *ch = &ml->c[i];
    struct sow_movelist cm;
    rules_generate(rs, &ch->pos, &cm);
    *all = cm.n;
    int vc = 0, keep = 0;
    cr_assert(!cm.n || tb_probe(tb, &ch->pos, &vc));
    for (int j = 0; j < cm.n; j++) {
        bool ex;
        keep += twin_move_value(rs, tb, &ch->pos, &cm, j, &ex) == vc;
        *exits &= ex;
    }
    return keep;
}

/* keep/all as a share, no reply at all as 1/1: is a below b? */
static bool share_below(int ak, int an, int bk, int bn)
{
    if (!an)
        ak = an = 1;
    if (!bn)
        bk = bn = 1;
    return (int64_t)ak * bn < (int64_t)bk * an;
}

/* Roots of levels 2..top with tables for all of them (above = false), or
 * roots of level top with the engine's tables only to top - 1 (above =
 * true: moves within the root's level count too, where proven); the twin
 * has levels 0..top with bounds either way.  Returns the roots where the
 * swindle played another move than the search; *in_level: of those, how
 * many played a move within the root's level. */
static int against_twin(const char *name, bool above, int *in_level)
{
    struct ruleset rs;
    struct sow_error re;
    cr_assert_eq(rules_init(&rs, name, 4, -1, &re), SOW_OK, "%s", re.msg);
    const int top = 8, etop = above ? top - 1 : top;
    struct tb_mem_opts mo = {.threads = 1, .budget = (uint64_t)1 << 40};
    struct sow_error te;
    struct tb_mem *mem = tb_mem_new(&rs, NULL), *emem = tb_mem_new(&rs, NULL);
    cr_assert(mem && emem);
    cr_assert_eq(tb_mem_extend(mem, top, &mo, &te), SOW_OK, "%s", te.msg);
    cr_assert_eq(tb_mem_extend(emem, etop, &mo, &te), SOW_OK, "%s", te.msg);
    const struct tb_set *tb = tb_mem_set(mem);
    for (int n = 0; n <= top; n++)
        cr_assert(tb_level_has_bounds(tb, n), "%s: level %d without bounds", rs.name, n);
    struct engine_opts eo = {.threads = 1, .hash_mb = 4, .tb = tb_mem_set(emem),
                             .mem_levels = -1, .swindle = true};
    struct engine *e, *plain;
    struct sow_error ee;
    cr_assert_eq(engine_new(&rs, &eo, &e, &ee), SOW_OK, "%s", ee.msg);
    eo.swindle = false;
    cr_assert_eq(engine_new(&rs, &eo, &plain, &ee), SOW_OK, "%s", ee.msg);
    const struct tb_index *ix = tb_set_index(tb);
    int tried = 0, exact = 0, moved = 0;
    for (int k = 0; k < 400; k++) {
        int lvl = above ? top : 2 + (int)(rnd() % (uint64_t)(top - 1));
        uint64_t E = tb_level_entries(ix, lvl);
        if (!E)
            continue;
        sow_position p;
        tb_position_of(ix, lvl, rnd() % E, &p);
        struct sow_movelist ml;
        rules_generate(&rs, &p, &ml);
        int V;
        if (ml.n < 2 || !tb_probe(tb, &p, &V))
            continue;
        struct engine_limits lim = {.depth = 8};
        struct engine_result res, pres;
        engine_clear(plain);
        engine_search(plain, &p, NULL, 0, &lim, &pres);
        cr_assert_eq(pres.swindle_replies, 0, "%s: a swindle with the option off", rs.name);
        engine_clear(e);
        engine_search(e, &p, NULL, 0, &lim, &res);
        int b = rules_find_move(&ml, res.best);
        cr_assert_geq(b, 0, "%s: illegal move", rs.name);
        if (!res.info.proven) { /* (above the tables: not every root) */
            cr_assert(above && res.best == pres.best && res.swindle_replies == 0,
                      "%s: a swindle at a root not proven", rs.name);
            continue;
        }
        cr_assert_eq(res.info.score, 100 * V, "%s: score %d, value %d", rs.name,
                     res.info.score, V);
        bool ex[SOW_MAX_PITS + 1];
        int mv[SOW_MAX_PITS + 1];
        for (int i = 0; i < ml.n; i++)
            mv[i] = twin_move_value(&rs, tb, &p, &ml, i, &ex[i]);
        /* the candidates: the search's own move (the engine without the
         * option is the same search) and the moves worth V that leave
         * the level, or any above the engine's tables */
        int pb = rules_find_move(&ml, pres.best);
        bool cand[SOW_MAX_PITS + 1];
        for (int i = 0; i < ml.n; i++)
            cand[i] = i == pb || ((ex[i] || above) && mv[i] == V);
        cr_assert(cand[b], "%s: the swindle's move %d is worth %d%s, the root %d", rs.name, b,
                  mv[b], ex[b] ? "" : " (in the level)", V);
        /* counts the engine makes exactly: every reply leaves its level,
         * or its level is above the engine's tables */
        bool exact_counts = true;
        int mk[SOW_MAX_PITS + 1], ma[SOW_MAX_PITS + 1];
        for (int i = 0; i < ml.n; i++)
            if (cand[i]) {
                bool all_exit = true;
                mk[i] = twin_keep(&rs, tb, &ml, i, &ma[i], &all_exit);
                exact_counts &= all_exit || rules_board_seeds(&rs, &ml.c[i].pos) > etop;
            }
        cr_assert_eq(res.swindle_replies, ma[b], "%s: %d replies, the twin %d", rs.name,
                     res.swindle_replies, ma[b]);
        cr_assert_geq(res.swindle_keep, mk[b], "%s: %d replies keep, the twin counts %d",
                      rs.name, res.swindle_keep, mk[b]);
        tried++;
        moved += b != pb;
        *in_level += b != pb && !ex[b];
        if (!exact_counts || above)
            continue; /* (above: a search may fall short of a proof) */
        /* every count exact: the engine's is the twin's, and no candidate
         * leaves a smaller share */
        exact++;
        cr_assert_eq(res.swindle_keep, mk[b], "%s: %d replies keep, the twin counts %d",
                     rs.name, res.swindle_keep, mk[b]);
        for (int i = 0; i < ml.n; i++)
            cr_assert(!cand[i] || !share_below(mk[i], ma[i], mk[b], ma[b]),
                      "%s: move %d leaves %d of %d replies keeping, the swindle's %d of %d",
                      rs.name, i, mk[i], ma[i], mk[b], ma[b]);
    }
    cr_assert_gt(tried, 0, "%s: no root tried", rs.name);
    if (above)
        cr_log_info("%s (above the tables): %d roots proven, %d moves changed", rs.name, tried,
                    moved);
    else
        cr_log_info("%s: %d roots, %d with every count exact, %d moves changed", rs.name, tried,
                    exact, moved);
    engine_free(plain);
    engine_free(e);
    tb_mem_free(emem);
    tb_mem_free(mem);
    return moved;
}

Test(swindle, keeps_the_value_and_leaves_fewest_replies, .timeout = 240)
{
    int changed = 0, in_level = 0;
    for (int r = 0; sow_rule_names[r]; r++)
        changed += against_twin(sow_rule_names[r], false, &in_level);
    cr_assert_gt(changed, 0, "the swindle never played another move than the search's");
}

Test(swindle, above_the_tables_moves_within_the_level_count, .timeout = 240)
{
    int changed = 0, in_level = 0;
    for (int r = 0; sow_rule_names[r]; r++)
        changed += against_twin(sow_rule_names[r], true, &in_level);
    cr_log_info("%d moves changed, %d of them within the level", changed, in_level);
    cr_assert_gt(in_level, 0, "above the tables, no move within the level was ever played");
}

/* No proven value, no swindle: a root far above the tables keeps the
 * search's own move (the option only ever picks among proven moves). */
Test(swindle, none_without_a_proven_root)
{
    struct ruleset rs;
    struct sow_error re;
    cr_assert_eq(rules_init(&rs, "oware", 6, -1, &re), SOW_OK, "%s", re.msg);
    struct engine_opts eo = {.threads = 1, .hash_mb = 4, .mem_levels = -1, .swindle = true};
    struct engine *e;
    struct sow_error ee;
    cr_assert_eq(engine_new(&rs, &eo, &e, &ee), SOW_OK, "%s", ee.msg);
    sow_position p = rules_start(&rs);
    struct engine_limits lim = {.depth = 6};
    struct engine_result res;
    engine_search(e, &p, NULL, 0, &lim, &res);
    cr_assert(!res.info.proven);
    cr_assert_eq(res.swindle_replies, 0);
    cr_assert_eq(res.swindle_keep, 0);
    engine_free(e);
}
