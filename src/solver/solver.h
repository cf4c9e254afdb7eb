/* The solver room (src/solver/): the exact mode, what the dispatcher
 * (search/search.c) calls.  Not part of the API.
 *
 *   search/search.c        dispatcher: sow/search.h entry points, PV walk
 *      |  (solver.h, this file: exact_*; closure.h: the context's clos)
 *   solver/levels.c        exact mode: levels in memory (tables.h tb_mem),
 *      |                   then the position's closure; search_save
 *   solver/solution.c      solution files: a solved closure on disk
 *      |                   (solution.h; search_solution_*)
 *   solver/solution_set.c  the file's set of a closure on disk, built a
 *      |                   window of cells at a time
 *   solver/closure*.c      the closure: expansion, retrograde, checkpoints,
 *      |                   in memory or on disk (closure.h; the files, one
 *      |                   idea each, mapped in closure_internal.h)
 *   search_ctx.h           the shared context (struct search_ctx),
 *                          progress lines; tables.h, util.h, rules
 *
 * The room uses nothing of the other searchers (src/threshold, src/engine)
 * and never includes the dispatcher; the engine room reads solution files
 * through solution.h (engine/engine_know.c), one way only.
 *
 * Thread-safety: as sow/search.h; the functions below run on the caller's
 * thread and start their own OpenMP threads where they say so.
 */
#ifndef SOW_SOLVER_SOLVER_H
#define SOW_SOLVER_SOLVER_H

#include <stdbool.h>

#include "search_ctx.h"
#include "closure.h"

/* ---- levels.c: exact mode ---- */

/* V(p); false if stopped or failed (flags in s). */
bool exact_value(struct search_ctx *s, const sow_position *p, int *v);
/* Every move's value (rules_generate order); -1 if stopped or failed. */
int exact_move_values(struct search_ctx *s, const sow_position *p, int *vals);
/* The first move of ml (generation order) worth v into *pick; false if stopped. */
bool exact_pick(struct search_ctx *s, const sow_position *p, const struct sow_movelist *ml, int v,
                int *pick);

#endif
