/* Rules, case by case: the worked examples of the source texts rebuilt as
 * positions, one targeted position per rule, endless sowings.  Every move is
 * checked against both the engine (rules_generate) and the seed-by-seed
 * reference; the expected results were worked out by hand from the texts.
 *
 * Notation reminder: A1..AN / B1..BN, each row in its owner's sowing order;
 * A's hole k faces B's hole N+1-k; A's hole N is followed by B's hole 1.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "ref_rules.h"
#include "sow/position.h"
#include "sow/rules.h"

static struct ruleset rs_for(const char *rules, int pits)
{
    struct ruleset rs;
    struct sow_error e;
    cr_assert_eq(rules_init(&rs, rules, pits, -1, &e), SOW_OK, "%s: %s", rules, e.msg);
    return rs;
}

static sow_position parse(const struct ruleset *rs, const char *tok)
{
    sow_position p;
    struct sow_error e;
    cr_assert_eq(pos_parse(rs, tok, &p, &e), SOW_OK, "%s: %s", tok, e.msg);
    return p;
}

/* Engine and reference move lists at tok; they must agree exactly. */
static void both(const struct ruleset *rs, const char *tok, struct sow_movelist *ml,
                 struct ref_list *rl)
{
    sow_position p = parse(rs, tok);
    rules_generate(rs, &p, ml);
    struct ref_pos rp;
    ref_from_sow(rs, &p, &rp);
    ref_generate(rs->family, &rp, rl);
    cr_assert_eq(ml->n, rl->n, "%s %s: engine %d moves, reference %d", rs->name, tok, ml->n,
                 rl->n);
    cr_assert_eq((int)ml->end, rl->end, "%s %s: end %d vs %d", rs->name, tok, ml->end, rl->end);
    cr_assert_eq(ml->endless, rl->endless, "%s %s: endless %d vs %d", rs->name, tok, ml->endless,
                 rl->endless);
    for (int j = 0; j < ml->n; j++) {
        sow_position want;
        ref_to_sow(&rl->c[j].pos, &want);
        cr_assert_eq((int)ml->c[j].move, rl->c[j].move, "%s %s: move order", rs->name, tok);
        cr_assert(memcmp(&want, &ml->c[j].pos, sizeof want) == 0, "%s %s: move %d differs",
                  rs->name, tok, rl->c[j].move);
    }
}

/* Play `move` at tok and expect the resulting position and captures. */
static void expect_move(const char *rules, int pits, const char *tok, const char *move,
                        const char *want, int cap_a, int cap_b)
{
    struct ruleset rs = rs_for(rules, pits);
    struct sow_movelist ml;
    struct ref_list rl;
    both(&rs, tok, &ml, &rl);
    sow_position p = parse(&rs, tok);
    sow_move m;
    struct sow_error e;
    cr_assert_eq(move_parse(&rs, &p, move, &m, &e), SOW_OK, "%s: %s", move, e.msg);
    int j = rules_find_move(&ml, m);
    cr_assert_geq(j, 0, "%s %s: move %s not legal", rules, tok, move);
    char got[SOW_POS_MAXLEN];
    pos_format(&rs, &ml.c[j].pos, got, sizeof got);
    cr_assert_str_eq(got, want, "%s %s %s", rules, tok, move);
    cr_assert(ml.c[j].captured[0] == cap_a && ml.c[j].captured[1] == cap_b,
              "%s %s %s: captured %d-%d, want %d-%d", rules, tok, move, ml.c[j].captured[0],
              ml.c[j].captured[1], cap_a, cap_b);
    cr_assert(rl.c[j].captured[0] == cap_a && rl.c[j].captured[1] == cap_b,
              "%s %s %s: reference captured %d-%d", rules, tok, move, rl.c[j].captured[0],
              rl.c[j].captured[1]);
}

/* The legal moves at tok, space-separated, in generation order. */
static void expect_moves(const char *rules, int pits, const char *tok, const char *want)
{
    struct ruleset rs = rs_for(rules, pits);
    struct sow_movelist ml;
    struct ref_list rl;
    both(&rs, tok, &ml, &rl);
    sow_position p = parse(&rs, tok);
    char got[256] = "";
    for (int j = 0; j < ml.n; j++) {
        char mv[SOW_MOVE_MAXLEN];
        move_format(&rs, p.side, ml.c[j].move, mv, sizeof mv);
        if (j)
            strcat(got, " ");
        strcat(got, mv);
    }
    cr_assert_str_eq(got, want, "%s %s", rules, tok);
}

