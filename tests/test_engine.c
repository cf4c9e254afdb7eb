/* The alpha-beta engine (engine.h): legal best moves in every rule set,
 * proven values equal to the exact solver's, exact knowledge dominating,
 * repetitions never proven, reproducible node counts on one thread. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "sow/engine.h"
#include "sow/search.h"
#include "tables/tables.h"
#include "tt.h"
#include "sow/position.h"
#include "util.h"

#define TWIN_SEED 0x243F6A8885A308D3ULL
#include "test_twin.h"
#include "test_engines.h"

static struct engine *new_engine(const struct ruleset *rs, const struct tb_set *tb, long long mem,
                                 int threads)
{
    struct engine_opts o = {.threads = threads, .hash_mb = 4, .tb = tb, .mem_levels = mem};
    return engine_of(rs, &o);
}

/* A position after k random moves from the start (NULL if the game ended). */
static bool random_game_pos(const struct ruleset *rs, int k, sow_position *p)
{
    *p = rules_start(rs);
    struct sow_movelist ml;
    for (int i = 0; i < k; i++) {
        rules_generate(rs, p, &ml);
        if (!ml.n)
            return false;
        *p = ml.c[rnd() % (uint64_t)ml.n].pos;
    }
    rules_generate(rs, p, &ml);
    return ml.n > 0;
}

Test(engine, best_move_is_legal)
{
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        init_rules(&rs, sow_rule_names[r], 0);
        struct engine *e = new_engine(&rs, NULL, -1, 1);
        int tried = 0;
        for (int g = 0; g < 40; g++) {
            sow_position p;
            if (!random_game_pos(&rs, (int)(rnd() % 40), &p))
                continue;
            tried++;
            struct engine_limits lim = {.depth = 1 + (int)(rnd() % 5)};
            struct engine_result res;
            engine_search(e, &p, NULL, 0, &lim, &res);
            struct sow_movelist ml;
            rules_generate(&rs, &p, &ml);
            cr_assert_geq(rules_find_move(&ml, res.best), 0, "%s: illegal best move %d",
                          rs.name, res.best);
            cr_assert_geq(res.info.pv_len, 1);
            /* the PV is a line of legal moves */
            sow_position q = p;
            for (int i = 0; i < res.info.pv_len; i++) {
                rules_generate(&rs, &q, &ml);
                int j = rules_find_move(&ml, res.info.pv[i]);
                cr_assert_geq(j, 0, "%s: PV move %d illegal", rs.name, i);
                q = ml.c[j].pos;
            }
        }
        cr_assert_gt(tried, 10);
        /* stopped before it starts: still a legal move */
        sow_position p = rules_start(&rs);
        struct engine_limits lim = {.nodes = 1};
        struct engine_result res;
        engine_search(e, &p, NULL, 0, &lim, &res);
        struct sow_movelist ml;
        rules_generate(&rs, &p, &ml);
        cr_assert_geq(rules_find_move(&ml, res.best), 0, "%s: stopped at once", rs.name);
        engine_free(e);
    }
}

/* With tables covering the levels below the root, every proven engine value
 * equals the exact solver's; a root whose moves all leave its level (or end
 * the game) must be proven. */
/* Random positions of level 7 with tables for levels 0..6: every proven
 * value the engine gives is the solver's (with late-move reductions too:
 * a reduced search proves only what holds at any depth). */
