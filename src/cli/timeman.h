/* The time of one move under a game clock, shared by the engine protocol's
 * `go wtime/btime` (engine_search.c) and sow match's --tc players, so that
 * an engine in the match process and `sow engine` over a pipe spend their
 * clocks alike.  Thread-safe (a pure function). */
#ifndef SOW_CLI_TIMEMAN_H
#define SOW_CLI_TIMEMAN_H

#include "sow/rules.h"

/* Seconds for the move: the time left (MS) over movestogo (the moves to
 * the next time control, or timeman_moves_to_go's estimate; 30 where it
 * is 0), plus 0.8 of the increment, at most half the time left and at
 * least 5 ms. */
double timeman_move_seconds(double left_ms, double inc_ms, double movestogo);

/* The moves the side to move at p still has to think about, with tables
 * in play that answer every position of up to `level` seeds on the board
 * (level < 0: none): their moves cost no time, so the clock is spent
 * before them.  Its seeds on the board above `level`, plus 5, in 6..30;
 * 30 without tables. */
double timeman_moves_to_go(const struct ruleset *rs, const sow_position *p, int level);

#endif