static void expect_over(const char *rules, int pits, const char *tok, enum sow_end end, int sa,
                        int sb)
{
    struct ruleset rs = rs_for(rules, pits);
    struct sow_movelist ml;
    struct ref_list rl;
    both(&rs, tok, &ml, &rl);
    cr_assert_eq(ml.n, 0, "%s %s: not over", rules, tok);
    cr_assert_eq(ml.end, end, "%s %s: end %s", rules, tok, rules_end_name(ml.end));
    cr_assert(ml.settle[0] == sa && ml.settle[1] == sb, "%s %s: settle %d-%d, want %d-%d", rules,
              tok, ml.settle[0], ml.settle[1], sa, sb);
    cr_assert(rl.settle[0] == sa && rl.settle[1] == sb, "%s %s: reference settle %d-%d", rules,
              tok, rl.settle[0], rl.settle[1]);
}

/* ---- worked examples of the texts ------------------------------------- */

/* Jodu (001/003): B plays 5B holding 2 seeds; the last lands in 1A (1 -> 2),
 * relay 1A -> 3A (2 -> 3), 3A -> 6A (4 -> 5), 6A -> 1B..5B: 5B (emptied at the
 * start) is an own empty hole; it faces 2A, which holds 4 + 1 = 5: B takes
 * 5 + the last seed = 6.  Holes the text does not give are filled freely. */
Test(examples, jodu_capture_of_six_from_5B)
{
    expect_move("jodu", 6, "1,4,2,4,4,4/4,4,4,4,2,3/B", "5B", "0,0,0,5,5,0/5,5,5,5,0,4/A/0-6/-",
                0, 6);
    /* the Ibadan variant leaves the last seed in 5B */
    expect_move("jodu-ibadan", 6, "1,4,2,4,4,4/4,4,4,4,2,3/B", "5B",
                "0,0,0,5,5,0/5,5,5,5,1,4/A/0-5/-", 0, 5);
}

/* Oware (002): the text's letters: the mover's holes A..F are his holes 1..6,
 * the opponent's a..f are the opponent's holes 1..6, both in sowing order
 * ("E" = 5A, "e" = 5B).  E holds 6: F, a, b, c, d, e; e makes 3, d 2, c 3,
 * b makes 4 and stops the run: 3 + 2 + 3 = 8 captured. */
Test(examples, oware_capture_of_eight_from_E)
{
    expect_move("oware", 6, "3,0,1,2,6,1/4,3,2,1,2,5/A", "5A", "3,0,1,2,0,2/5,4,0,0,0,5/B/8-0/-",
                8, 0);
    expect_move("abapa", 6, "3,0,1,2,6,1/4,3,2,1,2,5/A", "5A", "3,0,1,2,0,2/5,4,0,0,0,5/B/8-0/-",
                8, 0);
}

/* Darra (004), first example: A plays 4A holding 6: 5A, 6A, 1B, 2B, 3B, 4B;
 * 4B held 3 and now 4: A takes it; no other hole passes through 4. */
Test(examples, darra_first)
{
    expect_move("darra", 6, "2,5,1,6,0,2/1,5,2,3,2,0/A", "4A", "2,5,1,0,1,3/2,6,3,0,2,0/B/4-0/A",
                4, 0);
}

/* Darra, second example (a new position: 4A was just emptied by the first
 * move, so the text's board cannot follow it): B plays 3B holding 7 (4B 5B
 * 6B 1A 2A 3A 4A); 3A reaches 4 on the way and goes to A, the last seed makes
 * 4 in 4A and goes to B, who is now the last capturer.  2B (8 seeds) ends in
 * 4A the same way, as the text says. */
Test(examples, darra_second)
{
    expect_move("darra", 6, "2,1,3,3,0,5/2,8,7,0,1,2/B/0-0/A", "3B",
                "3,2,0,0,0,5/2,8,0,1,2,3/A/4-4/B", 4, 4);
    expect_move("darra", 6, "2,1,3,3,0,5/2,8,7,0,1,2/B/0-0/A", "2B",
                "3,2,0,0,0,5/2,0,8,1,2,3/A/4-4/B", 4, 4);
}

