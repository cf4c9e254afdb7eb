/* The engine's fast paths against their obvious twins (engine_fast.h,
 * engine_pick.c), randomized over every rule set, and the Lazy SMP
 * lockstep mode (deterministic, legal moves). */
#include <criterion/criterion.h>
#include <string.h>

#include "sow/engine.h"
#include "tt.h"
#include "test_scale.h"
#include "engine/engine_fast.h"
#include "engine/engine_pick.h"
#include "test_engines.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A random position: seeds dropped into random holes (often one row
 * empty, often few seeds), random side; jerin's opening state sometimes. */
static sow_position random_pos(const struct ruleset *rs)
{
    sow_position p;
    memset(&p, 0, sizeof p);
    int n = (int)(rnd() % (uint64_t)(rs->holes * rs->seeds + 1));
    int only = rnd() % 4 == 0 ? (int)(rnd() % 2) : -1; /* one row only */
    for (int i = 0; i < n; i++) {
        int h = (int)(rnd() % (uint64_t)rs->pits);
        int s = only >= 0 ? only : (int)(rnd() % 2);
        p.board.h[s * rs->pits + h]++;
    }
    p.side = (uint8_t)(rnd() % 2);
    if (rs->family == SOW_JERIN && rnd() % 8 == 0)
        p.state = SOW_STATE_OPEN;
    if (rs->family == SOW_DARRA)
        p.state = (uint8_t)(rnd() % 3);
    return p;
}

/* efast_has_moves never claims a move where the rules have none. */
Test(engine_fast, has_moves_twin)
{
    const int sizes[] = {1, 2, 3, 6, 9};
    long n = test_scaled(20000);
    for (int r = 0; sow_rule_names[r]; r++)
        for (int z = 0; z < 5; z++) {
            struct ruleset rs;
            init_rules(&rs, sow_rule_names[r], sizes[z]);
            struct efast f;
            efast_init(&f, &rs);
            long yes = 0;
            /* only oware and awari have the shortcut: the others (relay
             * sowings are slow to make) are checked to be left alone */
            bool ow = rs.family == SOW_OWARE || rs.family == SOW_AWARI;
            for (long i = 0; i < (ow ? n : 200); i++) {
                sow_position p = random_pos(&rs);
                bool fast = efast_has_moves(&f, &p);
                if (ow) {
                    struct sow_movelist ml;
                    rules_generate(&rs, &p, &ml);
                    if (fast)
                        cr_assert_gt(ml.n, 0, "%s 2x%d: fast path sees a move", rs.name,
                                     rs.pits);
                } else {
                    cr_assert_not(fast);
                }
                yes += fast;
                /* the rows, counted seed by seed */
                int a = 0, b = 0;
                for (int k = 0; k < rs.pits; k++) {
                    a += p.board.h[k];
                    b += p.board.h[rs.pits + k];
                }
                cr_assert_eq(efast_row_any(&f, &p, 0), a > 0);
                cr_assert_eq(efast_row_any(&f, &p, 1), b > 0);
            }
            if (ow)
                cr_assert_gt(yes, 0, "%s: the fast path is used", rs.name);
        }
}

/* efast_same_pos is what tt_key tells apart (board words, side, state). */
Test(engine_fast, same_pos_twin)
{
    long n = test_scaled(20000);
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        init_rules(&rs, sow_rule_names[r], 0);
        for (long i = 0; i < n; i++) {
            sow_position a = random_pos(&rs), b = a;
            switch (rnd() % 4) {
            case 0: break;
            case 1: b.side ^= 1; break;
            case 2: b.board.h[rnd() % (uint64_t)rs.holes] ^= 1; break;
            default: b = random_pos(&rs); break;
            }
            b.store[0] = a.store[0]; /* within one level: same stores */
            b.store[1] = a.store[1];
            bool same = memcmp(&a, &b, sizeof a) == 0;
            cr_assert_eq(efast_same_pos(&a, &b, rs.nwords), same);
            cr_assert_eq(tt_key(&rs, &a) == tt_key(&rs, &b), same);
            if (same) /* the repetition filter never hides a repetition */
                cr_assert_eq(efast_pos_bit(&a, rs.nwords), efast_pos_bit(&b, rs.nwords));
        }
    }
}