static void proven_values_equal_exact(bool lmr, int qdepth)
{
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        init_rules(&rs, sow_rule_names[r], 4);
        const int top = 7; /* tables for levels 0..top-1, roots at level top */
        struct tb_mem *mem = tb_mem_new(&rs, NULL);
        cr_assert(mem);
        struct tb_mem_opts mo = {.threads = 1, .budget = (uint64_t)1 << 40};
        struct sow_error te;
        cr_assert_eq(tb_mem_extend(mem, top - 1, &mo, &te), SOW_OK, "%s", te.msg);
        cr_assert_eq(tb_mem_top(mem), top - 1);
        const struct tb_set *tb = tb_mem_set(mem);
        struct engine_opts eo = {.threads = 1, .hash_mb = 4, .tb = tb, .mem_levels = -1,
                                 .lmr = lmr ? ENGINE_LMR_ON : ENGINE_LMR_OFF,
                                 .qdepth = qdepth};
        struct engine *e = engine_of(&rs, &eo);
        struct search_opts so = {.threads = 1, .hash_mb = 4};
        struct search_ctx *s;
        struct sow_error se;
        cr_assert_eq(search_new(&rs, &so, &s, &se), SOW_OK, "%s", se.msg);
        const struct tb_index *ix = tb_set_index(tb);
        uint64_t E = tb_level_entries(ix, top);
        int proven = 0, forced = 0;
        for (int k = 0; k < 60; k++) {
            sow_position p;
            tb_position_of(ix, top, rnd() % E, &p);
            if (rnd() & 1) { /* the same board, B to move */
                p.board = board_flip(&p.board, rs.pits);
                p.side = 1;
            }
            struct sow_movelist ml;
            rules_generate(&rs, &p, &ml);
            if (!ml.n)
                continue;
            bool all_exit = true;
            for (int i = 0; i < ml.n; i++)
                all_exit &= ml.c[i].captured[0] + ml.c[i].captured[1] > 0;
            engine_clear(e);
            struct engine_limits lim = {.depth = 12};
            struct engine_result res;
            engine_search(e, &p, NULL, 0, &lim, &res);
            int v;
            cr_assert_eq(search_value(s, &p, &v), SOW_OK);
            if (all_exit) {
                forced++;
                cr_assert(res.info.proven, "%s: every move exits, yet not proven", rs.name);
            }
            if (res.info.proven) {
                proven++;
                cr_assert_eq(res.info.score, 100 * v, "%s: proven %d cs, exact %d", rs.name,
                             res.info.score, v);
                struct sow_movelist m2;
                rules_generate(&rs, &p, &m2);
                cr_assert_geq(rules_find_move(&m2, res.best), 0);
            }
        }
        cr_assert_gt(proven, 0, "%s: no proven value in 60 positions", rs.name);
        cr_log_info("%s: %d proven (%d with every move an exit)", rs.name, proven, forced);
        search_free(s);
        engine_free(e);
        tb_mem_free(mem);
    }
}

Test(engine, proven_values_equal_exact) { proven_values_equal_exact(false, 0); }
Test(engine, proven_values_equal_exact_with_lmr) { proven_values_equal_exact(true, 0); }
Test(engine, proven_values_equal_exact_with_capture_search)
{
    proven_values_equal_exact(false, 4);
}

/* Small positions with the engine's own exact knowledge only (terminal
 * positions and the small levels it solves at start): proven values equal
 * the solver's, and a root inside the levels is proven. */
Test(engine, own_levels_exact)
{
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        init_rules(&rs, sow_rule_names[r], 0);
        struct engine *e = new_engine(&rs, NULL, 0, 1);
        struct search_opts so = {.threads = 1, .hash_mb = 4};
        struct search_ctx *s;
        struct sow_error se;
        cr_assert_eq(search_new(&rs, &so, &s, &se), SOW_OK, "%s", se.msg);
        int proven = 0;
        for (int k = 0; k < 30; k++) {
            sow_position p;
            if (!random_game_pos(&rs, 30 + (int)(rnd() % 60), &p))
                continue;
            if (rules_board_seeds(&rs, &p) > 12)
                continue;
            struct engine_limits lim = {.depth = 10};
            struct engine_result res;
            engine_search(e, &p, NULL, 0, &lim, &res);
            if (!res.info.proven)
                continue;
            proven++;
            int v;
            cr_assert_eq(search_value(s, &p, &v), SOW_OK);
            cr_assert_eq(res.info.score, 100 * v, "%s", rs.name);
        }
        cr_log_info("%s: %d proven", rs.name, proven);
        search_free(s);
        engine_free(e);
    }
}

/* A repetition is scored by the settlement and never proven: the 2x1 oware
 * cycle of docs/rules.md (no move ever leaves the level). */