/* Odu (000): A plays 2A holding 1; it makes 3A 7 (6 + 1), relay: 4A (3 -> 4,
 * A takes it), 5A, 6A, 1B, 2B (3 -> 4, B takes it), 3B, 4B (empty: the move
 * ends there). */
Test(examples, odu_relay_with_captures_to_both)
{
    expect_move("odu", 6, "2,1,6,3,0,5/2,3,1,0,4,4/A", "2A", "2,0,0,0,1,6/3,0,2,1,4,4/B/4-4/-", 4,
                4);
    expect_move("ayo-eleh", 6, "2,1,6,3,0,5/2,3,1,0,4,4/A", "2A",
                "2,0,0,0,1,6/3,0,2,1,4,4/B/4-4/-", 4, 4);
    expect_move("ba-awa", 6, "2,1,6,3,0,5/2,3,1,0,4,4/A", "2A",
                "2,0,0,0,1,6/3,0,2,1,4,4/B/4-4/-", 4, 4);
}

/* ---- oware and awari -------------------------------------------------- */

Test(oware, origin_skipped_at_twelve)
{
    /* 12 from 1A: 2A..6A, 1B..6B (11), 1A skipped, 2A again */
    expect_move("oware", 6, "12,0,0,0,0,0/0,0,0,0,0,0/A", "1A", "0,2,1,1,1,1/1,1,1,1,1,1/B/0-0/-",
                0, 0);
    /* 13 from 6A: 1B..6B, 1A..5A, 6A skipped, 1B (3), 2B (2): the last seed
     * makes 2 in 2B and 3 in 1B before it: 5 taken */
    expect_move("oware", 6, "0,0,0,0,0,13/1,0,0,0,0,0/A", "6A",
                "1,1,1,1,1,0/0,0,1,1,1,1/B/5-0/-", 5, 0);
    expect_move("awari", 6, "12,0,0,0,0,0/0,0,0,0,0,0/A", "1A", "0,2,1,1,1,1/1,1,1,1,1,1/B/0-0/-",
                0, 0);
}

Test(oware, capture_run_stops_at_own_row)
{
    /* last seed in 2B (2), 1B (3) before it: both taken; the run stops at 6A */
    expect_move("oware", 6, "0,0,0,0,1,2/2,1,0,0,0,1/A", "6A", "0,0,0,0,1,0/0,0,0,0,0,1/B/5-0/-", 5,
                0);
}

Test(oware, grand_slam_takes_nothing)
{
    expect_move("oware", 6, "0,0,0,0,0,1/1,0,0,0,0,0/A", "6A", "0,0,0,0,0,0/2,0,0,0,0,0/B/0-0/-", 0,
                0);
    expect_moves("oware", 6, "0,0,0,0,3,1/1,0,0,0,0,0/A", "5A 6A");
    expect_move("oware", 6, "0,0,0,0,3,1/1,0,0,0,0,0/A", "6A", "0,0,0,0,3,0/2,0,0,0,0,0/B/0-0/-", 0,
                0);
}

Test(oware, must_feed_and_no_feed_ending)
{
    expect_moves("oware", 6, "0,0,0,0,1,1/0,0,0,0,0,0/A", "6A");
    expect_move("oware", 6, "0,0,0,0,1,1/0,0,0,0,0,0/A", "6A", "0,0,0,0,1,0/1,0,0,0,0,0/B/0-0/-", 0,
                0);
    expect_over("oware", 6, "1,1,0,0,0,0/0,0,0,0,0,0/A/3-4", SOW_END_NO_FEED, 2, 0);
    expect_over("oware", 6, "0,0,0,0,0,0/1,2,0,0,0,0/A", SOW_END_NO_SEEDS, 0, 3);
    expect_over("oware", 6, "0,0,0,0,0,0/0,0,0,0,0,0/B", SOW_END_NO_SEEDS, 0, 0);
}

