/* The clock's share of a move (src/cli/timeman.h): the allocation that
 * `sow engine` under go wtime/btime and `sow match --tc` share. */
#include <criterion/criterion.h>

#include "../src/cli/timeman.h"

Test(timeman, move_seconds)
{
    cr_assert_float_eq(timeman_move_seconds(30000, 0, 30), 1.0, 1e-12);
    cr_assert_float_eq(timeman_move_seconds(30000, 0, 0), 1.0, 1e-12, "30 by default");
    cr_assert_float_eq(timeman_move_seconds(10000, 200, 10), 1.16, 1e-12, "plus 0.8 inc");
    cr_assert_float_eq(timeman_move_seconds(1000, 2000, 10), 0.5, 1e-12, "half the time left");
    cr_assert_float_eq(timeman_move_seconds(-50, 0, 30), 0.005, 1e-12, "at least 5 ms");
}

Test(timeman, soft_and_hard)
{
    struct timeman t = timeman_move(30000, 0, 30);
    cr_assert_float_eq(t.soft, 1.0, 1e-12, "soft: the share");
    cr_assert_float_eq(t.hard, 3.0, 1e-12, "hard: three shares");
    t = timeman_move(8000, 0, 4);
    cr_assert_float_eq(t.soft, 2.0, 1e-12);
    cr_assert_float_eq(t.hard, 2.0, 1e-12, "a quarter of the clock, never below the share");
    t = timeman_move(20000, 0, 10);
    cr_assert_float_eq(t.hard, 5.0, 1e-12, "a quarter of the clock");
    t = timeman_move(-50, 0, 30);
    cr_assert_float_eq(t.hard, 0.005, 1e-12, "at least the share");
}
