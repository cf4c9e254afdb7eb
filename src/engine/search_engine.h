/* The engine room (src/engine/) seen from the dispatcher
 * (search/search.c): the solver's bounded mode by the alpha-beta engine.
 * Not part of the API.
 *
 *   search/search.c          dispatcher: sow/search.h entry points, PV walk
 *      |  (search_engine.h, this file)
 *   engine/search_engine.c   bounded mode through the public engine API
 *      |
 *   engine/engine.c          the alpha-beta engine (sow/engine.h; the CLI's
 *      |                     engine and match commands use it directly);
 *      |                     engine_iterate.c, engine_tree.c and
 *      |                     engine_lockstep.c beside it (engine_internal.h)
 *      |-- engine_pick.c/.h  move ordering: killers, history
 *      |-- engine_fast.h     fast paths of the rules for the hot leaves
 *      |-- eval.c            static evaluation (weights per rule family)
 *      `-- engine_know.c/.h  exact knowledge from solution files
 *              |             (solver/solution.h: engine -> solver, one way)
 *   search_ctx.h             the shared context (struct search_ctx), progress
 *                            lines; tt.h, tables.h, util.h, rules
 *
 * Only search_engine.c knows the search context; the engine proper uses
 * nothing of the dispatcher or of the threshold room, and the solver room
 * uses nothing of it.
 *
 * Thread-safety: as sow/search.h.
 */
#ifndef SOW_ENGINE_SEARCH_ENGINE_H
#define SOW_ENGINE_SEARCH_ENGINE_H

#include <stdbool.h>

#include "search_ctx.h"

/* ---- search_engine.c: bounded mode by the alpha-beta engine ---- */

/* o.depth / o.time_limit by the engine (docs/engine.md): r filled with its
 * score, best move, PV, depth and counters.  false if stopped or failed
 * (flags in s). */
bool engine_bounded(struct search_ctx *s, const sow_position *p, double t0,
                    struct search_result *r);

#endif