Test(awari, starving_is_illegal_unless_forced)
{
    /* 6A would take B's only seeds: illegal while 5A feeds him */
    expect_moves("awari", 6, "0,0,0,0,3,1/1,0,0,0,0,0/A", "5A");
    /* not feeding an empty opponent is illegal too */
    expect_moves("awari", 6, "0,0,0,0,1,1/0,0,0,0,0,0/A", "6A");
    /* forced: every move starves him, so all are legal and captures happen */
    expect_move("awari", 6, "0,0,0,0,0,1/1,0,0,0,0,0/A", "6A", "0,0,0,0,0,0/0,0,0,0,0,0/B/2-0/-", 2,
                0);
    expect_moves("awari", 6, "1,1,0,0,0,0/0,0,0,0,0,0/A", "1A 2A");
}

Test(awari, no_seeds_ending)
{
    expect_over("awari", 6, "0,0,0,0,0,0/1,2,0,0,0,0/A/5-5", SOW_END_NO_SEEDS, 0, 3);
    expect_over("awari", 6, "3,0,0,0,0,1/0,0,0,0,0,0/B", SOW_END_NO_SEEDS, 4, 0);
}

/* ---- jodu family ------------------------------------------------------ */

Test(jodu, own_empty_hole_captures)
{
    /* 2A -> 3A, own and empty, faces 4B holding 5: 5 + 1 */
    expect_move("jodu", 6, "0,1,0,0,0,0/0,0,0,5,0,0/A", "2A", "0,0,0,0,0,0/0,0,0,0,0,0/B/6-0/-", 6,
                0);
    expect_move("jodu-ibadan", 6, "0,1,0,0,0,0/0,0,0,5,0,0/A", "2A",
                "0,0,1,0,0,0/0,0,0,0,0,0/B/5-0/-", 5, 0);
    expect_move("jodu-starve", 6, "0,1,0,0,0,0/0,0,0,5,0,0/A", "2A",
                "0,0,0,0,0,0/0,0,0,0,0,0/B/6-0/-", 6, 0);
    /* facing hole empty: nothing, except in jodu-starve (the last seed) */
    expect_move("jodu", 6, "0,1,0,0,0,0/0,0,0,0,0,1/A", "2A", "0,0,1,0,0,0/0,0,0,0,0,1/B/0-0/-", 0,
                0);
    expect_move("jodu-ibadan", 6, "0,1,0,0,0,0/0,0,0,0,0,1/A", "2A",
                "0,0,1,0,0,0/0,0,0,0,0,1/B/0-0/-", 0, 0);
    expect_move("jodu-starve", 6, "0,1,0,0,0,0/0,0,0,0,0,1/A", "2A",
                "0,0,0,0,0,0/0,0,0,0,0,1/B/1-0/-", 1, 0);
    /* last seed in the opponent's empty hole: no capture */
    expect_move("jodu", 6, "0,0,0,0,0,1/0,0,0,0,0,3/A", "6A", "0,0,0,0,0,0/1,0,0,0,0,3/B/0-0/-", 0,
                0);
}

Test(jodu, relay_through_origin_not_skipped)
{
    /* 2x2: 1A holds 4: 2A 1B 2B 1A (emptied, now 1, own, faces 2B = 2): 2 + 1 */
    expect_move("jodu", 2, "4,0/0,1/A", "1A", "0,1/1,0/B/3-0/-", 3, 0);
    expect_move("kyekyemapuduo", 2, "4,0/0,1/A", "1A", "0,1/1,0/B/3-0/-", 3, 0);
    expect_move("ayoayo", 2, "4,0/0,1/A", "1A", "1,1/1,0/B/2-0/-", 2, 0);
}

Test(jodu, no_seeds_ending)
{
    expect_over("jodu", 6, "0,0,0,0,0,0/1,2,0,0,0,0/A", SOW_END_NO_SEEDS, 0, 3);
    expect_over("jodu-ibadan", 6, "0,0,0,0,0,0/1,2,0,0,0,0/A", SOW_END_NO_SEEDS, 0, 3);
}

Test(jodu_starve, pass_and_empty_board)
{
    expect_moves("jodu-starve", 6, "0,0,0,0,0,0/1,0,0,0,0,0/A", "pass");
    expect_move("jodu-starve", 6, "0,0,0,0,0,0/1,0,0,0,0,0/A/2-3", "pass",
                "0,0,0,0,0,0/1,0,0,0,0,0/B/2-3/-", 0, 0);
    expect_over("jodu-starve", 6, "0,0,0,0,0,0/0,0,0,0,0,0/A/9-7", SOW_END_EMPTY, 0, 0);
}

