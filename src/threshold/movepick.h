/* Move ordering for the solver's searches (not part of the API).
 *
 * movepick_threshold: the order in which the threshold (attractor) search
 * expands a node's moves: the transposition table's move first, then the
 * capturing moves by net capture for the mover, then the rest, each group in
 * generation order (a stable insertion sort).  Helper threads (tid > 0) add
 * a key- and thread-dependent jitter in 0..31 to every score, so that Lazy
 * SMP threads spread over different subtrees; tid 0 is deterministic.
 *
 *   score = 2^20                                  the table's move
 *         | 2^12 + 64 * (captured[side] - captured[!side])   a capture
 *         | 0                                     the rest
 *         (+ jitter(key, tid, i) in 0..31 if tid > 0)
 *
 * Example: moves (a, b, c), b captures 2 seeds for the mover, c is the
 * table's move, tid 0: scores (0, 4224, 2^20), order = (2, 1, 0).
 *
 * The node counts of the attractor method and of the bounded mode depend on
 * this order bit for bit: a change needs new measurements (bench/results).
 *
 * Thread-safety: pure function of its arguments.
 */
#ifndef SOW_THRESHOLD_MOVEPICK_H
#define SOW_THRESHOLD_MOVEPICK_H

#include <stdint.h>

#include "sow/rules.h"

/* Fill order[0..ml->n-1] with the indices of ml's moves, best first; returns
 * ml->n.  side: the mover; ttm: the table's move or SOW_MOVE_NONE. */
int movepick_threshold(const struct sow_movelist *ml, int side, sow_move ttm, uint64_t key,
                       int tid, uint8_t *order);

#endif