/* The history entry of move m in p, the documented way: the mover's
 * table, the move's slot, the seeds in its (first) hole, capped. */
static int32_t hist_of(const struct pick *pk, const struct ruleset *rs, const sow_position *p,
                       sow_move m)
{
    int slot = m == SOW_MOVE_PASS ? 36 : (m & SOW_MOVE_DOUBLE) ? 18 + (m & 0x3F) : m;
    int c = m == SOW_MOVE_PASS ? 0 : p->board.h[p->side * rs->pits + (m & 0x3F)];
    int cap = rs->relay ? 0 : 15; /* one class in the relay games */
    return pk->history[p->side][slot][c > cap ? cap : c];
}

/* The order of pick_keys + pick_next is a stable sort by score (the
 * obvious twin: score each move the documented way, insertion-sort). */
Test(engine_fast, pick_order_twin)
{
    long n = test_scaled(2000);
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        init_rules(&rs, sow_rule_names[r], 0);
        struct pick pk;
        pick_set_counts(&pk, &rs);
        for (long i = 0; i < n; i++) {
            sow_position p = random_pos(&rs);
            struct sow_movelist ml;
            rules_generate(&rs, &p, &ml);
            if (!ml.n)
                continue;
            int ply = (int)(rnd() % 8), side = p.side;
            /* some history, killers and a table move */
            for (int k = 0; k < 3; k++) {
                sow_move m = ml.c[rnd() % (uint64_t)ml.n].move;
                if (rnd() % 2)
                    pick_cutoff(&pk, &p, rs.pits, ply, 1 + (int)(rnd() % 20), m);
                else
                    pick_penalty(&pk, &p, rs.pits, 1 + (int)(rnd() % 20), m);
            }
            sow_move ttm = rnd() % 3 ? ml.c[rnd() % (uint64_t)ml.n].move : SOW_MOVE_NONE;
            int score[SOW_MAX_PITS + 1], want[SOW_MAX_PITS + 1];
            for (int k = 0; k < ml.n; k++) {
                const struct sow_child *c = &ml.c[k];
                int net = c->captured[side] - c->captured[!side];
                score[k] = c->move == ttm                  ? 1 << 28
                           : net > 0                       ? (1 << 26) + net * 4096
                           : c->move == pk.killer[ply][0] ? 1 << 25
                           : c->move == pk.killer[ply][1] ? (1 << 25) - 1
                           : hist_of(&pk, &rs, &p, c->move) + net * 65536;
                int j = k;
                while (j > 0 && score[want[j - 1]] < score[k]) {
                    want[j] = want[j - 1];
                    j--;
                }
                want[j] = k;
            }
            uint8_t got[SOW_MAX_PITS + 1];
            pick_order(&pk, &ml, &p, rs.pits, ply, ttm, got);
            for (int k = 0; k < ml.n; k++)
                cr_assert_eq(got[k], want[k], "%s: move %d of the order", rs.name, k);
            /* the engine's lazy table move: keys from a snapshot of the
             * history (holes < 8) are the keys from the history itself */
            if (rs.pits <= 8 && (rs.family == SOW_OWARE || rs.family == SOW_AWARI)) {
                int32_t snap[8];
                int64_t k1[SOW_MAX_PITS + 1], k2[SOW_MAX_PITS + 1];
                pick_hist_snap(&pk, &p, rs.pits, snap);
                int b1 = pick_keys(&pk, &ml, &p, rs.pits, ply, ttm, k1);
                int b2 = pick_keys_hist(&pk, &ml, &p, rs.pits, ply, ttm, k2, snap);
                cr_assert_eq(b1, b2);
                cr_assert_arr_eq(k1, k2, (size_t)ml.n * sizeof k1[0]);
                /* and the oware/awari keys, with and without the snapshot */
                struct efast fx;
                efast_init(&fx, &rs);
                struct sow_movelist mo;
                efast_gen_oware(&fx, &p, &mo);
                cr_assert_eq(mo.n, ml.n);
                b2 = pick_keys_ow(&pk, &mo, &p, rs.pits, ply, ttm, k2, NULL);
                cr_assert_eq(b1, b2);
                cr_assert_arr_eq(k1, k2, (size_t)ml.n * sizeof k1[0]);
                b2 = pick_keys_ow(&pk, &mo, &p, rs.pits, ply, ttm, k2, snap);
                cr_assert_eq(b1, b2);
                cr_assert_arr_eq(k1, k2, (size_t)ml.n * sizeof k1[0]);
            }
        }
    }
}