/* ---- odu and jerin ---------------------------------------------------- */

Test(odu, last_seed_four_on_own_side)
{
    expect_move("odu", 6, "0,1,3,0,0,0/1,1,1,1,1,0/A", "2A", "0,0,0,0,0,0/1,1,1,1,1,0/B/4-0/-", 4,
                0);
    /* and on the opponent's side */
    expect_move("odu", 6, "0,0,0,0,0,1/3,1,1,1,1,0/A", "6A", "0,0,0,0,0,0/0,1,1,1,1,0/B/4-0/-", 4,
                0);
}

Test(odu, intermediate_fours_to_their_owners)
{
    /* 1A holds 3: 2A (3 -> 4, A's), 3A (3 -> 4, A's), 4A (empty: ends) */
    expect_move("odu", 6, "3,3,3,0,0,0/1,1,1,1,1,3/A", "1A", "0,0,0,1,0,0/1,1,1,1,1,3/B/8-0/-", 8,
                0);
    /* B plays 6B holding 2: 1A (3 -> 4, A's), 2A (empty): B gives A four */
    expect_move("odu", 6, "3,0,1,1,0,0/1,1,1,1,1,2/B", "6B", "0,1,1,1,0,0/1,1,1,1,1,0/A/4-0/-", 4,
                0);
}

Test(odu, endings_pass_and_feeding)
{
    expect_over("odu", 6, "1,1,0,0,0,0/1,1,0,0,0,0/A/10-30", SOW_END_FEW_SEEDS, 0, 0);
    expect_moves("odu", 6, "0,0,0,0,0,0/1,1,1,1,1,0/A", "pass");
    expect_move("odu", 6, "0,0,0,0,0,0/1,1,1,1,1,0/A", "pass", "0,0,0,0,0,0/1,1,1,1,1,0/B/0-0/-",
                0, 0);
    /* B's row empty: 2A and 4A end on A's side and are illegal */
    expect_moves("odu", 6, "0,3,0,1,0,1/0,0,0,0,0,0/A", "6A");
    expect_move("odu", 6, "0,3,0,1,0,1/0,0,0,0,0,0/A", "6A", "0,3,0,1,0,0/1,0,0,0,0,0/B/0-0/-", 0,
                0);
    /* no move feeds: over, each his own side */
    expect_over("odu", 6, "0,4,0,1,0,0/0,0,0,0,0,0/A", SOW_END_NO_FEED, 5, 0);
    expect_over("jerin", 6, "0,4,0,1,0,0/0,0,0,0,0,0/A", SOW_END_NO_FEED, 5, 0);
}

Test(jerin, opening_double_and_state)
{
    expect_moves("jerin", 6, "4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/open", "1A+2A 2A+3A 3A+4A 4A+5A 5A+6A");
    /* 2x3: 1A+2A lifts 1 seed and sows from 3A (empty: ends); 2A+3A is empty */
    expect_moves("jerin", 3, "1,0,0/1,1,3/A/0-0/open", "1A+2A");
    expect_move("jerin", 3, "1,0,0/1,1,3/A/0-0/open", "1A+2A", "0,0,1/1,1,3/B/0-0/-", 0, 0);
    /* after the opening, ordinary moves */
    expect_moves("jerin", 3, "0,0,1/1,1,3/B", "1B 2B 3B");
    /* every opening from the start clears the state */
    struct ruleset rs = rs_for("jerin", 6);
    sow_position s = rules_start(&rs);
    cr_assert_eq(s.state, SOW_STATE_OPEN);
    struct sow_movelist ml;
    rules_generate(&rs, &s, &ml);
    for (int j = 0; j < ml.n; j++)
        cr_assert_eq(ml.c[j].pos.state, SOW_STATE_NONE);
    /* 2x1: no pair, the opening is an ordinary move: 1B (3 -> 4, B's), 1A, 1B */
    expect_move("jerin", 1, "3/3/A/0-0/open", "1A", "1/1/B/0-4/-", 0, 4);
    /* the feeding rule applies to the opening: B empty, 1A+2A stays home */
    expect_moves("jerin", 4, "1,0,0,4/0,0,0,0/A/0-0/open", "3A+4A");
}

/* ---- darra ------------------------------------------------------------ */

