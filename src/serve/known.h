/* sow serve's known sources: the set of each rule set and board size asked
 * for (its endgame tables and its shared levels, sow/analyse.h
 * analyse_levels) and the solution files, opened once and kept in the
 * context; serve.c hands them to analyse_position.  Internal to src/serve.
 *
 * Thread-safety: as serve.h says: every function here may run in many
 * threads at once on one context (the sets and the list of solution files
 * are changed under the context's lock). */
#ifndef SOW_SERVE_KNOWN_H
#define SOW_SERVE_KNOWN_H

#include "serve/serve.h"

/* The set of rs (its rule set and board size), made on first use and kept:
 * its tables opened, its shared levels made (if ctx.levels), its solution
 * files in the tables directory found; NULL past SERVE_MAX_SETS.  The files
 * opened are named by the registry's name (rs comes from rules_init), never
 * by the request's text. */
struct serve_set *serve_set_of(struct serve_ctx *c, const struct ruleset *rs);
/* Close every set and solution file (serve_ctx_free). */
void serve_sets_free(struct serve_ctx *c);

/* The solution files of rs's rule set and board size into out (room for
 * SERVE_MAX_SOLS), in the order they were opened; their number. */
int serve_solutions_of(struct serve_ctx *c, const struct ruleset *rs, const struct sol **out);

#endif