Test(engine, repetition_not_proven)
{
    struct ruleset rs;
    init_rules(&rs, "oware", 1);
    struct sow_error re;
    sow_position p;
    cr_assert_eq(pos_parse(&rs, "1/1/A", &p, &re), SOW_OK, "%s", re.msg);
    struct engine *e = new_engine(&rs, NULL, -1, 1);
    struct engine_limits lim = {.depth = 9};
    struct engine_result res;
    engine_search(e, &p, NULL, 0, &lim, &res);
    cr_assert_not(res.info.proven);
    cr_assert_eq(res.best, 0);
    /* the first repetition on the path (0/2/B at ply 3, B owns both seeds:
     * +2 for B) decides the score: -2 for A */
    cr_assert_eq(res.info.score, -200);
    engine_free(e);
}

Test(engine, nodes_deterministic_one_thread)
{
    const char *names[] = {"oware", "awari", "jodu", "darra"};
    for (int r = 0; r < 4; r++) {
        struct ruleset rs;
        init_rules(&rs, names[r], 0);
        sow_position p = rules_start(&rs);
        uint64_t n[3];
        int sc[3];
        sow_move b[3];
        for (int k = 0; k < 3; k++) {
            struct engine *e = new_engine(&rs, NULL, -1, 1);
            struct engine_limits lim = {.depth = 9};
            struct engine_result res;
            if (k == 2) { /* the same engine, cleared */
                engine_search(e, &p, NULL, 0, &lim, &res);
                engine_clear(e);
            }
            engine_search(e, &p, NULL, 0, &lim, &res);
            n[k] = res.info.nodes;
            sc[k] = res.info.score;
            b[k] = res.best;
            engine_free(e);
        }
        cr_assert_eq(n[0], n[1], "%s: %llu vs %llu nodes", names[r], (unsigned long long)n[0],
                     (unsigned long long)n[1]);
        cr_assert_eq(n[0], n[2]);
        cr_assert_eq(sc[0], sc[1]);
        cr_assert_eq(b[0], b[2]);
        cr_assert_gt(n[0], 1000);
    }
}

Test(engine, threads_legal_and_tables_dominate)
{
    struct ruleset rs;
    init_rules(&rs, "oware", 0);
    struct engine *e = new_engine(&rs, NULL, 0, 2);
    sow_position p = rules_start(&rs);
    struct engine_limits lim = {.depth = 10};
    struct engine_result res;
    engine_search(e, &p, NULL, 0, &lim, &res);
    struct sow_movelist ml;
    rules_generate(&rs, &p, &ml);
    cr_assert_geq(rules_find_move(&ml, res.best), 0);
    /* At least the depth asked: on a loaded machine the helper (one ply
     * ahead) can complete depth 11 before the main thread completes 10,
     * and the main thread then reports the deeper result (Lazy SMP). */
    cr_assert_geq(res.info.depth, 10);
    /* a position inside the levels solved at start: proven at depth 1 */
    struct sow_error re;
    cr_assert_eq(pos_parse(&rs, "0,0,0,0,1,1/1,0,0,0,0,1/A", &p, &re), SOW_OK, "%s", re.msg);
    lim.depth = 1;
    engine_search(e, &p, NULL, 0, &lim, &res);
    cr_assert(res.info.proven);
    cr_assert_eq(res.info.score, 400);
    engine_free(e);
}

/* The capture search's slow twin: plain negamax, no window.  A node's
 * evaluation stands for its quiet moves; with plies left, each move that
 * nets the mover seeds is searched one ply shallower. */
static int quiesce_plain(const struct ruleset *rs, const struct eval_weights *w,
                         const sow_position *p, int qd)
{
    struct sow_movelist ml;
    rules_generate(rs, p, &ml);
    if (!ml.n)
        return 100 * (ml.settle[p->side] - ml.settle[!p->side]);
    int best = eval_position(rs, w, p);
    for (int k = 0; qd > 0 && k < ml.n; k++) {
        int gain = ml.c[k].captured[p->side] - ml.c[k].captured[!p->side];
        if (gain > 0) {
            int sc = 100 * gain - quiesce_plain(rs, w, &ml.c[k].pos, qd - 1);
            best = sc > best ? sc : best;
        }
    }
    return best;
}

