/* A root the tables hold (src/engine/engine_root.c): the engine plays a move
 * that keeps the tables' value, known from exits, from the bounds of the
 * levels that hold them, or from the root's closure where they do not; a
 * move into a repetition of the game's history is never picked that way.
 * The reference is the slow twin of the move values (test_twin.h) over
 * levels built in memory with their bounds by the table builder, which the
 * closure does not share. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sow/engine.h"
#include "tables/tables.h"
#include "util.h"

#define TWIN_SEED 0x6A09E667F3BCC909ULL
#include "test_twin.h"
#include "test_engines.h"

/* Levels 0..top of rs in memory, with bounds. */
static struct tb_mem *levels(const struct ruleset *rs, int top)
{
    struct tb_mem *mem = tb_mem_new(rs, NULL);
    cr_assert(mem);
    struct tb_mem_opts mo = {.threads = 1, .budget = (uint64_t)1 << 40};
    struct sow_error te;
    cr_assert_eq(tb_mem_extend(mem, top, &mo, &te), SOW_OK, "%s", te.msg);
    cr_assert(tb_level_has_bounds(tb_mem_set(mem), top));
    return mem;
}

/* Every move's value (twin) of p, which exits, and the first move (in
 * generation order) worth V, -1 if none. */
static int values(const struct ruleset *rs, const struct tb_set *ref, const sow_position *p,
                  const struct sow_movelist *ml, int V, int *mv, bool *ex, bool *exit_best)
{
    int first = -1;
    *exit_best = false;
    for (int i = 0; i < ml->n; i++) {
        mv[i] = twin_move_value(rs, ref, p, ml, i, &ex[i]);
        *exit_best |= ex[i] && mv[i] == V;
        if (mv[i] == V && first < 0)
            first = i;
    }
    return first;
}

/* The moves worth V that stay in the level, less those into a position of
 * hist (nh of them): their count, and in *only the first. */
static int kept_inlevel(const struct sow_movelist *ml, const int *mv, const bool *ex, int V,
                        const sow_position *hist, int nh, int *only)
{
    int n = 0;
    *only = -1;
    for (int i = 0; i < ml->n; i++) {
        bool rep = false;
        for (int j = 0; j < nh; j++)
            rep |= rules_same_position(&ml->c[i].pos, &hist[j]);
        if (!ex[i] && mv[i] == V && !rep && n++ == 0)
            *only = i;
    }
    return n;
}

/* Roots of level `top` with levels 0..top in memory, bounds included: where
 * an exit keeps the value the engine plays the first such exit at once
 * (no node searched); else where one move in the level keeps it, that move
 * at once; where several do, the search chooses among them alone.  The
 * value is reported proven.  With a move's position in the game's history
 * (it would repeat), that move is never played while another keeps the
 * value. */