Test(darra, state_and_settlement)
{
    /* no capture: the last capturer stays */
    expect_move("darra", 6, "1,0,0,0,0,0/1,2,3,0,0,0/A/0-0/B", "1A", "0,1,0,0,0,0/1,2,3,0,0,0/B/0-0/B",
                0, 0);
    /* A's move gives B an intermediate 4 and ends: B is the last capturer */
    expect_move("darra", 6, "0,0,0,0,0,2/3,0,1,1,1,0/A/0-0/A", "6A",
                "0,0,0,0,0,0/0,1,1,1,1,0/B/0-4/B", 0, 4);
    /* intermediate capture first, last-seed capture after: the mover last */
    expect_move("darra", 6, "3,3,0,0,0,0/1,0,0,0,0,2/B/0-0/-", "6B",
                "0,0,0,0,0,0/1,0,0,0,0,0/A/4-4/B", 4, 4);
    expect_over("darra", 6, "1,1,0,0,0,0/1,1,0,0,0,0/A/3-5/B", SOW_END_FEW_SEEDS, 0, 4);
    expect_over("darra", 6, "1,1,0,0,0,0/1,1,0,0,0,0/A/3-5/A", SOW_END_FEW_SEEDS, 4, 0);
    expect_over("darra", 6, "1,1,0,0,0,0/1,1,0,0,0,0/A/3-5/-", SOW_END_FEW_SEEDS, 0, 0);
    expect_moves("darra", 6, "0,0,0,0,0,0/1,2,3,0,0,0/A/0-0/A", "pass");
    expect_move("darra", 6, "0,0,0,0,0,0/1,2,3,0,0,0/A/0-0/A", "pass",
                "0,0,0,0,0,0/1,2,3,0,0,0/B/0-0/A", 0, 0);
    /* big boards */
    expect_moves("darra", 12, "1,0,0,0,0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0,0,0,0,5/B", "12B");
    expect_move("darra", 18,
                "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2/3,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0/A", "18A",
                "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0/0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0/B/0-4/B",
                0, 4);
}

/* ---- repetition value, aliases ---------------------------------------- */

Test(rules, cycle_value_and_repetition_settlement)
{
    const char *tok = "1,2,0,0,0,0/5,0,0,0,0,0/B";
    const char *names[] = {"oware", "jodu", "jodu-ibadan", "jodu-starve", "odu", "darra"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct ruleset rs = rs_for(names[i], 6);
        sow_position p = parse(&rs, tok);
        cr_assert_eq(rules_cycle_value(&rs, &p), 2, "%s", names[i]);
        p.side = SOW_A;
        cr_assert_eq(rules_cycle_value(&rs, &p), -2, "%s", names[i]);
        struct ref_pos rp;
        ref_from_sow(&rs, &p, &rp);
        cr_assert_eq(ref_cycle_value(rs.family, &rp), -2);
        int s2[2];
        rules_repetition_settle2(&rs, &p, s2);
        cr_assert(s2[0] == 6 && s2[1] == 10, "%s: %d %d", names[i], s2[0], s2[1]);
    }
    struct ruleset aw = rs_for("awari", 6);
    sow_position p = parse(&aw, tok);
    cr_assert_eq(rules_cycle_value(&aw, &p), 0);
    int s2[2];
    rules_repetition_settle2(&aw, &p, s2);
    cr_assert(s2[0] == 8 && s2[1] == 8, "awari splits 8: %d %d", s2[0], s2[1]);
    p = parse(&aw, "1,2,0,0,0,0/4,0,0,0,0,0/A");
    rules_repetition_settle2(&aw, &p, s2);
    cr_assert(s2[0] == 7 && s2[1] == 7, "awari splits 7 into halves: %d %d", s2[0], s2[1]);
}