/* Lazy SMP in lockstep: deterministic (same nodes, main-thread nodes, score
 * and move twice), a legal move, and the main thread's share is counted. */
Test(engine_fast, lockstep_deterministic)
{
    const char *names[] = {"oware", "jodu"};
    for (int r = 0; r < 2; r++) {
        struct ruleset rs;
        init_rules(&rs, names[r], 0);
        sow_position p = rules_start(&rs);
        struct engine_result res[2];
        for (int k = 0; k < 2; k++) {
            struct engine_opts o = {.threads = 2, .hash_mb = 4, .mem_levels = -1,
                                    .lockstep = true};
            struct engine *e;
            struct sow_error ee;
            cr_assert_eq(engine_new(&rs, &o, &e, &ee), SOW_OK, "%s", ee.msg);
            struct engine_limits lim = {.depth = 10};
            engine_search(e, &p, NULL, 0, &lim, &res[k]);
            engine_free(e);
        }
        cr_assert_eq(res[0].info.nodes, res[1].info.nodes, "%s", names[r]);
        cr_assert_eq(res[0].main_nodes, res[1].main_nodes);
        cr_assert_eq(res[0].info.score, res[1].info.score);
        cr_assert_eq(res[0].best, res[1].best);
        cr_assert_eq(res[0].deferred, res[1].deferred);
        cr_assert_geq(res[0].info.depth, 10);
        cr_assert_gt(res[0].main_nodes, 0);
        cr_assert_lt(res[0].main_nodes, res[0].info.nodes, "the helper searched too");
        struct sow_movelist ml;
        rules_generate(&rs, &p, &ml);
        cr_assert_geq(rules_find_move(&ml, res[0].best), 0);
    }
}

/* ABDADA (engine.c, busy_has): with two threads (lockstep, deterministic)
 * some moves are put last because the other thread is in them, the best
 * move is legal; with one thread never. */
Test(engine_fast, abdada_defers_with_threads)
{
    struct ruleset rs;
    init_rules(&rs, "oware", 0);
    sow_position p = rules_start(&rs);
    for (int threads = 1; threads <= 2; threads++) {
        struct engine_opts o = {.threads = threads, .hash_mb = 4, .mem_levels = -1,
                                .lockstep = true};
        struct engine *e;
        struct sow_error ee;
        cr_assert_eq(engine_new(&rs, &o, &e, &ee), SOW_OK, "%s", ee.msg);
        struct engine_limits lim = {.depth = 13};
        struct engine_result res;
        engine_search(e, &p, NULL, 0, &lim, &res);
        engine_free(e);
        if (threads == 1)
            cr_assert_eq(res.deferred, 0);
        else
            cr_assert_gt(res.deferred, 0, "no move deferred with 2 threads at depth 13");
        struct sow_movelist ml;
        rules_generate(&rs, &p, &ml);
        cr_assert_geq(rules_find_move(&ml, res.best), 0);
    }
}

