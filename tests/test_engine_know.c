/* The engine's exact knowledge from solution files (src/engine/engine_know.h):
 * on every position of small solved games, the engine's value is proven and
 * equals the exact solver's, its move is worth that value, and a search
 * whose root cannot be answered directly gets proven values from the
 * file's probes exactly where the rules make them exact (docs/engine.md
 * "Solution files"). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "solver/solution.h"
#include "sow/engine.h"
#include "sow/search.h"

/* Solve the closure of rs's start (closure alone, so it can be saved), keep
 * it as a solution file and open it. */
static struct search_ctx *solve_to_file(const struct ruleset *rs, char *path, size_t len,
                                        struct sol **f)
{
    struct sow_error e = {0};
    struct search_opts o = {.threads = 1, .hash_mb = 1, .level_budget = -1};
    struct search_ctx *s;
    cr_assert_eq(search_new(rs, &o, &s, &e), SOW_OK, "%s", e.msg);
    sow_position root = rules_start(rs);
    struct search_result res;
    cr_assert_eq(search_solve(s, &root, &res), 0);
    snprintf(path, len, "/tmp/sow-test-know-%d-%s-%d", (int)getpid(), rs->name, rs->pits);
    cr_assert_eq(search_save(s, &root, path, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(search_solution_open(rs, path, f, &e), SOW_OK, "%s", e.msg);
    return s;
}

static struct engine *know_engine(const struct ruleset *rs, const struct sol *f)
{
    /* no levels solved in memory, no tables: only the file knows */
    struct engine_opts o = {.threads = 1, .hash_mb = 1, .mem_levels = -1, .solution = f};
    struct engine *e;
    struct sow_error ee;
    cr_assert_eq(engine_new(rs, &o, &e, &ee), SOW_OK, "%s", ee.msg);
    return e;
}

/* p seen from the other side: rows swapped, side B (the same position for
 * the solver: the file must find it too). */
static sow_position flip(const struct ruleset *rs, const sow_position *p)
{
    sow_position q = *p;
    for (int j = 0; j < rs->holes; j++)
        q.board.h[j] = p->board.h[(j + rs->pits) % rs->holes];
    q.side = (uint8_t)!p->side;
    if (p->state == SOW_STATE_A || p->state == SOW_STATE_B)
        q.state = p->state == SOW_STATE_A ? SOW_STATE_B : SOW_STATE_A;
    return q;
}

/* Pits for a closure of a few thousand positions at 2 seeds a hole (odu and
 * jerin end at 4 seeds or fewer: 2x3 is over at once). */
static int small_pits(const char *name)
{
    return !strcmp(name, "odu") || !strcmp(name, "jerin") || !strcmp(name, "darra") ? 4 : 3;
}

/* Every position of each solution, both orientations: proven, = exact. */
Test(engine_know, solution_positions_exact, .timeout = 120)
{
    for (int r = 0; sow_rule_names[r]; r++) {
            struct ruleset rs;
            struct sow_error re;
            char path[256];
            cr_assert_eq(rules_init(&rs, sow_rule_names[r], small_pits(sow_rule_names[r]), 2,
                                    &re), SOW_OK);
            struct sol *f;
            struct search_ctx *s = solve_to_file(&rs, path, sizeof path, &f);
            struct engine *e = know_engine(&rs, f);
            struct engine *bare = know_engine(&rs, NULL);
            uint64_t n = search_solution_size(f), with = 0, without = 0;
            for (uint64_t i = 0; i < n; i++) {
                sow_position p;
                struct sow_movelist ml;
                sol_position(f, i, &p);
                if (i & 1)
                    p = flip(&rs, &p);
                rules_generate(&rs, &p, &ml);
                int v, vals[SOW_MAX_PITS + 1];
                cr_assert_eq(search_value(s, &p, &v), 0);
                struct engine_limits lim = {.depth = 1};
                struct engine_result er;
                engine_search(e, &p, NULL, 0, &lim, &er);
                cr_assert(er.info.proven, "%s 2x%d node %llu: not proven", rs.name, rs.pits,
                          (unsigned long long)i);
                cr_assert_eq(er.info.score, 100 * v, "%s 2x%d node %llu: engine %d, exact %d",
                             rs.name, rs.pits, (unsigned long long)i, er.info.score, v);
                if (ml.n) {
                    int nm = search_move_values(s, &p, vals), k = rules_find_move(&ml, er.best);
                    cr_assert(nm == ml.n && k >= 0);
                    cr_assert_eq(vals[k], v, "%s node %llu: best move worth %d, value %d",
                                 rs.name, (unsigned long long)i, vals[k], v);
                }
                with++;
                engine_search(bare, &p, NULL, 0, &lim, &er);
                without += er.info.proven;
            }
            /* the file made the difference */
            cr_assert(with > without, "%s 2x%d: %llu proven with the file, %llu without",
                      rs.name, rs.pits, (unsigned long long)with, (unsigned long long)without);
            engine_free(bare);
            engine_free(e);
            search_solution_close(f);
            search_free(s);
            unlink(path);
        }
}

/* A root with an earlier position of its level in the game is searched, not
 * answered: its exits are proven by the file's probes (all-exit positions
 * come out proven and exact), moves inside the level never are. */
Test(engine_know, probes_in_search, .timeout = 120)
{
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        struct sow_error re;
        char path[256];
        cr_assert_eq(rules_init(&rs, sow_rule_names[r], small_pits(sow_rule_names[r]), 2, &re),
                     SOW_OK);
        struct sol *f;
        struct search_ctx *s = solve_to_file(&rs, path, sizeof path, &f);
        struct engine *e = know_engine(&rs, f);
        uint64_t n = search_solution_size(f), allexit = 0;
        for (uint64_t i = 0; i < n; i++) {
            sow_position p;
            sol_position(f, i, &p);
            struct sow_movelist ml;
            rules_generate(&rs, &p, &ml);
            if (!ml.n)
                continue;
            int nb = rules_board_seeds(&rs, &p);
            bool exits = true;
            for (int k = 0; k < ml.n; k++)
                exits &= rules_board_seeds(&rs, &ml.c[k].pos) != nb;
            /* an earlier position of p's level, p's board with the other
             * side to move (the engine keeps only a history whose movers
             * alternate, so h's mover is the one p's is not) */
            sow_position h = p;
            h.side = (uint8_t)!p.side;
            if (rules_same_position(&h, &p))
                continue;
            int v;
            cr_assert_eq(search_value(s, &p, &v), 0);
            struct engine_limits lim = {.depth = 1};
            struct engine_result er;
            engine_clear(e);
            engine_search(e, &p, &h, 1, &lim, &er);
            if (exits) {
                allexit++;
                cr_assert(er.info.proven && er.info.score == 100 * v,
                          "%s node %llu (all exits): engine %d%s, exact %d", rs.name,
                          (unsigned long long)i, er.info.score, er.info.proven ? " proven" : "",
                          v);
                cr_assert(er.info.tb_hits > 0);
            } else {
                cr_assert(!er.info.proven, "%s node %llu: in-level move proven", rs.name,
                          (unsigned long long)i);
            }
        }
        cr_assert(allexit > 0, "%s: no all-exit position: the test tests nothing", rs.name);
        engine_free(e);
        search_solution_close(f);
        search_free(s);
        unlink(path);
    }
}

/* (engstrength) The bounded mode of the library (search_solve with a depth,
 * what `sow solve --depth/--time --solution FILE` runs) hands the file to
 * the engine: with no levels solved in memory (level_budget -1), every
 * position of the file comes out exact at depth 1, with the file's value
 * and a move worth it, and some do not without the file. */
Test(engine_know, bounded_solve_uses_solution, .timeout = 120)
{
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        struct sow_error re;
        char path[256];
        cr_assert_eq(rules_init(&rs, sow_rule_names[r], small_pits(sow_rule_names[r]), 2, &re),
                     SOW_OK);
        struct sol *f;
        struct search_ctx *x = solve_to_file(&rs, path, sizeof path, &f);
        struct search_opts o = {.threads = 1, .hash_mb = 1, .depth = 1, .level_budget = -1,
                                .solution = f};
        struct search_ctx *with, *without;
        struct sow_error e = {0};
        cr_assert_eq(search_new(&rs, &o, &with, &e), SOW_OK, "%s", e.msg);
        o.solution = NULL;
        cr_assert_eq(search_new(&rs, &o, &without, &e), SOW_OK, "%s", e.msg);
        uint64_t n = search_solution_size(f), unproven = 0;
        for (uint64_t i = 0; i < n; i++) {
            sow_position p;
            sol_position(f, i, &p);
            if (i & 1)
                p = flip(&rs, &p);
            struct sow_movelist ml;
            rules_generate(&rs, &p, &ml);
            int v, vals[SOW_MAX_PITS + 1];
            cr_assert_eq(search_value(x, &p, &v), 0);
            struct search_result a, b;
            cr_assert_eq(search_solve(with, &p, &a), SOW_OK);
            cr_assert(a.exact && a.value == v && a.lower == v && a.upper == v,
                      "%s 2x%d node %llu: bounded with the file %d%s, exact %d", rs.name,
                      rs.pits, (unsigned long long)i, a.value, a.exact ? " (exact)" : "", v);
            if (ml.n) {
                int k = rules_find_move(&ml, a.best);
                cr_assert(search_move_values(x, &p, vals) == ml.n && k >= 0);
                cr_assert_eq(vals[k], v, "%s node %llu: best move worth %d, value %d", rs.name,
                             (unsigned long long)i, vals[k], v);
            }
            cr_assert_eq(search_solve(without, &p, &b), SOW_OK);
            unproven += !b.exact;
        }
        /* the file made the difference */
        cr_assert(unproven > 0, "%s 2x%d: every position proven without the file", rs.name,
                  rs.pits);
        search_free(with);
        search_free(without);
        search_solution_close(f);
        search_free(x);
        unlink(path);
    }
}
