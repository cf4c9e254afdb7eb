/* sow — analysis of one position within a time budget: every legal move's
 * value and the position's, and the answer as the JSON object of sow serve's
 * GET /api/RULES (docs/serve.md "The API"):
 *
 *   {"rules":"oware","pits":3,"pos":"2,2,2/2,2,2/A/0-0/-","value":6,"exact":true,
 *    "source":"closure","depth":null,"over":false,"best":"3A",
 *    "moves":[{"move":"3A","value":6,"exact":true,"pos":"2,2,0/0,0,2/B/6-0/-"},...]}
 *
 * The first of these that answers (docs/serve.md "How a request is answered"):
 *   1. "levels": the caller's shared levels (analyse_levels, below), exact,
 *   2. "tables": the endgame tables, where they hold p's level with its
 *      bounds file (sow/tables_probe.h), exact, without a search,
 *   3. "solution": one of the caller's solution files holding p, exact,
 *   4. "tables" / "closure": the exact solver (with the endgame tables)
 *      stopped after half the budget,
 *   5. "engine": the alpha-beta engine over every move in the other half
 *      (exact false).
 * This is the one implementation behind sow serve, sow annotate and
 * Python's sow.analyse: the same position, sources and budget give the same
 * analysis and the same JSON.
 *
 * Values are for the player to move (docs/rules.md "Value of a position");
 * a move's value is its mover's.
 *
 * Layout: struct analysis holds the position's moves (ml, rules_generate
 * order), their values (vals[i] for ml.c[i]) and order[0..ml.n), the move
 * indices best first (best value first, the principal variation's first move
 * first among equals, then generation order).
 *
 * Thread-safety: analyse_position may run in many threads at once, also on
 * one shared analyse_levels and on the same solution files and tables (each
 * call makes its own searches; tables and solution files are only probed;
 * the levels are extended under their write lock and probed under their read
 * lock); it starts one watch thread for the exact solver's deadline.
 * analyse_json only reads.  analyse_levels_new/free are not concurrent with
 * a call that uses the levels.
 */
#ifndef SOW_ANALYSE_H
#define SOW_ANALYSE_H

#include <signal.h>
#include <stdbool.h>

#include "sow/export.h"
#include "sow/rules.h"
#include "sow/search.h"
#include "sow/status.h"
#include "sow/tables_probe.h"

/* The lowest levels of one rule set and board size (positions with 0..n
 * seeds on the board), solved in memory with their forced bounds and shared
 * by every analyse_position call given them: a call whose position's level
 * is above those built builds levels up to it first, if levels 0..n together
 * hold at most `positions` positions (3 bytes each are kept); later calls
 * only probe.  jerin's positions with the opening move due are not in them. */
struct analyse_levels;

/* Levels for rs (copied), at most positions of them; NULL if out of memory. */
SOW_API struct analyse_levels *analyse_levels_new(const struct ruleset *rs,
                                                  unsigned long long positions);
SOW_API void analyse_levels_free(struct analyse_levels *l);

struct analyse_opts {
    int threads;              /* search threads (<= 0: 1) */
    double seconds;           /* the budget (<= 0: 1 s) */
    const struct tb_set *tb;  /* endgame tables, or NULL */
    unsigned hash_mb;         /* the engine's table, MiB (0: 16) */
    double memory;            /* bytes the exact try's closure (and a level's
                                 build) may hold (0: 3/4 of RAM) */
    long long level_budget;   /* exact try: lowest levels solved in memory, positions
                                 (0: 4 Mi positions; < 0: none) */
    volatile sig_atomic_t *stop; /* set non-zero to stop (Ctrl-C); may be NULL */
    /* Exact answers without a search, tried first (NULL / 0: none).  Levels
     * or solution files of another rule set or board size than the
     * position's are not used: levels are matched by rule-set name and
     * size; solutions[] must be opened (search_solution_open) with the
     * position's rule set and size. */
    struct analyse_levels *levels;
    const struct sol *const *solutions;
    int nsolutions;
};

struct analysis {
    const char *source;       /* "levels", "solution", "tables", "closure" (exact)
                                 or "engine" */
    bool exact, over;
    int value;                /* the position's, for its player to move */
    int depth;                /* the engine's shallowest search + 1, -1 if exact */
    struct sow_movelist ml;
    int vals[SOW_MAX_PITS + 1];
    int order[SOW_MAX_PITS + 1];
    sow_move pv[SEARCH_MAX_PV]; /* the principal variation (the engine's: the best
                                   move, then its child's line) */
    int pv_len;
    bool pv_repeats;          /* the PV ends where a position repeats */
};

/* Analyse p: SOW_OK; SOW_E_INTERRUPTED (o->stop); SOW_E_NOMEM or another
 * failure of the engine's search, with a reason in *e (may be NULL). */
SOW_API enum sow_status analyse_position(const struct ruleset *rs, const sow_position *p,
                                         const struct analyse_opts *o, struct analysis *a,
                                         struct sow_error *e);

/* a as GET /api/RULES answers it (above), malloc'd and NUL-terminated; NULL
 * if out of memory. */
SOW_API char *analyse_json(const struct ruleset *rs, const sow_position *p,
                           const struct analysis *a);

#endif