/* efast_eval equals eval_position (src/engine/eval.c) wherever the engine
 * uses it: every non-relay rule set, sizes 1..18, default and random
 * weights.  If eval.c's terms change, this fails until efast_eval_init
 * follows. */
Test(engine_fast, eval_table_twin)
{
    long n = test_scaled(3000);
    int tables = 0;
    for (int r = 0; sow_rule_names[r]; r++)
        for (int pits = 1; pits <= SOW_MAX_PITS; pits++) {
            struct ruleset rs;
            struct sow_error re;
            if (rules_init(&rs, sow_rule_names[r], pits, 4, &re) != SOW_OK)
                continue;
            struct eval_weights w;
            eval_default_weights(&rs, &w);
            for (int round = 0; round < 4; round++) {
                if (round > 0)
                    for (int i = 0; i < EW_COUNT; i++)
                        w.w[i] = (int)(rnd() % 2001) - 1000;
                if (round > 1) /* the hole terms, and (round 3) threats */
                    for (int k = 0; k < SOW_MAX_PITS; k++)
                        for (int c = 0; c < EVAL_BUCKETS; c++) {
                            w.hole[k][c] = (int)(rnd() % 2001) - 1000;
                            for (int i = 0; i < EX_COUNT; i++)
                                w.x[i] = round == 3 ? (int)(rnd() % 2001) - 1000 : 0;
                        }
                struct efast f;
                efast_init(&f, &rs);
                efast_eval_init(&f, &rs, &w);
                cr_assert_eq(f.eval_table, !rs.relay);
                if (!f.eval_table)
                    continue;
                tables++;
                for (long i = 0; i < n; i++) {
                    sow_position p = random_pos(&rs);
                    if (rnd() % 4 == 0) /* now and then a big hole (a kroo) */
                        p.board.h[rnd() % (uint64_t)rs.holes] += (uint8_t)(rnd() % 40);
                    cr_assert_eq(efast_eval(&f, &p, rules_board_seeds(&rs, &p)),
                                 eval_position(&rs, &w, &p),
                                 "%s 2x%d", rs.name, pits);
                }
            }
        }
    cr_assert_gt(tables, 100);
}

/* efast_gen_oware makes the same move list as the rule set's generator
 * (src/rules/oware.c): oware and awari, 2x1 .. 2x8, random positions. */
Test(engine_fast, gen_oware_twin)
{
    const char *names[] = {"oware", "awari"};
    long n = test_scaled(20000);
    for (int r = 0; r < 2; r++)
        for (int pits = 1; pits <= 9; pits++) {
            struct ruleset rs;
            init_rules(&rs, names[r], pits);
            struct efast f;
            efast_init(&f, &rs);
            cr_assert_eq(f.gen_oware, pits <= 8);
            if (!f.gen_oware)
                continue;
            long caps = 0, ends = 0;
            for (long i = 0; i < n; i++) {
                sow_position p = random_pos(&rs);
                if (rnd() % 4 == 0) /* laps */
                    p.board.h[rnd() % (uint64_t)rs.holes] += (uint8_t)(rnd() % 40);
                p.store[0] = (uint16_t)(rnd() % 20);
                p.store[1] = (uint16_t)(rnd() % 20);
                struct sow_movelist a, b;
                rules_generate(&rs, &p, &a);
                efast_gen_oware(&f, &p, &b);
                cr_assert_eq(b.n, a.n, "%s 2x%d: moves", rs.name, pits);
                cr_assert_eq(b.end, a.end);
                cr_assert_eq(b.endless, a.endless);
                if (a.n == 0) {
                    ends++;
                    cr_assert_eq(b.settle[0], a.settle[0]);
                    cr_assert_eq(b.settle[1], a.settle[1]);
                }
                for (int k = 0; k < a.n; k++) {
                    cr_assert_eq(b.c[k].move, a.c[k].move);
                    cr_assert_eq(b.c[k].captured[0], a.c[k].captured[0]);
                    cr_assert_eq(b.c[k].captured[1], a.c[k].captured[1]);
                    cr_assert(memcmp(&b.c[k].pos, &a.c[k].pos, sizeof a.c[k].pos) == 0,
                              "%s 2x%d: child %d", rs.name, pits, k);
                    caps += a.c[k].captured[p.side] > 0;
                }
            }
            if (pits >= 2) /* oware 2x1: a capture takes all the opponent has: none */
                cr_assert_gt(caps, 0, "%s 2x%d: captures were tried", rs.name, pits);
            cr_assert_gt(ends, 0, "%s 2x%d: endings were tried", rs.name, pits);
        }
}