Test(rules, aliases)
{
    struct {
        const char *alias;
        enum sow_family fam;
        const char *canon;
    } a[] = {{"abapa", SOW_OWARE, "oware"},        {"ayo-eleh", SOW_ODU, "odu"},
             {"ba-awa", SOW_ODU, "odu"},           {"kyekyemapuduo", SOW_JODU, "jodu"},
             {"ayoayo", SOW_JODU_IBADAN, "jodu-ibadan"}};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        struct ruleset rs = rs_for(a[i].alias, 6);
        cr_assert_eq(rs.family, a[i].fam, "%s", a[i].alias);
        cr_assert_str_eq(rs.name, a[i].canon);
    }
    struct ruleset rs;
    struct sow_error e;
    cr_assert_eq(rules_init(&rs, "chess", 6, 4, &e), SOW_E_INPUT);
    cr_assert_eq(rules_init(&rs, "oware", 19, 4, &e), SOW_E_INPUT);
    cr_assert_eq(rules_init(&rs, "oware", 6, 22, &e), SOW_E_INPUT, "264 seeds do not fit");
}

/* ---- sowings that never end ------------------------------------------- */

/* The jodu position: 1A relays forever and comes back to its own
 * starting state (the board as given, 1A about to be lifted) after exactly
 * 238,623 pick-ups. */
Test(endless, jodu_238623)
{
    const char *tok = "5,1,4,3,4,1/6,1,7,1,0,1/A";
    struct ruleset rs = rs_for("jodu", 6);
    sow_position p = parse(&rs, tok);
    struct ref_pos rp;
    ref_from_sow(&rs, &p, &rp);
    long pickups, first, len;
    cr_assert(ref_move_endless(SOW_JODU, &rp, 0, &pickups, &first, &len));
    cr_assert_eq(first, 0, "the repeated state is the start");
    cr_assert_eq(len, 238623);
    struct sow_movelist ml;
    struct ref_list rl;
    both(&rs, tok, &ml, &rl);
    cr_assert_eq(ml.endless, 1);
    cr_assert_eq(rules_find_move(&ml, 0), -1, "1A is not legal");
    expect_moves("jodu", 6, tok, "2A 3A 4A 5A 6A");
    /* the relay cache must agree, twice (second time from the cache) */
    struct sow_relay_cache *c = rules_cache_new(10);
    for (int i = 0; i < 2; i++) {
        struct sow_movelist mc;
        rs.generate(&rs, &p, &mc, c, NULL);
        cr_assert_eq(mc.n, 5);
        cr_assert_eq(mc.endless, 1);
        for (int j = 0; j < mc.n; j++)
            cr_assert(rules_same_position(&mc.c[j].pos, &ml.c[j].pos));
    }
    rules_cache_free(c);
}

/* Small constructed cases, found by an exhaustive search with the reference. */
Test(endless, tiny_boards)
{
    /* 2x1 jodu 3/1: 1A: 1B 1A 1B (3), relay 1B: 1A 1B 1A (3), relay: back
     * to 3/1 with 1A to lift after 2 pick-ups.  It is A's only move: the game
     * is over and each takes his own side. */
    struct ruleset rs = rs_for("jodu", 1);
    struct ref_pos rp;
    sow_position p = parse(&rs, "3/1/A");
    ref_from_sow(&rs, &p, &rp);
    long pk, first, len;
    cr_assert(ref_move_endless(SOW_JODU, &rp, 0, &pk, &first, &len));
    cr_assert(first == 0 && len == 2, "first %ld len %ld", first, len);
    expect_over("jodu", 1, "3/1/A", SOW_END_ENDLESS, 3, 1);
    /* 2x2 jodu: 2A never ends (8 pick-ups a turn), 1A does */
    expect_moves("jodu", 2, "1,3/1,0/A", "1A");
    rs = rs_for("jodu", 2);
    p = parse(&rs, "1,3/1,0/A");
    ref_from_sow(&rs, &p, &rp);
    cr_assert(ref_move_endless(SOW_JODU, &rp, 1, &pk, &first, &len));
    cr_assert(first == 0 && len == 8, "first %ld len %ld", first, len);
    /* every move endless on 2x2 (jodu and odu) */
    expect_over("jodu", 2, "2,0/2,1/A", SOW_END_ENDLESS, 2, 3);
    expect_over("odu", 2, "2,0/2,1/A", SOW_END_ENDLESS, 2, 3);
    expect_over("jodu-starve", 2, "2,0/2,1/A", SOW_END_ENDLESS, 2, 3);
    /* 2x3: the second move never ends (18 pick-ups a turn) */
    expect_moves("jodu", 3, "1,3,1/0,1,0/A", "1A 3A");
    expect_over("jodu", 3, "3,5,0/1,2,1/A", SOW_END_ENDLESS, 8, 4);
}