/* A one-ply search with the capture search below (engine_opts.qdepth)
 * scores the root as the plain twin does: the best move's net gain less
 * the child's capture-search value, over random middle-game positions. */
Test(engine, capture_search_equals_plain_negamax)
{
    const char *names[] = {"oware", "awari", "jodu", "odu", "darra"};
    for (int r = 0; r < 5; r++) {
        struct ruleset rs;
        init_rules(&rs, names[r], 0);
        struct eval_weights w;
        eval_default_weights(&rs, &w);
        struct engine_opts eo = {.threads = 1, .hash_mb = 4, .mem_levels = -1, .qdepth = 3};
        struct engine *e = engine_of(&rs, &eo);
        int tried = 0;
        for (int i = 0; i < 400 && tried < 60; i++) {
            sow_position p;
            if (!random_game_pos(&rs, 6 + (int)(rnd() % 30), &p))
                continue;
            tried++;
            struct sow_movelist ml;
            rules_generate(&rs, &p, &ml);
            int want = -ENGINE_INF;
            for (int k = 0; k < ml.n; k++) {
                const struct sow_child *ch = &ml.c[k];
                int sc = 100 * (ch->captured[p.side] - ch->captured[!p.side]) -
                         quiesce_plain(&rs, &w, &ch->pos, 3);
                want = sc > want ? sc : want;
            }
            engine_clear(e);
            struct engine_limits lim = {.depth = 1};
            struct engine_result res;
            engine_search(e, &p, NULL, 0, &lim, &res);
            char buf[256];
            pos_format(&rs, &p, buf, sizeof buf);
            cr_assert_eq(res.info.score, want, "%s, %s: depth 1 with captures %d, plain %d",
                         rs.name, buf, res.info.score, want);
        }
        cr_assert_geq(tried, 30, "%s: %d positions", rs.name, tried);
        engine_free(e);
    }
}

/* The default late-move reductions are the rule set's: the same tree as
 * lmr on in oware and awari, as lmr off in the others; and on and off do
 * search different trees (else this test could not tell them apart). */
Test(engine, lmr_default_per_rule_set)
{
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        init_rules(&rs, sow_rule_names[r], 0);
        bool want = rs.family == SOW_OWARE || rs.family == SOW_AWARI;
        cr_assert_eq(engine_lmr_default(&rs), want, "%s", rs.name);
        sow_position p = rules_start(&rs);
        uint64_t n[3]; /* default, off, on */
        const enum engine_lmr mode[3] = {ENGINE_LMR_DEFAULT, ENGINE_LMR_OFF, ENGINE_LMR_ON};
        for (int k = 0; k < 3; k++) {
            struct engine_opts eo = {.threads = 1, .hash_mb = 4, .mem_levels = -1,
                                     .lmr = mode[k]};
            struct engine *e = engine_of(&rs, &eo);
            struct engine_limits lim = {.depth = 10};
            struct engine_result res;
            engine_search(e, &p, NULL, 0, &lim, &res);
            n[k] = res.info.nodes;
            engine_free(e);
        }
        cr_assert_neq(n[1], n[2], "%s: lmr on and off search the same tree", rs.name);
        cr_assert_eq(n[0], n[want ? 2 : 1], "%s: default %llu nodes, lmr %s %llu", rs.name,
                     (unsigned long long)n[0], want ? "on" : "off",
                     (unsigned long long)n[want ? 2 : 1]);
    }
}