Test(engine_root, bounds_answer_at_once, .timeout = 120)
{
    const char *names[] = {"oware", "awari", "jodu", "darra"};
    for (int r = 0; r < 4; r++) {
        struct ruleset rs;
        init_rules(&rs, names[r], 4);
        const int top = 7;
        struct tb_mem *mem = levels(&rs, top);
        const struct tb_set *tb = tb_mem_set(mem);
        struct engine_opts eo = {.threads = 1, .hash_mb = 4, .tb = tb, .mem_levels = -1};
        struct engine *e = engine_of(&rs, &eo);
        const struct tb_index *ix = tb_set_index(tb);
        uint64_t E = tb_level_entries(ix, top);
        int at_once = 0, one = 0, among = 0, avoided = 0;
        for (int k = 0; k < 300; k++) {
            sow_position p;
            tb_position_of(ix, top, rnd() % E, &p);
            struct sow_movelist ml;
            rules_generate(&rs, &p, &ml);
            int V;
            if (!ml.n || !tb_probe(tb, &p, &V))
                continue;
            bool ex[SOW_MAX_PITS + 1], exit_best;
            int mv[SOW_MAX_PITS + 1];
            int first = values(&rs, tb, &p, &ml, V, mv, ex, &exit_best);
            cr_assert_geq(first, 0, "%s: no move worth the value %d", rs.name, V);
            engine_clear(e);
            struct engine_limits lim = {.depth = 6};
            struct engine_result res;
            engine_search(e, &p, NULL, 0, &lim, &res);
            int b = rules_find_move(&ml, res.best);
            cr_assert_geq(b, 0, "%s: illegal move", rs.name);
            cr_assert(res.info.proven && res.info.score == 100 * V, "%s: score %d, value %d",
                      rs.name, res.info.score, V);
            cr_assert_eq(mv[b], V, "%s: the move's value %d is not the root's %d", rs.name, mv[b],
                         V);
            if (exit_best) {
                at_once++;
                int fe = -1;
                for (int i = 0; i < ml.n && fe < 0; i++)
                    if (ex[i] && mv[i] == V)
                        fe = i;
                cr_assert_eq(b, fe, "%s: not the first exit worth %d", rs.name, V);
                cr_assert_eq(res.info.nodes, 0, "%s: searched, although an exit keeps %d",
                             rs.name, V);
                continue;
            }
            int only, n = kept_inlevel(&ml, mv, ex, V, NULL, 0, &only);
            if (n == 1) {
                one++;
                cr_assert_eq(b, only);
                cr_assert_eq(res.info.nodes, 0, "%s: searched, although one move keeps %d",
                             rs.name, V);
            } else {
                among++;
                cr_assert_gt(res.info.nodes, 0, "%s: %d moves keep %d, none searched", rs.name,
                             n, V);
            }
            /* the move's position already in the game: it would repeat */
            sow_position hist[1] = {ml.c[b].pos};
            if (kept_inlevel(&ml, mv, ex, V, hist, 1, &only) == 0)
                continue;
            engine_clear(e);
            engine_search(e, &p, hist, 1, &lim, &res);
            int nb = rules_find_move(&ml, res.best);
            cr_assert_geq(nb, 0, "%s: illegal move", rs.name);
            cr_assert_neq(nb, b, "%s: played into a repetition while another move keeps %d",
                          rs.name, V);
            cr_assert_eq(mv[nb], V, "%s: with the repetition, a move worth %d, not %d", rs.name,
                         mv[nb], V);
            avoided++;
        }
        cr_assert_gt(one, 0, "%s: no root kept by one in-level move alone", rs.name);
        cr_assert_gt(among, 0, "%s: no root kept by several in-level moves", rs.name);
        cr_assert_gt(avoided, 0, "%s: no repetition avoided", rs.name);
        cr_log_info("%s: %d exits at once, %d single in-level moves at once, %d searched among "
                    "the moves keeping the value; %d repetitions avoided",
                    rs.name, at_once, one, among, avoided);
        engine_free(e);
        tb_mem_free(mem);
    }
}

/* The tables of levels 0..top as files without bounds (tb_build): loaded,
 * they give values only. */