/* efast_make_tt (the engine's table move, made before the other moves)
 * against the whole list of the rule set's generator: when it says a move
 * is legal, the list has it with the same child; it refuses only what the
 * list lacks, and awari's starving moves (legal only if every move starves). */
Test(engine_fast, make_tt_twin)
{
    const char *names[] = {"oware", "awari"};
    long n = test_scaled(20000);
    for (int r = 0; r < 2; r++)
        for (int pits = 1; pits <= 8; pits++) {
            struct ruleset rs;
            init_rules(&rs, names[r], pits);
            struct efast f;
            efast_init(&f, &rs);
            long made = 0, refused_legal = 0;
            for (long i = 0; i < n; i++) {
                sow_position p = random_pos(&rs);
                if (rnd() % 4 == 0) /* laps */
                    p.board.h[rnd() % (uint64_t)rs.holes] += (uint8_t)(rnd() % 40);
                p.store[p.side] = (uint16_t)(rnd() % 20);
                struct sow_movelist a;
                rules_generate(&rs, &p, &a);
                for (int m = 0; m <= pits + 1; m++) {
                    sow_move mv = m == pits + 1 ? SOW_MOVE_NONE : (sow_move)m;
                    struct sow_child c;
                    bool ok = efast_make_tt(&f, &p, mv, &c);
                    int at = rules_find_move(&a, mv);
                    if (ok) {
                        made++;
                        cr_assert_geq(at, 0, "%s 2x%d: move %d is legal", rs.name, pits, m);
                        cr_assert_eq(c.captured[0], a.c[at].captured[0]);
                        cr_assert_eq(c.captured[1], a.c[at].captured[1]);
                        cr_assert(memcmp(&c.pos, &a.c[at].pos, sizeof c.pos) == 0,
                                  "%s 2x%d: child of move %d", rs.name, pits, m);
                    } else if (at >= 0) {
                        /* only awari's starving move, legal here because
                         * every move starves */
                        cr_assert(rs.family == SOW_AWARI, "%s 2x%d: move %d refused",
                                  rs.name, pits, m);
                        refused_legal++;
                    }
                }
            }
            cr_assert_gt(made, 0);
            if (rs.family == SOW_AWARI && pits >= 2)
                cr_assert_gt(refused_legal, 0, "awari 2x%d: starving moves were tried", pits);
        }
}

/* The engine passes a child's seed count down as the parent's minus the
 * move's captures: true of every move in every rule set. */
Test(engine_fast, captures_are_the_seeds_that_leave)
{
    long n = test_scaled(2000);
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        init_rules(&rs, sow_rule_names[r], 0);
        for (long i = 0; i < n; i++) {
            sow_position p = random_pos(&rs);
            struct sow_movelist ml;
            rules_generate(&rs, &p, &ml);
            int np = rules_board_seeds(&rs, &p);
            for (int k = 0; k < ml.n; k++)
                cr_assert_eq(rules_board_seeds(&rs, &ml.c[k].pos),
                             np - ml.c[k].captured[0] - ml.c[k].captured[1], "%s", rs.name);
        }
    }
}