Test(engine, tt_engine_layout_example)
{
    /* the worked example of tt.h "engine entries" */
    struct tte_info in = {.score = -150, .bound = 2, .proven = false, .move = 3, .depth = 9}, out;
    cr_assert_eq(tte_pack(&in, 2), 0x00000010481A7F6AULL);
    tte_unpack(tte_pack(&in, 2), &out);
    cr_assert(out.score == -150 && out.bound == 2 && !out.proven && out.move == 3 &&
              out.depth == 9);
    struct tt *t = tt_new(1);
    cr_assert(t);
    tte_store(t, 12345, 250, TTE_BOUND_EXACT, true, 4, 7);
    cr_assert(tte_probe(t, 12345, &out));
    cr_assert(out.score == 250 && out.proven && out.move == 4 && out.depth == 7);
    /* a shallower heuristic result does not replace a proven one */
    tte_store(t, 12345, -50, TTE_BOUND_LOWER, false, 2, 9);
    cr_assert(tte_probe(t, 12345, &out));
    cr_assert(out.proven && out.score == 250);
    cr_assert_not(tte_probe(t, 54321, &out));
    tt_free(t);
}

/* engine_limits.cpu_clock and search_opts.cpu_clock (sow match --clock
 * cpu): a 0.2 s limit on the CPU clock stops the search after about 0.2 s
 * of the calling thread's CPU time, whatever else runs on the machine (the
 * bound above is loose: the clock is polled every 256 nodes, and the
 * in-memory levels count too). */
Test(engine, cpu_clock_limits_cpu_time)
{
    struct ruleset rs;
    init_rules(&rs, "oware", 0);
    sow_position p = rules_start(&rs);
    struct engine *e = new_engine(&rs, NULL, -1, 1);
    struct engine_limits lim = {.seconds = 0.2, .cpu_clock = true};
    struct engine_result r;
    double c0 = util_cpu_now();
    engine_search(e, &p, NULL, 0, &lim, &r);
    double used = util_cpu_now() - c0;
    engine_free(e);
    cr_assert_geq(used, 0.2, "engine stopped after %.3f s of CPU", used);
    cr_assert_lt(used, 2.0, "engine ran %.3f s of CPU for a 0.2 s limit", used);
    cr_assert(r.stopped || r.info.depth > 0);

    struct search_opts o = {.threads = 1, .hash_mb = 4, .time_limit = 0.2, .cpu_clock = true,
                            .threshold = true};
    struct search_ctx *s;
    struct sow_error se;
    cr_assert_eq(search_new(&rs, &o, &s, &se), SOW_OK, "%s", se.msg);
    struct search_result sr;
    c0 = util_cpu_now();
    cr_assert_eq(search_solve(s, &p, &sr), 0);
    used = util_cpu_now() - c0;
    search_free(s);
    cr_assert_geq(used, 0.2, "threshold stopped after %.3f s of CPU", used);
    cr_assert_lt(used, 2.0, "threshold ran %.3f s of CPU for a 0.2 s limit", used);
}

/* The soft limit (engine_limits.soft) ends the search after a completed
 * iteration, never inside one: past it at once, after depth 1; far off,
 * the depth asked; and with one legal move after depth 1 however far. */
Test(engine, soft_limit_stops_after_an_iteration)
{
    struct ruleset rs;
    init_rules(&rs, "oware", 0);
    struct engine *e = new_engine(&rs, NULL, -1, 1);
    sow_position p = rules_start(&rs);
    struct engine_result res;
    struct engine_limits lim = {.depth = 12, .soft = 1e-9};
    engine_search(e, &p, NULL, 0, &lim, &res);
    cr_assert_eq(res.info.depth, 1, "soft limit passed: depth %d", res.info.depth);
    cr_assert_not(res.stopped);
    lim = (struct engine_limits){.depth = 8, .soft = 1e6};
    engine_search(e, &p, NULL, 0, &lim, &res);
    cr_assert_eq(res.info.depth, 8);
    int found = 0;
    for (int g = 0; g < 400 && found < 3; g++) {
        sow_position q;
        if (!random_game_pos(&rs, 10 + (int)(rnd() % 50), &q))
            continue;
        struct sow_movelist ml;
        rules_generate(&rs, &q, &ml);
        if (ml.n != 1)
            continue;
        found++;
        engine_search(e, &q, NULL, 0, &lim, &res);
        cr_assert_eq(res.best, ml.c[0].move);
        cr_assert(res.info.depth == 1 || res.info.proven, "one legal move: depth %d",
                  res.info.depth);
    }
    cr_assert_gt(found, 0, "no position with one legal move met");
    engine_free(e);
}
