/* The time of one move under a game clock, shared by the engine protocol's
 * `go wtime/btime` (engine_search.c) and sow match's --tc players, so that
 * an engine in the match process and `sow engine` over a pipe spend their
 * clocks alike.  Thread-safe (a pure function). */
#ifndef SOW_CLI_TIMEMAN_H
#define SOW_CLI_TIMEMAN_H

/* Seconds for the move: a 30th of the time left (MS; the moves to the next
 * time control instead where movestogo > 0), plus 0.8 of the increment,
 * at most half the time left and at least 5 ms. */
double timeman_move_seconds(double left_ms, double inc_ms, double movestogo);

/* A move's two limits in seconds: soft, the share above, after which the
 * engine stops at the end of an iteration, scaled by the best move's
 * stability (engine_limits.soft); hard, where it gives up the iteration
 * running: three times the share, at most a quarter of the time left (but
 * never below the share). */
struct timeman {
    double soft, hard;
};
struct timeman timeman_move(double left_ms, double inc_ms, double movestogo);

#endif
