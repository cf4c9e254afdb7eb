/* The threshold room (src/threshold/): the threshold (attractor) method
 * and the bounded mode it offers with depth cuts; what the dispatcher
 * (search/search.c) calls.  Not part of the API.
 *
 *   search/search.c          dispatcher: sow/search.h entry points, PV walk
 *      |  (threshold.h, this file)
 *   threshold/threshold.c    threshold tests ge(p, t, c), their MTD(f)
 *      |                     driver, the bounded mode; Lazy SMP (OpenMP)
 *   threshold/movepick.c     move order of the threshold search (movepick.h)
 *      |
 *   search_ctx.h             the shared context (struct search_ctx, struct thr),
 *                            progress lines; tt.h, util.h, rules
 *
 * The room uses nothing of the other searchers (src/solver, src/engine) and
 * never includes the dispatcher; the dispatcher reaches it only here.
 *
 * Thread-safety: as sow/search.h; the functions below run on the caller's
 * thread and start their own OpenMP threads where they say so.
 */
#ifndef SOW_THRESHOLD_THRESHOLD_H
#define SOW_THRESHOLD_THRESHOLD_H

#include <stdbool.h>

#include "search_ctx.h"

/* ---- threshold.c: the threshold (attractor) method and the bounded mode ---- */

/* Per-thread work areas of the level tests: [MAX_LEVELS], NULL if out of
 * memory; freed with threshold_levels_free. */
struct level *threshold_levels_new(void);
void threshold_levels_free(struct level *levels);
/* V(p), and the value of p's move ch, by MTD(f)-driven exact tests; false if
 * stopped or failed. */
bool threshold_value(struct search_ctx *s, const sow_position *p, int *v);
bool threshold_move_value(struct search_ctx *s, const sow_position *p, const struct sow_child *ch,
                          int *v);
/* The table's move if it reaches v, else the first (generation order) that
 * does, each by one exact test; false if stopped. */
bool threshold_pick(struct search_ctx *s, const sow_position *p, const struct sow_movelist *ml,
                    int v, int *pick);
/* Bounded mode from p (moves ml, not empty; started at t0): iterative
 * deepening to o.depth or o.time_limit, filling r's bounds, heuristic value,
 * best move and depth.  false if stopped or failed (flags in s). */
bool threshold_bounded(struct search_ctx *s, const sow_position *p,
                       const struct sow_movelist *ml, double t0, struct search_result *r);

#endif
