/* The clock's share of a move (src/cli/timeman.h): the allocation that
 * `sow engine` under go wtime/btime and `sow match --tc` share, and the
 * moves left to think about where tables answer the later positions. */
#include <criterion/criterion.h>
#include <math.h>

#include "../src/cli/timeman.h"
#include "sow/position.h"

static struct ruleset rules(const char *name, int pits)
{
    struct ruleset rs;
    struct sow_error re;
    cr_assert_eq(rules_init(&rs, name, pits, -1, &re), SOW_OK, "%s: %s", name, re.msg);
    return rs;
}

static sow_position pos(const struct ruleset *rs, const char *text)
{
    sow_position p;
    struct sow_error pe;
    cr_assert_eq(pos_parse(rs, text, &p, &pe), SOW_OK, "%s: %s", text, pe.msg);
    return p;
}

Test(timeman, move_seconds)
{
    cr_assert_float_eq(timeman_move_seconds(30000, 0, 30), 1.0, 1e-12);
    cr_assert_float_eq(timeman_move_seconds(30000, 0, 0), 1.0, 1e-12, "30 by default");
    cr_assert_float_eq(timeman_move_seconds(10000, 200, 10), 1.16, 1e-12, "plus 0.8 inc");
    cr_assert_float_eq(timeman_move_seconds(1000, 2000, 10), 0.5, 1e-12, "half the time left");
    cr_assert_float_eq(timeman_move_seconds(-50, 0, 30), 0.005, 1e-12, "at least 5 ms");
}

Test(timeman, moves_to_go_counts_the_seeds_above_the_tables)
{
    struct ruleset ow = rules("oware", 6);
    sow_position start = rules_start(&ow);
    cr_assert_eq(timeman_moves_to_go(&ow, &start, -1), 30, "no tables: 30");
    cr_assert_eq(timeman_moves_to_go(&ow, &start, 24), 29, "48 seeds over 24: 24 + 5");
    cr_assert_eq(timeman_moves_to_go(&ow, &start, 9), 30, "at most 30");
    /* 30 seeds on the board (the stores hold the rest) */
    sow_position p = pos(&ow, "5,5,5,0,0,0/5,5,5,0,0,0/A/9-9/-");
    cr_assert_eq(rules_board_seeds(&ow, &p), 30);
    cr_assert_eq(timeman_moves_to_go(&ow, &p, 24), 11);
    cr_assert_eq(timeman_moves_to_go(&ow, &p, 28), 7);
    cr_assert_eq(timeman_moves_to_go(&ow, &p, 30), 6, "at least 6, inside the tables too");
    struct ruleset darra = rules("darra", 12);
    sow_position d = rules_start(&darra);
    cr_assert_eq(timeman_moves_to_go(&darra, &d, 24), 30, "darra 2x12: far above the tables");
}