static struct tb_set *files_without_bounds(const struct ruleset *rs, int top, char *dir)
{
    strcpy(dir, "/tmp/sow-test-root-XXXXXX");
    cr_assert(mkdtemp(dir));
    struct tb_build_opts bo = {.threads = 1};
    struct sow_error e;
    cr_assert_eq(tb_build(rs, dir, top, &bo, &e), SOW_OK, "%s", e.msg);
    struct tb_set *set;
    cr_assert_eq(tb_open(rs, dir, &set, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(tb_max_level(set), top);
    cr_assert(!tb_level_has_bounds(set, top));
    return set;
}

/* Roots of the top level of tables without bounds: the root's closure
 * tells the moves that keep the value (every move the engine plays keeps
 * it, as the twin finds it from the builder's bounds), where no exit does;
 * where one move does, nothing is searched.  With the closure off (root_closure < 0) or too small for
 * it (1 position) the search chooses, still a legal move, the value
 * reported.  The closure kept from one root answers the next roots it
 * holds. */
Test(engine_root, closure_tells_the_move, .timeout = 120)
{
    const char *names[] = {"oware", "jodu", "darra"};
    for (int r = 0; r < 3; r++) {
        struct ruleset rs;
        init_rules(&rs, names[r], 4);
        const int top = 7;
        struct tb_mem *mem = levels(&rs, top);
        const struct tb_set *ref = tb_mem_set(mem);
        char dir[64];
        struct tb_set *files = files_without_bounds(&rs, top, dir);
        struct engine_opts eo = {.threads = 1, .hash_mb = 4, .tb = files, .mem_levels = -1};
        struct engine *e = engine_of(&rs, &eo);
        eo.root_closure = -1;
        struct engine *off = engine_of(&rs, &eo);
        eo.root_closure = 1;
        struct engine *tiny = engine_of(&rs, &eo);
        const struct tb_index *ix = tb_set_index(ref);
        uint64_t E = tb_level_entries(ix, top);
        int closed = 0, searched_off = 0;
        for (int k = 0; k < 150; k++) {
            sow_position p;
            tb_position_of(ix, top, rnd() % E, &p);
            struct sow_movelist ml;
            rules_generate(&rs, &p, &ml);
            int V;
            if (!ml.n || !tb_probe(ref, &p, &V))
                continue;
            bool ex[SOW_MAX_PITS + 1], exit_best;
            int mv[SOW_MAX_PITS + 1];
            values(&rs, ref, &p, &ml, V, mv, ex, &exit_best);
            struct engine_limits lim = {.depth = 4};
            struct engine_result res;
            engine_search(e, &p, NULL, 0, &lim, &res);
            int b = rules_find_move(&ml, res.best);
            cr_assert_geq(b, 0, "%s: illegal move", rs.name);
            cr_assert(res.info.proven && res.info.score == 100 * V);
            cr_assert_eq(mv[b], V, "%s: the closure's move is worth %d, the root %d", rs.name,
                         mv[b], V);
            if (exit_best)
                continue;
            closed++;
            int only;
            if (kept_inlevel(&ml, mv, ex, V, NULL, 0, &only) == 1)
                cr_assert_eq(res.info.depth, 1, "%s: searched, although the closure tells",
                             rs.name);
            engine_search(off, &p, NULL, 0, &lim, &res);
            cr_assert_geq(rules_find_move(&ml, res.best), 0);
            cr_assert(res.info.proven && res.info.score == 100 * V);
            cr_assert_geq(res.info.depth, 2, "%s: no search without the closure", rs.name);
            searched_off++;
            engine_search(tiny, &p, NULL, 0, &lim, &res);
            cr_assert_geq(rules_find_move(&ml, res.best), 0);
            cr_assert(res.info.proven && res.info.score == 100 * V);
            cr_assert_geq(res.info.depth, 2, "%s: a one-position closure told the move",
                          rs.name);
            /* the kept closure answers the child of its move at once */
            const sow_position *q = &ml.c[b].pos;
            struct sow_movelist qm;
            rules_generate(&rs, q, &qm);
            int Vq;
            if (ex[b] || !qm.n || !tb_probe(ref, q, &Vq))
                continue;
            uint64_t before = engine_nodes(e);
            sow_position hist[1] = {p};
            engine_search(e, q, hist, 1, &lim, &res);
            int qb = rules_find_move(&qm, res.best);
            cr_assert_geq(qb, 0);
            cr_assert(res.info.proven && res.info.score == 100 * Vq);
            bool qex[SOW_MAX_PITS + 1], qexit;
            int qmv[SOW_MAX_PITS + 1];
            values(&rs, ref, q, &qm, Vq, qmv, qex, &qexit);
            cr_assert_eq(qmv[qb], Vq, "%s: the reply's move is worth %d, its root %d", rs.name,
                         qmv[qb], Vq);
            if (res.info.depth == 1)
                cr_assert_eq(engine_nodes(e), before, "%s: a closure built again for the "
                             "reply, which the kept one holds", rs.name);
        }
        cr_assert_gt(closed, 0, "%s: no root left to the closure", rs.name);
        cr_log_info("%s: %d roots told by the closure", rs.name, closed);
        engine_free(e);
        engine_free(off);
        engine_free(tiny);
        tb_close(files);
        tb_mem_free(mem);
        util_rmdir_flat(dir); /* the level files and the builder's lock */
        cr_assert_neq(access(dir, F_OK), 0, "%s: %s left", rs.name, dir);
    }
}
