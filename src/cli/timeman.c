/* The time of one move under a game clock (timeman.h). */
#include "timeman.h"

double timeman_move_seconds(double left_ms, double inc_ms, double movestogo)
{
    if (left_ms < 0)
        left_ms = 0;
    /* a 30th by default: mancala games of 2x6 last 40-60 moves a side
     * from the start, fewer from an opening, and the last ones are often
     * in the tables */
    double per = left_ms / (movestogo > 0 ? movestogo : 30) + 0.8 * inc_ms;
    if (per > left_ms / 2)
        per = left_ms / 2;
    double s = per / 1000;
    return s < 0.005 ? 0.005 : s;
}

double timeman_moves_to_go(const struct ruleset *rs, const sow_position *p, int level)
{
    if (level < 0)
        return 30;
    /* In oware games from 4-move openings the board falls from 48 seeds
     * to 24 in about 25 moves a side, and from n seeds in about n - 24 or
     * fewer (bench/results/2026-12-07-timeman-tables.md): n - level + 5
     * over-estimates, so the clock is not spent before the tables. */
    double m = rules_board_seeds(rs, p) - level + 5;
    return m < 6 ? 6 : m > 30 ? 30 : m;
}
