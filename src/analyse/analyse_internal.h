/* The analysis's pieces inside sow (sow/analyse.h is the installed API):
 * the answer from shared levels (levels.c), and the mainline's JSON, which
 * only sow serve writes (analyse.c).
 *
 * Thread-safety: as sow/analyse.h says. */
#ifndef SOW_ANALYSE_INTERNAL_H
#define SOW_ANALYSE_INTERNAL_H

#include <stdbool.h>

#include "sow/analyse.h"

/* p answered from the levels l (source "levels"), built first up to p's
 * level if levels 0..n fit l's positions (with o's threads, memory and
 * stop): true; false if l is of another rule set or size, or does not hold
 * p or a child of it.  a->ml is the caller's (generated already) and kept. */
bool analyse_levels_answer(struct analyse_levels *l, const struct ruleset *rs,
                           const sow_position *p, const struct analyse_opts *o,
                           struct analysis *a);

/* p answered from the endgame tables tb (source "tables"), as from shared
 * levels: true if tb holds p's level with its bounds file (and every level
 * a capture leads to), false otherwise.  The PV is walked as far as the
 * levels it meets have bounds. */
bool analyse_tables_answer(const struct tb_set *tb, const struct ruleset *rs,
                           const sow_position *p, struct analysis *a);

/* GET /api/RULES/mainline's answer: the head of analyse_json (rules .. over),
 * then "line":[{"move","pos"},...], the principal variation replayed, and
 * "end": "over" (the game ends), "repetition" (a position repeats) or "cut"
 * (SEARCH_MAX_PV moves, or the engine's line ends).  malloc'd; NULL if out of
 * memory. */
char *analyse_json_line(const struct ruleset *rs, const sow_position *p,
                        const struct analysis *a);

#endif
